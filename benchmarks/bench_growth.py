"""How the product's cost grows with the population (issue 43): the growth table.

Rows: N small personalities (``bench_plan.small_corpus``: 5 interviews x 2 QA pairs each, so that
per-partition work, not prompt size, shows), every default method, one judge, against the local
OpenAI-compatible server in its own process (``scale_server.py``: latency L, concurrency C,
offline-model replies remembered from an untimed first pass). Each row times, side by side against
the same warmed server, three whole commands as ``bench_product`` does: the direct runner
(``run_evaluation``), ``interviewsim run`` (Dagster), and raw ``httpx`` replaying ``interviewsim
run``'s very request bodies. Per row and path:

- calls/s and the ratio to raw httpx;
- CPU seconds per partition (the command's CPU, its child processes included, over the Parquet
  partitions it wrote: every asset partition is one file);
- peak RSS of the command's process tree (sampled every 0.2 s);
- bytes on disk per call (data root: Parquet, model-call cache, report);
- ``interviewsim run``'s Dagster storage (event log, runs, compute logs under ``DAGSTER_HOME``), in
  all and per materialisation;
- the UI over that instance afterwards (``interviewsim ui``, webserver and daemon with the automation
  sensor on, every default method materialised): each page's read through GraphQL as the page sends it
  (the slowest of 3) and each page in headless Chromium (Debian's ``chromium``, from navigation until
  its content shows), target at most 2 s; and the runs the automation launched meanwhile (target: none).

Targets, each printed with PASS/FAIL where its rows were measured: ``interviewsim run`` >= 0.9 of the
direct runner and the direct runner >= 0.8 of raw httpx at 100 and at 1,000; CPU per partition at
the largest row within 1.5x of the 100 row; peak RSS at the largest row within 1.3x of the 100 row
(memory bounded: no table of the whole population held at once).

Time: the 6 row takes about 3 minutes, the 100 row about 25 on the shared 2-core machine, and the
1,000 row (about 280,000 calls per path) several hours; the default rows are 6 and 100, and
``--sizes 6,100,1000`` adds the paper's population.

``--backfill`` adds, after each row's UI pages, one new method over the row's population through the UI's job
backfill and through ``interviewsim run`` (``bench_backfill``: the backfill's throughput against the run's, the
partitions it wrote, the automation's ticks, the backfill's page).

``--rescore`` adds, after that, a judge change over the row through ``interviewsim ui``'s automation
(``bench_rescore``: what it rewrote against what the change made stale, the calls per model, its runs and ticks).

Run: ``python -m benchmarks.bench_growth [--sizes 6,100] [--c 64 --latency 0.2] [--keep DIR] [--backfill] [--rescore]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from benchmarks import bench_backfill, bench_rescore  # noqa: E402
from benchmarks.bench_scale import verdict  # noqa: E402
from benchmarks.chromium import CHROMIUM, CHROMIUM_ARGS, page_seconds  # noqa: E402

TARGETS = {"run_vs_direct": 0.9, "direct_vs_raw": 0.8, "cpu_growth": 1.5, "memory_growth": 1.3}
PAGE_TARGET_S = 2.0
ROUNDS = 3
TARGET_ROWS = (100, 1000)
"""The rows the throughput targets apply to (the issue's); the 6 row is start-up dominated."""


def _files(root: Path, suffix: str) -> int:
    return sum(1 for _ in root.rglob(f"*{suffix}")) if root.exists() else 0


def _bytes(root: Path) -> int:
    return sum(p.stat().st_blocks * 512 for p in root.rglob("*") if p.is_file()) if root.exists() else 0


def dagster_storage(home: Path) -> dict[str, int]:
    """Bytes under ``DAGSTER_HOME`` by kind: the event log and run storage (SQLite files) and the
    compute logs (each step's captured output)."""
    out = {"event_log": 0, "compute_logs": 0, "other": 0}
    if not home.exists():
        return out
    for p in home.rglob("*"):
        if not p.is_file():
            continue
        size = p.stat().st_blocks * 512
        if p.suffix in (".db", ".db-wal", ".db-shm") or p.name.endswith((".db-wal", ".db-shm")):
            out["event_log"] += size
        elif "logs" in p.relative_to(home).parts:
            out["compute_logs"] += size
        else:
            out["other"] += size
    return out


def materialisations(home: Path) -> int:
    """Materialisation events in the instance at ``home``, read through Dagster's own API (which
    opens the instance of ``DAGSTER_HOME``)."""
    import dagster as dg

    total = 0
    saved, os.environ["DAGSTER_HOME"] = os.environ.get("DAGSTER_HOME"), str(home)
    try:
        instance = dg.DagsterInstance.get()
    finally:
        if saved is None:
            del os.environ["DAGSTER_HOME"]
        else:
            os.environ["DAGSTER_HOME"] = saved
    with instance:
        for key in instance.get_asset_keys():
            cursor = None
            while True:
                page = instance.fetch_materializations(key, limit=10_000, cursor=cursor)
                total += len(page.records)
                if not page.has_more:
                    break
                cursor = page.cursor
    return total


GRAPHQL = {
    "asset graph": ("{ assetNodes { assetKey { path } dependencyKeys { path } isPartitioned "
                    "partitionDefinition { type dimensionTypes { name } } } }", None),
    "Catalog": ("{ assetNodes { assetKey { path } partitionStats { numMaterialized numPartitions numFailed "
                "numMaterializing } assetMaterializations(limit: 1) { timestamp runId } } }", None),
    "P x M Partitions tab": ("""query($k: AssetKeyInput!) { assetNodeOrError(assetKey: $k) { ... on AssetNode {
        partitionKeysByDimension { name partitionKeys }
        assetPartitionStatuses { __typename ... on MultiPartitionStatuses { primaryDimensionName
          ranges { primaryDimStartKey primaryDimEndKey } } } } } }""", {"k": {"path": ["generations"]}}),
    "leaderboard page": ("""query($k: AssetKeyInput!) { assetNodeOrError(assetKey: $k) { ... on AssetNode {
        assetMaterializations(limit: 1) { runId metadataEntries { label } } } } }""", {"k": {"path": ["leaderboard"]}}),
    "run list": ("{ runsOrError(limit: 30) { ... on Runs { results { runId status startTime endTime "
                 "tags { key value } assetSelection { path } } } } }", None),
}
"""Each page's read, as its page asks for it: what the page needs to show its content."""
PAGES = {
    "asset graph": ("/asset-groups", "Materialize all"),
    "Catalog": ("/assets", "content_similarity"),
    "P x M Partitions tab": ("/assets/generations?view=partitions", "Materialized ("),
    "leaderboard page": ("/assets/leaderboard", "Latest materialization"),
    "run list": ("/runs", "global_assets"),
}
"""Each page in Chromium: its path and a text that shows (visible) once its content is there."""


def ui_pages(home: Path, work: Path, env: dict[str, str]) -> dict[str, Any]:
    """``interviewsim ui`` over ``interviewsim run``'s instance: each page's GraphQL read and Chromium load, and the
    runs the automation launched while the UI was up (it must launch none: everything is up to date)."""
    import time

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "dagster"))
    from ui_harness import DagsterUI

    uenv = {k: v for k, v in env.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    uenv.update(DAGSTER_HOME=str(home), INTERVIEWSIM_CONFIG=str(home / "interviewsim.yaml"),
                LITELLM_LOCAL_MODEL_COST_MAP="True")
    out: dict[str, Any] = {"graphql": {}, "chromium": {}}
    with DagsterUI(uenv, cwd=work, log=work / "ui.log") as ui:
        started = time.time()
        before = {r["runId"] for r in ui.runs()}
        for name, (query, variables) in GRAPHQL.items():
            times = []
            for _ in range(ROUNDS):
                t0 = time.perf_counter()
                ui.gql(query, variables, timeout_s=600)
                times.append(time.perf_counter() - t0)
            out["graphql"][name] = max(times)
        out["chromium"] = _chromium(f"http://127.0.0.1:{ui.port}")
        time.sleep(max(0.0, 35 - (time.time() - started)))  # at least one automation tick (every 30 s)
        out["automation_runs"] = len([r for r in ui.runs() if r["runId"] not in before])
    return out


def _chromium(base: str) -> dict[str, tuple[float, float]]:
    """Per page, seconds until its content shows: reached in the app as a click does (the UI already loaded), and
    loaded afresh from its address (the UI's scripts started again); each the slowest of ``ROUNDS``."""
    from playwright.sync_api import sync_playwright

    times: dict[str, tuple[float, float]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            page.goto(f"{base}/assets")  # the UI's scripts into the browser's cache
            page.get_by_text("content_similarity").filter(visible=True).first.wait_for()
            for name, (path, shown) in PAGES.items():
                clicked, loaded = [], []
                for _ in range(ROUNDS):
                    c, f = page_seconds(page, base, ("/overview", "Overview"), path, shown)
                    clicked.append(c)
                    loaded.append(f)
                times[name] = (max(clicked), max(loaded))
        finally:
            browser.close()
    return times


def measure_row(n: int, work: Path, c: int, latency: float, seed: int) -> dict[str, Any]:
    """One row: the three paths on ``n`` small personalities, every default method."""
    from benchmarks.bench_plan import small_corpus
    from benchmarks.bench_product import measure
    from interviewsim_core.strategies import DEFAULT_METHODS

    corpus = small_corpus(work / f"corpus_{n}", n, seed)
    out = measure(corpus, work, c, latency, ui=False, raw_httpx=True, methods=",".join(DEFAULT_METHODS))
    for name, root in (("direct", work / "direct"), ("product", work / "product")):
        row = out[name]
        row["partitions"] = _files(root, ".parquet")
        row["disk"] = _bytes(root)
    home = work / "dagster_home"
    out["storage"] = dagster_storage(home)
    out["materialisations"] = materialisations(home)
    return out


def _row_lines(n: int, out: dict[str, Any]) -> list[str]:
    d, p, r = out["direct"], out["product"], out["raw"]
    st, mats = out["storage"], out["materialisations"]
    lines = []
    for name, row, extra in (("direct runner", d, "-"),
                             ("`interviewsim run`", p, f"{st['event_log'] / 1e6:.1f} MB ({st['event_log'] / max(1, mats) / 1000:.1f} KB "
                                                      f"per materialisation, {mats:,}); compute logs "
                                                      f"{st['compute_logs'] / 1e6:.1f} MB")):
        lines.append(f"| {n:,} | {name} | {row['calls']:,} | {row['wall']:.0f} s | {row['rate']:.1f} | "
                     f"{row['rate'] / r['rate']:.2f} | {row['cpu'] / max(1, row['partitions']):.3f} s "
                     f"({row['partitions']:,}) | {row['peak_rss_mb']:.0f} MB | "
                     f"{row['disk'] / max(1, row['calls']) / 1000:.2f} KB | {extra} |")
    lines.append(f"| {n:,} | raw httpx | {r['calls']:,} | {r['wall']:.0f} s | {r['rate']:.1f} | 1.00 | | | | |")
    return lines


def _ui_lines(n: int, ui: dict[str, Any]) -> list[str]:
    lines = [f"UI over the {n:,}-personality instance ({ui['automation_runs']} runs launched by the automation "
             f"meanwhile; target 0):", "| page | GraphQL read | Chromium, reached in the app | Chromium, loaded afresh |",
             "| --- | --- | --- | --- |"]
    for name in GRAPHQL:
        clicked, loaded = ui["chromium"][name]
        lines.append(f"| {name} | {ui['graphql'][name]:.2f} s | {clicked:.2f} s | {loaded:.2f} s |")
    return lines


def report(rows: dict[int, dict[str, Any]], c: int, latency: float) -> None:
    """The growth table, then each target with its verdict (or why it was not judged)."""
    print(f"\ngrowth table: small personalities, every default method, 1 judge, local server L={latency * 1000:.0f} "
          f"ms, C={c}; each path a whole command against the same warmed server:")
    print("| personalities | path | calls | wall | calls/s | of raw httpx | CPU per partition (partitions) | "
          "peak RSS | disk per call | Dagster storage |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for n, out in rows.items():
        print("\n".join(_row_lines(n, out)))
    for n, out in rows.items():
        print("\n".join(_ui_lines(n, out["ui"])))
        slowest = max([*out["ui"]["graphql"].values(), *(c for c, _ in out["ui"]["chromium"].values())])
        print(f"  [{n} personalities] slowest page (GraphQL, or reached in the app) {slowest:.2f} s   target <= {PAGE_TARGET_S:g} s   "
              f"{verdict(slowest <= PAGE_TARGET_S)};   automation runs {out['ui']['automation_runs']}   target 0   "
              f"{verdict(out['ui']['automation_runs'] == 0)}")
    for n in TARGET_ROWS:
        if n not in rows:
            print(f"  [{n} personalities] throughput targets: not measured (add {n} to --sizes)")
            continue
        d, p, r = rows[n]["direct"], rows[n]["product"], rows[n]["raw"]
        run_direct, direct_raw = p["rate"] / d["rate"], d["rate"] / r["rate"]
        print(f"  [{n} personalities] interviewsim run / direct runner = {run_direct:.2f}   target >= "
              f"{TARGETS['run_vs_direct']}   {verdict(run_direct >= TARGETS['run_vs_direct'])}")
        print(f"  [{n} personalities] direct runner / raw httpx = {direct_raw:.2f}   target >= "
              f"{TARGETS['direct_vs_raw']}   {verdict(direct_raw >= TARGETS['direct_vs_raw'])}")
    big = max(rows)
    if 100 in rows and big > 100:
        for name, label in (("direct", "direct runner"), ("product", "interviewsim run")):
            per = [rows[k][name]["cpu"] / max(1, rows[k][name]["partitions"]) for k in (100, big)]
            mem = [rows[k][name]["peak_rss_mb"] for k in (100, big)]
            print(f"  {label}: CPU per partition {big} / 100 = {per[1] / per[0]:.2f}x   target <= "
                  f"{TARGETS['cpu_growth']}x   {verdict(per[1] / per[0] <= TARGETS['cpu_growth'])}")
            print(f"  {label}: peak RSS {big} / 100 = {mem[1] / mem[0]:.2f}x   target <= "
                  f"{TARGETS['memory_growth']}x   {verdict(mem[1] / mem[0] <= TARGETS['memory_growth'])}")
    else:
        print("  CPU per partition and memory growth: need the 100 row and a larger one (--sizes 6,100,1000)")
    for out in rows.values():
        if "backfill" in out:
            bench_backfill.report(out["backfill"])
        if "rescore" in out:
            bench_rescore.report(out["rescore"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="6,100", help="personalities of each row (the issue's: 6,100,1000)")
    ap.add_argument("--quick", action="store_true", help="one row of 3 personalities (a smoke run)")
    ap.add_argument("--c", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    ap.add_argument("--backfill", action="store_true",
                    help="after each row's UI pages, one new method through the UI's backfill and `interviewsim run` "
                         "(bench_backfill)")
    ap.add_argument("--rescore", action="store_true",
                    help="then a judge change re-scored by the UI's automation (bench_rescore)")
    a = ap.parse_args(argv if argv is not None else [])
    sizes = [3] if a.quick else [int(x) for x in a.sizes.split(",")]
    if not Path(CHROMIUM).exists():  # said before the first row, not after it
        sys.exit(f"bench_growth: the UI pages are timed in Debian's chromium, not found at {CHROMIUM} "
                 "(apt-get install chromium)")
    base = a.keep or Path(tempfile.mkdtemp(prefix="bench_growth_"))
    rows: dict[int, dict[str, Any]] = {}
    try:
        for n in sizes:
            work = base / f"row_{n}"
            work.mkdir(parents=True, exist_ok=True)
            print(f"\n-- {n} small personalities --", flush=True)
            rows[n] = measure_row(n, work, a.c, a.latency, a.seed)
            print("\n".join(_row_lines(n, rows[n])), flush=True)  # before the UI: hours of calls are not lost to it
            rows[n]["ui"] = ui_pages(work / "dagster_home", work, dict(os.environ))
            print("\n".join(_ui_lines(n, rows[n]["ui"])), flush=True)
            if a.backfill:
                rows[n]["backfill"] = bench_backfill.measure(work, a.latency)
            if a.rescore:
                rows[n]["rescore"] = bench_rescore.measure(work, a.latency)
            if a.keep is None:
                shutil.rmtree(work, ignore_errors=True)
        report(rows, a.c, a.latency)
    finally:
        if a.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
