"""Provider prefix caches: a personality's prompts share a byte-identical static prefix, per method.

OpenAI, Gemini and vLLM cache the longest repeated prompt prefix automatically; Anthropic caches
what is marked. Either way the saving exists only if every prompt of a personality starts with the
same bytes for as long as its context is the same: the system message always, and the whole
context block for methods whose context does not depend on the question (profiles, the latest
m pairs). This checks it for every preset, on every sample personality.
"""

from __future__ import annotations

import os

import pytest

from interviewsim_core.pipeline.generation import plan_generations
from interviewsim_core.strategies import PRESETS, resolve_method

QUESTION_INDEPENDENT = {"no-context", "short-profile", "long-profile", "chronological"}
"""Strategies whose context is the same for every question of a personality."""


def _common_prefix(texts: list[str]) -> str:
    return os.path.commonprefix(texts)


def test_every_preset_is_classified():
    assert {resolve_method(m).strategy for m in PRESETS} - QUESTION_INDEPENDENT == {"retrieval", "random", "hybrid"}


@pytest.mark.parametrize("method", sorted(PRESETS))
def test_static_prefix_is_byte_identical_across_a_personality_s_questions(method, splits, models, embedder):
    spec = resolve_method(method)
    for pid, sp in splits.items():
        planned = plan_generations(sp, spec, models["generator"], embedder)
        assert len(planned) >= 2
        systems = {p.request.messages[0]["content"] for p in planned}
        assert len(systems) == 1, f"{method}/{pid}: system message varies"
        users = [p.request.messages[1]["content"] for p in planned]
        shared = _common_prefix(users)
        if spec.strategy in QUESTION_INDEPENDENT:
            # Everything before the question is shared: the context block is the same bytes.
            context_end = min(u.index("New question: ") for u in users)
            assert len(shared) >= context_end, f"{method}/{pid}: context differs between questions"
