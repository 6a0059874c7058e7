"""Issue 20 (kill and resume): an answer the client has received survives a SIGKILL, however late its commit.

The cache commit happens on the writer thread, behind SQLite's lock; here it is held back outright
(the child's ``put_many`` waits, as behind another process's long write), so every answer the client
reads is received and uncommitted when the kill comes. The answer journal (llm/answer_journal.py)
must hand all of them to the next opening of the cache: the rerun sends nothing. Without it every
one of them was sent again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from interviewsim_core.llm.answer_journal import AnswerJournal, journal_paths, read_journal, replay
from interviewsim_core.llm.cache import CachedEntry, SqliteCache
from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.wire import WireText

CALLS = 6
KEY = "sk-journal-test-0123456789abcdef"

CHILD = textwrap.dedent(
    """
    import os, sys, time
    from interviewsim_core.llm import gateway
    from interviewsim_core.llm.cache import SqliteCache
    from interviewsim_core.llm.types import CallRequest, ModelConfig

    receipts = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    _direct = gateway.call_direct

    async def received(*args, **kwargs):
        completion = await _direct(*args, **kwargs)
        os.write(receipts, b"r")  # the client has the answer
        return completion

    gateway.call_direct = received
    if os.environ.get("HOLD_COMMITS"):
        _put_many = SqliteCache.put_many

        def held(self, items):
            time.sleep(60)  # the commit is late: the kill comes first
            _put_many(self, items)

        SqliteCache.put_many = held
    model = ModelConfig(model="openai/fake-model", api_base=os.environ["FAKE_BASE"], api_key_env="FAKE_KEY",
                        max_concurrency=16)
    requests = [CallRequest(messages=({"role": "system", "content": "Answer briefly."},
                                      {"role": "user", "content": f"question {i} \\u00e9"}),
                            contract="free", contract_version="1", item_id=str(i)) for i in range(int(sys.argv[3]))]
    results = gateway.Gateway(cache=SqliteCache(sys.argv[1])).run(model, requests)
    assert all(r.status == "ok" for r in results), results
    """
)


def _child(server: FakeOpenAIServer, cache: Path, receipts: Path, hold: bool) -> subprocess.Popen:
    env = {**os.environ, "FAKE_BASE": server.base_url, "FAKE_KEY": KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    if hold:
        env["HOLD_COMMITS"] = "1"
    return subprocess.Popen([sys.executable, "-c", CHILD, str(cache), str(receipts), str(CALLS)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def test_answers_received_before_a_sigkill_are_not_sent_again(tmp_path: Path) -> None:
    cache, receipts = tmp_path / "cache.sqlite", tmp_path / "receipts"
    with FakeOpenAIServer(FakeServerConfig(latency_s=0.01)) as server:
        proc = _child(server, cache, receipts, hold=True)
        try:
            deadline = time.monotonic() + 60
            while not receipts.exists() or receipts.stat().st_size < CALLS:
                assert proc.poll() is None and time.monotonic() < deadline, proc.stdout.read().decode()[-2000:]
                time.sleep(0.01)
            time.sleep(0.5)  # the last receipt is written just before its journal record; commits wait 60 s
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        sent = server.requests
        assert sent == CALLS
        journals = journal_paths(cache)
        assert journals, "no journal beside the cache"
        assert all(KEY.encode() not in p.read_bytes() for p in journals)  # only what the cache would hold
        assert len(SqliteCache(cache)) == CALLS  # opening the cache replayed the journal
        assert journal_paths(cache) == []
        proc = _child(server, cache, tmp_path / "receipts2", hold=False)
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out.decode(errors="replace")[-3000:]
        repeated = server.requests - sent
    print(f"\n{CALLS} answers received, commits held, SIGKILL: {repeated} sent again by the rerun")
    assert repeated == 0


def _entry(i: int) -> tuple[str, CachedEntry]:
    messages = ({"role": "user", "content": f"prompt {i} \u00e9\n\"quoted\""},)
    return f"{i:064x}", CachedEntry(raw=f"answer {i}", messages=messages, model="openai/m", contract="free", created=1.5,
                                     prompt_tokens=3, completion_tokens=2, cost_usd=0.5, cached_prompt_tokens=1)


def test_a_torn_record_and_what_follows_it_are_ignored(tmp_path: Path) -> None:
    journal = AnswerJournal(tmp_path / "c.sqlite")
    for i in range(3):
        key, entry = _entry(i)
        assert journal.append(key, entry, WireText(entry.messages))
    data = journal_paths(tmp_path / "c.sqlite")[0].read_bytes()
    assert [k for k, _ in read_journal(data)] == [_entry(i)[0] for i in range(3)]
    assert list(read_journal(data))[1][1] == _entry(1)[1]  # every field as the cache would store it
    assert len(list(read_journal(data[:-5]))) == 2
    third = data.index(b"ISJ1", data.index(b"ISJ1", 1) + 1)
    assert len(list(read_journal(data[:third] + b"\0" + data[third + 1:]))) == 2


def test_a_live_process_journal_is_left_alone_and_cut_back_once_committed(tmp_path: Path) -> None:
    cache = SqliteCache(tmp_path / "c.sqlite")
    journal = AnswerJournal(cache.path)
    key, entry = _entry(1)
    journal.append(key, entry)
    other = SqliteCache(cache.path)  # another opening while this process lives: the journal is locked
    assert len(other) == 0 and replay(other) == 0
    journal.committed(1)
    assert journal_paths(cache.path)[0].stat().st_size == 0
    journal.close()
    assert journal_paths(cache.path) == []
