"""The seven context strategies (seed 000, "Response generation") and the paper's method presets.

Typical use::

    spec = resolve_method("memory-100")
    contexts = select_contexts(split, spec, [(qa_id, question), ...], HashingEmbedder(), seed=0)
"""

from ._base import (
    CHRONOLOGICAL,
    HYBRID,
    LONG_PROFILE,
    NO_CONTEXT,
    RANDOM,
    RETRIEVAL,
    SHORT_PROFILE,
    STRATEGIES,
    STRATEGY_PARAMS,
    GenerationContext,
    MethodSpec,
    ensure_train_only,
)
from .presets import DEFAULT_METHODS, PAPER_METHODS, PRESETS, resolve_method, resolve_methods, valid_names
from .retrieval import train_question_matrix
from .select import select_contexts, select_group_context

__all__ = [
    "CHRONOLOGICAL",
    "HYBRID",
    "LONG_PROFILE",
    "NO_CONTEXT",
    "RANDOM",
    "RETRIEVAL",
    "SHORT_PROFILE",
    "STRATEGIES",
    "STRATEGY_PARAMS",
    "DEFAULT_METHODS",
    "PAPER_METHODS",
    "PRESETS",
    "GenerationContext",
    "MethodSpec",
    "ensure_train_only",
    "resolve_method",
    "resolve_methods",
    "select_contexts",
    "select_group_context",
    "train_question_matrix",
    "valid_names",
]
