"""What Dagster costs on top of the evaluation itself, on the shared press-conference corpus, offline model.

Three measurements, each in its own child process (so peak RSS is per variant and imports are paid
by both sides alike), both sides on FRESH caches (a new data root, hence a new SQLite LLM cache):

1. direct: ``interviewsim_core.pipeline.runner.run_evaluation`` (writes the same Parquet files);
2. dagster: the same steps (core's step table, ``pipeline/steps.py``) through the Dagster graph on a
   temporary SQLite instance, launched as ``interviewsim run`` does (one single-run backfill per
   job), so both sides do the same model calls;
3. start-up: on a warm instance and cache, ``heldout_split`` + ``generations`` (method ``simple``,
   all cached) for N personalities as N one-partition runs vs one single-run backfill of N.

Methods: simple, chrono-100, memory-10 (a profile-free baseline, a long chronological context and
a retrieval method). Usage: ``python -m benchmarks.bench_orchestration [--personalities N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "data" / "press_conferences_1960_1980"
METHODS = "simple,chrono-100,memory-10"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def _corpus_subset(n: int | None, workdir: Path) -> Path:
    """The corpus itself, or a folder of symlinks to its first ``n`` personalities."""
    if not n:
        return CORPUS
    sub = workdir / "corpus"
    sub.mkdir(exist_ok=True)
    for d in sorted(p for p in CORPUS.iterdir() if p.is_dir())[:n]:
        link = sub / d.name
        if not link.exists():
            link.symlink_to(d, target_is_directory=True)
    return sub


def _config(corpus: Path, data_root: Path):
    from interviewsim_core.pipeline.config import EvalConfig

    return EvalConfig.load_resolved(env={}, overrides={"corpus": str(corpus), "data_root": str(data_root),
                                                       "methods": METHODS})


def child_direct(corpus: Path, work: Path) -> dict:
    from interviewsim_core.pipeline.runner import run_evaluation

    cfg = _config(corpus, work / "direct")
    t0 = time.perf_counter()
    tables = run_evaluation(cfg)
    return {"seconds": time.perf_counter() - t0, "peak_rss_mb": _peak_rss_mb(),
            "rows": {k: len(v) for k, v in tables.items()}}


def _dagster_setup(corpus: Path, work: Path, name: str):
    import dagster as dg

    from interviewsim_dagster.definitions import build_definitions
    from interviewsim_dagster.launch import register_personalities

    home = work / f"{name}_home"
    home.mkdir(exist_ok=True)
    (home / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    os.environ["DAGSTER_HOME"] = str(home)
    cfg = _config(corpus, work / name)
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.get()
    register_personalities(instance, str(cfg.corpus))
    return cfg, defs, instance


def child_dagster(corpus: Path, work: Path) -> dict:
    from interviewsim_dagster.launch import execute, plan_runs

    t0 = time.perf_counter()
    cfg, defs, instance = _dagster_setup(corpus, work, "dagster")
    specs = plan_runs(defs, instance, cfg.methods)
    outcomes = execute(defs, instance, specs, progress=lambda m: print(f"    {m}", file=sys.stderr, flush=True))
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb(), "runs": len(outcomes),
            "ok": all(o.success for o in outcomes), "materializations": sum(o.materializations for o in outcomes)}


def child_startup(corpus: Path, work: Path) -> dict:
    from interviewsim_dagster.launch import execute, plan_runs

    cfg, defs, instance = _dagster_setup(corpus, work, "startup")
    people = list(instance.get_dynamic_partitions("personality"))
    quiet = lambda _m: None  # noqa: E731
    warm = plan_runs(defs, instance, ["simple"], selection="heldout_split,generations")
    execute(defs, instance, warm, progress=quiet)  # fills the gateway cache: the timed runs make no calls

    def timed(specs):
        t = time.perf_counter()
        out = execute(defs, instance, specs, progress=quiet)
        assert all(o.success for o in out), "start-up benchmark run failed"
        return time.perf_counter() - t, len(out)

    per_partition = []
    for pid in people:
        per_partition += plan_runs(defs, instance, ["simple"], personalities=[pid], methods=["simple"],
                                   selection="heldout_split,generations")
    one_run = plan_runs(defs, instance, ["simple"], methods=["simple"], selection="heldout_split,generations")
    t_many, n_many = timed(per_partition)
    t_one, n_one = timed(one_run)
    return {"partitions": len(people), "runs_many": n_many, "seconds_many": t_many, "runs_single": n_one,
            "seconds_single": t_one}


def _spawn(mode: str, corpus: Path, work: Path) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_orchestration", "--child", mode, "--corpus", str(corpus),
         "--work", str(work)],
        cwd=REPO, capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} benchmark failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--personalities", type=int, default=None, help="first N personalities only (default: all)")
    ap.add_argument("--child", choices=("direct", "dagster", "startup"), help=argparse.SUPPRESS)
    ap.add_argument("--corpus", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--work", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv if argv is not None else [])
    if args.child:
        fn = {"direct": child_direct, "dagster": child_dagster, "startup": child_startup}[args.child]
        print(json.dumps(fn(args.corpus, args.work)))
        return
    if not CORPUS.is_dir():
        print(f"corpus not found: {CORPUS}; skipping")
        return
    with tempfile.TemporaryDirectory(prefix="bench_orch_") as tmp:
        work = Path(tmp)
        corpus = _corpus_subset(args.personalities, work)
        print(f"corpus {CORPUS.name} ({'all' if not args.personalities else args.personalities} personalities), "
              f"methods {METHODS}, offline model, fresh caches on both sides")
        direct = _spawn("direct", corpus, work)
        print(f"direct (core run_evaluation):  {direct['seconds']:8.1f} s   peak RSS {direct['peak_rss_mb']:7.0f} MB")
        dag = _spawn("dagster", corpus, work)
        print(f"dagster ({dag['runs']} single-run backfills, {dag['materializations']} partition materialisations): "
              f"{dag['seconds']:8.1f} s   peak RSS {dag['peak_rss_mb']:7.0f} MB   ok={dag['ok']}")
        print(f"orchestration overhead ratio (dagster / direct): {dag['seconds'] / direct['seconds']:.2f}x "
              f"(+{dag['seconds'] - direct['seconds']:.1f} s)")
        st = _spawn("startup", corpus, work)
        per_run = (st["seconds_many"] - st["seconds_single"]) / max(1, st["runs_many"] - st["runs_single"])
        print(f"start-up, warm cache, heldout_split+generations[simple] over {st['partitions']} personalities: "
              f"{st['runs_many']} one-partition runs {st['seconds_many']:.1f} s vs {st['runs_single']} single-run "
              f"backfill run(s) {st['seconds_single']:.1f} s -> {st['seconds_many'] / st['seconds_single']:.2f}x, "
              f"~{per_run:.2f} s per extra run")


if __name__ == "__main__":
    main(sys.argv[1:])
