from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from interviewsim_core.embeddings import Embedder, EmbeddingCache, HashingEmbedder, cached_embed, texts_digest

TEXTS = ["What do you think of the tax bill?", "The tax bill, sir?", "Will there be war?", "", "is it the?",
         "Über café naïve résumé"]


def test_rows_are_float32_unit_norm_or_zero():
    emb = HashingEmbedder()
    m = emb.embed(TEXTS)
    assert m.dtype == np.float32 and m.shape == (len(TEXTS), 512)
    norms = np.linalg.norm(m, axis=1)
    assert np.allclose(norms[[0, 1, 2, 5]], 1.0, atol=1e-6)
    assert norms[3] == 0.0 and norms[4] == 0.0  # empty, stopwords only: zero rows stay zero
    assert np.isfinite(m).all()
    assert isinstance(emb, Embedder)


def test_deterministic_and_batch_independent():
    a = HashingEmbedder(dim=256).embed(TEXTS)
    b = HashingEmbedder(dim=256).embed(list(reversed(TEXTS)))[::-1]
    c = np.vstack([HashingEmbedder(dim=256).embed([t]) for t in TEXTS])
    assert np.array_equal(a, b) and np.array_equal(a, c)


def test_stable_across_processes():
    code = ("import sys, numpy as np; from interviewsim_core.embeddings import HashingEmbedder;"
            "sys.stdout.write(HashingEmbedder(dim=128).embed(['tax bill and war', 'moon landing']).tobytes().hex())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120,
                         env={**os.environ, "PYTHONHASHSEED": "999"}).stdout
    local = HashingEmbedder(dim=128).embed(["tax bill and war", "moon landing"])
    assert bytes.fromhex(out) == local.tobytes()


def test_similarity_follows_shared_content():
    m = HashingEmbedder().embed(["the tax bill", "What about the tax bill?", "the moon landing"]).astype(float)
    assert m[0] @ m[1] > 0.99  # stopwords ignored: same content words
    assert m[0] @ m[2] < 0.3


def test_bigrams_change_vectors_and_name():
    uni, bi = HashingEmbedder(bigrams=False), HashingEmbedder(bigrams=True)
    assert uni.name != bi.name
    a, b = uni.embed(["tax cut now"]), bi.embed(["tax cut now"])
    assert not np.array_equal(a, b)
    # Word order only matters with bigrams.
    assert np.array_equal(uni.embed(["cut tax"]), uni.embed(["tax cut"]))
    assert not np.array_equal(bi.embed(["cut tax"]), bi.embed(["tax cut"]))


def test_bad_arguments():
    with pytest.raises(ValueError):
        HashingEmbedder(dim=0)
    with pytest.raises(ValueError):
        HashingEmbedder(dim=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        HashingEmbedder().embed("one string")  # type: ignore[arg-type]
    assert HashingEmbedder().embed([]).shape == (0, 512)


class Counting:
    def __init__(self):
        self.inner = HashingEmbedder(dim=32)
        self.name = self.inner.name
        self.calls = 0

    def embed(self, texts):
        self.calls += 1
        return self.inner.embed(texts)


def test_cache_round_trip_and_reuse(tmp_path):
    emb = Counting()
    first = cached_embed(emb, TEXTS, EmbeddingCache(tmp_path))
    second = cached_embed(emb, TEXTS, EmbeddingCache(tmp_path))  # fresh object: reads the file
    assert emb.calls == 1 and np.array_equal(first, second)
    cached_embed(emb, TEXTS[:2], EmbeddingCache(tmp_path))  # a different text list is a different key
    assert emb.calls == 2
    files = list(tmp_path.rglob("*.npy"))
    assert len(files) == 2 and not list(tmp_path.rglob(".tmp-*"))
    cached_embed(emb, TEXTS, None)
    assert emb.calls == 3


def test_cache_keys_on_name_and_order(tmp_path):
    cache = EmbeddingCache(tmp_path)
    assert texts_digest("a", ["x", "y"]) != texts_digest("a", ["y", "x"])
    assert texts_digest("a", ["x"]) != texts_digest("b", ["x"])
    cache.put("model/with:odd chars", ["x"], np.ones((1, 3), np.float32))
    assert cache.get("model/with:odd chars", ["x"]) is not None
    assert cache.get("other", ["x"]) is None


def test_cache_treats_corrupt_or_misshaped_files_as_misses(tmp_path):
    emb = Counting()
    cache = EmbeddingCache(tmp_path)
    path = cache.path_for(emb.name, TEXTS)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a numpy file")
    out = cached_embed(emb, TEXTS, cache)
    assert emb.calls == 1 and out.shape == (len(TEXTS), 32)
    np.save(path, np.zeros((2, 32), np.float32))  # wrong row count
    assert EmbeddingCache(tmp_path).get(emb.name, TEXTS) is None
    with pytest.raises(ValueError):
        cache.put(emb.name, TEXTS, np.zeros((2, 32)))


def test_cached_matrices_are_read_only_and_do_not_alias_the_caller(tmp_path):
    cache = EmbeddingCache(tmp_path)
    mine = np.ones((1, 4), np.float32)
    cache.put("m", ["x"], mine)
    mine[0, 0] = 5.0  # the caller keeps a writable array of its own
    got = cache.get("m", ["x"])
    assert got[0, 0] == 1.0 and not got.flags.writeable


def test_cached_embed_rejects_wrong_shapes():
    class Bad:
        name = "bad"

        def embed(self, texts):
            return np.zeros((len(texts) + 1, 3), np.float32)

    with pytest.raises(ValueError, match="shape"):
        cached_embed(Bad(), ["a"], None)


def test_offline_hashing_vectors_are_memoised_but_never_written(tmp_path):
    """Storage (issue 13): the offline embedder's matrix (~2 KB per question) is cheaper to recompute
    than to keep, so it stays in the process; a model's vectors (Counting above) are still written."""

    class CountingHashing(HashingEmbedder):
        calls = 0

        def embed(self, texts):
            type(self).calls += 1
            return super().embed(texts)

    emb, cache = CountingHashing(dim=32), EmbeddingCache(tmp_path)
    first = cached_embed(emb, TEXTS, cache)
    again = cached_embed(emb, TEXTS, cache)
    assert CountingHashing.calls == 1 and np.array_equal(first, again)
    assert not list(tmp_path.rglob("*")) and not HashingEmbedder.store_vectors
    fresh = cached_embed(emb, TEXTS, EmbeddingCache(tmp_path))  # another process: recomputed, same vectors
    assert CountingHashing.calls == 2 and np.array_equal(first, fresh)
