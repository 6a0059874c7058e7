"""Issue 45's second point, pinned: a transcript changed and re-curated is not seen by Dagster's staleness.

``interviewsim run`` re-curates and re-evaluates a personality whose transcript changed (``freshness``,
``transcripts_version``); the UI does not: every data version is the lineage (code and models), so a
re-curation changes no version and ``heldout_split`` stays FRESH (docs/CURATION.md, "What re-curates"). The
test fails on purpose (strict xfail) until the UI follows the data; fixing it turns it into a pass.
"""

from __future__ import annotations

import dagster as dg
import pytest
from dg_helpers import stale_resolver
from test_dg_curate_run import DIALOGUE, _transcripts
from typer.testing import CliRunner

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_dagster.definitions import build_definitions


def _state(cfg, home) -> tuple[str, str]:
    """prepared_input ADA's data version, and heldout_split ADA's stale status, as the UI reads them."""
    graph = build_definitions(cfg).resolve_asset_graph()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        record = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("prepared_input"), asset_partitions=["ADA"]), limit=1).records[0]
        resolver, _status = stale_resolver(instance, graph)
        return (record.asset_materialization.tags["dagster/data_version"],
                resolver.get_status(dg.AssetKey("heldout_split"), "ADA").value)


@pytest.mark.xfail(strict=True, reason="issue 45, item 2: the UI's staleness does not follow an edited transcript")
def test_an_edited_and_recurated_transcript_makes_the_split_stale(tmp_path, monkeypatch):
    from interviewsim_cli import app

    d, manifest = _transcripts(tmp_path)
    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    flags = ["--transcripts", str(d), "--manifest", str(manifest), "--corpus", str(corpus), "--data-root", str(data),
             "--methods", "simple"]
    ran = CliRunner().invoke(app, ["run", *flags, "--assets", "heldout_split"])
    assert ran.exit_code == 0, ran.output
    cfg = EvalConfig.load_resolved(env={}, overrides={"transcripts": str(d), "manifest": str(manifest),
                                                      "corpus": str(corpus), "data_root": str(data), "methods": "simple"})
    version, status = _state(cfg, home)
    assert status == "FRESH"
    pairs = (corpus / "ADA" / "prepared_input.json").read_text().count('"qa_id"')

    person = DIALOGUE[1][0]  # one question and answer appended to one transcript, then re-curated (the trial)
    with open(d / "talk0.txt", "a", encoding="utf-8") as fh:
        fh.write(f"\nInterviewer: Which tool in the workshop do you reach for first each morning?\n\n"
                 f"{person}: The small brass screwdriver my grandmother gave me when I was nine years old.\n")
    curated = CliRunner().invoke(app, ["curate", "--transcripts", str(d), "--manifest", str(manifest), "--out", str(corpus)])
    assert curated.exit_code == 0, curated.output
    assert (corpus / "ADA" / "prepared_input.json").read_text().count('"qa_id"') == pairs + 1  # the new pair is there

    version_after, status_after = _state(cfg, home)
    print(f"prepared_input ADA data version {version} -> {version_after}; heldout_split ADA {status} -> {status_after}")
    assert status_after == "STALE"
