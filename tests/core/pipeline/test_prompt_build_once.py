"""Prompt building per question (issue 13): a question-independent context is rendered once per
personality and method, not once per question, and the prompts stay those ``build_messages`` gives."""

from __future__ import annotations

import pytest

from interviewsim_core.contracts import generation as contract
from interviewsim_core.pipeline.generation import plan_generations
from interviewsim_core.strategies import resolve_method, select_contexts


@pytest.mark.parametrize("method", ["chrono-8", "short-profile", "memory-3", "simple"])
def test_context_is_rendered_once_per_shared_context_and_prompts_are_unchanged(method, splits, models, embedder,
                                                                               monkeypatch):
    spec = resolve_method(method)
    sp = splits[sorted(splits)[0]]
    questions = [(p.qa_id, p.question) for p in sp.test_pairs]
    contexts = select_contexts(sp, spec, questions, embedder)
    expected = [contract.build_messages(sp.personality_id, p.question, ctx) for p, ctx in zip(sp.test_pairs, contexts)]

    rendered, prefixes = [], []
    real = contract.render_context
    monkeypatch.setattr(contract, "render_context", lambda ctx: rendered.append(ctx) or real(ctx))
    monkeypatch.setattr(contract, "remember_prefix", prefixes.append)
    planned = plan_generations(sp, spec, models["generator"], embedder)

    assert [list(p.request.messages) for p in planned] == expected
    assert len(rendered) == len({id(c) for c in contexts})
    if spec.strategy in ("chronological", "short-profile", "no-context"):
        assert len(rendered) == 1 < len(planned)
        assert len(prefixes) == 1 and all(p.request.messages[1]["content"].startswith(prefixes[0]) for p in planned)
    else:  # a context per question is no shared prefix: remembering it would only evict the useful ones
        assert prefixes == []


def test_the_builder_refuses_what_build_messages_refuses(split):
    build = contract.messages_builder(split.personality_id, None)
    with pytest.raises(TypeError):
        build(split.test_pairs[0])  # a pair object, whose response must never reach a prompt
    with pytest.raises(ValueError):
        build("  ")
    with pytest.raises(ValueError):
        contract.messages_builder(" ", None)
