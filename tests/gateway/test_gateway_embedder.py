"""LiteLLMEmbedder against the fake server's /v1/embeddings, cached per text."""

from __future__ import annotations

import numpy as np
from gateway_support import FAKE_KEY_ENV

from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.embeddings.litellm_embedder import LiteLLMEmbedder


def test_embeds_normalised_float32_and_caches_per_text(fake_server, planted_key, tmp_path):
    cache = SqliteCache(tmp_path / "c.sqlite")
    emb = LiteLLMEmbedder("openai/fake-embed", api_base=fake_server.base_url, api_key_env=FAKE_KEY_ENV,
                          batch_size=2, cache=cache)
    texts = ["alpha", "beta", "gamma", "alpha"]
    m = emb.embed(texts)
    assert m.shape == (4, 16) and m.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(m, axis=1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(m[0], m[3])
    assert fake_server.requests == 2  # three unique texts in batches of two
    again = LiteLLMEmbedder("openai/fake-embed", api_base=fake_server.base_url, api_key_env=FAKE_KEY_ENV,
                            cache=SqliteCache(tmp_path / "c.sqlite"))
    np.testing.assert_array_equal(again.embed(["gamma", "alpha"]), m[[2, 0]])
    assert fake_server.requests == 2  # all from the cache
    again.embed(["delta"])
    assert fake_server.requests == 3
    other = LiteLLMEmbedder("openai/other-embed", api_base=fake_server.base_url, api_key_env=FAKE_KEY_ENV,
                            cache=cache)
    assert other.name != emb.name
    other.embed(["alpha"])
    assert fake_server.requests == 4  # another model never reuses these vectors
