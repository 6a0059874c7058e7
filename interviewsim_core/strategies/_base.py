"""What every context strategy shares: the method spec, the selected context, the leak guard,
and the strategy registry.

A *strategy* is a selection rule (``chronological``); a *method* is a strategy plus its parameters
(``chrono-100`` = chronological with m=100). A strategy turns held-out *questions* (id + text,
never a response) into ``GenerationContext``s: profile text or training examples.

Strategies register themselves: a module of this package defines a class satisfying ``Strategy``
and decorates it with ``@register_strategy``; the package imports every such module on import
(``load_strategy_modules``). Method names, parameter validation, the ``<strategy>-<n>`` grammar,
``select_contexts`` and "does this method need an embedder" are all read from the registry, so a new
strategy is one new module (plus, if the paper names it, its line in ``presets.py``).
"""

from __future__ import annotations

import importlib
import keyword
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Protocol, Sequence, Union, runtime_checkable

from ..errors import ConfigError
from ..split import HeldOutSplit, PairRef

if TYPE_CHECKING:
    import numpy as np

    from ..embeddings import Embedder, EmbeddingCache

CONTEXT_OK = "ok"
CONTEXT_TRUNCATED = "truncated"
CONTEXT_BLANK_PROFILE = "blank_profile"
CONTEXT_STATES = (CONTEXT_OK, CONTEXT_TRUNCATED, CONTEXT_BLANK_PROFILE)
"""Values of ``GenerationContext.state`` (the ``context_state`` column of ``generations``)."""


@dataclass(frozen=True)
class MethodSpec:
    """A named generation method: one of the seven strategies and its counts.

    Frozen and hashable so it can key dicts and partitions; ``params`` is read-only.
    """

    name: str
    strategy: str
    params: Mapping[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigError(f"method name must be a non-blank string, got {self.name!r}")
        strategy = strategy_for(self.strategy, method=self.name)
        expected = strategy.params
        params = dict(self.params)
        if set(params) != set(expected):
            raise ConfigError(
                f"method {self.name!r}: strategy {self.strategy!r} takes parameters "
                f"{list(expected) or 'none'}, got {sorted(params) or 'none'}"
            )
        for key, value in params.items():
            # bool is an int subclass; "k=True" is a config mistake, not k=1.
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ConfigError(f"method {self.name!r}: {key} must be a non-negative integer, got {value!r}")
        problem = strategy.check_params(params)
        if problem:
            raise ConfigError(f"method {self.name!r}: {problem}")
        object.__setattr__(self, "params", MappingProxyType({k: params[k] for k in expected}))

    def __hash__(self) -> int:
        return hash((self.name, self.strategy, tuple(self.params.items())))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MethodSpec):
            return NotImplemented
        return (self.name, self.strategy, dict(self.params)) == (other.name, other.strategy, dict(other.params))

    def __repr__(self) -> str:
        return f"MethodSpec(name={self.name!r}, strategy={self.strategy!r}, params={dict(self.params)!r})"

    def __reduce__(self):
        # mappingproxy does not pickle; multiprocess executors ship specs between processes.
        return (MethodSpec, (self.name, self.strategy, dict(self.params)))

    @property
    def n_requested(self) -> int:
        """Training pairs this method asks for per question (0 for the profile strategies)."""
        return sum(self.params.values())

    @property
    def needs_embedder(self) -> bool:
        """Whether selecting this method's contexts embeds questions (retrieval-based strategies)."""
        return strategy_for(self.strategy).needs_embedder

    @property
    def is_calibration(self) -> bool:
        """A calibration method (reference, copy-nearest, other-person): no generation call is made."""
        return bool(getattr(strategy_for(self.strategy), "calibration", False))

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form, for configs, tables and run metadata."""
        return {"name": self.name, "strategy": self.strategy, "params": dict(self.params)}


@dataclass(frozen=True)
class GenerationContext:
    """The context one generation prompt receives; the generation contract renders it.

    At most one of ``profile_text`` / ``examples`` is non-empty. ``examples`` are training
    pairs in the order they are shown. ``n_requested`` is the method's configured count,
    ``n_used`` what the training partition could supply (fewer when it is small). ``state`` says
    whether the context is what the method asked for (``ok``), a profile cut to its cap
    (``truncated``), or a profile strategy that found a blank profile (``blank_profile``: the
    prompt then has no context, and the row says so instead of passing for Simple).
    """

    profile_text: str | None
    examples: tuple[PairRef, ...]
    n_requested: int
    n_used: int
    strategy: str
    state: str = CONTEXT_OK

    @property
    def qa_ids(self) -> tuple[str, ...]:
        """Ids of the examples in prompt order (the ``context_qa_ids`` column)."""
        return tuple(p.qa_id for p in self.examples)

    @property
    def profile_chars(self) -> int:
        """Characters of profile text in the prompt (0 without one)."""
        return len(self.profile_text or "")

    @property
    def context_chars(self) -> int:
        """Characters of context in the prompt (the ``context_chars`` column): the profile's, or the example
        pairs' questions and answers (retrieval and chronological methods; issue 33: their rows said 0)."""
        if self.profile_text:
            return len(self.profile_text)
        return sum(len(p.question) + len(p.response) for p in self.examples)


Question = tuple[str, str]
"""(qa_id, question text): what a strategy may see of a held-out pair."""

QuestionLike = Union[PairRef, Question, str]


def as_questions(questions: Sequence[QuestionLike]) -> list[Question]:
    """Reduce the caller's questions to (id, text) at once, so no response is ever held.

    A bare string is its own id (used for MCQ atomic questions that have no qa_id).
    """
    if isinstance(questions, (str, PairRef)) or (
        isinstance(questions, tuple) and len(questions) == 2 and all(isinstance(x, str) for x in questions)
    ):
        raise TypeError("pass a sequence of questions, not a single question")
    out: list[Question] = []
    for q in questions:
        if isinstance(q, PairRef):
            out.append((q.qa_id, q.question))
        elif isinstance(q, str):
            out.append((q, q))
        elif isinstance(q, tuple) and len(q) == 2 and isinstance(q[0], str) and isinstance(q[1], str):
            out.append((q[0], q[1]))
        else:
            raise TypeError(f"a question is a PairRef, a (qa_id, text) tuple or a string, got {q!r}")
    return out


def ensure_train_only(split: HeldOutSplit, examples: Sequence[PairRef]) -> None:
    """Refuse any example that is not one of this split's training pairs.

    Checked on every selection, not with ``assert`` (stripped under ``-O``): a held-out
    response in a generation prompt would silently invalidate the whole evaluation.
    """
    train_ids = _train_identity(split)
    for p in examples:
        if train_ids.get(p.qa_id) is not p:
            raise AssertionError(
                f"context leak: pair {p.qa_id!r} is not a training pair of {split.personality_id!r}"
            )


def _train_identity(split: HeldOutSplit) -> dict[str, PairRef]:
    cached = split.__dict__.get("_train_by_id")
    if cached is None:
        cached = {p.qa_id: p for p in split.train_pairs}
        # HeldOutSplit is frozen; memoise the lookup in its __dict__, as its cached_property values are.
        split.__dict__["_train_by_id"] = cached
    return cached


def context_from_examples(method: MethodSpec, examples: Sequence[PairRef], split: HeldOutSplit) -> GenerationContext:
    """Wrap selected training pairs after checking none comes from the test side."""
    ex = tuple(examples)
    ensure_train_only(split, ex)
    return GenerationContext(
        profile_text=None, examples=ex, n_requested=method.n_requested, n_used=len(ex), strategy=method.strategy
    )


# ---- the registry ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectionInputs:
    """What a strategy may use besides the split and the questions (all optional but ``seed``).

    Attributes:
        embedder: question embedder; strategies with ``needs_embedder`` refuse to run without it.
        seed: the run's configured seed (random sampling).
        train_embeddings: precomputed training-question matrix, shared across methods.
        cache: persistent embedding cache for the training questions.
    """

    embedder: Embedder | None = None
    seed: int = 0
    train_embeddings: np.ndarray | None = None
    cache: EmbeddingCache | None = None


@runtime_checkable
class Strategy(Protocol):
    """A context selection rule. Implement it (``BaseStrategy`` gives the usual defaults) and
    decorate the class with ``@register_strategy``.

    Attributes:
        name: the strategy's name, also its method-name prefix (``chronological`` -> ``chronological-20``).
        aliases: further method-name prefixes (the paper's ``chrono``, ``memory``).
        params: parameter names in method-name order (``hybrid-50-50`` -> ``("k1", "k2")``).
        needs_embedder: whether ``select`` embeds questions (the run then builds an embedder).
    """

    name: str
    aliases: tuple[str, ...]
    params: tuple[str, ...]
    needs_embedder: bool

    def check_params(self, params: Mapping[str, int]) -> str | None:
        """A problem with these (non-negative integer) values, or None when they are valid."""
        ...

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        """One context per (qa_id, text) question, in order; training pairs only."""
        ...

    def select_group(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
                     inputs: SelectionInputs, group_key: str) -> GenerationContext:
        """The one shared context of an MCQ answering prompt over ``questions``."""
        ...


class BaseStrategy:
    """Defaults for a ``Strategy``: no aliases, no embedder, every parameter >= 1, and a group
    context equal to the first question's (right for strategies that ignore the question)."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    params: ClassVar[tuple[str, ...]] = ()
    needs_embedder: ClassVar[bool] = False
    calibration: ClassVar[bool] = False
    """A calibration method (``calibration.py``): its candidate is built without a model, so it has
    no generation prompt at all; ``select`` refuses to run for it."""

    def check_params(self, params: Mapping[str, int]) -> str | None:
        low = [k for k in self.params if params[k] < 1]
        return f"{low[0]} must be >= 1" if low else None

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        raise NotImplementedError

    def select_group(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
                     inputs: SelectionInputs, group_key: str) -> GenerationContext:
        return self.select(split, spec, list(questions[:1]) or [("", "")], inputs)[0]


_REGISTRY: dict[str, Strategy] = {}


def register_strategy(cls: type) -> type:
    """Class decorator: instantiate ``cls`` (no arguments) and make it selectable by name.

    Raises:
        ConfigError: not a ``Strategy``, a malformed name or parameter, or a name/alias already taken.
    """
    strategy = cls()
    if not isinstance(strategy, Strategy):
        raise ConfigError(f"{cls.__name__} does not implement the Strategy protocol "
                          "(name, aliases, params, needs_embedder, check_params, select, select_group)")
    taken = {p: s.name for s in _REGISTRY.values() for p in (s.name, *s.aliases)}
    for prefix in (strategy.name, *strategy.aliases):
        if not isinstance(prefix, str) or not prefix or prefix != prefix.strip().lower():
            raise ConfigError(f"{cls.__name__}: strategy name/alias {prefix!r} must be non-blank lower case")
        if prefix in taken:
            raise ConfigError(f"{cls.__name__}: {prefix!r} is already the strategy {taken[prefix]!r} (or its alias)")
    for p in strategy.params:
        if not p.isidentifier() or keyword.iskeyword(p):
            raise ConfigError(f"{cls.__name__}: parameter {p!r} must be an identifier")
    _REGISTRY[strategy.name] = strategy
    return cls


def unregister_strategy(name: str) -> None:
    """Remove a registered strategy (for tests that register a throw-away one)."""
    _REGISTRY.pop(name, None)


def strategy_for(name: str, *, method: str | None = None) -> Strategy:
    """The registered strategy called ``name``.

    Raises:
        ConfigError: no such strategy; lists the registered ones.
    """
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        where = f"method {method!r}: " if method else ""
        raise ConfigError(f"{where}unknown strategy {name!r}; valid: {', '.join(registered_strategies())}") from None


def registered_strategies() -> tuple[str, ...]:
    """Names of the registered strategies, in registration order."""
    return tuple(_REGISTRY)


def all_strategies() -> tuple[Strategy, ...]:
    return tuple(_REGISTRY.values())


def load_strategy_modules() -> None:
    """Import every public module of this package, so each strategy module registers itself.

    Modules named here hold no strategy (``presets`` even needs the registry filled first);
    anything else that does not start with ``_`` is a strategy module.
    """
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not info.name.startswith("_") and info.name not in _NOT_STRATEGY_MODULES:
            importlib.import_module(f"{__package__}.{info.name}")


_NOT_STRATEGY_MODULES = frozenset({"presets", "select"})
