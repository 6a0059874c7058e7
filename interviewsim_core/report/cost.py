"""Context size and cost per method, measured (the paper's Appendix J gives estimates).

Generation rows carry the tokens and cost of the call that produced each answer, so the mean
prompt tokens per held-out question is the method's context size. Tokens are recorded on cache
hits too (what the call costs when not cached); ``cost_usd`` is what the provider's price map
gives, zero for the offline model, so the frontier plot falls back to prompt tokens then.

Cached vs uncached prompt tokens: of all the prompt tokens a method's calls sent (generation, MCQ
answering and every judge), how many the providers reported reading from their prefix caches
(``cached_prompt_tokens``, priced at the cached rate) and how many at the full rate. Tables written
before that column existed count as uncached.
"""

from __future__ import annotations

import pandas as pd

from .catalog import order_methods

__all__ = ["COST_COLUMNS", "cost_per_method"]

COST_COLUMNS = [
    "method", "n_questions", "context_pairs_per_question", "prompt_tokens_per_question",
    "completion_tokens_per_question", "generation_cost_per_question", "mcq_prompt_tokens", "mcq_cost",
    "judge_cost", "total_cost", "total_cost_per_question", "cache_hit_share",
    "prompt_tokens", "cached_prompt_tokens", "uncached_prompt_tokens",
]

_USAGE = ["prompt_tokens", "completion_tokens", "cost_usd", "cached_prompt_tokens"]
_METHOD_TABLES = ("generations", "mcq_answers", "content_similarity", "factual_consistency", "generated_personality")


def _per_method(df: pd.DataFrame) -> pd.DataFrame:
    if df.empty:
        return pd.DataFrame(columns=_USAGE)
    df = df.assign(**{c: 0 for c in _USAGE if c not in df.columns})
    return df.groupby("method")[_USAGE].sum()


def cost_per_method(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per method: generation context and cost per held-out question, MCQ answering and
    judging costs (all judges together), and the total per held-out question."""
    gens = tables["generations"]
    if gens.empty:
        return pd.DataFrame(columns=COST_COLUMNS)
    g = gens.groupby("method").agg(
        n_questions=("qa_id", "size"),
        context_pairs_per_question=("n_context_used", "mean"),
        prompt_tokens_per_question=("prompt_tokens", "mean"),
        completion_tokens_per_question=("completion_tokens", "mean"),
        generation_cost_per_question=("cost_usd", "mean"),
        generation_cost=("cost_usd", "sum"),
        cache_hit_share=("cache_hit", lambda s: float(s.astype(float).mean())),
    )
    mcq = _per_method(tables["mcq_answers"])
    judged = pd.concat([_per_method(tables[t]) for t in ("content_similarity", "factual_consistency",
                                                          "generated_personality")]).groupby(level=0).sum()
    g["mcq_prompt_tokens"] = mcq["prompt_tokens"].reindex(g.index).fillna(0).astype(int)
    g["mcq_cost"] = mcq["cost_usd"].reindex(g.index).fillna(0.0)
    g["judge_cost"] = judged["cost_usd"].reindex(g.index).fillna(0.0) if not judged.empty else 0.0
    g["total_cost"] = g["generation_cost"] + g["mcq_cost"] + g["judge_cost"]
    g["total_cost_per_question"] = g["total_cost"] / g["n_questions"]
    every = pd.concat([_per_method(tables[t]) for t in _METHOD_TABLES if t in tables]).groupby(level=0).sum()
    g["prompt_tokens"] = every["prompt_tokens"].reindex(g.index).fillna(0).astype(int)
    g["cached_prompt_tokens"] = every["cached_prompt_tokens"].reindex(g.index).fillna(0).astype(int)
    g["uncached_prompt_tokens"] = g["prompt_tokens"] - g["cached_prompt_tokens"]
    g = g.reset_index()
    g["method"] = pd.Categorical(g["method"], order_methods(g["method"]), ordered=True)
    g = g.sort_values("method")
    g["method"] = g["method"].astype(str)
    return g[COST_COLUMNS].reset_index(drop=True)
