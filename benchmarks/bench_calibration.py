"""The calibration methods' extra model calls as a share of a paper-shaped run (issue 32).

``reference``, ``copy-nearest`` and ``other-person`` make no generation call (their candidate is built
without a model) but every judge judges them, and they answer the MCQs (``reference`` open-book):
these are their extra calls. Measured with the cost plan (``interviewsim_core.plan.plan_run``, the run's
own budget gate) on paper-shaped personalities (``scale_corpus.py``: ~671 QA pairs each, 21% held
out), the eleven default methods against the same plus the three calibration methods. No target:
the figure is what a researcher pays for the anchors (offline models; token counts, not prices).

Usage: ``python -m benchmarks.bench_calibration [--quick] [--personalities N]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 paper personalities")
    ap.add_argument("--personalities", type=int, default=5)
    args = ap.parse_args(argv)
    n = 2 if args.quick else args.personalities

    from benchmarks.scale_corpus import generate_corpus
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.plan import plan_run
    from interviewsim_core.strategies import DEFAULT_METHODS
    from interviewsim_core.strategies.calibration import CALIBRATION_METHODS

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "paper"
        stats = generate_corpus(corpus, n)
        cfg = EvalConfig(corpus=corpus, data_root=Path(tmp) / "out", embedding_model="offline/hashing",
                         methods=(*DEFAULT_METHODS, *CALIBRATION_METHODS))
        t0 = time.process_time()
        plan = plan_run(cfg)
        cpu = time.process_time() - t0
    calls, tokens = defaultdict(int), defaultdict(int)
    steps: dict[str, int] = defaultdict(int)
    for line in plan.lines:
        kind = "calibration" if line.method in CALIBRATION_METHODS else "run"
        calls[kind] += line.calls
        tokens[kind] += line.prompt_tokens + line.completion_tokens
        if kind == "calibration":
            steps[line.step] += line.calls
    run, extra = calls["run"], calls["calibration"]
    print(f"{n} paper-shaped personalities ({stats.pairs:,} pairs); plan in {cpu:.1f} s CPU; offline models")
    print(f"  paper-shaped run (11 default methods): {run:,} calls, {tokens['run']:,} tokens")
    print(f"  calibration methods {', '.join(CALIBRATION_METHODS)}: +{extra:,} calls "
          f"({', '.join(f'{s} {c:,}' for s, c in sorted(steps.items()))}), +{tokens['calibration']:,} tokens")
    print(f"  calibration share: {extra / max(1, run):.1%} extra calls, "
          f"{tokens['calibration'] / max(1, tokens['run']):.1%} extra tokens (no generation call among them)")


if __name__ == "__main__":
    main()
