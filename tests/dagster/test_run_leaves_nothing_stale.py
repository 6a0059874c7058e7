"""A headless ``interviewsim run`` leaves nothing stale in the UI (issue 33).

`interviewsim run` on two personalities and two methods (offline models): afterwards Dagster's stale
status (what the asset graph, the catalog and GraphQL's ``staleStatus`` show) is FRESH for the
leaderboard and every ``personality_scores`` partition. It used to be STALE ("method_scores has a new
data version"): a run's step records which upstream materialisations it read when the step *starts*,
and a run of ``interviewsim run`` starts before the runs it reads from have stored theirs (it waits for
them, ``action_worker.wait_turn``), so the leaderboard's provenance pointed before the second
personality's scores (or at no materialisation at all: "NULL", which Dagster happens to count as fresh).
"""

from __future__ import annotations

import dagster as dg
from dg_helpers import offline_sample_config, stale_resolver
from typer.testing import CliRunner

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_dagster.defs.corpus.sources import SOURCE_KEY
from interviewsim_dagster.definitions import build_definitions

PEOPLE = ("SYN_AUERLUND", "SYN_FENWRIGHT")


def test_a_cli_run_leaves_the_aggregates_fresh(tmp_path, monkeypatch):
    from interviewsim_cli import app

    cfg_file = offline_sample_config(tmp_path, monkeypatch, methods=["simple", "chrono-100"])
    home = tmp_path / "home"
    result = CliRunner().invoke(app, ["run", "--config", str(cfg_file), "--yes",
                                      "--personalities", ",".join(PEOPLE)])
    assert result.exit_code in (0, 5, 6), result.output  # the offline model's checks may fail: not this test's

    cfg = EvalConfig.load_resolved(env={"INTERVIEWSIM_CONFIG": str(cfg_file)})
    graph = build_definitions(cfg).resolve_asset_graph()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        resolver, stale_status = stale_resolver(instance, graph)
        keys = [(dg.AssetKey("leaderboard"), None)] + [(dg.AssetKey("personality_scores"), p) for p in PEOPLE]
        got = {(k.to_user_string(), p): (resolver.get_status(k, p),
                                         [(c.key.asset_key.to_user_string(), c.key.partition_key, c.reason)
                                          for c in resolver.get_stale_causes(k, p)])
               for k, p in keys}
        read_too_early = _provenance_before_inputs(instance, ("personality_scores", "leaderboard"))
    assert read_too_early == [], read_too_early
    assert all(status == stale_status.FRESH for status, _ in got.values()), got


def _provenance_before_inputs(instance: dg.DagsterInstance, assets) -> list[tuple]:
    """Each materialisation of ``assets`` whose recorded input (``dagster/input_event_pointer/<dep>``) is not
    the dependency's latest materialisation (observation, for the sources) stored before it: (asset, partition, dep,
    recorded, latest)."""
    wrong = []
    for asset in assets:
        for rec in instance.fetch_materializations(dg.AssetKey(asset), limit=1000).records:
            for tag, pointer in rec.asset_materialization.tags.items():
                if not tag.startswith(POINTER):
                    continue
                dep = dg.AssetKey.from_user_string(tag[len(POINTER):])
                # the personalities' files are observed, never materialised (defs/corpus/sources.py)
                fetch = instance.fetch_observations if dep == SOURCE_KEY else instance.fetch_materializations
                earlier = [r.storage_id for r in fetch(dep, limit=10_000).records if r.storage_id < rec.storage_id]
                latest = str(max(earlier)) if earlier else "NULL"
                if pointer != latest:
                    wrong.append((asset, rec.partition_key, dep.to_user_string(), pointer, latest))
    return wrong


POINTER = "dagster/input_event_pointer/"
