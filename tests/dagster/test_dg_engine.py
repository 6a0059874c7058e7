"""The stage engine: what every Dagster run does before and after core's scheduler (``engine.py``).

Stages (one multi-asset per partitioning a run can hold), the automation that spends only what was
asked, the job page's range runs (written and recorded whole, ``run_keys``), and the refusals a UI-launched
run must make before any call: a range whose tags disagree beyond recovery, a registered personality whose
document is gone, answers that could not be cached.
"""

from __future__ import annotations

import re

import dagster as dg
import pytest
from dg_helpers import PEOPLE, automation_ticks, curating_config, make_config, run_everything

from interviewsim_core.pipeline.steps import BY_NAME, steps_for
from interviewsim_dagster import launch
from interviewsim_dagster.definitions import build_definitions
from interviewsim_dagster.factory import automation, stages


def test_stages_cover_every_step_once_and_run_in_dependency_order(tiny_corpus, tmp_path):
    plain = make_config(tiny_corpus, tmp_path / "data", ps_stability=True, finetune_export=True)
    for cfg in (plain, curating_config(tmp_path / "cur", ps_stability=True, finetune_export=True)):
        got = stages(cfg)
        names = [s.name for st in got for s in st.steps]
        assert sorted(names) == sorted(s.name for s in steps_for(cfg))
        assert [st.job for st in got] == list(launch.JOB_ORDER)
        done: set[str] = set()
        for st in got:
            for s in st.steps:
                enabled = [i for i in s.inputs if BY_NAME[i.step].enabled(cfg)]  # the curation: only when configured
                assert all(i.step in done or i.step in {t.name for t in st.steps} for i in enabled), s.name
                assert s.partitioning is st.partitioning
            done |= {s.name for s in st.steps}
    assert "prepared_input" in [s.name for s in got[0].steps]  # curated in the personality stage, before the split


def test_automation_never_launches_a_model_call_for_a_partition_nobody_ran(tiny_corpus, tmp_path):
    """Model steps carry only the re-score of materialised partitions (``~missing``); filling is opt-in."""
    cfg = make_config(tiny_corpus, tmp_path / "data")
    for s in steps_for(cfg):
        cond = automation(s, cfg)
        if not s.calls_models:
            continue
        if cond is None:
            continue
        label = cond.get_label() or ""
        assert "re-score materialised partitions" in label, (s.name, label)
        assert "new partition" not in label, (s.name, label)
    filled = make_config(tiny_corpus, tmp_path / "data", automation_fill_new=True)
    gen = next(s for s in steps_for(filled) if s.name == "generations")
    assert "new partition" in automation(gen, filled).get_label()


@pytest.mark.parametrize("fill_first", [True, False])
def test_filling_a_new_method_needs_fill_on_before_the_method_is_added(tiny_corpus, tmp_path, fill_first):
    """``automation_fill_new`` fills partitions that appear while it is on: a method added later gets exactly
    its cells of the model steps; switched on in the same reload as the method, it fills nothing (the new
    condition's first evaluation is Dagster's ``initial_evaluation``, which ``since_last_handled`` resets on)."""
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="simple,chrono-100", automation_fill_new=fill_first)
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    run_everything(defs, instance, cfg)
    requested, cursor = automation_ticks(defs, instance, None)
    assert requested == {}  # the sensor's first ticks: nothing missing, nothing requested
    grown = build_definitions(make_config(tiny_corpus, tmp_path / "data", methods="simple,chrono-100,chrono-500",
                                          automation_fill_new=True))
    got, _ = automation_ticks(grown, instance, cursor)
    if not fill_first:
        assert got == {}
        return
    cells = {f"chrono-500|{p}" for p in PEOPLE}
    assert got and all(v == cells for v in got.values()), got
    assert "generations" in got and "heldout_split" not in got


def _job_page_tags(first: str, last: str, person: str, method: str) -> dict[str, str]:
    """What Dagster 1.13's job-page backfill puts on its one run (issue 19): the range AND one partition's tags."""
    return {launch.ASSET_PARTITION_RANGE_START_TAG: first, launch.ASSET_PARTITION_RANGE_END_TAG: last,
            "dagster/partition/personality": person, "dagster/partition/method": method}


def test_a_range_run_tagged_with_one_partition_writes_and_records_the_whole_range(tiny_corpus, tmp_path):
    """Issue 19: Dagster gives such a run one partition key; the run writes every partition of its range
    and records one materialisation and one verdict per check for each, with the same data version."""
    import os

    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    run_everything(defs, instance, cfg)
    selected = [str(dg.MultiPartitionKey({"personality": p, "method": "chrono-100"})) for p in PEOPLE]
    files = {k: tmp_path / "data" / "generations" / p / "chrono-100.parquet" for k, p in zip(selected, PEOPLE)}
    before = {k: f.stat().st_mtime_ns for k, f in files.items()}
    for f in files.values():
        os.utime(f, ns=(0, 0))
    job = defs.resolve_job_def(launch.PERSONALITY_METHOD_JOB)
    result = job.execute_in_process(instance=instance, tags=_job_page_tags(selected[0], selected[-1], PEOPLE[0],
                                                                           "chrono-100"),
                                    raise_on_error=False, asset_selection=[dg.AssetKey("generations")])
    assert result.success
    assert all(f.stat().st_mtime_ns > 0 for f in files.values()), before
    recs = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey("generations")),
                                           limit=100).records
    ours = {r.partition_key: r.asset_materialization for r in recs if r.run_id == result.run_id}
    assert sorted(ours) == sorted(selected)
    versions = {k: m.tags["dagster/data_version"] for k, m in ours.items()}
    assert len(set(versions.values())) == 1, versions
    for key, m in ours.items():
        assert m.metadata["partitions_written"].value == len(selected)
        assert "rows" in m.metadata and "split_version" in m.metadata
        assert m.tags["dagster/partition/personality"] == _personality_of(key)
        assert m.tags.get("dagster/code_version") == ours[selected[0]].tags.get("dagster/code_version")
    verdicts = result.get_asset_check_evaluations()
    by_check: dict[str, set[str]] = {}
    for v in verdicts:
        assert v.passed, v
        by_check.setdefault(v.asset_check_key.name, set()).add(v.partition)
    assert by_check and all(parts == set(selected) for parts in by_check.values()), by_check


def _personality_of(key: str) -> str:
    return key.split("|")[1]


def test_a_range_run_whose_tagged_partition_is_outside_its_range_is_refused_before_any_call(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    job = defs.resolve_job_def(launch.PERSONALITY_METHOD_JOB)
    first, last = (str(dg.MultiPartitionKey({"personality": p, "method": "simple"})) for p in (PEOPLE[0], PEOPLE[-1]))
    result = job.execute_in_process(instance=instance, tags=_job_page_tags(first, last, PEOPLE[-1], "chrono-100"),
                                    raise_on_error=False, asset_selection=[dg.AssetKey("generations")])
    assert not result.success
    failure = next(ev for ev in result.all_events if ev.is_step_failure)
    assert "Nothing was run" in failure.step_failure_data.error.message
    assert not (tmp_path / "data" / "generations").exists()


def test_a_registered_personality_without_its_file_fails_the_ui_run_naming_it(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    (tiny_corpus / PEOPLE[1] / "prepared_input.json").unlink()
    job = defs.resolve_job_def(launch.PERSONALITY_JOB)
    result = job.execute_in_process(instance=instance, partition_key=PEOPLE[1], raise_on_error=False,
                                    asset_selection=[dg.AssetKey("heldout_split"), dg.AssetKey("fact_summary")])
    assert not result.success
    message = next(ev for ev in result.all_events if ev.is_step_failure).step_failure_data.error.message
    assert PEOPLE[1] in message and "interviewsim unregister" in message
    assert "KeyError" not in message


def test_one_run_per_stage_writes_every_selected_partition_with_its_metadata(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    outcomes = run_everything(defs, instance, cfg)
    assert [o.spec.job for o in outcomes] == list(launch.JOB_ORDER)
    assert all(o.success for o in outcomes)
    pxm = [str(dg.MultiPartitionKey({"personality": p, "method": m})) for p in PEOPLE for m in cfg.methods]
    for asset in ("generations", "content_similarity", "method_scores"):
        recs = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset)), limit=100).records
        assert sorted(r.partition_key for r in recs) == sorted(pxm), asset
        meta = recs[0].asset_materialization.metadata
        assert "rows" in meta and "split_version" in meta
    # A second identical run: nothing is outdated, so nothing runs (and nothing is paid).
    again = launch.execute(defs, instance, launch.plan_runs(defs, instance, cfg.methods), progress=lambda _m: None,
                           skip_up_to_date=True)
    assert again == []


@pytest.mark.parametrize("edit", [True])
def test_an_edited_corpus_file_outdates_only_its_personality(tiny_corpus, tmp_path, edit):
    import json

    from interviewsim_cli.run_cmds import _split_versions

    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    run_everything(defs, instance, cfg)
    path = tiny_corpus / PEOPLE[0] / "prepared_input.json"
    doc = json.loads(path.read_text())
    doc["interviews"][-1]["qa_pairs"][0]["response"] += " I changed my mind again."
    path.write_text(json.dumps(doc))
    specs = launch.plan_runs(defs, instance, cfg.methods)
    ran = launch.execute(defs, instance, specs, progress=lambda _m: None, skip_up_to_date=True,
                         split_versions=_split_versions(cfg, list(PEOPLE)))
    assert ran and all(o.success for o in ran)
    assert "heldout_split" in {k.to_user_string() for o in ran for k in o.spec.assets}


def test_a_ui_run_whose_answers_could_not_be_cached_fails_naming_the_file(tiny_corpus, tmp_path, monkeypatch):
    """Issue 20: an unwritable cache ended a UI run in RUN_SUCCESS; a re-run would pay for those answers again."""
    from interviewsim_core.llm.cache import CacheWriteError
    from interviewsim_core.llm.gateway import Gateway
    from interviewsim_dagster import resources

    class Unstorable(Gateway):
        def raise_for_cache_errors(self) -> None:
            import sqlite3
            from pathlib import Path

            raise CacheWriteError(Path("/nowhere/llm.sqlite"), sqlite3.OperationalError("database or disk is full"))

    monkeypatch.setattr(resources, "_gateway_for", lambda *_a: Unstorable(cache=None))
    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    job = defs.resolve_job_def(launch.PERSONALITY_JOB)
    result = job.execute_in_process(instance=instance, partition_key=PEOPLE[0], raise_on_error=False,
                                    asset_selection=[dg.AssetKey("heldout_split"), dg.AssetKey("fact_summary")])
    assert not result.success
    message = next(ev for ev in result.all_events if ev.is_step_failure).step_failure_data.error.message
    assert "/nowhere/llm.sqlite" in message and "pay for them again" in message


def test_the_budget_gate_refuses_an_over_budget_run_before_any_call_and_an_approved_one_runs(
        tiny_corpus, tmp_path, monkeypatch):
    """Issue 19: every launch route (here a job launch, as the UI makes it) plans its own partitions and
    refuses above max_cost_usd, naming the total and the approval tag; the tag lets it run."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "pipeline"))
    from fakes import offline_reply

    from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
    from interviewsim_dagster.engine import APPROVE_TAG, PLAN_TAG_PREFIX

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    with FakeOpenAIServer(FakeServerConfig(reply=offline_reply)) as srv:
        priced = {"model": "openai/gpt-4.1", "api_base": srv.base_url}  # litellm prices gpt-4.1
        cfg = make_config(tiny_corpus, tmp_path / "data", generator=priced, judges=[priced], builder=priced,
                          premise_judge=priced, max_cost_usd=0.0001, methods="simple")
        defs = build_definitions(cfg)
        instance = dg.DagsterInstance.ephemeral()
        launch.register_personalities(instance, str(cfg.corpus))
        job = defs.resolve_job_def(launch.PERSONALITY_JOB)
        selection = [dg.AssetKey("heldout_split"), dg.AssetKey("fact_summary")]
        refused = job.execute_in_process(instance=instance, partition_key=PEOPLE[0], raise_on_error=False,
                                         asset_selection=selection)
        assert not refused.success and srv.requests == 0
        failure = next(ev for ev in refused.all_events if ev.is_step_failure).step_failure_data
        message = failure.error.message
        assert "max_cost_usd" in message and APPROVE_TAG in message
        # Issue 33: both amounts readable (it said "$0.01 ... more than max_cost_usd $0.00"), an intentional
        # refusal with the plan as its metadata, never retried.
        assert re.search(r"the plan costs \$0\.00\d+, more than max_cost_usd \$0\.00010 \(\d+ calls to send\)\.",
                         message), message
        assert failure.user_failure_data.label == "intentional-failure"
        assert {"plan_cost_usd", "max_cost_usd", "plan"} <= set(failure.user_failure_data.metadata)
        run = instance.get_run_by_id(refused.run_id)
        assert float(run.tags[PLAN_TAG_PREFIX + "calls"]) >= 1  # the plan is on the run's tags
        approved = job.execute_in_process(instance=instance, partition_key=PEOPLE[0], raise_on_error=False,
                                          asset_selection=selection, tags={APPROVE_TAG: "5"})
        assert approved.success and srv.requests >= 1
