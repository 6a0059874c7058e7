"""No import cycle anywhere in the product, and core's layers read top-down (issues 30 and 42).

An import inside a function dodges Python's circular-import error, not the tangle: the modules still
need each other. So every ``import`` statement of every module of the four packages is read with
``ast`` (module level, function level and ``if TYPE_CHECKING:``, relative and absolute), and the
modules it names form one graph that must have no cycle: a reader can open any module and find it
importing only what sits below it.

A package's ``__init__`` that Python runs on the way to a submodule is not counted as an edge: only
the module a statement names is. ``from .sub import low`` names ``sub.low``; ``from . import engine``
names ``engine``; ``from . import respond`` (a name defined in the package's ``__init__``) names the
package.

Core's layers are stated once, in docs/DESIGN.md's package map ("Core's layers, top to bottom"):
``test_core_imports_follow_design_s_layer_order`` reads that list and fails when a module imports one
of a higher line, when a module of core has no line, or when a line names a module that is gone.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("interviewsim_core", "interviewsim_dagster", "interviewsim_view", "interviewsim_cli")
CORE = "interviewsim_core"
DESIGN = REPO / "docs" / "DESIGN.md"
LAYERS_HEADING = "Core's layers, top to bottom"


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``name`` imports anywhere in its body."""
    is_package = path.name == "__init__.py"
    here = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            submodules = {f"{base}.{alias.name}" for alias in node.names} & known
            found |= submodules  # ``from . import engine``
            if len(submodules) < len(node.names):
                found.add(base)  # a name defined in ``base`` itself
    return {m for m in found if m in known and m != name}


def import_graph(packages: tuple[str, ...] = PACKAGES, repo: Path = REPO) -> dict[str, set[str]]:
    modules: dict[str, Path] = {}
    for package in packages:
        modules.update(_modules(repo / package))
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def components(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm): the modules
    that import each other, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                components.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (a list of modules, the first repeated at the end) per component."""
    return [_one_cycle(graph, comp) for comp in components(graph)]


def _one_cycle(graph: dict[str, set[str]], comp: set[str]) -> list[str]:
    """A shortest cycle through the component's first module (breadth first inside the component)."""
    start = min(comp)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & comp):
                if w == start:
                    return paths[v] + [start]
                if w not in paths:
                    paths[w] = paths[v] + [w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no cycle through {start} in {sorted(comp)}")


def design_layers(text: str) -> list[list[str]]:
    """Core's layers as DESIGN.md lists them, top first: the backquoted names before the colon of each
    numbered line after the heading, relative to ``interviewsim_core`` (``pipeline``, ``pipeline.steps``)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if LAYERS_HEADING in line), len(lines))
    layers: list[list[str]] = []
    for line in lines[start + 1:]:
        if re.match(r"\d+\. ", line):
            layers.append(re.findall(r"`([\w.]+)`", line.split(": ", 1)[0]))
        elif layers and line.strip() and not line.startswith(" "):
            break
    return layers


def layer_of(module: str, layers: list[list[str]]) -> int | None:
    """The line of ``module``: the one naming it or, failing that, its longest named package."""
    rel = module.removeprefix(CORE + ".")
    best: tuple[int, int] | None = None  # (length of the name, line)
    for i, names in enumerate(layers):
        for n in names:
            if rel == n or rel.startswith(n + "."):
                if best is None or len(n) > best[0]:
                    best = (len(n), i)
    return None if best is None else best[1]


def layer_problems(graph: dict[str, set[str]], layers: list[list[str]]) -> list[str]:
    """Every import of core going up a line, every module of core without a line, every name naming nothing."""
    core = sorted(m for m in graph if m.startswith(CORE + "."))
    problems = [f"{m} has no line in the list" for m in core if layer_of(m, layers) is None]
    problems += [f"the list names {n}, no module of {CORE}" for names in layers for n in names
                 if not any(m == f"{CORE}.{n}" or m.startswith(f"{CORE}.{n}.") for m in core)]
    for m in core:
        for dep in sorted(graph[m]):
            if dep.startswith(CORE + ".") and None not in (layer_of(m, layers), layer_of(dep, layers)) \
                    and layer_of(dep, layers) < layer_of(m, layers):
                problems.append(f"{m} (line {layer_of(m, layers) + 1}) imports {dep} (line {layer_of(dep, layers) + 1})")
    return problems


def test_the_product_has_no_import_cycle():
    graph = import_graph()
    found = components(graph)
    assert not found, f"{len(found)} import cycles (function-level imports count):\n" + "\n".join(
        f"{' -> '.join(_one_cycle(graph, comp))} (modules importing each other: {', '.join(sorted(comp))})"
        for comp in found)


def test_core_imports_follow_design_s_layer_order():
    layers = design_layers(DESIGN.read_text(encoding="utf-8"))
    assert layers, f"docs/DESIGN.md has no list under {LAYERS_HEADING!r}"
    problems = layer_problems(import_graph(), layers)
    assert not problems, "core against docs/DESIGN.md's layers (top to bottom):\n" + "\n".join(problems)


def test_the_check_finds_a_cycle_through_a_function_level_relative_import(tmp_path):
    pkg = tmp_path / CORE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("X = 1\n")
    (pkg / "top.py").write_text("from .sub.low import f\nfrom .sub import low\n")
    (pkg / "sub" / "low.py").write_text("def f():\n    from .. import top\n    return top\n")
    (pkg / "sub" / "named.py").write_text("from . import X\n")
    (pkg / "other.py").write_text(f"import {CORE}.top\n")
    graph = import_graph((CORE,), tmp_path)
    assert graph[f"{CORE}.other"] == {f"{CORE}.top"}
    assert graph[f"{CORE}.top"] == {f"{CORE}.sub.low"}  # the package on the way is not an edge
    assert graph[f"{CORE}.sub.named"] == {f"{CORE}.sub"}  # a name of the package's __init__ is
    assert cycles(graph) == [[f"{CORE}.sub.low", f"{CORE}.top", f"{CORE}.sub.low"]]


def test_the_check_reads_the_layers_and_finds_an_import_going_up():
    text = ("intro\n**Core's layers, top to bottom** (read by the test):\n\n"
            "1. `top`: what `runs` it\n2. `low`, `mid.high`, `loose`: a line\n   continued, `not_a_name`\n"
            "3. `mid`, `gone`\n\nafter\n4. `not_a_layer`\n")
    layers = design_layers(text)
    assert layers == [["top"], ["low", "mid.high", "loose"], ["mid", "gone"]]
    graph = {f"{CORE}.{m}": set() for m in ("top", "low", "mid", "mid.high", "mid.other", "stray")}
    graph[f"{CORE}.top"] = {f"{CORE}.low"}  # down: fine
    graph[f"{CORE}.mid.other"] = {f"{CORE}.mid.high"}  # up: mid.high sits on line 2, apart from mid
    assert layer_problems(graph, layers) == [
        f"{CORE}.stray has no line in the list",
        "the list names loose, no module of interviewsim_core",
        "the list names gone, no module of interviewsim_core",
        f"{CORE}.mid.other (line 3) imports {CORE}.mid.high (line 2)"]
