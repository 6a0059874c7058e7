"""Issue 20, data root full: every answer paid for is in the cache; after the first failed write nothing is sent.

On a real full disk (a small tmpfs; needs root, as CI runs) a run used to go on calling after the
cache stopped taking answers, and lost the answers of the calls in flight: each was paid again by
the re-run after space was freed. Now the first full-disk write is retried in the space of the
cache's reserve (``<cache>.reserve``), the gateway sends nothing more (a typed ``not sent`` failure
naming the file) and ``cache_error`` says so.
"""

from __future__ import annotations

import hashlib

from gateway_support import fake_model

from interviewsim_core.llm.cache import RESERVE_BYTES, SqliteCache, cache_write_errors, reserve_path
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.types import CallRequest

CALLS = 600


def _reply(messages: list[dict]) -> str:
    """~2 KB that deflate does not shrink much: the disk fills after a few hundred answers."""
    seed = str(messages[-1]["content"]).encode()
    return " ".join(hashlib.sha256(seed + bytes([i])).hexdigest() for i in range(30))




def test_no_paid_answer_is_lost_when_the_cache_disk_fills(small_tmpfs, planted_key):
    path = small_tmpfs / ".cache" / "llm.sqlite"
    cache = SqliteCache(path)
    assert reserve_path(path).stat().st_size == RESERVE_BYTES
    with FakeOpenAIServer(FakeServerConfig(latency_s=0.005, reply=_reply)) as server:
        gw = Gateway(cache=cache)
        model = fake_model(server, max_concurrency=16, max_retries=0)
        requests = [CallRequest(messages=({"role": "user", "content": f"question {i}"},), contract="free",
                                contract_version="1", item_id=str(i)) for i in range(CALLS)]
        results = gw.run(model, requests)
        answered = sum(e.get("status") == 200 for e in server.log)
    ok = [r for r in results if r.status == "ok"]
    not_sent = [r for r in results if r.status == "failed" and r.error.startswith("not sent")]
    print(f"\n{CALLS} calls on a 2 MB cache disk: {answered} answered, {len(cache)} stored, "
          f"{len(not_sent)} not sent")
    assert 0 < answered < CALLS, "the disk did not fill (or filled before the first answer)"
    assert len(cache) == answered == len(ok)  # every answer paid for is stored: none is paid twice
    assert len(ok) + len(not_sent) == CALLS
    assert gw.cache_error is not None  # the first full write (an answer's, stored in the reserve, or a lease's)
    assert str(path) in not_sent[0].error and str(path) in str(gw.cache_error)
    assert gw.stats.cache_write_errors == 0  # nothing was kept in memory only
    noted = cache_write_errors(path, since=0.0)  # what `interviewsim run` reads to exit 3
    assert len(noted) == 1 and str(path) in noted[0]
