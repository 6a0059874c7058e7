"""Projected cost of the paper's full run: online, with provider prefix caching, and in batch mode.

The paper's run: 8 methods (simple, wiki, wiki-long, memory-100, chrono-100, chrono-500,
chrono-1000, hybrid-50-50), 3 judges (GPT-4o, Claude Sonnet 4.6, Gemini), GPT-4.1 as generator
and builder, 1,000 personalities. How: a small seeded scale corpus (``scale_corpus.py``, the
paper's shape) is planned with ``interviewsim_core.plan.plan_run`` (no model is called; tokens
counted with the model's tokenizer where litellm has it), and scaled to 1,000 personalities by
held-out questions: the paper holds out 140,799 questions over its 1,000 personalities, and nearly
every call (generation, MCQ, judges, builders, premise judge) is made per held-out question or per
item derived from one. One planned personality by default (the corpus' median, 576 pairs, whose
chronological split holds out 69 questions): planning time grows with held-out questions, and a
larger ``--personalities`` gives a spread of sizes in proportionally more time. Context sizes of
Chrono-k do not grow with the number of questions, so the per-question scaling keeps them. Prices
from litellm's local price map.

The three projections:

- **online**: every call at the model's input and output rates (what ``interviewsim plan`` prints).
- **prefix caching**: a call's prompt prefix shared with the previous call of the same model and
  system message (same contract, same personality's static context: the prompt builders put it
  first and keep it byte-identical, ``tests/core/pipeline/test_prompt_prefix.py``) is priced at the
  model's ``cache_read_input_token_cost``, when it is at least 1,024 tokens (the providers' minimum).
  This assumes the cache is warm (calls of one personality close in time) and ignores Anthropic's
  cache-write surcharge (1.25x on the first write of each prefix).
- **batch**: every call at the provider's batch rates (``*_batches`` in the price map; half the
  online price where absent). The gateway's batch mode speaks the OpenAI Batch API only today;
  the Anthropic and Gemini lines are what their batch APIs would cost.

Target: the projection itself has no target; the benchmark must stay quick (< 120 s), printed with
PASS/FAIL.

Usage: ``python -m benchmarks.bench_cost [--personalities 1] [--seed 0] [--scale-to 1000]``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

PAPER_METHODS = ("simple", "wiki", "wiki-long", "memory-100", "chrono-100", "chrono-500", "chrono-1000",
                 "hybrid-50-50")
GENERATOR = "openai/gpt-4.1"
JUDGES = ("openai/gpt-4o", "anthropic/claude-sonnet-4-6", "gemini/gemini-3.1-pro-preview")
GEMINI_FALLBACK = "gemini/gemini-2.5-pro"
MIN_CACHED_PREFIX = 1024
PAPER_HELDOUT_PER_PERSONALITY = 140_799 / 1000
"""Held-out questions per personality in the paper (140,799 over 1,000 personalities)."""
TIME_TARGET_S = 120.0


def _priced(model: str) -> bool:
    from interviewsim_core.llm.transport import litellm_module

    name = model.split("/", 1)[1]
    cost = litellm_module().model_cost
    return model in cost or name in cost


def _prices(model: str) -> dict:
    from interviewsim_core.llm.transport import litellm_module

    cost = litellm_module().model_cost
    return cost.get(model) or cost.get(model.split("/", 1)[1]) or {}


class _PrefixMeter:
    """Tokens of each planned call that a provider prefix cache would serve (see the module docstring)."""

    def __init__(self) -> None:
        self.cached: dict[tuple[str, str], int] = defaultdict(int)  # (model, step) -> cached prompt tokens
        self._last: dict[tuple[str, str], str] = {}

    def see(self, model: str, step: str, messages, prompt_tokens: int) -> None:
        system = messages[0]["content"] if messages and messages[0]["role"] == "system" else ""
        text = "".join(m["content"] for m in messages)
        key = (model, system)
        prev = self._last.get(key)
        self._last[key] = text
        if prev is None or not text:
            return  # the first call with this prefix writes the cache, at the full price
        shared = len(os.path.commonprefix([prev, text]))
        tokens = int(prompt_tokens * shared / len(text))
        if tokens >= MIN_CACHED_PREFIX:
            self.cached[(model, step)] += tokens


def project(personalities: int, seed: int, scale_to: int) -> dict:
    from benchmarks.scale_corpus import generate_corpus
    from interviewsim_core.llm.batch import batch_cost
    from interviewsim_core.pipeline.config import OFFLINE_EMBEDDING, EvalConfig
    from interviewsim_core.plan import plan_run

    judges = [j if _priced(j) else GEMINI_FALLBACK if j.startswith("gemini/") else j for j in JUDGES]
    with tempfile.TemporaryDirectory() as tmp:
        stats = generate_corpus(Path(tmp) / "corpus", personalities, seed)
        cfg = EvalConfig(corpus=Path(tmp) / "corpus", data_root=Path(tmp) / "data", methods=PAPER_METHODS,
                         generator={"model": GENERATOR}, builder={"model": GENERATOR},
                         premise_judge={"model": GENERATOR}, judges=tuple({"model": j} for j in judges),
                         embedding_model=OFFLINE_EMBEDDING).resolved()
        meter = _PrefixMeter()
        plan = plan_run(cfg, observer=meter.see)  # every call to send is metered for its shared prefix
    factor = scale_to * PAPER_HELDOUT_PER_PERSONALITY / max(1, sum(stats.test_pairs.values()))
    rows = [(ln, _prices(ln.model)) for ln in plan.lines]
    # Cached tokens are metered per (model, step); spread over that step's method lines by prompt tokens.
    by_step: dict[tuple[str, str], int] = defaultdict(int)
    for ln in plan.lines:
        by_step[(ln.model, ln.step)] += ln.prompt_tokens
    online = caching = batch = 0.0
    cached_total = 0
    for ln, prices in rows:
        step_total = by_step[(ln.model, ln.step)] or 1
        cached = int(meter.cached.get((ln.model, ln.step), 0) * ln.prompt_tokens / step_total)
        cached_total += cached
        p_in = float(prices.get("input_cost_per_token") or 0.0)
        p_read = float(prices.get("cache_read_input_token_cost") or p_in)
        online += ln.cost_usd
        caching += ln.cost_usd - cached * (p_in - p_read)
        batch += batch_cost(ln.model, ln.prompt_tokens, ln.completion_tokens)
    return {"judges": judges, "stats": stats, "plan": plan, "factor": factor, "online": online * factor,
            "caching": caching * factor, "batch": batch * factor, "calls": plan.calls * factor,
            "prompt_tokens": plan.prompt_tokens * factor, "cached_tokens": cached_total * factor}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--personalities", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scale-to", type=int, default=1000)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    r = project(a.personalities, a.seed, a.scale_to)
    seconds = time.perf_counter() - t0
    st = r["stats"]
    print(f"planned: scale corpus of {st.personalities} personalities (seed {a.seed}), {st.pairs} QA pairs "
          f"({sum(st.test_pairs.values())} held out; the paper's mean is 671.4 pairs per personality), "
          f"{len(PAPER_METHODS)} methods, judges {', '.join(r['judges'])}, generator/builder {GENERATOR}")
    print(f"plan of the sample: {r['plan'].calls:,} calls, {r['plan'].prompt_tokens:,} prompt tokens, "
          f"${r['plan'].cost_usd:,.2f}")
    print(f"projection to {a.scale_to:,} personalities ({a.scale_to * PAPER_HELDOUT_PER_PERSONALITY:,.0f} held-out "
          f"questions, x{r['factor']:,.0f}): {r['calls']:,.0f} calls, "
          f"{r['prompt_tokens'] / 1e9:,.2f} B prompt tokens")
    print(f"  online:                  ${r['online']:>12,.0f}")
    print(f"  with prefix caching:     ${r['caching']:>12,.0f}  ({r['cached_tokens'] / max(1, r['prompt_tokens']):.0%} "
          f"of prompt tokens at the cached rate; ratio {r['caching'] / r['online']:.2f} of online)")
    print(f"  batch mode:              ${r['batch']:>12,.0f}  (ratio {r['batch'] / r['online']:.2f} of online)")
    word = "PASS" if seconds < TIME_TARGET_S else "FAIL"
    print(f"bench_cost time: {seconds:.1f} s (target < {TIME_TARGET_S:.0f} s, ratio {seconds / TIME_TARGET_S:.2f}) {word}")


if __name__ == "__main__":
    main()
