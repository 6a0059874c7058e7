"""`interviewsim run` skips asset partitions materialised with the current code on unchanged inputs;
`--force` re-runs them. A new method therefore adds its own partitions and re-materialises nothing
it shares with the methods already run (which used to wake the automation for every method)."""

from __future__ import annotations

import dagster as dg
from typer.testing import CliRunner


def _count(instance, asset: str) -> int:
    flt = dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset))
    return len(instance.fetch_materializations(flt, limit=10_000).records)


def _run(tmp_path, corpus, *args: str):
    from interviewsim_cli import app

    result = CliRunner().invoke(app, ["run", "--corpus", str(corpus), "--data-root", str(tmp_path / "data"), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_run_skips_up_to_date_partitions_and_force_reruns_them(tiny_corpus, tmp_path, monkeypatch):
    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    for k in ("INTERVIEWSIM_CONFIG", "INTERVIEWSIM_METHODS", "INTERVIEWSIM_DATA_ROOT", "INTERVIEWSIM_CORPUS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("INTERVIEWSIM_METHODS", "simple")
    _run(tmp_path, tiny_corpus)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        first = {a: _count(instance, a) for a in ("heldout_split", "fact_summary", "generations", "leaderboard")}
    assert first == {"heldout_split": 2, "fact_summary": 2, "generations": 2, "leaderboard": 1}

    again = _run(tmp_path, tiny_corpus)
    assert again.count("up to date, skipped") == 4, again  # all four jobs
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert {a: _count(instance, a) for a in first} == first

    # A new method: only its own partitions and the aggregates that read them run.
    out = _run(tmp_path, tiny_corpus, "--methods", "chrono-100")
    assert "personality_assets" in out and "up to date, skipped" in out
    with dg.DagsterInstance.from_config(str(home)) as instance:
        after = {a: _count(instance, a) for a in first}
        chrono = instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=dg.AssetKey("generations")), limit=10).records[:2]
    assert after == {"heldout_split": 2, "fact_summary": 2, "generations": 4, "leaderboard": 2}
    assert {r.partition_key.keys_by_dimension["method"] for r in chrono} == {"chrono-100"}

    _run(tmp_path, tiny_corpus, "--methods", "simple", "--personalities", "TINY_ALDER", "--force")
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert _count(instance, "heldout_split") == 3 and _count(instance, "generations") == 5
