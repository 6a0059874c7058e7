"""A planted API key must appear in no artefact: cache file, logs, results."""

from __future__ import annotations

import logging

import pytest
from gateway_support import FAKE_KEY, fake_model
from scripted_model import scripted_reply, toy_request

from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.embeddings.litellm_embedder import LiteLLMEmbedder


@pytest.mark.parametrize("transport", ["litellm", "auto"])
@pytest.mark.server(reply=scripted_reply, first_n_fault=1, first_n_kind="500", malformed_rate=0.3)
def test_planted_key_is_in_no_artefact(fake_server, planted_key, tmp_path, caplog, transport):
    cache_path = tmp_path / "cache.sqlite"
    with caplog.at_level(logging.DEBUG):
        gw = Gateway(cache=SqliteCache(cache_path), transport=transport)
        model = fake_model(fake_server)
        out = gw.run(model, [toy_request(f"q{i}") for i in range(8)])
        # A failing endpoint too, so error strings are part of what we grep.
        dead = fake_model(fake_server, "dead", api_base="http://127.0.0.1:9/v1", max_retries=0)
        out += gw.run(dead, [toy_request("unreachable")])
        emb = LiteLLMEmbedder("openai/fake-embed", api_base=fake_server.base_url,
                              api_key_env=model.api_key_env, cache=SqliteCache(cache_path))
        emb.embed(["some text"])
    # The key did reach the server (so the test would see it if it leaked) ...
    assert any(FAKE_KEY in e["headers"].get("authorization", "") for e in fake_server.log)
    # ... but is in none of our artefacts.
    blobs = [p.read_bytes() for p in tmp_path.iterdir() if p.is_file()]
    assert blobs and all(FAKE_KEY.encode() not in b for b in blobs)
    assert FAKE_KEY not in caplog.text
    assert all(FAKE_KEY not in r.model_dump_json() for r in out)
    assert out[-1].status == "failed"
