"""The context strategies (seed 000, "Response generation"), their registry and the paper's presets.

Typical use::

    spec = resolve_method("memory-100")
    contexts = select_contexts(split, spec, [(qa_id, question), ...], HashingEmbedder(), seed=0)

Adding a strategy: a new module here with a ``@register_strategy`` class (see ``_base.Strategy``);
it is imported, hence registered, with this package (docs/DESIGN.md, "Strategies").
"""

from ._base import (
    CONTEXT_BLANK_PROFILE,
    CONTEXT_OK,
    CONTEXT_STATES,
    CONTEXT_TRUNCATED,
    BaseStrategy,
    GenerationContext,
    MethodSpec,
    SelectionInputs,
    Strategy,
    ensure_train_only,
    load_strategy_modules,
    register_strategy,
    registered_strategies,
    strategy_for,
    unregister_strategy,
)

load_strategy_modules()  # every strategy module registers itself; presets need them registered

from .presets import (  # noqa: E402
    ABLATION_METHODS,
    DEFAULT_METHODS,
    GENERATOR_SEPARATOR,
    METHOD_ORDER,
    PAPER_METHODS,
    PRESETS,
    expand_keys,
    generator_and_method,
    order_methods,
    register_preset,
    resolve_method,
    resolve_methods,
    split_key,
    valid_names,
)
from .profiles import LONG_PROFILE_MAX_CHARS  # noqa: E402
from .retrieval import train_question_matrix  # noqa: E402
from .select import select_contexts, select_group_context  # noqa: E402

__all__ = [
    "ABLATION_METHODS",
    "CONTEXT_BLANK_PROFILE",
    "CONTEXT_OK",
    "CONTEXT_STATES",
    "CONTEXT_TRUNCATED",
    "DEFAULT_METHODS",
    "GENERATOR_SEPARATOR",
    "LONG_PROFILE_MAX_CHARS",
    "METHOD_ORDER",
    "PAPER_METHODS",
    "PRESETS",
    "BaseStrategy",
    "GenerationContext",
    "MethodSpec",
    "SelectionInputs",
    "Strategy",
    "ensure_train_only",
    "expand_keys",
    "generator_and_method",
    "order_methods",
    "register_preset",
    "register_strategy",
    "registered_strategies",
    "resolve_method",
    "resolve_methods",
    "select_contexts",
    "select_group_context",
    "split_key",
    "strategy_for",
    "train_question_matrix",
    "unregister_strategy",
    "valid_names",
]
