"""Embedding requests follow the chat calls' policy (issue 20): redaction, configured timeout and
retries, cache leases across processes, the gateway's ledger, typed failures."""

from __future__ import annotations

import logging
import threading
import time

import numpy as np
import pytest
from gateway_support import FAKE_KEY, FAKE_KEY_ENV, fake_model

from interviewsim_core.embeddings.litellm_embedder import LiteLLMEmbedder
from interviewsim_core.errors import GatewayError
from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.embedding import EmbeddingError
from interviewsim_core.llm.gateway import Gateway


@pytest.mark.server(reject_key=True, fault_paths=("/embeddings",))
def test_key_echoed_by_the_embedding_provider_is_redacted_and_typed(fake_server, planted_key, tmp_path, caplog):
    gw = Gateway(cache=SqliteCache(tmp_path / "c.sqlite"))
    emb = LiteLLMEmbedder(fake_model(fake_server, "fake-embed", max_retries=0), gateway=gw)
    with caplog.at_level(logging.DEBUG), pytest.raises(EmbeddingError) as err:
        emb.embed(["a question"])
    assert any(FAKE_KEY in e["headers"].get("authorization", "") for e in fake_server.log)  # it was echoed
    assert isinstance(err.value, GatewayError) and err.value.status_code == 401
    assert "401" in str(err.value) and "***" in str(err.value)
    assert FAKE_KEY not in str(err.value) and FAKE_KEY not in caplog.text
    # No provider exception rides along for a traceback printer (Dagster, the CLI) to print.
    assert err.value.__context__ is None and err.value.__cause__ is None
    assert gw.stats.failed == 1 and gw.stats.calls_made == 1  # 401 is not retried
    assert all(FAKE_KEY.encode() not in p.read_bytes() for p in tmp_path.iterdir())


@pytest.mark.server(hang=True, fault_paths=("/embeddings",))
def test_a_server_that_never_answers_is_bounded_by_the_configured_timeout(fake_server, planted_key):
    model = fake_model(fake_server, "fake-embed", timeout_s=0.5, max_retries=1, max_total_wait_s=1.0)
    gw = Gateway()
    started = time.monotonic()
    with pytest.raises(EmbeddingError) as err:
        LiteLLMEmbedder(model, gateway=gw).embed(["a question"])
    elapsed = time.monotonic() - started
    # The first try and the one configured retry, which the gateway counts below; at the server, the retry can time
    # out before the server's loop has read it on a loaded machine (fresh-clone CI: 1 seen of 2 sent).
    assert 1 <= fake_server.requests <= 2
    assert elapsed < 5.0, elapsed  # 2 x 0.5 s plus at most 1 s of backoff, not 120 s x 7
    assert "Timeout" in str(err.value) and "2 attempt(s)" in str(err.value)
    assert gw.stats.retries == 1


@pytest.mark.server(latency_s=0.6)
def test_two_processes_embedding_the_same_texts_pay_once(fake_server, planted_key, tmp_path):
    # Two gateways on one cache file are two owners of its leases, as two processes are.
    path = tmp_path / "shared.sqlite"
    gws = [Gateway(cache=SqliteCache(path)) for _ in range(2)]
    texts = [f"question {i}" for i in range(5)]
    out: list = [None, None]

    def embed(i: int) -> None:
        out[i] = LiteLLMEmbedder(fake_model(fake_server, "fake-embed"), gateway=gws[i]).embed(texts)

    threads = [threading.Thread(target=embed, args=(i,)) for i in range(2)]
    threads[0].start()
    time.sleep(0.2)  # the second starts while the first one's request is in flight
    threads[1].start()
    for t in threads:
        t.join(30)
    assert fake_server.requests == 1
    np.testing.assert_array_equal(out[0], out[1])
    assert sorted(g.stats.lease_waits for g in gws) == [0, 1]


def test_embedding_tokens_and_requests_are_in_the_gateway_stats(fake_server, planted_key, tmp_path):
    gw = Gateway(cache=SqliteCache(tmp_path / "c.sqlite"))
    emb = LiteLLMEmbedder(fake_model(fake_server, "fake-embed"), gateway=gw, batch_size=2)
    emb.embed(["one two", "three", "four five six"])
    first = gw.stats
    assert first.calls_made == 2 and first.prompt_tokens == 6 and first.cache_hits == 0
    emb.embed(["three", "one two"])
    assert gw.stats.calls_made == 2 and gw.stats.cache_hits == 2  # served by the cache, counted as hits


def test_config_embedding_model_takes_the_model_shape_or_the_generator_policy():
    from interviewsim_core.pipeline.config import EvalConfig

    gen = {"model": "openai/g", "timeout_s": 5, "max_retries": 2, "max_total_wait_s": 20}
    bare = EvalConfig.load(env={}, overrides={"generator": gen, "embedding_model": "openai/e",
                                              "api_base": "http://127.0.0.1:1/v1"})
    m = bare.effective_embedding
    assert (m.model, m.api_base, m.timeout_s, m.max_retries, m.max_total_wait_s) == \
        ("openai/e", "http://127.0.0.1:1/v1", 5, 2, 20)
    shaped = EvalConfig.load(env={}, overrides={"generator": gen, "embedding_model": {
        "model": "openai/e", "api_key_env": FAKE_KEY_ENV, "timeout_s": 3, "max_retries": 0,
        "extra_params": {"dimensions": 8}}, "embedding_api_base": "http://h/v1"})
    m = shaped.effective_embedding
    assert (m.timeout_s, m.max_retries, m.api_key_env, m.api_base) == (3, 0, FAKE_KEY_ENV, "http://h/v1")
    assert shaped.effective_embedding_model == "openai/e"
    # The Dagster resource carries the config as JSON: the mapping form survives the round trip.
    assert EvalConfig.model_validate_json(shaped.model_dump_json()).effective_embedding == m
    assert EvalConfig.load(env={}).effective_embedding.model == "offline/hashing"
