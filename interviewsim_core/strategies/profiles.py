"""The three strategies without training examples: no-context, short-profile, long-profile.

They are the paper's Simple, Wiki and Wiki-Long baselines: the model sees nothing, the
prepared profile, or the long profile. The context does not depend on the question.
"""

from __future__ import annotations

from ..split import HeldOutSplit
from ._base import LONG_PROFILE, NO_CONTEXT, SHORT_PROFILE, GenerationContext, MethodSpec


def profile_context(split: HeldOutSplit, method: MethodSpec) -> GenerationContext:
    """The one context every question of this personality gets under a profile strategy."""
    if method.strategy == NO_CONTEXT:
        text = None
    elif method.strategy == SHORT_PROFILE:
        text = split.doc.personality.profile
    elif method.strategy == LONG_PROFILE:
        text = split.doc.personality.long_profile
    else:
        raise ValueError(f"{method.strategy!r} is not a profile strategy")
    return GenerationContext(profile_text=text, examples=(), n_requested=0, n_used=0, strategy=method.strategy)
