"""Nothing derived from held-out responses reaches a generation or MCQ-answering context."""

from __future__ import annotations

import pytest
from fakes import ScriptedGateway
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interviewsim_core.contracts import generation as generation_contract
from interviewsim_core.pipeline import references, generation, mcq
from interviewsim_core.pipeline.leaks import LeakDetector, heldout_leaks, sentences
from interviewsim_core.strategies import GenerationContext

METHOD_NAMES = ["simple", "wiki", "wiki-long", "chrono-3", "chrono-1000", "memory-2", "memory-50",
                "random-4", "hybrid-3-2", "hybrid-0-5", "hybrid-5-0"]


@pytest.fixture(scope="module")
def artefacts(splits, models):
    gw = ScriptedGateway()
    out = {}
    for pid, sp in splits.items():
        fact = references.build_fact_summary(sp, models["builder"], gw)
        atomic = references.build_atomic_items(sp, models["builder"], gw)
        items = references.build_mcq_items(sp, atomic, models["builder"], gw, seed=0)
        out[pid] = (fact, items)
    return out


def _detector(split, fact):
    return LeakDetector(split, fact["summary"].dropna().tolist())


def test_detector_finds_planted_text(split, artefacts):
    fact, _ = artefacts[split.personality_id]
    leaked = split.test_pairs[0].response
    ctx = GenerationContext(profile_text=None, examples=(split.test_pairs[0],), n_requested=1, n_used=1,
                            strategy="chronological")
    msgs = generation_contract.build_messages(split.personality_id, split.test_pairs[1].question, ctx)
    found = heldout_leaks(split, msgs, fact["summary"].tolist())
    assert " ".join(leaked.split()) in found
    summary_sentence = sentences(fact["summary"].iloc[0])[0]
    prompt = f"Profile:\n{summary_sentence}\nNew question: x"
    assert summary_sentence in heldout_leaks(split, prompt, fact["summary"].tolist())


def test_detector_ignores_text_the_generator_may_see(split):
    train = split.train_pairs[0]
    prompt = f"{split.doc.personality.long_profile}\n{train.question}\n{train.response}\n" + \
        "\n".join(p.question for p in split.test_pairs)
    assert heldout_leaks(split, prompt) == []
    # a held-out sentence that also occurs in a training response is shared material, not a leak
    long_train = next(s for p in split.train_pairs for s in sentences(p.response))
    assert long_train not in LeakDetector(split, [long_train]).fragments


def test_exempt_text_is_not_reported(split):
    s = sentences(split.test_pairs[0].response)
    if not s:
        pytest.skip("first held-out response has no long sentence")
    assert heldout_leaks(split, f"Q1: {s[0]}", exempt=[s[0]]) == []
    assert heldout_leaks(split, f"Q1: {s[0]}") != []


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(METHOD_NAMES), seed=st.integers(0, 2**31 - 1), which=st.integers(0, 100))
def test_no_generation_prompt_leaks(splits, artefacts, models, embedder, method, seed, which):
    pid = sorted(splits)[which % len(splits)]
    split = splits[pid]
    detector = _detector(split, artefacts[pid][0])
    planned = generation.plan_generations(split, method, models["generator"], embedder, seed)
    assert len(planned) == len(split.test_pairs)
    for p in planned:
        assert detector.find(list(p.request.messages)) == [], (method, seed, p.key)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(METHOD_NAMES), seed=st.integers(0, 2**31 - 1), which=st.integers(0, 100))
def test_no_mcq_answering_context_leaks(splits, artefacts, models, embedder, method, seed, which):
    pid = sorted(splits)[which % len(splits)]
    split = splits[pid]
    fact, items = artefacts[pid]
    detector = _detector(split, fact)
    planned = mcq.plan_mcq_answers(split, items, method, models["generator"], embedder, seed)
    assert planned
    for p in planned:
        # The items themselves are the test; everything else in the prompt must be clean.
        shown = [t for item in p.row["_items"] for t in (item.question, *item.texts)]
        assert detector.find(list(p.request.messages), exempt=shown) == [], (method, seed, p.key)


def test_mcq_context_follows_the_seed(split, artefacts, models, embedder):
    _, items = artefacts[split.personality_id]
    planned = mcq.plan_mcq_answers(split, items, "hybrid-2-3", models["generator"], embedder, 0)
    for p in planned:
        text = "\n".join(m["content"] for m in p.request.messages)
        assert split.doc.personality.profile.strip() not in text  # hybrid: no profile
        assert "Training example question:" in text
    groups = sorted((p.row["interview_id"], p.row["n_options"]) for p in planned)
    assert groups == sorted((it, n) for it in {p.interview_id for p in split.test_pairs} for n in (3, 4))
