"""Cached prompt tokens: reported by the provider, recorded per call and in the cache, priced at the cached rate."""

from __future__ import annotations

import pytest

from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.transport import cached_tokens_of, cost_of
from interviewsim_core.llm.types import CallRequest, ModelConfig

SYSTEM = "You are Ada Lovelace. " * 40


def _req(q: str) -> CallRequest:
    return CallRequest(messages=({"role": "system", "content": SYSTEM}, {"role": "user", "content": q}),
                       contract="generation", contract_version="t1")


def test_cached_rate_prices_the_cached_share():
    full = cost_of("openai/gpt-4.1", 1000, 10)
    half_cached = cost_of("openai/gpt-4.1", 1000, 10, cached_prompt_tokens=500)
    # gpt-4.1: $2/M prompt, $0.5/M cached, $8/M completion (litellm's local map)
    assert full == pytest.approx(1000 * 2e-6 + 10 * 8e-6)
    assert half_cached == pytest.approx(500 * 2e-6 + 500 * 0.5e-6 + 10 * 8e-6)


def test_usage_shapes_of_openai_and_anthropic():
    assert cached_tokens_of({"prompt_tokens": 9, "prompt_tokens_details": {"cached_tokens": 7}}) == 7
    assert cached_tokens_of({"prompt_tokens": 9, "cache_read_input_tokens": 5}) == 5
    assert cached_tokens_of({"prompt_tokens": 9}) == 0 and cached_tokens_of(None) == 0


@pytest.mark.parametrize("transport", ["auto", "litellm"])
def test_cached_tokens_recorded_per_call_and_kept_by_the_cache(tmp_path, monkeypatch, transport):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    with FakeOpenAIServer(FakeServerConfig(cache_system_prompt=True)) as srv:
        model = ModelConfig(model="openai/gpt-4.1", api_base=srv.base_url, max_retries=0)
        cache = SqliteCache(tmp_path / "llm.sqlite")
        gw = Gateway(cache=cache, transport=transport)
        first, second = gw.run(model, [_req("Q1?")]), gw.run(model, [_req("Q2?")])
    first, second = first[0], second[0]
    assert first.status == second.status == "ok"
    assert first.cached_prompt_tokens == 0
    assert second.cached_prompt_tokens == len(SYSTEM.split()) > 0
    assert second.cost_usd == pytest.approx(cost_of("openai/gpt-4.1", second.prompt_tokens, second.completion_tokens,
                                                    second.cached_prompt_tokens))
    assert second.cost_usd < cost_of("openai/gpt-4.1", second.prompt_tokens, second.completion_tokens)
    # A re-run reads the call back from the cache with its cached-token count.
    again = Gateway(cache=SqliteCache(tmp_path / "llm.sqlite")).run(model, [_req("Q2?")])[0]
    assert again.cache_hits == 1 and again.cached_prompt_tokens == second.cached_prompt_tokens


def test_an_old_cache_file_gets_the_column(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, contract TEXT NOT NULL, raw TEXT "
                 "NOT NULL, messages TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, "
                 "cost_usd REAL NOT NULL, created REAL NOT NULL)")
    conn.commit()
    conn.close()
    cache = SqliteCache(path)
    assert cache.get_answer("missing") is None  # no "no such column"
    cols = {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(calls)")}
    assert "cached_prompt_tokens" in cols
