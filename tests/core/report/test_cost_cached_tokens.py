"""The report's cost section splits each method's prompt tokens into provider-cached and full-rate ones."""

from __future__ import annotations

import pandas as pd

from interviewsim_core.report.cost import cost_per_method


def _calls(method: str, prompt: list[int], cached: list[int] | None, **extra) -> pd.DataFrame:
    df = pd.DataFrame({"method": method, "prompt_tokens": prompt, "completion_tokens": 1, "cost_usd": 0.01, **extra})
    if cached is not None:
        df["cached_prompt_tokens"] = cached
    return df


def test_cached_and_uncached_prompt_tokens_per_method():
    gens = pd.concat([
        _calls("simple", [100, 100], [0, 80], qa_id=["q1", "q2"], n_context_used=0, cache_hit=False),
        _calls("chrono-100", [1000, 1000], [0, 900], qa_id=["q1", "q2"], n_context_used=100, cache_hit=False),
    ])
    judge = pd.concat([_calls("simple", [50], [40]), _calls("chrono-100", [60], [0])])
    old_mcq = pd.concat([_calls("simple", [30], None), _calls("chrono-100", [30], None)])  # before the column
    tables = {"generations": gens, "mcq_answers": old_mcq, "content_similarity": judge,
              "factual_consistency": pd.DataFrame(), "generated_personality": pd.DataFrame()}
    out = cost_per_method(tables).set_index("method")
    assert out.loc["simple", "prompt_tokens"] == 100 + 100 + 50 + 30
    assert out.loc["simple", "cached_prompt_tokens"] == 80 + 40
    assert out.loc["simple", "uncached_prompt_tokens"] == 280 - 120
    assert out.loc["chrono-100", "cached_prompt_tokens"] == 900
    assert out.loc["chrono-100", "uncached_prompt_tokens"] == 2090 - 900
