"""Asset checks fail when they should: a held-out leak, a missing generation, too many invalid outputs."""

from __future__ import annotations

import dagster as dg
import pytest
from dg_helpers import make_config

from interviewsim_core.llm.faults import FaultSpec
from interviewsim_core.pipeline import generation
from interviewsim_dagster import launch, resources
from interviewsim_dagster.definitions import build_definitions


def _run(cfg, selection: str):
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    specs = launch.plan_runs(defs, instance, cfg.methods, personalities=["TINY_ALDER"], selection=selection)
    return launch.execute(defs, instance, specs, progress=lambda _m: None)


@pytest.fixture
def cfg(tiny_corpus, tmp_path):
    return make_config(tiny_corpus, tmp_path / "data", methods="simple")


def test_leak_check_fails_when_a_prompt_holds_heldout_text(cfg, monkeypatch):
    real = generation.plan_generations

    def leaky(split, *args, **kw):
        planned = real(split, *args, **kw)
        leaked = split.test_pairs[0].response  # a bug that pastes a held-out answer into the context
        req = planned[0].request
        messages = (*req.messages[:-1], {**req.messages[-1], "content": leaked + "\n" + req.messages[-1]["content"]})
        return [planned[0]._replace(request=req.model_copy(update={"messages": messages})), *planned[1:]]

    monkeypatch.setattr(generation, "plan_generations", leaky)
    (outcome,) = _run(cfg, "generations")
    assert "generations:no_heldout_text_in_generation_prompts" in outcome.checks_failed
    assert "generations:one_generation_per_heldout_question" not in outcome.checks_failed


def test_one_generation_per_question_check_fails_on_a_missing_row(cfg, monkeypatch):
    real = generation.assemble_generations
    monkeypatch.setattr(generation, "assemble_generations", lambda planned, results: real(planned, results).iloc[1:])
    (outcome,) = _run(cfg, "generations")
    assert outcome.checks_failed == ["generations:one_generation_per_heldout_question"]


def test_invalid_rate_check_fails_when_outputs_break_their_contract(cfg, monkeypatch):
    from interviewsim_core.llm.gateway import Gateway

    monkeypatch.setattr(resources, "_gateway_for",
                        lambda *_a: Gateway(cache=None, faults=FaultSpec(malformed_rate=1.0)))
    (outcome,) = _run(cfg, "heldout_split,atomic_items")
    assert outcome.success  # invalid outputs are rows, not a crash
    assert outcome.checks_failed == ["atomic_items:invalid_output_rate_under_threshold"]


MCQ_STEPS = "heldout_split,atomic_items,mcq_items,mcq_answers"
MCQ_LEAK = "mcq_answers:no_heldout_text_in_mcq_answering_prompts"


def test_mcq_leak_check_passes_on_the_real_prompts(cfg):
    outcomes = _run(cfg, MCQ_STEPS)
    assert all(o.success for o in outcomes) and not [f for o in outcomes for f in o.checks_failed]
    assert outcomes[-1].spec.job == launch.PERSONALITY_METHOD_JOB and outcomes[-1].checks_passed >= 1


def test_mcq_leak_check_fails_when_the_context_holds_heldout_text(cfg, monkeypatch):
    from interviewsim_core.pipeline import mcq

    real = mcq.plan_mcq_answers

    def leaky(split, *args, **kw):
        planned = real(split, *args, **kw)
        # A selector bug that puts a held-out answer into the shared context (not one of the items asked).
        # Prefer an answer from another interview than the first group's items, so no exemption touches it.
        asked = set(planned[0].row["_qa_ids"])
        leaked = next((p.response for p in split.test_pairs if p.qa_id not in asked), split.test_pairs[0].response)
        req = planned[0].request
        messages = ({**req.messages[0], "content": req.messages[0]["content"] + "\n" + leaked}, *req.messages[1:])
        return [planned[0]._replace(request=req.model_copy(update={"messages": messages})), *planned[1:]]

    monkeypatch.setattr(mcq, "plan_mcq_answers", leaky)
    outcome = _run(cfg, MCQ_STEPS)[-1]
    assert outcome.spec.job == launch.PERSONALITY_METHOD_JOB
    assert MCQ_LEAK in outcome.checks_failed


MCQ_ANSWERED = "mcq_answers:mcq_items_expected_have_answers"


def test_mcq_check_fails_when_every_item_is_invalid(cfg, monkeypatch):
    """All builder outputs malformed: no MCQ item, an empty mcq_answers table, and a failing check that
    says why, instead of two checks passing "on nothing"."""
    from interviewsim_core.llm.gateway import Gateway

    monkeypatch.setattr(resources, "_gateway_for",
                        lambda *_a: Gateway(cache=None, faults=FaultSpec(malformed_rate=1.0)))
    outcome = _run(cfg, MCQ_STEPS)[-1]
    assert outcome.success and MCQ_ANSWERED in outcome.checks_failed


def test_mcq_answered_check_passes_on_a_normal_run(cfg):
    outcome = _run(cfg, MCQ_STEPS)[-1]
    assert MCQ_ANSWERED not in outcome.checks_failed and outcome.checks_passed >= 2


def test_profile_check_warns_about_a_blank_long_profile(tiny_corpus, tmp_path):
    import json

    path = tiny_corpus / "TINY_ALDER" / "prepared_input.json"
    doc = json.loads(path.read_text())
    doc["personality"]["long_profile"] = "   "
    path.write_text(json.dumps(doc))
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="wiki-long,simple")
    outcomes = _run(cfg, "generations")
    failed = [c for o in outcomes for c in o.checks_failed]
    assert all(o.success for o in outcomes)  # a warning, not a failed run
    assert failed == ["generations:profile_context_present"]


def test_a_range_run_records_each_partitions_check_verdict(cfg):
    """A run over several partitions records one evaluation per partition (and check): a single
    run-wide result would leave every planned partition "Skipped" in the UI's checks sidebar."""
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    specs = launch.plan_runs(defs, instance, cfg.methods, selection="heldout_split,generations")
    outcomes = launch.execute(defs, instance, specs, progress=lambda _m: None)
    assert all(o.success for o in outcomes)
    checks = [dg.AssetCheckKey(dg.AssetKey("generations"), n) for n in (
        "no_heldout_text_in_generation_prompts", "one_generation_per_heldout_question", "profile_context_present",
        "invalid_output_rate_under_threshold")]
    infos = instance.event_log_storage.get_asset_check_partition_info(checks)
    cells = {f"simple|{p}" for p in ("TINY_ALDER", "TINY_BRISK")}
    by_check = {c: {i.partition_key: (i.latest_execution_status.value, i.is_current) for i in infos if i.check_key == c}
                for c in checks}
    # is_current: the verdict names the partition's latest materialisation (else the UI shows no status)
    assert by_check == {c: {k: ("SUCCEEDED", True) for k in cells} for c in checks}


def test_premise_check_fails_when_no_verdict_was_possible(cfg, monkeypatch):
    """Issue 22: every atomic item and fact summary invalid, so the premise judge writes 0 rows; its check
    must fail ("expected N outputs, got 0") rather than pass on nothing."""
    from interviewsim_core.llm.gateway import Gateway

    monkeypatch.setattr(resources, "_gateway_for",
                        lambda *_a: Gateway(cache=None, faults=FaultSpec(malformed_rate=1.0)))
    outcomes = _run(cfg, "heldout_split,atomic_items,fact_summary,premise_verdicts")
    assert all(o.success for o in outcomes)
    failed = [c for o in outcomes for c in o.checks_failed]
    assert "premise_verdicts:invalid_output_rate_under_threshold" in failed
