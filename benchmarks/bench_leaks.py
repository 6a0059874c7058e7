"""Leak check per prompt, before and after issue 13, on the scale corpus.

The personality of a 20-personality scale corpus (``scale_corpus.py``) whose training-pair count
is closest to 1,044 (the issue's example); its Chrono-100 and Chrono-1000 generation prompts are
checked by the naive detector the project used before (kept in
``tests/core/pipeline/reference_leaks.py``) and by ``interviewsim_core.pipeline.leaks``; both
must report the same findings on every prompt timed, clean ones and ones with a planted held-out
response. Target: at most 5 ms per Chrono-1000 prompt.

Run: ``python -m benchmarks.bench_leaks [--prompts 20] [--before-prompts 3] [--quick]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
TARGET_MS = 5.0
PAPER_PROMPTS = 140_799 * 3
"""Chrono-100/500/1000 prompts of the paper's run, for the CPU-hours line (a rough scale)."""


def _reference():
    """The pre-issue-13 detector, loaded from the tests folder (it is not part of the package)."""
    path = REPO / "tests" / "core" / "pipeline" / "reference_leaks.py"
    spec = importlib.util.spec_from_file_location("reference_leaks", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _per_prompt_ms(detector, prompts: list[list[dict]]) -> tuple[float, list[list[str]]]:
    t = time.perf_counter()
    found = [detector.find(p) for p in prompts]
    return 1000 * (time.perf_counter() - t) / len(prompts), found


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--prompts", type=int, default=20, help="prompts timed per method with the new detector")
    ap.add_argument("--before-prompts", type=int, default=3, help="prompts timed per method with the old one")
    ap.add_argument("--quick", action="store_true", help="fewer prompts (same corpus)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv if argv is not None else [])
    n_new, n_old = (5, 1) if a.quick else (a.prompts, a.before_prompts)

    from benchmarks.scale_corpus import generate_corpus
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.loader import load_corpus
    from interviewsim_core.pipeline import generation
    from interviewsim_core.pipeline.leaks import LeakDetector
    from interviewsim_core.split import split_personality

    ref = _reference()
    work = Path(tempfile.mkdtemp(prefix="bench_leaks_"))
    out: dict[str, float] = {}
    try:
        generate_corpus(work, 20, a.seed)
        splits = [split_personality(d) for d in load_corpus(work)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    split = min(splits, key=lambda s: abs(len(s.train_pairs) - 1044))
    t = time.perf_counter()
    new = LeakDetector(split)
    build_new = time.perf_counter() - t
    t = time.perf_counter()
    old = ref.LeakDetector(split)
    build_old = time.perf_counter() - t
    assert new.fragments == old.fragments, "the detectors disagree on the fragments"
    print(f"{split.personality_id}: {len(split.train_pairs)} training pairs, {len(split.test_pairs)} held out, "
          f"{len(new.fragments)} held-out fragments; detector built in {1000 * build_old:.0f} ms before, "
          f"{1000 * build_new:.0f} ms after (once per personality)")
    model = ModelConfig(model="offline/extractive")
    leak = split.test_pairs[0].response
    for method in ("chrono-100", "chrono-1000"):
        planned = generation.plan_generations(split, method, model)
        prompts = [list(p.request.messages) for p in planned[:n_new]]
        # Half the prompts carry a held-out response, so both "found" paths are exercised.
        for i in range(0, len(prompts), 2):
            prompts[i] = [*prompts[i][:-1], {**prompts[i][-1], "content": prompts[i][-1]["content"] + "\n" + leak}]
        kb = sum(len(m["content"]) for m in prompts[0]) / 1000
        after, found_new = _per_prompt_ms(new, prompts)
        before, found_old = _per_prompt_ms(old, prompts[:n_old])
        assert found_new[:n_old] == found_old, f"the detectors disagree on a {method} prompt"
        out[method] = after
        line = (f"  {method:<12} prompt {kb:6.0f} KB   before {before:8.1f} ms/prompt   after {after:6.2f} ms/prompt   "
                f"speed-up {before / after:6.0f}x")
        if method == "chrono-1000":
            line += f"   target <= {TARGET_MS:.0f} ms   ratio {after / TARGET_MS:4.2f}   " \
                    f"{'PASS' if after <= TARGET_MS else 'FAIL'}"
            print(line)
            print(f"  at the paper's scale (~{PAPER_PROMPTS:,} long-context prompts): "
                  f"{PAPER_PROMPTS * before / 3.6e6:.1f} CPU-hours before, {PAPER_PROMPTS * after / 3.6e6:.2f} after")
        else:
            print(line)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
