"""The cost plan's CPU per planned call and peak memory, new planner vs. the old dry-run.

``interviewsim_core.plan.plan_run`` is called at the start of every run as its budget gate, so it
must be cheap: target at most 0.5 ms of CPU per planned call (aim 0.1) and at most 1 GB peak RSS
at 1,000 personalities of the paper's shape (``scale_corpus.py``: ~671 QA pairs each, 21% held
out). Each measurement runs in its own process (CPU = that process's user+system time of
``plan_run`` alone, peak RSS = its ``ru_maxrss``, imports included).

Methods: the benchmark's (simple, chrono-100, memory-10), one of each kind (no context, a long
fixed context, retrieval): the eleven defaults at 1,000 paper personalities are ~5 M calls, longer
than a benchmark should take. The old planner (``tests/core/pipeline/reference_plan.py``, the
dry-run through the runner with the offline model) is measured on the first paper personality only
(it needs minutes per personality); ``--before`` also measures both on the issue's corpus of 100
small personalities (5 interviews x 2 pairs, default methods), where the old one needs ~85 s.

Generators (issue 44): the planner at 1,000 small personalities (5 interviews x 2 pairs) x the eleven default
methods x 4 generators (each an offline model name: no model is called), against the same with one generator;
target at most ``GENERATORS_TARGET_MS`` (1 ms) of CPU per planned call. ``--quick``: 100 small personalities.

Usage: ``python -m benchmarks.bench_plan [--quick] [--before] [--keep DIR]``; ``--quick``: 100
paper personalities only.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
TARGET_MS = 0.5
AIM_MS = 0.1
TARGET_RSS_MB = 1024
BENCH_METHODS = ("simple", "chrono-100", "memory-10")
GENERATORS_TARGET_MS = 1.0
GENERATORS = ("offline/extractive", "offline/terse", "offline/third", "offline/fourth")


def small_corpus(out: Path, n: int, seed: int = 0) -> Path:
    """``n`` small personalities of 5 interviews x 2 pairs (the issue's corpus), text from scale_corpus."""
    from benchmarks.scale_corpus import personality_document

    for i in range(n):
        doc = personality_document(i, 10, seed)
        pairs = [p for it in sorted(doc["interviews"], key=lambda it: it["sequence"]) for p in it["qa_pairs"]]
        doc["interviews"] = [{"interview_id": f"INT_{j:03d}", "sequence": j, "qa_pairs": pairs[2 * j:2 * j + 2]}
                             for j in range(5)]
        folder = out / doc["personality_id"]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "prepared_input.json").write_text(json.dumps(doc), encoding="utf-8")
    return out


def worker(which: str, corpus: str, methods: str, limit: int, generators: int = 1) -> None:
    """One measurement (run in a child process): prints {"calls", "cpu_s"} as JSON."""
    sys.path.insert(0, str(REPO / "tests" / "core" / "pipeline"))
    from interviewsim_core.llm.transport import litellm_module
    from interviewsim_core.pipeline.config import EvalConfig

    litellm_module()  # imported before the clock starts, as the CLI has it by then
    import interviewsim_core.offline  # noqa: F401
    import interviewsim_core.pipeline.runner  # noqa: F401

    with tempfile.TemporaryDirectory() as data:
        cfg = EvalConfig(corpus=corpus, data_root=data,
                         **({} if methods == "default" else {"methods": tuple(methods.split(","))}),
                         **({"generators": [{"model": g} for g in GENERATORS[:generators]]} if generators > 1 else {}))
        pids = sorted(os.listdir(corpus))[:limit] if limit else None
        t0 = time.process_time()
        if which == "old":
            import reference_plan

            calls = reference_plan.plan_run(cfg, pids).plan().calls
        else:
            from interviewsim_core.plan import plan_run

            calls = plan_run(cfg, pids).calls
        cpu = time.process_time() - t0
    print(json.dumps({"calls": calls, "cpu_s": cpu}))


def measure(which: str, corpus: Path, methods: str, limit: int = 0, generators: int = 1) -> dict:
    """Run one measurement in a child and add its peak RSS (this child's own, from wait4)."""
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_plan", "--worker", which, str(corpus), methods,
                             str(limit), str(generators)], cwd=REPO, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"bench_plan: {which} on {corpus} failed (exit {proc.returncode})")
    res = json.loads(out.strip().splitlines()[-1])
    res["rss_mb"] = usage.ru_maxrss / 1024
    res["ms_per_call"] = 1000 * res["cpu_s"] / max(1, res["calls"])
    return res


def _row(label: str, r: dict) -> str:
    return (f"  {label:<44} {r['calls']:>10,} calls  {r['cpu_s']:>8.1f} s CPU  {r['ms_per_call']:>7.3f} ms/call  "
            f"peak {r['rss_mb']:>6.0f} MB")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="100 paper personalities only")
    ap.add_argument("--before", action="store_true", help="also the issue's 100 small personalities, old vs new")
    ap.add_argument("--keep", type=Path, default=None, help="reuse/keep the generated corpora in this folder")
    ap.add_argument("--worker", nargs=5, metavar=("WHICH", "CORPUS", "METHODS", "LIMIT", "GENERATORS"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        which, corpus, methods, limit, generators = args.worker
        worker(which, corpus, methods, int(limit), int(generators))
        return
    from benchmarks.scale_corpus import generate_corpus

    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores shared; CPU time, not wall time, is measured)")
    methods = ",".join(BENCH_METHODS)
    sizes = (100,) if args.quick else (100, 1000)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)
        root.mkdir(parents=True, exist_ok=True)
        results = {}
        for n in sizes:
            corpus = root / f"paper_{n}"
            if not corpus.is_dir():
                t0 = time.perf_counter()
                stats = generate_corpus(corpus, n)
                print(f"generated {n} paper-shaped personalities ({stats.pairs:,} pairs, {stats.bytes / 1e6:.0f} MB) "
                      f"in {time.perf_counter() - t0:.0f} s")
            results[n] = measure("new", corpus, methods)
        first = root / f"paper_{sizes[0]}"
        old1, new1 = measure("old", first, methods, 1), measure("new", first, methods, 1)
        print(f"methods {methods}; offline models (no model is called either way)")
        print(_row("old dry-run, 1 paper personality", old1))
        print(_row("new, 1 paper personality", new1))
        for n, r in results.items():
            print(_row(f"new, {n:,} paper personalities", r))
        print(f"ratio old/new CPU per call (1 personality): {old1['ms_per_call'] / new1['ms_per_call']:.1f}x")
        for n, r in results.items():
            passed = r["ms_per_call"] <= TARGET_MS and (n < 1000 or r["rss_mb"] <= TARGET_RSS_MB)
            ok &= passed
            print(f"{n:,} personalities: {r['ms_per_call']:.3f} ms/call (target <= {TARGET_MS}, aim {AIM_MS}; ratio "
                  f"{r['ms_per_call'] / TARGET_MS:.2f} of target), peak {r['rss_mb']:.0f} MB (target <= "
                  f"{TARGET_RSS_MB} at 1,000) {'PASS' if passed else 'FAIL'}")
        if len(results) == 2:
            print(f"memory 1,000 vs 100: {results[1000]['rss_mb'] / results[100]['rss_mb']:.2f}x (flat: ~1)")
        if args.before:
            small = small_corpus(root / "small_100", 100) if not (root / "small_100").is_dir() else root / "small_100"
            o, nw = measure("old", small, "default"), measure("new", small, "default")
            print("the issue's corpus: 100 small personalities (5 interviews x 2 pairs), default methods")
            print(_row("old dry-run", o))
            print(_row("new", nw))
            print(f"ratio old/new: CPU {o['cpu_s'] / nw['cpu_s']:.1f}x, peak memory {o['rss_mb'] / nw['rss_mb']:.1f}x")
        ok &= _generators(root, 100 if args.quick else 1000)
    print(f"bench_plan {'PASS' if ok else 'FAIL'}")


def _generators(root: Path, n: int) -> bool:
    """Issue 44's planning target: CPU per planned call with 4 generators, and beside it with one."""
    small = root / f"small_{n}"
    if not small.is_dir():
        small_corpus(small, n)
    one, four = measure("new", small, "default"), measure("new", small, "default", generators=len(GENERATORS))
    print(f"generators: {n:,} small personalities (5 interviews x 2 pairs) x the default methods")
    print(_row("new, 1 generator", one))
    print(_row(f"new, {len(GENERATORS)} generators", four))
    passed = four["ms_per_call"] <= GENERATORS_TARGET_MS
    print(f"{len(GENERATORS)} generators: {four['calls'] / max(1, one['calls']):.2f}x the calls of one, "
          f"{four['ms_per_call']:.3f} ms/call ({four['ms_per_call'] / max(one['ms_per_call'], 1e-9):.2f}x one "
          f"generator's; target <= {GENERATORS_TARGET_MS}, ratio {four['ms_per_call'] / GENERATORS_TARGET_MS:.2f} "
          f"of target) {'PASS' if passed else 'FAIL'}")
    return passed


if __name__ == "__main__":
    main()
