"""UI runs vs CLI runs of the same partitions on the local instance (target: UI at most 2x the CLI).

Both sides materialise every asset for the same personalities and methods of the shipped sample,
offline model, each on a FRESH data root (hence a fresh LLM cache) and a fresh Dagster instance:

- CLI: ``interviewsim run`` (in-process runs, one per job); the time is the sum of its runs' own
  durations as it prints them, plus once the process start-up (imports) the user waits for;
- UI, named jobs: the same runs as the CLI (the four jobs, partition ranges) launched through GraphQL
  one after another, as from each job's page; the time is the sum of the runs' durations (the target);
- UI, asset backfill: ``interviewsim ui`` (webserver + daemon) and one backfill of every asset over all partitions
  launched through GraphQL, automation sensor stopped so only the backfill runs; the time is the
  sum of the runs' durations (start to end, as the UI shows them: each run is a process that
  imports the code location), and the backfill's wall time from launch to completion.

Usage: ``python -m benchmarks.bench_ui [--personalities N] [--methods LIST]``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
TARGET = 2.0


def _corpus(n: int, work: Path) -> Path:
    from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

    sub = work / "corpus"
    sub.mkdir()
    for d in sorted(p for p in Path(SAMPLE_CORPUS_DIR).iterdir() if p.is_dir())[:n]:
        (sub / d.name).symlink_to(d, target_is_directory=True)
    return sub


def _side(work: Path, name: str, corpus: Path, methods: str) -> tuple[Path, dict[str, str]]:
    root = work / name
    root.mkdir()
    cfg = root / "interviewsim.yaml"
    cfg.write_text(f"corpus: {corpus}\ndata_root: {root / 'data'}\nmethods: [{methods}]\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(root / "home"), INTERVIEWSIM_CONFIG=str(cfg), PYTHONPATH=str(REPO),
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    return root, env


def cli_side(work: Path, corpus: Path, methods: str) -> dict:
    root, env = _side(work, "cli", corpus, methods)
    exe = str(Path(sys.executable).with_name("interviewsim"))
    t0 = time.perf_counter()
    proc = subprocess.run([exe, "run"], env=env, cwd=root, capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"interviewsim run failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    runs = [float(s) for s in re.findall(r"ok in ([0-9.]+) s", proc.stdout)]
    return {"runs": len(runs), "run_seconds": sum(runs), "wall": wall}


def ui_side(work: Path, corpus: Path, methods: str) -> dict:
    sys.path.insert(0, str(REPO / "tests" / "dagster"))
    from ui_harness import DagsterUI, wait_for  # the tests' harness: start, GraphQL, stop by process group

    from interviewsim_dagster.definitions import AUTOMATION_SENSOR

    root, env = _side(work, "ui", corpus, methods)
    exe = str(Path(sys.executable).with_name("interviewsim"))
    subprocess.run([exe, "register", "--corpus", str(corpus)], env=env, cwd=root, check=True,
                   capture_output=True, timeout=600)
    with DagsterUI(env, cwd=root, log=root / "ui.log") as ui:
        ui.set_sensor_running(AUTOMATION_SENSOR, False)
        jobs = job_runs(ui, env, wait_for)  # fresh data root and cache, like the CLI side
        shutil.rmtree(root / "data")  # the backfill starts fresh too (tables and LLM cache)
        assets = [n["assetKey"]["path"][-1] for n in ui.gql("{ assetNodes { assetKey { path } } }")["assetNodes"]]
        t0 = time.perf_counter()
        backfill = ui.gql(
            """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
                __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }""",
            {"p": {"assetSelection": [{"path": [a]} for a in assets], "allPartitions": True}},
        )["launchPartitionBackfill"]
        if backfill["__typename"] != "LaunchBackfillSuccess":
            raise RuntimeError(f"backfill not launched: {backfill}")
        status = wait_for("the backfill", lambda: (s := ui.backfill_status(backfill["backfillId"])).startswith(
            ("COMPLETED", "FAILED", "CANCELED")) and s, 3600, every_s=0.5)
        wall = time.perf_counter() - t0
        if status != "COMPLETED_SUCCESS":
            raise RuntimeError(f"backfill {status}; see {root / 'ui.log'}")
        runs = [r for r in ui.runs() if r["tags"].get("dagster/backfill") == backfill["backfillId"]]
        seconds = sum(r["endTime"] - r["startTime"] for r in runs)
    return {"runs": len(runs), "run_seconds": seconds, "wall": wall, "jobs": jobs}


def job_runs(ui, env: dict[str, str], wait_for) -> dict:
    """The four named jobs launched from the UI (Jobs page, partition range), one after another as
    ``interviewsim run`` does: the same runs the CLI makes, so the ratio is per run, like for like."""
    import dagster as dg

    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_dagster.definitions import build_definitions
    from interviewsim_dagster.launch import plan_runs, range_tags
    from ui_harness import LOCATION, REPOSITORY

    cfg = EvalConfig.load_resolved(env=env)
    defs = build_definitions(cfg)
    os.environ["DAGSTER_HOME"] = env["DAGSTER_HOME"]  # the instance's dagster.yaml reads it
    with dg.DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        specs = plan_runs(defs, instance, cfg.methods)
    t0 = time.perf_counter()
    seconds = 0.0
    for spec in specs:
        params = {"selector": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY, "jobName": spec.job,
                               "assetSelection": [{"path": list(k.path)} for k in spec.assets]},
                  "runConfigData": {}, "executionMetadata": {"tags": [{"key": k, "value": v}
                                                                      for k, v in range_tags(spec).items()]}}
        out = ui.gql("""mutation($p: ExecutionParams!) { launchRun(executionParams: $p) { __typename
            ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } ... on RunConfigValidationInvalid {
            errors { message } } } }""", {"p": params})["launchRun"]
        if out["__typename"] != "LaunchRunSuccess":
            raise RuntimeError(f"{spec.describe()}: {out}")
        run_id = out["run"]["runId"]

        def finished():
            run = next((r for r in ui.runs() if r["runId"] == run_id), None)
            return run if run and run["status"] in ("SUCCESS", "FAILURE", "CANCELED") else None

        run = wait_for(f"run {run_id}", finished, 3600, every_s=0.5)
        if run["status"] != "SUCCESS":
            raise RuntimeError(f"{spec.describe()}: run {run_id} {run['status']}")
        seconds += run["endTime"] - run["startTime"]
    return {"runs": len(specs), "run_seconds": seconds, "wall": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--personalities", type=int, default=2)
    p.add_argument("--methods", default="simple,chrono-100")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench_ui_") as tmp:
        work = Path(tmp)
        corpus = _corpus(args.personalities, work)
        cli = cli_side(work, corpus, args.methods)
        ui = ui_side(work, corpus, args.methods)
    print(f"sample corpus, {args.personalities} personalities x methods {args.methods}, offline model, fresh caches")
    print(f"CLI `interviewsim run`: {cli['runs']} runs, {cli['run_seconds']:7.1f} s in runs, "
          f"{cli['wall']:7.1f} s wall (with start-up)")
    print(f"UI backfill (GraphQL):  {ui['runs']} runs, {ui['run_seconds']:7.1f} s in runs, "
          f"{ui['wall']:7.1f} s wall (launch to done)")
    jobs = ui["jobs"]
    print(f"UI named-job runs:      {jobs['runs']} runs, {jobs['run_seconds']:7.1f} s in runs, "
          f"{jobs['wall']:7.1f} s wall (one after another)")
    ratio = jobs["run_seconds"] / cli["wall"]
    verdict = "PASS" if ratio <= TARGET else "FAIL"
    print(f"UI job runs / CLI wall, same runs: {ratio:.2f}x (target <= {TARGET:.1f}x) {verdict}")
    print(f"UI asset backfill runs / CLI wall: {ui['run_seconds'] / cli['wall']:.2f}x (information: Dagster splits an "
          f"asset backfill into one run per dependency level, {ui['runs']} runs here, each paying process start-up)")


if __name__ == "__main__":
    main()
