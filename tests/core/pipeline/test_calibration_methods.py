"""Calibration methods (issue 32): candidates built without a model, never sent, and the leak guard
still over every real generation prompt."""

from __future__ import annotations

import pandas as pd
import pytest

from interviewsim_core.errors import ConfigError
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.calls import CALIBRATION_MODEL, run_calls
from interviewsim_core.pipeline.generation import assemble_generations, plan_generations
from interviewsim_core.pipeline.leaks import LeakDetector
from interviewsim_core.pipeline.mcq import plan_mcq_answers
from interviewsim_core.strategies import resolve_method, select_contexts
from interviewsim_core.strategies.calibration import peer_of
from interviewsim_core.strategies.retrieval import retrieve

GEN = ModelConfig(model="scripted/gen")
REAL = ("simple", "wiki", "chrono-5", "memory-3", "hybrid-2-2", "random-3")


class NoCalls:
    """A gateway that fails the test if anything is sent."""

    def run_many(self, calls):
        raise AssertionError(f"{len(calls)} calls were sent")


def test_names_resolve_and_are_calibration():
    for name in ("reference", "copy-nearest", "other-person"):
        assert resolve_method(name).is_calibration
    assert not resolve_method("memory-3").is_calibration
    assert resolve_method("copy-nearest").needs_embedder and not resolve_method("reference").needs_embedder


def test_a_calibration_method_has_no_context_to_select(split, embedder):
    with pytest.raises(ConfigError, match="no generation prompt"):
        select_contexts(split, "reference", [("q", "a question")], embedder)


def test_reference_is_the_held_out_response_and_nothing_is_sent(split):
    planned = plan_generations(split, "reference", GEN)
    assert all(p.request.messages == () and p.given is not None for p in planned)
    table = assemble_generations(planned, run_calls(NoCalls(), planned))
    assert table["generated"].tolist() == [p.response.strip() or p.response for p in split.test_pairs]
    assert (table["status"] == "ok").all() and (table["model"] == CALIBRATION_MODEL).all()
    assert table["cost_usd"].sum() == 0 and table["context_qa_ids"].map(list).tolist() == \
        [[p.qa_id] for p in split.test_pairs]


def test_copy_nearest_copies_the_nearest_training_response(split, embedder):
    planned = plan_generations(split, "copy-nearest", GEN, embedder)
    nearest = retrieve(split, [p.question for p in split.test_pairs], 1, embedder)
    assert [p.given.response for p in planned] == [r[0].response for r in nearest]
    assert [p.row["context_qa_ids"] for p in planned] == [[r[0].qa_id] for r in nearest]
    train = {p.qa_id for p in split.train_pairs}
    assert all(p.row["context_qa_ids"][0] in train for p in planned)


def test_other_person_is_the_next_id_and_their_nearest_training_response(splits, embedder):
    ids = sorted(splits)
    assert peer_of(ids[0], ids) == ids[1] and peer_of(ids[-1], ids) == ids[0]
    assert peer_of(ids[0], [ids[0]]) is None
    me, other = splits[ids[0]], splits[ids[1]]
    planned = plan_generations(me, "other-person", GEN, embedder, peer=other)
    nearest = retrieve(other, [p.question for p in me.test_pairs], 1, embedder)
    assert [p.given.response for p in planned] == [r[0].response for r in nearest]
    alone = plan_generations(me, "other-person", GEN, embedder, peer=None)
    assert all(p.given is None and "no other personality" in p.failure for p in alone)


def test_every_real_generation_prompt_is_still_leak_checked(split, embedder):
    """A run with the calibration methods: every prompt that exists is a real method's, and clean;
    the calibration rows have none. A planted leak in a real prompt is still found."""
    detector = LeakDetector(split)
    prompts = 0
    for method in REAL + ("reference", "copy-nearest", "other-person"):
        for p in plan_generations(split, method, GEN, embedder, peer=split):
            if resolve_method(method).is_calibration:
                assert p.request.messages == ()
                continue
            prompts += 1
            assert detector.find(list(p.request.messages)) == [], (method, p.key)
    assert prompts == len(REAL) * len(split.test_pairs)
    leaked = list(plan_generations(split, "simple", GEN)[0].request.messages)
    leaked[-1] = {**leaked[-1], "content": leaked[-1]["content"] + "\n" + split.test_pairs[0].response}
    assert detector.find(leaked)


def test_mcq_reference_is_open_book_and_marked(split, embedder):
    items = pd.DataFrame([{"personality_id": split.personality_id, "status": "ok", "n_options": 4,
                           "interview_id": p.interview_id, "qa_id": p.qa_id, "item_id": f"{p.qa_id}#0",
                           "question": p.question, "options": ["a", "b", "c", "d"], "correct_label": "A",
                           "labels": ["A", "B", "C", "D"], "kinds": ["correct", "opposite_negation", "near_miss", "plausible_misconception"],
                           "texts": ["a", "b", "c", "d"]} for p in split.test_pairs])
    ref = plan_mcq_answers(split, items, "reference", GEN)
    detector = LeakDetector(split)
    assert ref and all(p.row["_open_book"] for p in ref)
    assert all(detector.find(list(p.request.messages)) for p in ref)  # the held-out text is there, by design
    near = plan_mcq_answers(split, items, "copy-nearest", GEN, embedder)
    assert near and not any(p.row["_open_book"] for p in near)
    assert all(detector.find(list(p.request.messages)) == [] for p in near)


def test_the_cost_plan_counts_their_judge_calls_and_no_generation(tmp_path):
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.plan import plan_run

    cfg = EvalConfig(data_root=tmp_path, methods=("simple", "reference", "copy-nearest"),
                     embedding_model="offline/hashing")
    plan = plan_run(cfg, personalities=["SYN_AUERLUND"])
    lines = {(line.step, line.method): line.calls for line in plan.lines}
    assert lines[("generations", "simple")] > 0
    assert not any(step == "generations" and m in ("reference", "copy-nearest") for step, m in lines)
    for m in ("reference", "copy-nearest"):
        assert lines[("content_similarity", m)] == lines[("content_similarity", "simple")]
        assert lines[("factual_consistency", m)] == lines[("factual_consistency", "simple")]
