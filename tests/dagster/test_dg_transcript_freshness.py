"""Issue 45, item 2: an edited transcript, re-curated with ``interviewsim curate``, shows that personality's results
stale in the UI, and only that personality's; a launch re-makes them and they are current again.

Dagster's stale status is read as the asset graph and GraphQL read it (``dg_helpers.stale_resolver``); the
source version reaches the instance the way ``dagster dev`` records it: a tick of the personality_registration
sensor, whose observations the daemon stores (``report_runless_asset_event``). The GraphQL check on a running
``dagster dev`` is ``tests/integration/test_ui_source_freshness.py``.
"""

from __future__ import annotations

import dagster as dg
from dg_helpers import CURATED, automation_ticks, stale_resolver, write_transcripts
from typer.testing import CliRunner

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_dagster.definitions import build_definitions
from interviewsim_dagster.defs.corpus.sensors import personality_registration
from interviewsim_dagster.resources import CorpusResource, EvalConfigResource

CHECKED = [("heldout_split", "{p}"), ("generations", "simple|{p}"), ("content_similarity", "simple|{p}"),
           ("personality_scores", "{p}")]


def _tick(cfg: EvalConfig, instance) -> list[str]:
    """One tick of the sensor as ``dagster dev`` runs it: its observations stored. Returns the personalities observed."""
    resources = {"corpus": CorpusResource(path=str(cfg.corpus)), "eval_config": EvalConfigResource.from_config(cfg)}
    result = personality_registration(dg.build_sensor_context(instance=instance, resources=resources))
    for event in result.asset_events:
        instance.report_runless_asset_event(event)
    return [str(e.partition) for e in result.asset_events]


def _status(graph, instance) -> dict[tuple[str, str], str]:
    resolver, _ = stale_resolver(instance, graph)
    out = {(a, pid): resolver.get_status(dg.AssetKey(a), key.format(p=pid)).value for a, key in CHECKED for pid in CURATED}
    out[("leaderboard", "")] = resolver.get_status(dg.AssetKey("leaderboard")).value
    return out


def _made(instance, asset: str, partition: str) -> int:
    return len(instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition]), limit=100).records)


def test_an_edited_and_recurated_transcript_shows_that_personality_stale_until_a_launch_re_makes_it(tmp_path, monkeypatch):
    from interviewsim_cli import app

    d, manifest = write_transcripts(tmp_path)
    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    flags = ["--transcripts", str(d), "--manifest", str(manifest), "--corpus", str(corpus), "--data-root", str(data),
             "--methods", "simple"]
    ran = CliRunner().invoke(app, ["run", *flags])
    assert ran.exit_code == 0, ran.output
    cfg = EvalConfig.load_resolved(env={}, overrides={"transcripts": str(d), "manifest": str(manifest),
                                                      "corpus": str(corpus), "data_root": str(data), "methods": "simple"})
    graph = build_definitions(cfg).resolve_asset_graph()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert _tick(cfg, instance) == []  # the run recorded every source version it was made from
        assert set(_status(graph, instance).values()) == {"FRESH"}
        ben_split = _made(instance, "heldout_split", "BEN")
        _, cursor = automation_ticks(build_definitions(cfg), instance, None, ticks=1)

    pairs = (corpus / "ADA" / "prepared_input.json").read_text().count('"qa_id"')
    with open(d / "ada_0.txt", "a", encoding="utf-8") as fh:  # one question and answer appended, then re-curated
        fh.write("\nInterviewer: Which tool in the workshop do you reach for first each morning?\n\n"
                 "Ada Quill: The small brass screwdriver my grandmother gave me when I was nine years old.\n")
    curated = CliRunner().invoke(app, ["curate", "--transcripts", str(d), "--manifest", str(manifest), "--out", str(corpus)])
    assert curated.exit_code == 0, curated.output
    assert (corpus / "ADA" / "prepared_input.json").read_text().count('"qa_id"') == pairs + 1

    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert _tick(cfg, instance) == ["ADA"]
        assert _tick(cfg, instance) == []  # recorded once, not on every tick
        status = _status(graph, instance)
        requested, _ = automation_ticks(build_definitions(cfg), instance, cursor, ticks=2)
    assert requested == {}, "the automation launched work for a new source version (new calls nobody asked for)"
    assert {k for k, v in status.items() if v == "STALE"} == {(a, "ADA") for a, _ in CHECKED} | {("leaderboard", "")}
    assert {v for (a, pid), v in status.items() if pid == "BEN"} == {"FRESH"}

    again = CliRunner().invoke(app, ["run", *flags])  # the launch: re-curates and re-evaluates ADA only
    assert again.exit_code == 0, again.output
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert _tick(cfg, instance) == []
        assert set(_status(graph, instance).values()) == {"FRESH"}
        assert _made(instance, "heldout_split", "BEN") == ben_split
