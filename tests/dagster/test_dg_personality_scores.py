"""``personality_scores``: every method of one person in one table, with methods not run yet absent,
and the automation that keeps it and the leaderboard current on a partially run corpus."""

from __future__ import annotations

import dagster as dg
import pytest
from dg_helpers import PEOPLE, make_config, write_person

from interviewsim_core.pipeline.storage import partition_path, read_frame
from interviewsim_core.pipeline.study import mismatch, study_of
from interviewsim_core.pipeline.tables import schema_of
from interviewsim_dagster import launch
from interviewsim_dagster.definitions import AUTOMATION_SENSOR, build_definitions

RUN, NOT_RUN = "simple", "chrono-100"


def _latest(instance, asset: str, partition: str | None = None):
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition] if partition else None),
        limit=1,
    ).records
    return records[0].asset_materialization if records else None


@pytest.fixture(scope="module")
def partial(tmp_path_factory):
    """The whole graph for method ``simple`` only; ``chrono-100`` is configured but never run.

    Shared by the module's tests, which run in file order: each builds on the state the previous left.
    """
    tmp = tmp_path_factory.mktemp("partial")
    for pid in PEOPLE:
        write_person(tmp / "corpus", pid)
    cfg = make_config(tmp / "corpus", tmp / "data", methods=f"{RUN},{NOT_RUN}")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    specs = launch.plan_runs(defs, instance, cfg.methods, methods=[RUN])
    outcomes = launch.execute(defs, instance, specs, progress=lambda _m: None)
    return {"cfg": cfg, "defs": defs, "instance": instance, "specs": specs, "outcomes": outcomes}


def test_reads_the_methods_that_exist_and_lists_the_missing_ones(partial):
    cfg, instance = partial["cfg"], partial["instance"]
    assert all(o.success for o in partial["outcomes"]), [o.spec.describe() for o in partial["outcomes"]]
    # It runs after the P x M assets it summarises, in its own per-personality job.
    jobs = [s.job for s in partial["specs"]]
    assert jobs.index(launch.PERSONALITY_SUMMARY_JOB) > jobs.index(launch.PERSONALITY_METHOD_JOB)
    for pid in ("TINY_ALDER", "TINY_BRISK"):
        path = partition_path(cfg.data_root, "personality_scores", pid)
        df = read_frame(path)
        assert list(df.columns) == schema_of("personality_scores").names
        scores = read_frame(partition_path(cfg.data_root, "method_scores", pid, RUN))
        assert set(df["method"]) == {RUN} and set(df["personality_id"]) == {pid}
        assert sorted(df["judge"]) == sorted(scores["judge"])
        assert df["cs_mean"].tolist() == scores["cs_mean"].tolist()
        meta = _latest(instance, "personality_scores", pid).metadata
        assert meta["methods_present"].value == [RUN]
        assert meta["methods_missing"].value == [NOT_RUN]
        assert "cs_mean" in {c.name for c in meta["preview"].schema.columns} and meta["rows"].value == len(df)
        assert [r.data["cs_mean"] for r in meta["preview"].records] == df["cs_mean"].tolist()


def _judge_changed(cfg):
    """The same config with the judge's sampling seed changed: a new judge identity, as after a judge change."""
    return cfg.model_copy(update={"judges": tuple(j.model_copy(update={"seed": 7}) for j in cfg.effective_judges)})


def test_rescore_on_a_partial_corpus_reaches_personality_scores_and_the_leaderboard(partial):
    """``eager`` would wait forever for the chrono-100 partitions; the named condition does not."""
    defs, instance, cfg = partial["defs"], partial["instance"], partial["cfg"]
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
    assert first.total_requested == 0
    # Re-materialising a cell with identical content launches nothing downstream (content versions).
    same = launch.plan_runs(defs, instance, cfg.methods, personalities=["TINY_ALDER"], methods=[RUN],
                            selection="method_scores")
    assert all(o.success for o in launch.execute(defs, instance, same, progress=lambda _m: None))
    unchanged = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert unchanged.get_num_requested(dg.AssetKey("personality_scores")) == 0
    assert unchanged.get_num_requested(dg.AssetKey("leaderboard")) == 0
    # A re-score of one cell after a judge change (what the automation launches), then the next tick.
    defs2 = build_definitions(_judge_changed(cfg))
    spec = launch.plan_runs(defs2, instance, cfg.methods, personalities=["TINY_ALDER"], methods=[RUN],
                            selection="content_similarity,method_scores")
    # Tagged as the sensor's: the re-score is the one writer a study lets change its judges (``study.enter``).
    assert all(o.success for o in launch.execute(defs2, instance, spec, progress=lambda _m: None,
                                                 tags={"dagster/sensor_name": AUTOMATION_SENSOR}))
    second = dg.evaluate_automation_conditions(defs=defs2, instance=instance, cursor=unchanged.cursor)
    assert second.get_num_requested(dg.AssetKey("personality_scores")) == 1  # TINY_ALDER only
    assert second.get_num_requested(dg.AssetKey("leaderboard")) == 1
    assert second.get_num_requested(dg.AssetKey("generations")) == 0
    # Handled once: nothing new upstream, nothing requested again.
    third = dg.evaluate_automation_conditions(defs=defs2, instance=instance, cursor=second.cursor)
    assert third.get_num_requested(dg.AssetKey("personality_scores")) == 0
    assert third.get_num_requested(dg.AssetKey("leaderboard")) == 0


def test_gains_a_method_once_it_has_run(partial):
    cfg, defs, instance = partial["cfg"], partial["defs"], partial["instance"]
    if mismatch(cfg.data_root, study_of(cfg)) is not None:  # the re-score above made the changed judge the study's
        defs = build_definitions(_judge_changed(cfg))
    specs = launch.plan_runs(defs, instance, cfg.methods, personalities=["TINY_ALDER"], methods=[NOT_RUN])
    assert all(o.success for o in launch.execute(defs, instance, specs, progress=lambda _m: None))
    df = read_frame(partition_path(cfg.data_root, "personality_scores", "TINY_ALDER"))
    assert df["method"].drop_duplicates().tolist() == [RUN, NOT_RUN]  # configured order
    assert _latest(instance, "personality_scores", "TINY_ALDER").metadata["methods_missing"].value == []
