"""One new method over a kept growth row (issue 43): the UI's job backfill against ``interviewsim run`` on the
same selection, and the backfill's page.

The row is what ``bench_growth --keep DIR`` leaves in ``DIR/row_N``: the corpus, ``interviewsim run``'s instance
(``dagster_home``) and data root (``product``) with every default method materialised. Each path gets its own copy
of both, configured with one more method, ``METHOD``, and materialises its P x M partitions for every
personality against the same server as the row (its port: a data root holds one study, and the model's address
is part of its settings):

- the UI: ``interviewsim ui`` (webserver, daemon, the automation sensor as shipped) and what the job page's
  "Materialize all" sends for ``personality_method_assets``, ``METHOD`` x every personality (one job backfill,
  single-run policy), timed from the mutation until Dagster marks the backfill done; then the backfill's page
  through GraphQL (the page's own query) and in Chromium, and the automation sensor's ticks meanwhile;
- ``interviewsim run --methods METHOD --assets <that job's assets>``, the whole command.

The backfill goes first, so the server has not yet remembered the method's replies for it (the run gets them
from its memory): a ratio above the target holds for the order that favours the run. What each path wrote is
counted from the data root (one Parquet file per asset partition). Both go through the budget gate; with the
bench's model, which litellm prices at nothing, the gate plans every run and passes (the priced gate at 200
personalities is ``tests/dagster/test_ui_backfill_200.py``).

Run: ``python -m benchmarks.bench_backfill --row DIR/row_1000 [--latency 0.2]`` (bench_growth calls it after each
row's UI pages when given ``--backfill``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlparse

import yaml

from benchmarks.bench_product import BIN, _path_row, _timed
from benchmarks.bench_scale import Server, verdict
from benchmarks.chromium import CHROMIUM, CHROMIUM_ARGS, page_seconds

METHOD = "memory-3"
"""Three retrieved pairs: fewer than a small personality holds, so its prompts are ones no default method sends and
every call is new (``memory-20`` retrieves all of them, as ``memory-50`` does, and was answered from the cache)."""
JOB = "personality_method_assets"
TARGET = 0.8
"""The backfill's throughput at least this share of ``interviewsim run``'s on the same selection."""
JUDGED_FROM = 100
"""The throughput target applies from this many personalities (the issue's rows: 100 and 1,000)."""
TICK_TARGET_S = 10.0
BACKFILL_QUERY = """query($id: String!) { partitionBackfillOrError(backfillId: $id) { ... on PartitionBackfill {
    id status numPartitions partitionSetName assetSelection { path }
    partitionStatuses { results { id partitionName runId runStatus } } } } }"""
"""The backfill page's read: its header, then the partition statuses its table shows."""
BACKFILL_SHOWN = "completed"
"""A text of the backfill's page once its table is there ("100% completed")."""
def with_method(cfg: dict[str, Any]) -> dict[str, Any]:
    return {**cfg, "methods": [*cfg["methods"], METHOD]}


def copy_row(row: Path, dest: Path, edit: Callable[[dict[str, Any]], dict[str, Any]] = with_method) -> Path:
    """The row's instance and data root under ``dest``, its configuration changed by ``edit`` (by default
    ``METHOD`` added); see ``write_config``."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    for sub in ("dagster_home", "product"):
        subprocess.run(["cp", "-a", str(row / sub), str(dest / sub)], check=True)
    cfg = yaml.safe_load((row / "interviewsim.yaml").read_text())
    write_config(dest, edit({**cfg, "data_root": str(dest / "product")}))
    return dest


def write_config(dest: Path, cfg: dict[str, Any]) -> None:
    """The configuration of the copy under ``dest``: the UI reads ``dagster_home/interviewsim.yaml``, the run its own."""
    text = yaml.safe_dump(cfg)
    (dest / "interviewsim.yaml").write_text(text)
    (dest / "dagster_home" / "interviewsim.yaml").write_text(text)


def _written(root: Path, assets: list[str], since: float) -> dict[str, int]:
    """Per asset, ``METHOD``'s partition files; under ``"others"``, any other method's file written since ``since``."""
    out = {a: len(list((root / a).glob(f"*/{METHOD}.parquet"))) for a in assets}
    out["others"] = sum(1 for a in assets for f in (root / a).glob("*/*.parquet")
                        if f.stem != METHOD and f.stat().st_mtime >= since)
    return out


def _page_times(base: str, path: str, rounds: int = 3) -> tuple[float, float]:
    """(reached in the app, loaded afresh): seconds until the page's table shows, each the slowest of ``rounds``."""
    from playwright.sync_api import sync_playwright

    clicked, loaded = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            for _ in range(rounds):
                c, f = page_seconds(page, base, ("/runs", "Runs"), path, BACKFILL_SHOWN)
                clicked.append(c)
                loaded.append(f)
        finally:
            browser.close()
    return max(clicked), max(loaded)


def measure(row: Path, latency: float) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "dagster"))
    from ui_harness import DagsterUI

    from interviewsim_dagster.defs.evaluate.automation import AUTOMATION_SENSOR

    port = urlparse(yaml.safe_load((row / "interviewsim.yaml").read_text())["generator"]["api_base"]).port
    people = sorted(p.name for p in next(row.glob("corpus_*")).iterdir() if p.is_dir())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(PYTHONWARNINGS="ignore", BENCH_FAKE_KEY="bench", LITELLM_LOCAL_MODEL_COST_MAP="True")
    out: dict[str, Any] = {"people": len(people)}
    srv = Server(latency, port=port)
    try:
        ui_copy = copy_row(row, row.parent / f"{row.name}_backfill")
        uenv = {**env, "DAGSTER_HOME": str(ui_copy / "dagster_home"),
                "INTERVIEWSIM_CONFIG": str(ui_copy / "dagster_home" / "interviewsim.yaml")}
        with DagsterUI(uenv, cwd=ui_copy, log=ui_copy / "ui.log") as ui:
            params = ui.job_page_backfill_params(JOB, [f"{METHOD}|{p}" for p in people])
            assets = [a["path"][-1] for a in params["assetSelection"]]
            srv.cmd("reset")
            before = srv.cmd("stats")
            t0 = time.time()
            backfill = ui.launch_backfill_params(params)
            status = ui.wait_backfill(backfill, 6 * 3600)
            t1 = time.time()
            st = srv.cmd("stats")
            runs = [r for r in ui.runs() if float(r["creationTime"]) >= t0 - 1]
            out["backfill"] = {**_path_row(st, before, t0, t1), "status": status, "written": _written(
                ui_copy / "product", assets, t0), "runs": sum(1 for r in runs if r["tags"].get("dagster/backfill") == backfill),
                "automation_runs": sorted(",".join(r["assets"]) for r in runs
                                          if r["tags"].get("dagster/sensor_name") == AUTOMATION_SENSOR)}
            out["ticks"] = tick_seconds(ui, t0)
            graphql = []
            for _ in range(3):
                g0 = time.perf_counter()
                ui.gql(BACKFILL_QUERY, {"id": backfill}, timeout_s=600)
                graphql.append(time.perf_counter() - g0)
            out["page"] = (max(graphql), *_page_times(f"http://127.0.0.1:{ui.port}", f"/runs/b/{backfill}"))
        run_copy = copy_row(row, row.parent / f"{row.name}_run")
        srv.cmd("reset")
        before = srv.cmd("stats")
        t0, t1, cpu, _tail, peak = _timed([str(BIN / "interviewsim"), "run", "--config", str(run_copy / "interviewsim.yaml"),
                                           "--methods", METHOD, "--assets", ",".join(assets), "--yes"],
                                          {**env, "DAGSTER_HOME": str(run_copy / "dagster_home")}, run_copy / "run.log")
        st = srv.cmd("stats")
        out["run"] = {**_path_row(st, before, t0, t1), "cpu": cpu, "peak_rss_mb": peak,
                      "written": _written(run_copy / "product", assets, t0)}
    finally:
        srv.close()
    return out


def report(out: dict[str, Any]) -> None:
    b, r, n = out["backfill"], out["run"], out["people"]
    print(f"\none new method ({METHOD}) x {n:,} personalities, the P x M job's assets, the row's server:")
    print("| path | calls | wall | calls/s | partitions written per asset | runs |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, row, runs in (("UI job backfill", b, f"{b['runs']} (+ {len(b['automation_runs'])} by the automation)"),
                            ("`interviewsim run`", r, "")):
        written = sorted({v for k, v in row["written"].items() if k != "others"})
        print(f"| {name} | {row['calls']:,} | {row['wall']:.0f} s | {row['rate']:.1f} | "
              f"{'/'.join(map(str, written))} of {n:,} (other methods' files rewritten: {row['written']['others']}) | {runs} |")
    ratio = b["rate"] / r["rate"] if r["rate"] else float("nan")
    exact = (all(v == n for k, v in b["written"].items() if k != "others") and b["written"]["others"] == 0
             and b["status"] == "COMPLETED_SUCCESS")
    longest = max(out["ticks"], default=0.0)
    print(f"  backfill: {b['status']}, every asset's {n:,} partitions and only {METHOD}'s   {verdict(exact)}")
    judged = verdict(ratio >= TARGET) if n >= JUDGED_FROM else (
        f"not judged below {JUDGED_FROM} personalities (the backfill daemon's looks, every 30 s, set the wall)")
    print(f"  backfill / interviewsim run throughput = {ratio:.2f}   target >= {TARGET}   {judged}")
    print(f"  calls: backfill {b['calls']:,}, run {r['calls']:,} (the same selection: the automation asked nothing)   "
          f"{verdict(b['calls'] == r['calls'])}")
    print(f"  automation ticks during the backfill: {len(out['ticks'])}, longest {longest:.1f} s   target < "
          f"{TICK_TARGET_S:g} s   {verdict(longest < TICK_TARGET_S)}; its runs: {b['automation_runs'] or 'none'}")
    g, clicked, loaded = out["page"]
    print(f"  backfill page: GraphQL {g:.2f} s, Chromium reached in the app {clicked:.2f} s, loaded afresh "
          f"{loaded:.2f} s   target <= 2 s   {verdict(max(g, clicked) <= 2.0)}")


def tick_seconds(ui, t0: float) -> list[float]:
    """How long each of the automation sensor's ticks since ``t0`` took (finished ticks only)."""
    from interviewsim_dagster.defs.evaluate.automation import AUTOMATION_SENSOR

    ticks = ui.sensor_ticks(AUTOMATION_SENSOR, limit=200)
    return [t["endTimestamp"] - t["timestamp"] for t in ticks if t["endTimestamp"] and t["timestamp"] >= t0 - 1]


def row_main(doc: str, measure: Callable[[Path, float], dict[str, Any]], report: Callable[[dict[str, Any]], None],
             argv: list[str] | None) -> None:
    """The command line of a benchmark over a kept growth row: ``--row DIR/row_N [--latency 0.2]``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--row", type=Path, required=True, help="a row folder bench_growth --keep left (DIR/row_N)")
    ap.add_argument("--latency", type=float, default=0.2)
    a = ap.parse_args(argv)
    report(measure(a.row, a.latency))


def main(argv: list[str] | None = None) -> None:
    row_main(__doc__, measure, report, argv)


if __name__ == "__main__":
    main(sys.argv[1:])
