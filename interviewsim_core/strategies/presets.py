"""The paper's method names as presets, and the ``<strategy>-<n>`` grammar for everything else.

Paper names (section 3): Simple, Wiki, Wiki-Long, Chrono-100/500/1000, Memory-k (retrieval),
Random-100, Hybrid-50+50. Any other count is spelled with the grammar, e.g.
``chronological-20``, ``retrieval-5``, ``random-7``, ``hybrid-3-3``; ``chrono-`` and ``memory-``
are accepted as the paper's aliases of ``chronological-`` and ``retrieval-``.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Mapping

from ..errors import ConfigError
from ._base import (
    CHRONOLOGICAL,
    HYBRID,
    LONG_PROFILE,
    NO_CONTEXT,
    RANDOM,
    RETRIEVAL,
    SHORT_PROFILE,
    MethodSpec,
)


def _spec(name: str, strategy: str, **params: int) -> MethodSpec:
    return MethodSpec(name=name, strategy=strategy, params=params)


PRESETS: Mapping[str, MethodSpec] = MappingProxyType(
    {
        s.name: s
        for s in (
            _spec("simple", NO_CONTEXT),
            _spec("wiki", SHORT_PROFILE),
            _spec("wiki-long", LONG_PROFILE),
            _spec("chrono-100", CHRONOLOGICAL, m=100),
            _spec("chrono-500", CHRONOLOGICAL, m=500),
            _spec("chrono-1000", CHRONOLOGICAL, m=1000),
            _spec("memory-10", RETRIEVAL, k=10),
            _spec("memory-50", RETRIEVAL, k=50),
            _spec("memory-100", RETRIEVAL, k=100),
            _spec("random-100", RANDOM, k=100),
            _spec("hybrid-50-50", HYBRID, k1=50, k2=50),
        )
    }
)

PAPER_METHODS: tuple[str, ...] = (
    "simple", "wiki", "wiki-long", "memory-100", "chrono-100", "chrono-500", "chrono-1000", "hybrid-50-50",
)
"""The eight configurations of the paper's Table 1, in its row order."""

DEFAULT_METHODS: tuple[str, ...] = PAPER_METHODS + ("random-100", "memory-10", "memory-50")
"""The paper's eight plus its Random-100 and Relevance-10/50 ablations: the default run."""

_PREFIXES = {
    "chronological": CHRONOLOGICAL,
    "chrono": CHRONOLOGICAL,
    "retrieval": RETRIEVAL,
    "memory": RETRIEVAL,
    "random": RANDOM,
}
_PARAM_OF = {CHRONOLOGICAL: "m", RETRIEVAL: "k", RANDOM: "k"}
_SINGLE = re.compile(r"^(chronological|chrono|retrieval|memory|random)-([1-9][0-9]*)$")
_HYBRID = re.compile(r"^hybrid-(0|[1-9][0-9]*)-(0|[1-9][0-9]*)$")
_PLAIN = {NO_CONTEXT: NO_CONTEXT, SHORT_PROFILE: SHORT_PROFILE, LONG_PROFILE: LONG_PROFILE}

GRAMMAR_HELP = (
    "no-context, short-profile, long-profile, chronological-<m>, chrono-<m>, retrieval-<k>, "
    "memory-<k>, random-<k>, hybrid-<k1>-<k2>"
)


def valid_names() -> str:
    """Human-readable list of accepted names, for error messages and CLI help."""
    return f"presets: {', '.join(PRESETS)}; or the grammar: {GRAMMAR_HELP}"


def resolve_method(name_or_spec: str | MethodSpec) -> MethodSpec:
    """A ``MethodSpec`` from a preset name, a grammar name, or a spec (returned as is).

    The spec's name is the name given, so results are labelled the way the user asked.

    Raises:
        ConfigError: the name is neither a preset nor valid grammar; lists the valid names.
    """
    if isinstance(name_or_spec, MethodSpec):
        return name_or_spec
    if not isinstance(name_or_spec, str):
        raise ConfigError(f"a method is a name or a MethodSpec, got {name_or_spec!r}")
    name = name_or_spec
    if name in PRESETS:
        return PRESETS[name]
    if name in _PLAIN:
        return MethodSpec(name=name, strategy=_PLAIN[name], params={})
    m = _SINGLE.match(name)
    if m:
        strategy = _PREFIXES[m.group(1)]
        return MethodSpec(name=name, strategy=strategy, params={_PARAM_OF[strategy]: int(m.group(2))})
    m = _HYBRID.match(name)
    if m and int(m.group(1)) + int(m.group(2)) > 0:
        return MethodSpec(name=name, strategy=HYBRID, params={"k1": int(m.group(1)), "k2": int(m.group(2))})
    raise ConfigError(f"unknown method {name!r}; valid names are {valid_names()}")


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
