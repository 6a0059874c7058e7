"""The paper's method names as presets, the paper's method order, and the method-name grammar.

Paper names (section 3): Simple, Wiki, Wiki-Long, Chrono-100/500/1000, Memory-k (retrieval),
Random-100, Hybrid-50+50. Any other method is spelled ``<strategy>[-<n>...]`` with one number per
parameter of a registered strategy, e.g. ``chronological-20``, ``retrieval-5``, ``random-7``,
``hybrid-3-3``; a strategy's aliases work as prefixes too (``chrono-``, ``memory-``). The grammar
is read from the registry, so a newly registered strategy is nameable without an edit here.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Iterable, Mapping

from ..errors import ConfigError
from ._base import MethodSpec, all_strategies


def _spec(name: str, strategy: str, **params: int) -> MethodSpec:
    return MethodSpec(name=name, strategy=strategy, params=params)


# The preset lines: a strategy the paper names gets its line here.
_PRESETS: dict[str, MethodSpec] = {
    s.name: s
    for s in (
        _spec("simple", "no-context"),
        _spec("wiki", "short-profile"),
        _spec("wiki-long", "long-profile"),
        _spec("chrono-100", "chronological", m=100),
        _spec("chrono-500", "chronological", m=500),
        _spec("chrono-1000", "chronological", m=1000),
        _spec("memory-10", "retrieval", k=10),
        _spec("memory-50", "retrieval", k=50),
        _spec("memory-100", "retrieval", k=100),
        _spec("random-100", "random", k=100),
        _spec("hybrid-50-50", "hybrid", k1=50, k2=50),
    )
}
PRESETS: Mapping[str, MethodSpec] = MappingProxyType(_PRESETS)
"""Preset name -> spec (read-only view; ``register_preset`` adds to it)."""

PAPER_METHODS: tuple[str, ...] = (
    "simple", "wiki", "wiki-long", "memory-100", "chrono-100", "chrono-500", "chrono-1000", "hybrid-50-50",
)
"""The eight configurations of the paper's Table 1, in its row order."""

ABLATION_METHODS: tuple[str, ...] = ("memory-10", "memory-50", "random-100")
"""The paper's ablations: Relevance-10/50 and the Random-100 control."""

METHOD_ORDER: tuple[str, ...] = PAPER_METHODS + ABLATION_METHODS
"""The paper's order (Table 1, then the ablations): the one order tables, reports and runs use."""

DEFAULT_METHODS: tuple[str, ...] = METHOD_ORDER
"""The default run: the paper's eight plus its three ablations."""

_NUMBER = re.compile(r"0|[1-9][0-9]*")


def register_preset(name: str, strategy: str, **params: int) -> MethodSpec:
    """Add a named preset (a plugin's paper name). Raises ConfigError on a taken name or bad spec."""
    if name in _PRESETS:
        raise ConfigError(f"preset {name!r} already exists")
    spec = _spec(name, strategy, **params)
    _PRESETS[name] = spec
    return spec


def grammar_help() -> str:
    """Every accepted ``<strategy>-<n>`` form, e.g. ``chronological-<m>, chrono-<m>, ..., hybrid-<k1>-<k2>``."""
    forms = []
    for s in all_strategies():
        for prefix in (s.name, *s.aliases):
            forms.append(prefix + "".join(f"-<{p}>" for p in s.params))
    return ", ".join(forms)


def valid_names() -> str:
    """Human-readable list of accepted names, for error messages and CLI help."""
    return f"presets: {', '.join(PRESETS)}; or the grammar: {grammar_help()}"


def _parse_grammar(name: str) -> tuple[str, dict[str, int]] | None:
    """(strategy, params) when ``name`` is ``<prefix>(-<n>){len(params)}`` of a registered strategy."""
    for s in all_strategies():
        for prefix in (s.name, *s.aliases):
            if not s.params:
                if name == prefix:
                    return s.name, {}
                continue
            if not name.startswith(prefix + "-"):
                continue
            numbers = name[len(prefix) + 1:].split("-")
            if len(numbers) == len(s.params) and all(_NUMBER.fullmatch(n) for n in numbers):
                return s.name, {p: int(n) for p, n in zip(s.params, numbers)}
    return None


def resolve_method(name_or_spec: str | MethodSpec) -> MethodSpec:
    """A ``MethodSpec`` from a preset name, a grammar name, or a spec (returned as is).

    The spec's name is the name given, so results are labelled the way the user asked.

    Raises:
        ConfigError: the name is neither a preset nor valid grammar (or its counts are invalid,
            e.g. ``chrono-0``); lists the valid names.
    """
    if isinstance(name_or_spec, MethodSpec):
        return name_or_spec
    if not isinstance(name_or_spec, str):
        raise ConfigError(f"a method is a name or a MethodSpec, got {name_or_spec!r}")
    label, base = split_key(name_or_spec)
    if label is not None:  # another generator's method: the same strategy, labelled with its key
        from .calibration import CALIBRATION_METHODS

        if base in CALIBRATION_METHODS:
            raise ConfigError(f"method {name_or_spec!r}: the calibration method {base!r} calls no generator and is "
                              f"shared by every generator; write {base!r}")
        spec = resolve_method(base)
        return MethodSpec(name=name_or_spec, strategy=spec.strategy, params=dict(spec.params))
    name = name_or_spec
    if name in PRESETS:
        return PRESETS[name]
    parsed = _parse_grammar(name)
    if parsed is None:
        raise ConfigError(f"unknown method {name!r}; valid names are {valid_names()}")
    try:
        return MethodSpec(name=name, strategy=parsed[0], params=parsed[1])
    except ConfigError as exc:
        raise ConfigError(f"invalid method {name!r} ({exc}); valid names are {valid_names()}") from None


GENERATOR_SEPARATOR = "/"
"""Between a generator's label and a method in a method key: ``claude-sonnet-4-6/chrono-100``."""


def split_key(key: str) -> tuple[str | None, str]:
    """(generator label, method) of a method key; the label is ``None`` for the study's first generator, whose keys
    are the plain method names (so a study that adds a generator keeps every partition it had)."""
    label, sep, method = key.partition(GENERATOR_SEPARATOR)
    return (label, method) if sep else (None, key)


def generator_and_method(key: str, first_label: str) -> tuple[str, str]:
    """(generator label, method) of a method key, given the label of the study's first generator (whose keys are
    plain): ``warm/simple`` -> ("warm", "simple"), ``simple`` -> (first_label, "simple"), and a calibration method,
    which calls no generator and is shared by all, -> ("", "reference")."""
    from .calibration import CALIBRATION_METHODS

    label, method = split_key(key)
    if label is None and method in CALIBRATION_METHODS:
        return "", method
    return (first_label if label is None else label), method


def expand_keys(methods: Iterable[str], labels: Iterable[str]) -> tuple[str, ...]:
    """The method keys of a study with more than one generator: each method as named (the first generator's, and
    the calibration methods, which call no generator and are shared), then ``<label>/<method>`` for each other
    generator's ``labels`` and each generation method. Idempotent: keys already there stay, once."""
    from .calibration import CALIBRATION_METHODS

    methods = list(methods)
    plain = [m for m in methods if split_key(m)[0] is None]
    extra = [f"{label}{GENERATOR_SEPARATOR}{m}" for label in labels for m in plain if m not in CALIBRATION_METHODS]
    return tuple(dict.fromkeys([*methods, *extra]))


def resolve_methods(names: list[str] | tuple[str, ...]) -> list[MethodSpec]:
    """Resolve several names, reporting every bad one at once and refusing duplicates."""
    bad, out, seen = [], [], set()
    for n in names:
        try:
            spec = resolve_method(n)
        except ConfigError:
            bad.append(repr(n))
            continue
        if spec.name in seen:
            raise ConfigError(f"method {spec.name!r} is listed twice")
        seen.add(spec.name)
        out.append(spec)
    if bad:
        raise ConfigError(f"unknown method(s) {', '.join(bad)}; valid names are {valid_names()}")
    return out


def order_methods(methods: Iterable[str]) -> list[str]:
    """Distinct method names in ``METHOD_ORDER``, anything else after them alphabetically."""
    uniq = set(methods)
    known = [m for m in METHOD_ORDER if m in uniq]
    return known + sorted(uniq - set(known))
