"""`make bench`: run every benchmark in one process, one after another, each printing its own numbers.

Each benchmark module exposes ``main(argv)``; they run side by side in one invocation so that ratios
compare measurements taken under the same machine load. Every figure with a target prints the
target, the ratio and PASS / FAIL.

Usage: ``python -m benchmarks.run_all [--quick] [NAME ...]``. ``--quick`` gives each benchmark its
small sizes (a smoke run of the benchmarks themselves; its figures are not the reference ones).
"""

from __future__ import annotations

import importlib
import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BENCHMARKS = ("bench_leaks", "bench_retrieval", "bench_gateway", "bench_orchestration", "bench_cache", "bench_scale",
              "bench_ui", "bench_cost", "bench_view", "bench_plan", "bench_product", "bench_automation",
              "bench_calibration", "bench_curation", "bench_curation_step", "bench_curation_scale", "bench_partitions",
              "bench_growth", "bench_cluster")
QUICK_ARGS: dict[str, list[str]] = {
    "bench_leaks": ["--quick"],
    "bench_gateway": ["--n", "200", "--rounds", "1"],
    "bench_orchestration": ["--personalities", "2"],
    "bench_scale": ["--quick"],
    "bench_view": ["--quick"],
    "bench_plan": ["--quick"],
    "bench_automation": ["--quick"],
    "bench_calibration": ["--quick"],
    "bench_curation": ["--quick"],
    "bench_curation_scale": ["--quick"],
    "bench_partitions": ["--personalities", "50", "--generators", "2"],
    "bench_growth": ["--quick", "--backfill", "--rescore"],
    "bench_cluster": ["--personalities", "20"],
}
"""Arguments of each benchmark under ``--quick`` (the others take none)."""
RUNS: dict[str, list[tuple[list[str], list[str] | None]]] = {
    "bench_product": [([], None),
                      (["--personalities", "6", "--no-ui", "--no-raw", "--pairs", "3"], ["--quick"]),
                      (["--personalities", "6", "--no-ui", "--no-raw", "--mcq-invalid", "--pairs", "3"],
                       ["--quick", "--no-ui", "--no-raw", "--mcq-invalid"])],
}
"""Benchmarks run more than once: (arguments, arguments under ``--quick`` or None to skip it there) of
each time, instead of ``QUICK_ARGS`` and the defaults. bench_product runs three times: its default
(20 personalities, with the UI backfill and raw httpx: issue 21's targets), then issue 30's speed goal,
``interviewsim run`` beside the direct runner at 6 personalities on the paper-shaped corpus and on one of
cheap partitions (every MCQ item invalid), each the median of three pairs (``--pairs``: one pair's ratio
moved by 0.1 with the machine's load), about 8 minutes each on the shared 2-core machine."""


def main(argv: list[str] | None = None) -> int:
    args = list(argv if argv is not None else sys.argv[1:])
    quick = "--quick" in args
    names = [a for a in args if a != "--quick"] or list(BENCHMARKS)
    for name in names:
        print(f"\n=== {name}{' (quick)' if quick else ''} ===", flush=True)
        t0 = time.perf_counter()
        # Each benchmark parses its own flags from sys.argv: give it its defaults, not our arguments.
        saved, sys.argv = sys.argv, [name]
        try:
            fn = importlib.import_module(f"benchmarks.{name}").main
            if name in RUNS:
                for full, small in RUNS[name]:
                    if not quick:
                        fn(full)
                    elif small is not None:
                        fn(small)
            else:
                fn(QUICK_ARGS[name]) if quick and name in QUICK_ARGS else fn()
        finally:
            sys.argv = saved
        print(f"--- {name} finished in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
