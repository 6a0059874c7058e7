"""Adding a method rewrites nothing that is up to date (issue 30).

`interviewsim run --methods simple` then `--methods simple,wiki` on one personality of the shipped
sample (offline models): the second run writes wiki's partitions and the aggregates that read every
method (`personality_scores`, the leaderboard, the report), and leaves every file of `simple` as it
was (same modification time) with one materialisation per partition. It used to re-make 6 of
simple's files from the cache, because a run kept its whole range when any cell in it was outdated.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import dagster as dg
from dg_helpers import offline_sample_config
from typer.testing import CliRunner

PERSON = "SYN_AUERLUND"


def _run(cfg: Path, methods: str) -> str:
    from interviewsim_cli import app

    result = CliRunner().invoke(app, ["run", "--config", str(cfg), "--yes", "--personalities", PERSON,
                                      "--methods", methods])
    assert result.exit_code in (0, 5, 6), result.output  # the offline model's checks may fail: not this test's
    return result.output


def _files(data: Path) -> dict[str, int]:
    return {str(p.relative_to(data)): p.stat().st_mtime_ns for p in sorted(data.rglob("*.parquet"))}


def _materialisations(instance: dg.DagsterInstance) -> Counter:
    """(asset, partition) -> how many materialisation events it has."""
    counts: Counter = Counter()
    for key in instance.get_asset_keys():
        for rec in instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=10_000).records:
            counts[(key.to_user_string(), str(rec.partition_key) if rec.partition_key else None)] += 1
    return counts


def test_adding_a_method_rewrites_none_of_the_first_methods_files(tmp_path, monkeypatch):
    cfg = offline_sample_config(tmp_path, monkeypatch)
    home, data = tmp_path / "home", tmp_path / "data"

    _run(cfg, "simple")
    simple = {f: t for f, t in _files(data).items() if "simple" in f}
    assert len(simple) >= 6, sorted(_files(data))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = _materialisations(instance)

    _run(cfg, "simple,wiki")
    after_files = _files(data)
    rewritten = sorted(f for f, t in simple.items() if after_files.get(f) != t)
    assert not rewritten, f"up-to-date files of simple rewritten: {rewritten}"
    assert any("wiki" in f for f in after_files)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        after = _materialisations(instance)

    simple_events = {k: n for k, n in after.items() if k[1] and "simple" in k[1]}
    assert simple_events and set(simple_events.values()) == {1}, simple_events
    remade = {asset for (asset, part), n in after.items() if before.get((asset, part), n) != n}
    assert remade <= {"personality_scores", "leaderboard", "report"}, remade  # what reads every method
    new = {k for k in after if k not in before}
    assert new and all("wiki" in (part or "") for _asset, part in new), new
