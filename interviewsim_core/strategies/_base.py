"""What every context strategy shares: the method spec, the selected context, the leak guard.

A *method* is a strategy plus its parameters (``chrono-100`` = chronological with m=100).
A strategy turns one held-out *question* (id + text, never its response) into a
``GenerationContext``: profile text or training examples, and how many it asked for and got.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Sequence, Union

from ..errors import ConfigError
from ..split import HeldOutSplit, PairRef

NO_CONTEXT = "no-context"
SHORT_PROFILE = "short-profile"
LONG_PROFILE = "long-profile"
CHRONOLOGICAL = "chronological"
RANDOM = "random"
RETRIEVAL = "retrieval"
HYBRID = "hybrid"

# Parameters each strategy takes, in the order they appear in a method name ("hybrid-50-50").
STRATEGY_PARAMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        NO_CONTEXT: (),
        SHORT_PROFILE: (),
        LONG_PROFILE: (),
        CHRONOLOGICAL: ("m",),
        RANDOM: ("k",),
        RETRIEVAL: ("k",),
        HYBRID: ("k1", "k2"),
    }
)
STRATEGIES: tuple[str, ...] = tuple(STRATEGY_PARAMS)
EMBEDDING_STRATEGIES = frozenset({RETRIEVAL, HYBRID})


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
        if self.strategy not in STRATEGY_PARAMS:
            raise ConfigError(
                f"method {self.name!r}: unknown strategy {self.strategy!r}; valid: {', '.join(STRATEGIES)}"
            )
        expected = STRATEGY_PARAMS[self.strategy]
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
        if self.strategy == HYBRID:
            if params["k1"] + params["k2"] < 1:
                raise ConfigError(f"method {self.name!r}: hybrid needs k1 + k2 >= 1")
        elif expected and params[expected[0]] < 1:
            raise ConfigError(f"method {self.name!r}: {expected[0]} must be >= 1")
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
        return self.strategy in EMBEDDING_STRATEGIES

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form, for configs, tables and run metadata."""
        return {"name": self.name, "strategy": self.strategy, "params": dict(self.params)}


@dataclass(frozen=True)
class GenerationContext:
    """The context one generation prompt receives; the generation contract renders it.

    At most one of ``profile_text`` / ``examples`` is non-empty. ``examples`` are training
    pairs in the order they are shown. ``n_requested`` is the method's configured count,
    ``n_used`` what the training partition could supply (fewer when it is small).
    """

    profile_text: str | None
    examples: tuple[PairRef, ...]
    n_requested: int
    n_used: int
    strategy: str

    @property
    def qa_ids(self) -> tuple[str, ...]:
        """Ids of the examples in prompt order (the ``context_qa_ids`` column)."""
        return tuple(p.qa_id for p in self.examples)


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
