"""A judge change over a kept growth row (issue 43): what the automation re-scores, what it asks, and how long.

The row is what ``bench_growth --keep DIR`` leaves in ``DIR/row_N`` (every default method materialised). A copy of
its instance and data root gets ``interviewsim ui`` (webserver, daemon, the automation sensor running), as a
researcher would: the UI starts on the row's configuration, the sensor evaluates once, then the judge is changed
in the UI's configuration (``JUDGE_MODEL``: another model name on the same server) and the code location is
reloaded. The automation re-scores every judged partition, then the aggregates that read them. Timed from the
reload until every unpartitioned aggregate (the leaderboard, the report) is re-made and no run is left; then:

- the files each asset rewrote since the reload (one Parquet file per partition), against what the judge change
  makes stale: every P x M partition of each judged asset, the per-personality judged assets, and the aggregates;
  nothing the judge does not reach (the generations above all);
- the calls per model name at the server: only the new judge may be asked;
- the automation's runs (how many, the most materialisations in one) and its ticks (the longest);
- what the UI shows after it, through GraphQL: every re-made asset fully materialised (none failed or in
  progress) and FRESH.

Run: ``python -m benchmarks.bench_rescore --row DIR/row_1000 [--latency 0.2]``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import yaml

from benchmarks.bench_backfill import TICK_TARGET_S, copy_row, row_main, tick_seconds, write_config
from benchmarks.bench_scale import Server, verdict

JUDGE_MODEL = "openai/fake-judge"
"""The new judge: a model name the row's study has not used, answered by the same server."""


def _judge_changed(cfg: dict[str, Any]) -> dict[str, Any]:
    return {**cfg, "judges": [{**j, "model": JUDGE_MODEL} for j in cfg["judges"]]}


def _rewritten(root: Path, since: float) -> dict[str, int]:
    """Per asset folder (or single-file table), the Parquet files (the report: its JSON) written since ``since``."""
    out: dict[str, int] = {}
    for child in sorted(root.iterdir()):
        files = ([f for f in child.rglob("*") if f.suffix == ".parquet" or f.name == "report.json"] if child.is_dir()
                 else [child] if child.suffix == ".parquet" else [])
        n = sum(1 for f in files if f.stat().st_mtime >= since)
        out[child.name.removesuffix(".parquet")] = n
    return out


def _expected(row: Path) -> dict[str, int]:
    """What a judge change makes stale, per asset: each step calling the judges (not the premise judge, a model of its
    own) and every step downstream of one, all their partitions."""
    from interviewsim_core.pipeline.steps import BY_NAME, STEPS, Partitioning, Role

    cfg = yaml.safe_load((row / "interviewsim.yaml").read_text())
    people = sum(1 for p in Path(cfg["corpus"]).iterdir() if p.is_dir())
    count = {Partitioning.PERSONALITY: people, Partitioning.PERSONALITY_METHOD: people * len(cfg["methods"]),
             Partitioning.NONE: 1}
    present = {p.name.removesuffix(".parquet") for p in Path(cfg["data_root"]).iterdir()}
    reached = {s.name for s in STEPS if Role.JUDGES in s.roles and s.name in present}
    for s in STEPS:  # in graph order: a step reading a reached one is reached
        if s.name in present and any(i.step in reached for i in s.inputs):
            reached.add(s.name)
    return {name: count[BY_NAME[name].partitioning] for name in sorted(reached)}


def measure(row: Path, latency: float) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "dagster"))
    from ui_harness import DagsterUI, wait_for

    from interviewsim_core.pipeline.steps import BY_NAME, Partitioning
    from interviewsim_dagster.defs.evaluate.automation import AUTOMATION_SENSOR

    port = urlparse(yaml.safe_load((row / "interviewsim.yaml").read_text())["generator"]["api_base"]).port
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(PYTHONWARNINGS="ignore", BENCH_FAKE_KEY="bench", LITELLM_LOCAL_MODEL_COST_MAP="True")
    out: dict[str, Any] = {"expected": _expected(row)}
    copy = copy_row(row, row.parent / f"{row.name}_rescore", edit=lambda cfg: cfg)
    uenv = {**env, "DAGSTER_HOME": str(copy / "dagster_home"),
            "INTERVIEWSIM_CONFIG": str(copy / "dagster_home" / "interviewsim.yaml")}
    srv = Server(latency, port=port)
    try:
        with DagsterUI(uenv, cwd=copy, log=copy / "ui.log") as ui:
            ui.set_sensor_running(AUTOMATION_SENSOR, True)
            started = time.time()
            wait_for("the automation's first evaluation", lambda: ui.finished_ticks_after(AUTOMATION_SENSOR, started), 600)
            wait_for("runs to finish", ui.idle, 600)
            write_config(copy, _judge_changed(yaml.safe_load((copy / "interviewsim.yaml").read_text())))
            srv.cmd("reset")
            t0 = time.time()
            ui.reload_location()
            last = [a for a in out["expected"] if BY_NAME[a].partitioning is Partitioning.NONE]  # these come last
            wait_for(f"the re-make of {', '.join(last)}", lambda: all(ui.materializations(a, t0) for a in last),
                     8 * 3600, every_s=10)
            wait_for("runs to finish", ui.idle, 3600, every_s=5)
            t1 = time.time()
            st = srv.cmd("stats")
            runs = [r for r in ui.runs() if float(r["creationTime"]) >= t0 - 1]
            out["ticks"] = tick_seconds(ui, t0)
            out["shown"] = _shown(ui, out["expected"])
            out["runs"] = [{"status": r["status"], "sensor": r["tags"].get("dagster/sensor_name"),
                            "materializations": _materializations(ui, r["runId"])} for r in runs]
        out.update(wall=t1 - t0, calls=st["chat"], models=st["models"], rewritten=_rewritten(copy / "product", t0))
    finally:
        srv.close()
    return out


def _shown(ui, expected: dict[str, int]) -> dict[str, Any]:
    """What the UI shows after the re-score, through GraphQL: each partitioned asset's materialised, failed and
    in-progress counts (its "% filled"), and each asset's stale status (the green the Catalog shows)."""
    from interviewsim_core.pipeline.steps import BY_NAME, Partitioning

    out: dict[str, Any] = {}
    for name in expected:
        stats = ui.partition_stats(name) if BY_NAME[name].partitioning is not Partitioning.NONE else None
        out[name] = {"stats": stats, "stale": ui.stale_status(name)["staleStatus"]}
    return out


RUN_STATS_QUERY = """query($id: ID!) { runOrError(runId: $id) { ... on Run { stats { ... on RunStatsSnapshot {
    materializations } } } } }"""


def _materializations(ui, run_id: str) -> int:
    """A run's materialisations (its partitions times its assets), from Dagster's run stats."""
    return ui.gql(RUN_STATS_QUERY, {"id": run_id})["runOrError"]["stats"]["materializations"]


def report(out: dict[str, Any]) -> None:
    exp, got = out["expected"], out["rewritten"]
    print(f"\na judge change ({JUDGE_MODEL}) re-scored by the automation: {out['wall']:.0f} s, {out['calls']:,} calls "
          f"({out['calls'] / out['wall']:.1f} calls/s)")
    print("| asset | made stale | rewritten |")
    print("| --- | --- | --- |")
    for name in sorted(set(exp) | {k for k, v in got.items() if v}):
        print(f"| {name} | {exp.get(name, 0):,} | {got.get(name, 0):,} |")
    exact = all(got.get(k, 0) == v for k, v in exp.items()) and not any(v for k, v in got.items() if k not in exp)
    print(f"  rewrote exactly what the judge change made stale   {verdict(exact)}")
    judge = JUDGE_MODEL.split("/", 1)[1]
    only = set(out["models"]) <= {judge} and out["calls"] > 0
    print(f"  calls per model: {out['models']} (only the new judge)   {verdict(only)}")
    failed = [r for r in out["runs"] if r["status"] != "SUCCESS"]
    by_sensor = sum(1 for r in out["runs"] if r["sensor"])
    print(f"  runs: {len(out['runs'])} ({by_sensor} by the automation), the most materialisations in one "
          f"{max((r['materializations'] for r in out['runs']), default=0):,}; not succeeded: {len(failed)}   {verdict(not failed)}")
    shown = out["shown"]
    current = all(v["stale"] == "FRESH" and (v["stats"] is None or (
        v["stats"]["numMaterialized"] == exp[k] and not v["stats"]["numFailed"] and not v["stats"]["numMaterializing"]))
        for k, v in shown.items())
    print(f"  the UI after it (GraphQL): every re-made asset fully materialised, none failed or in progress, and "
          f"FRESH   {verdict(current)}" + ("" if current else f": {shown}"))
    longest = max(out["ticks"], default=0.0)
    print(f"  automation ticks: {len(out['ticks'])}, longest {longest:.1f} s   target < {TICK_TARGET_S:g} s   "
          f"{verdict(longest < TICK_TARGET_S)}")


def main(argv: list[str] | None = None) -> None:
    row_main(__doc__, measure, report, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
