"""Nothing derived from held-out responses reaches a generation or MCQ-answering context.

The detector itself is checked against ``reference_leaks`` (the naive detector it replaced): same
fragments, same findings, on every prompt of every method and seed and on planted leaks.
"""

from __future__ import annotations

import sys

import pytest
import reference_leaks as ref
from fakes import ScriptedGateway
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from interviewsim_core.contracts import generation as generation_contract
from interviewsim_core.pipeline import generation, mcq, references
from interviewsim_core.pipeline.leaks import WHITESPACE, LeakDetector, heldout_leaks, normalise, sentences
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


def _agree(split, prompt, summaries=(), exempt=()):
    """The fast and the reference detector report the same; returns the findings."""
    fast, slow = LeakDetector(split, summaries), ref.LeakDetector(split, summaries)
    assert fast.fragments == slow.fragments
    found = fast.find(prompt, exempt)
    assert found == slow.find(prompt, exempt)
    return found


def test_detector_finds_planted_text(split, artefacts):
    fact, _ = artefacts[split.personality_id]
    leaked = split.test_pairs[0].response
    ctx = GenerationContext(profile_text=None, examples=(split.test_pairs[0],), n_requested=1, n_used=1,
                            strategy="chronological")
    msgs = generation_contract.build_messages(split.personality_id, split.test_pairs[1].question, ctx)
    found = heldout_leaks(split, msgs, fact["summary"].tolist())
    assert " ".join(leaked.split()) in found
    assert _agree(split, msgs, fact["summary"].tolist()) == found
    summary_sentence = sentences(fact["summary"].iloc[0])[0]
    prompt = f"Profile:\n{summary_sentence}\nNew question: x"
    assert summary_sentence in heldout_leaks(split, prompt, fact["summary"].tolist())
    assert summary_sentence in _agree(split, prompt, fact["summary"].tolist())


def test_detector_ignores_text_the_generator_may_see(split):
    train = split.train_pairs[0]
    prompt = f"{split.doc.personality.long_profile}\n{train.question}\n{train.response}\n" + \
        "\n".join(p.question for p in split.test_pairs)
    assert heldout_leaks(split, prompt) == []
    assert _agree(split, prompt) == []
    # a held-out sentence that also occurs in a training response is shared material, not a leak
    long_train = next(s for p in split.train_pairs for s in sentences(p.response))
    assert long_train not in LeakDetector(split, [long_train]).fragments
    assert LeakDetector(split, [long_train]).fragments == ref.LeakDetector(split, [long_train]).fragments


def test_exempt_text_is_not_reported(split):
    s = sentences(split.test_pairs[0].response)
    if not s:
        pytest.skip("first held-out response has no long sentence")
    assert heldout_leaks(split, f"Q1: {s[0]}", exempt=[s[0]]) == []
    assert heldout_leaks(split, f"Q1: {s[0]}") != []
    assert _agree(split, f"Q1: {s[0]}", exempt=[s[0]]) == []
    assert _agree(split, f"Q1: {s[0]}") != []


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


# --- the fast detector against the reference ------------------------------------------------------

def test_whitespace_list_is_every_split_character():
    assert set(WHITESPACE) == {c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()}


_TEXT = st.text(alphabet=st.sampled_from([*WHITESPACE, "a", "b", "\u00e9", "\u2019", "\U0001f600", ".", "\u241e"]),
                max_size=60)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT)
def test_normalise_is_split_join(text):
    assert normalise(text) == " ".join(text.split())


@pytest.mark.parametrize("seed", [0, 1, 2024])
@pytest.mark.parametrize("method", METHOD_NAMES)
def test_fast_detector_agrees_with_reference_on_every_prompt(splits, artefacts, models, embedder, method, seed):
    for pid, split in splits.items():
        fact, items = artefacts[pid]
        summaries = fact["summary"].dropna().tolist()
        fast, slow = LeakDetector(split, summaries), ref.LeakDetector(split, summaries)
        assert fast.fragments == slow.fragments
        for p in generation.plan_generations(split, method, models["generator"], embedder, seed):
            msgs = list(p.request.messages)
            assert fast.find(msgs) == slow.find(msgs), (pid, p.key)
        for p in mcq.plan_mcq_answers(split, items, method, models["generator"], embedder, seed):
            msgs = list(p.request.messages)
            shown = [t for item in p.row["_items"] for t in (item.question, *item.texts)]
            assert fast.find(msgs, exempt=shown) == slow.find(msgs, exempt=shown), (pid, p.key)
            assert fast.find(msgs) == slow.find(msgs), (pid, p.key)  # the items themselves: findings


_REFLOW = st.sampled_from(["\n", "  ", "\t", "\u00a0", "\u2003", " \n ", "\r\n", "\x1c"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fast_detector_agrees_with_reference_on_planted_leaks(splits, artefacts, models, embedder, data):
    pid = data.draw(st.sampled_from(sorted(splits)))
    split = splits[pid]
    summaries = artefacts[pid][0]["summary"].dropna().tolist()
    method = data.draw(st.sampled_from(METHOD_NAMES))
    planned = generation.plan_generations(split, method, models["generator"], embedder,
                                          data.draw(st.integers(0, 2**31 - 1)))
    base = "\n".join(m["content"] for m in planned[data.draw(st.integers(0, len(planned) - 1))].request.messages)
    sources = [p.response for p in split.test_pairs] + summaries + [p.response for p in split.train_pairs[:3]]
    prompt = base
    for _ in range(data.draw(st.integers(1, 3))):
        src = data.draw(st.sampled_from(sources))
        if data.draw(st.booleans()):  # a slice, possibly starting or ending inside a word
            i = data.draw(st.integers(0, len(src)))
            src = src[i:data.draw(st.integers(i, len(src)))]
        for w in data.draw(st.lists(_REFLOW, max_size=4)):
            src = src.replace(" ", w, data.draw(st.integers(1, 3)))
        pos = data.draw(st.integers(0, len(prompt)))
        prompt = prompt[:pos] + src + prompt[pos:]
    exempt = data.draw(st.lists(st.sampled_from(sources + sentences(" ".join(sources))), max_size=2))
    fast, slow = LeakDetector(split, summaries), ref.LeakDetector(split, summaries)
    assert fast.find(prompt, exempt) == slow.find(prompt, exempt)
    found = fast.find(prompt)
    assert found == slow.find(prompt)
    event("leak found" if found else "clean")
