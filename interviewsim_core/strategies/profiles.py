"""The three strategies without training examples: no-context, short-profile, long-profile.

They are the paper's Simple, Wiki and Wiki-Long baselines: the model sees nothing, the
prepared profile, or the long profile. The context does not depend on the question.

Wiki-Long is the paper's context-length control: "the stored article excerpt (up to 10,000
characters, approximately 2,500 tokens)" (section 3). The cap is enforced here, so a longer
``long_profile`` in the input cannot turn the control into a different experiment; the cut is
recorded (``state="truncated"``, ``context_chars``). A blank profile is not the Simple baseline
in disguise: its context says ``blank_profile`` and the ``generations`` row carries it.
"""

from __future__ import annotations

from typing import Sequence

from ..split import HeldOutSplit
from ._base import (
    CONTEXT_BLANK_PROFILE,
    CONTEXT_OK,
    CONTEXT_TRUNCATED,
    BaseStrategy,
    GenerationContext,
    MethodSpec,
    Question,
    SelectionInputs,
    register_strategy,
)

LONG_PROFILE_MAX_CHARS = 10_000
"""The paper's Wiki-Long cap (section 3), in characters of the stripped profile text."""

_WORD_BOUNDARY_WINDOW = 200
"""How far back from the cap a cut may move to end on whitespace rather than mid-word."""


def cap_text(text: str, max_chars: int) -> tuple[str, bool]:
    """``text`` cut to at most ``max_chars`` characters (counted after stripping); ``(text, was_cut)``.

    Text within the cap is returned unchanged (the prompt strips it anyway). The cut ends at the last whitespace within the final ``_WORD_BOUNDARY_WINDOW`` characters
    before the cap (so the prompt does not end mid-word), else exactly at the cap.
    """
    if len(text.strip()) <= max_chars:
        return text, False
    head = text.strip()[:max_chars]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    if cut > 0 and cut >= max_chars - _WORD_BOUNDARY_WINDOW:
        head = head[:cut]
    return head.rstrip(), True


def _profile_context(spec: MethodSpec, text: str | None, max_chars: int | None = None) -> GenerationContext:
    if text is None or not text.strip():
        return GenerationContext(profile_text=None, examples=(), n_requested=0, n_used=0, strategy=spec.strategy,
                                 state=CONTEXT_BLANK_PROFILE)
    cut = False
    if max_chars is not None:
        text, cut = cap_text(text, max_chars)
    return GenerationContext(profile_text=text, examples=(), n_requested=0, n_used=0, strategy=spec.strategy,
                             state=CONTEXT_TRUNCATED if cut else CONTEXT_OK)


class _QuestionFree(BaseStrategy):
    """One context for every question of the personality."""

    def context(self, split: HeldOutSplit, spec: MethodSpec) -> GenerationContext:
        raise NotImplementedError

    def select(self, split: HeldOutSplit, spec: MethodSpec, questions: Sequence[Question],
               inputs: SelectionInputs) -> list[GenerationContext]:
        return [self.context(split, spec)] * len(questions)


@register_strategy
class NoContext(_QuestionFree):
    name = "no-context"

    def context(self, split: HeldOutSplit, spec: MethodSpec) -> GenerationContext:
        return GenerationContext(profile_text=None, examples=(), n_requested=0, n_used=0, strategy=spec.strategy)


@register_strategy
class ShortProfile(_QuestionFree):
    name = "short-profile"

    def context(self, split: HeldOutSplit, spec: MethodSpec) -> GenerationContext:
        return _profile_context(spec, split.doc.personality.profile)


@register_strategy
class LongProfile(_QuestionFree):
    name = "long-profile"

    def context(self, split: HeldOutSplit, spec: MethodSpec) -> GenerationContext:
        return _profile_context(spec, split.doc.personality.long_profile, LONG_PROFILE_MAX_CHARS)
