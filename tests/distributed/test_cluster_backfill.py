"""A multi-personality backfill on the loopback cluster equals the single-process run, row for row.

The cluster run: Dagster instance in PostgreSQL (``deploy/dagster.yaml``), every step executed by
one of two Celery workers (Redis broker), model calls through the shared Redis cache, Parquet
written to an S3 server. The reference: the same corpus, methods and offline model, run in one
process on a SQLite instance with a local data root and the SQLite cache (``interviewsim run``).
Then the same backfill again on the cluster must make zero model calls, and the ``llm_offline``
pool, capped at one slot, must never have had two model-calling steps running at once although two
workers were busy, while the rerun with two slots does run such steps side by side.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest
from cluster_support import METHODS, PEOPLE, REPO, Cluster, Workers

from interviewsim_core.dataroot import as_root
from interviewsim_core.pipeline.storage import read_frame

pytestmark = pytest.mark.distributed

def _specs(defs, instance, corpus: str):
    from interviewsim_dagster import launch

    launch.register_personalities(instance, corpus)
    return launch.plan_runs(defs, instance, METHODS.split(","))


def _cluster_backfill(instance: dg.DagsterInstance) -> list[str]:
    """Every run of the backfill through the Celery executor; returns the run ids."""
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_dagster import cluster, launch

    cfg = EvalConfig.load_resolved()
    run_ids = []
    for spec in _specs(cluster.defs, instance, str(cfg.corpus)):
        result = dg.execute_job(dg.reconstructable(cluster.JOB_FACTORIES[spec.job]), instance=instance,
                                asset_selection=list(spec.assets), tags=launch.range_tags(spec))
        failures = [ev.step_failure_data.error.message for ev in result.all_events if ev.is_step_failure]
        assert result.success, f"{spec.describe()} failed: {failures}"
        run_ids.append(result.run_id)
    return run_ids


def _single_process_run(corpus: Path, root: Path) -> None:
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_dagster import launch
    from interviewsim_dagster.definitions import build_definitions

    cfg = EvalConfig.load_resolved(env={}, overrides={"corpus": str(corpus), "data_root": str(root), "methods": METHODS})
    defs = build_definitions(cfg)
    with dg.instance_for_test() as instance:
        outcomes = launch.execute(defs, instance, _specs(defs, instance, str(corpus)), progress=lambda _m: None)
    assert outcomes and all(o.success for o in outcomes)


def _local_tables(root: Path) -> dict[str, pd.DataFrame]:  # every Parquet table, by relative path
    return {str(p.relative_to(root)): read_frame(p) for p in sorted(root.rglob("*.parquet"))
            if ".cache" not in p.parts}


def _s3_tables(url: str) -> dict[str, pd.DataFrame]:
    root = as_root(url)
    root.fs.invalidate_cache()
    prefix = root.path.rstrip("/") + "/"
    out = {}
    for key in sorted(root.fs.find(root.path)):
        if key.endswith(".parquet"):
            out[key[len(prefix):]] = read_frame(as_root(f"s3://{key}"))
    return out


def _materializations(instance: dg.DagsterInstance, run_ids: list[str]) -> list[dict]:
    out = []
    for run_id in run_ids:
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
            mat = entry.dagster_event.event_specific_data.materialization
            out.append({"asset": mat.asset_key.to_user_string(), "partition": mat.partition,
                        **{k: v.value for k, v in mat.metadata.items() if k.startswith("step_") or k == "calls_made"}})
    return out


def _pool_steps(instance, run_ids: list[str], pool_assets: set[str]) -> list[tuple[float, float, str]]:
    """(start, end, step) of every step of a model-calling asset, from the run's event log."""
    spans = []
    for run_id in run_ids:
        starts: dict[str, float] = {}
        for entry in instance.all_logs(run_id):
            ev = entry.dagster_event
            if ev is None or ev.step_key is None or ev.step_key not in pool_assets:
                continue
            if ev.event_type == dg.DagsterEventType.STEP_START:
                starts[ev.step_key] = entry.timestamp
            elif ev.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
                spans.append((starts[ev.step_key], entry.timestamp, f"{run_id[:8]}:{ev.step_key}"))
    return spans


def _max_overlap(spans: list[tuple[float, float, str]]) -> int:
    points = sorted([(s, 1) for s, _, _ in spans] + [(e, -1) for _, e, _ in spans], key=lambda p: (p[0], p[1]))
    level = peak = 0
    for _, d in points:
        level += d
        peak = max(peak, level)
    return peak


def _set_pool_limit(pool: str, limit: int) -> None:
    done = subprocess.run([sys.executable, "-m", "dagster", "instance", "concurrency", "set", pool, str(limit)],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]


def _workers_used(instance, run_ids: list[str]) -> set[str]:
    used = set()
    for run_id in run_ids:
        for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
            md = entry.dagster_event.event_specific_data.metadata or {}
            if "Celery worker" in md:
                used.add(md["Celery worker"].value)
    return used


def test_cluster_backfill_matches_single_process_and_rerun_makes_no_calls(cluster_env: Cluster, workers: Workers,
                                                                          tmp_path):
    from interviewsim_core.llm.shared_cache import open_cache

    # The pool of the offline provider gets one slot, instance-wide (the documented CLI command).
    _set_pool_limit("llm_offline", 1)

    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        first = _cluster_backfill(instance)
        cache = open_cache(cluster_env.cache_url, cluster_env.local_cache)
        keys_after_first = len(cache)
        assert keys_after_first > 0, "the workers did not write the shared cache"
        assert not cluster_env.local_cache.exists(), "a worker fell back to a local SQLite cache"

        # Row for row against the single-process run of the same corpus and model.
        distributed = _s3_tables(cluster_env.data_url)
        _single_process_run(cluster_env.corpus, tmp_path / "single")
        single = _local_tables(tmp_path / "single")
        assert sorted(distributed) == sorted(single)
        assert {name.split("/")[0] for name in single} >= {"generations", "content_similarity", "method_scores",
                                                           "leaderboard.parquet", "mcq_answers"}
        assert any(PEOPLE[2] in name for name in single)
        # The report asset wrote beside the tables, on S3 too, with the same leaderboard.
        import json

        report = json.loads((as_root(cluster_env.data_url) / "report" / "report.json").read_text())
        reference = json.loads((tmp_path / "single" / "report" / "report.json").read_text())
        assert report["sections"] == reference["sections"]
        assert report["meta"]["data_root"] == cluster_env.data_url
        assert report["meta"]["personalities"] == reference["meta"]["personalities"] == sorted(PEOPLE)
        for name, frame in single.items():
            # `cache_hit` says how a row's answer was obtained in that run, not what it is: of two
            # identical requests in flight, whichever arrives second reads the first's answer, and
            # arrival order differs between one process and two workers. So does `finish_reason`, which only
            # a provider's answer carries (a cache hit has none). Every other column must match.
            hits = [c for c in frame.columns if c.endswith(("cache_hit", "finish_reason"))]
            pd.testing.assert_frame_equal(distributed[name].drop(columns=hits), frame.drop(columns=hits),
                                          check_like=False, obj=name)

        # Both workers executed steps; the one-slot pool never ran two model-calling steps at once.
        from interviewsim_dagster import cluster

        graph = cluster.defs.resolve_asset_graph()
        pool_assets = {k.path[-1] for k in graph.get_all_asset_keys()
                       if "llm_offline" in (graph.get(k).pools or ())}
        assert {"generations", "content_similarity", "factual_consistency"} <= pool_assets
        assert _workers_used(instance, first) == set(workers.names)
        # A step is a stage (one op making several assets, docs/DESIGN.md "One execution path").
        from interviewsim_core.pipeline.config import EvalConfig
        from interviewsim_dagster.factory import stages

        pool_ops = {st.op for st in stages(EvalConfig.load_resolved()) if any(s.name in pool_assets for s in st.steps)}
        spans = _pool_steps(instance, first, pool_ops)
        assert len(spans) >= len(pool_ops)
        assert _max_overlap(spans) == 1, spans

        # The same backfill again: every call answered by the shared cache.
        first_calls = sum(m.get("step_calls_made", 0) for m in _materializations(instance, first))
        assert first_calls > 0
        # Two slots: the rerun's model stages run on the workers within the limit. (Before stages, independent
        # model steps of one run ran side by side here; a stage streams all its steps inside one op instead.)
        _set_pool_limit("llm_offline", 2)
        second = _cluster_backfill(instance)
        spans2 = _pool_steps(instance, second, pool_ops)
        assert len(spans2) >= len(pool_ops) and _max_overlap(spans2) <= 2, spans2
        mats = _materializations(instance, second)
        assert mats and sum(m.get("step_calls_made", 0) for m in mats) == 0, mats
        assert sum(m.get("step_cache_hits", 0) for m in mats) > 0
        assert len(cache) == keys_after_first
        rerun = _s3_tables(cluster_env.data_url)
        for name, frame in single.items():
            if "cache_hit" in frame.columns:
                assert rerun[name]["cache_hit"].all(), name
                how = [c for c in frame.columns if c.endswith(("cache_hit", "finish_reason"))]  # how, not what
                pd.testing.assert_frame_equal(rerun[name].drop(columns=how), frame.drop(columns=how), obj=name)
        cache.close()
