"""`make bench`: run every benchmark in one process, one after another, each printing its own numbers.

Each benchmark module exposes ``main()``; they run side by side in one invocation so that ratios
compare measurements taken under the same machine load.
"""

from __future__ import annotations

import importlib
import os
import sys
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

BENCHMARKS = ("bench_retrieval", "bench_gateway", "bench_orchestration", "bench_cache", "bench_ui")


def main(argv: list[str] | None = None) -> int:
    names = (argv if argv is not None else sys.argv[1:]) or list(BENCHMARKS)
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        t0 = time.perf_counter()
        # Each benchmark parses its own flags from sys.argv: give it its defaults, not our arguments.
        saved, sys.argv = sys.argv, [name]
        try:
            importlib.import_module(f"benchmarks.{name}").main()
        finally:
            sys.argv = saved
        print(f"--- {name} finished in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
