"""No import cycle in ``interviewsim_dagster``, counting imports inside functions (issue 30).

An import inside a function dodges Python's circular-import error, not the tangle: the modules still
need each other. So every ``import`` statement of every module is read with ``ast`` (module level and
function level, relative and absolute), and the modules it names inside the package form a graph
that must have no cycle. The layers read top-down: launch -> engine -> factory -> support modules.

A package's ``__init__`` that Python runs on the way to a submodule (``from .defs.corpus import x``
runs ``defs/__init__``) is not counted as an edge: only the module a statement names is.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "interviewsim_dagster"
ROOT = Path(__file__).resolve().parents[2] / PACKAGE


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(root: Path) -> dict[str, Path]:
    return {_module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of the package that ``name`` imports anywhere in its body."""
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
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # ``from . import engine``
    return {m for m in found if m in known and m != name}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    modules = _modules(root)
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


def test_interviewsim_dagster_has_no_import_cycle():
    graph = import_graph()
    found = components(graph)
    assert not found, "import cycles in interviewsim_dagster (function-level imports count):\n" + "\n".join(
        f"{' -> '.join(_one_cycle(graph, comp))} (modules importing each other: {', '.join(sorted(comp))})"
        for comp in found)


def test_the_check_finds_a_cycle_through_a_function_level_relative_import(tmp_path):
    pkg = tmp_path / PACKAGE
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "top.py").write_text("from .sub.low import f\n")
    (pkg / "sub" / "low.py").write_text("def f():\n    from .. import top\n    return top\n")
    (pkg / "other.py").write_text(f"import {PACKAGE}.top\n")
    graph = {name: _imports(name, path, set(_modules(pkg))) for name, path in _modules(pkg).items()}
    assert graph[f"{PACKAGE}.other"] == {f"{PACKAGE}.top"}
    assert cycles(graph) == [[f"{PACKAGE}.sub.low", f"{PACKAGE}.top", f"{PACKAGE}.sub.low"]]
