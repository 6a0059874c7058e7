"""Issue 20, data root full: batch prefill and embedding vectors take the chat answers' full-disk path.

That path (``SqliteCache._write``): the first full-disk write spends the cache's reserve and is
retried in its space, the gateway then sends nothing more (``cache_error``), and the note beside
the cache makes ``interviewsim run`` exit 3. Before, a batch's answers met the full disk with an
exception that ended the run, and vectors were not stored while calls went on being sent.
On a real 2 MB tmpfs (``small_tmpfs``; needs root, as CI runs).
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pytest
from gateway_support import fake_model

from interviewsim_core.llm.cache import SqliteCache, cache_write_errors
from interviewsim_core.llm.embedding import EmbeddingError
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.testing_batch import FakeBatchServer
from interviewsim_core.llm.types import CallRequest, ModelConfig

ROOM = 200_000
"""Free bytes left on the tmpfs beside the cache and its reserve before the paid results arrive."""


def _fill(mnt, keep: int = ROOM) -> os.PathLike:
    """A filler file that leaves ``keep`` bytes free (deleted to free the space again)."""
    st = os.statvfs(mnt)
    filler = mnt / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - keep))
    return filler


def _reply(messages: list[dict]) -> str:
    """~2 KB that deflate does not shrink much."""
    seed = str(messages[-1]["content"]).encode()
    return " ".join(hashlib.sha256(seed + bytes([i])).hexdigest() for i in range(30))


def test_batch_answers_on_a_full_disk_stop_the_run_and_are_collected_again(small_tmpfs, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    path = small_tmpfs / "llm.sqlite"
    n = 400
    requests = [CallRequest(messages=({"role": "user", "content": f"question {i}"},), contract="free",
                            contract_version="1", item_id=str(i)) for i in range(n)]
    with FakeBatchServer(config=FakeServerConfig(reply=_reply)) as srv:
        model = ModelConfig(model="openai/gpt-4.1", api_base=srv.base_url, batch=True, batch_poll_s=0.02,
                            max_retries=0)
        gw = Gateway(cache=SqliteCache(path))
        filler = _fill(small_tmpfs)
        results = gw.run(model, requests)
        chat = sum(1 for e in srv.log if e["path"].endswith("/chat/completions"))
        stored = gw.last_batch.answered
        print(f"\n{n} batch answers on a full disk: {stored} stored, {chat} sent online")
        assert gw.cache_error is not None and str(path) in str(gw.cache_error)
        assert 0 < stored < n and chat == 0  # nothing sent once the cache refused a write
        assert sum(r.status == "ok" for r in results) == stored
        assert all(r.error.startswith("not sent") for r in results if r.status != "ok")
        assert len(cache_write_errors(path, since=0.0)) == 1  # `interviewsim run` exits 3
        gw.close()
        os.unlink(filler)
        with Gateway(cache=SqliteCache(path)) as again:
            rerun = again.run(model, requests)
        chat = sum(1 for e in srv.log if e["path"].endswith("/chat/completions"))
        assert [r.status for r in rerun] == ["ok"] * n
        assert srv.batch_creates == 1 and chat == 0  # the open batch was collected again, not paid again
        assert again.last_batch.resumed and again.last_batch.answered == n - stored


def test_vectors_on_a_full_disk_are_stored_in_the_reserve_then_nothing_is_sent(small_tmpfs, planted_key):
    path = small_tmpfs / "llm.sqlite"
    with FakeOpenAIServer(FakeServerConfig(embedding_dim=4096)) as server:
        gw = Gateway(cache=SqliteCache(path))
        model = fake_model(server, "fake-embed", max_retries=0)
        _fill(small_tmpfs)
        texts = [f"text {i}" for i in range(40)]  # 40 x 16 KB: beyond the room, within the reserve
        vectors = gw.embed(model, texts, batch_size=40)
        assert vectors.shape == (40, 4096)
        assert gw.cache_error is not None and gw.cache_error.stored and str(path) in str(gw.cache_error)
        assert gw.stats.cache_write_errors == 0  # every paid vector is in the cache
        sent = server.requests
        with pytest.raises(EmbeddingError, match="not sent") as err:
            gw.embed(model, ["another text"])
        assert str(path) in str(err.value) and server.requests == sent
    again = Gateway(cache=SqliteCache(path))  # the vectors were stored: read back, nothing sent
    got = again.embed(model, texts, batch_size=40)
    assert np.allclose(got, vectors) and again.stats.calls_made == 0
