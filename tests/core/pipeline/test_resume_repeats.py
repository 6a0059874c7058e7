"""Issue 20: after a SIGKILL mid-run, the rerun repeats only the calls in flight at the kill.

The earlier resume test (``test_resume_after_kill.py``) bounds repeats by the concurrency limit at
concurrency 4. This one runs at the default concurrency (16) and kills the client at an arbitrary
moment at 30% of the calls. "In flight" is what the client had sent and not yet received: the child
logs each answer the moment its transport returns it (one ``os.write`` per answer, which a SIGKILL
cannot undo), and every answer in that log must survive the kill (llm/answer_journal.py), so the
rerun repeats at most the requests whose answers the client never read. Measured on the server's
log, not the client's: a request repeated is one sent by the two runs together beyond what one full
run sends.

Before the journal, a received answer waited tens of milliseconds for its commit (writer thread,
SQLite lock) and 2 of 8 runs repeated 1-2 answers the client had read. Answers the server wrote but
the client had not yet read (on a loaded 2-core machine the CPU decides when) are in flight: no
client-side change can keep them, so they are allowed, and printed.

``hold=True``: every request after 30% is left unanswered for ``SETTLE_S`` before the kill, so the
client has read everything else (kept for the measurement at a quiet moment).
How long a commit waits behind other calls' look-ups is tested in
``tests/gateway/test_gateway_answer_writes.py``; that a received answer survives however late its
commit, in ``test_resume_journal.py``.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
from fakes import offline_reply

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

PERSONALITY = "SYN_AUERLUND"
GRACE_S = 0.005
"""An answer written by the server less than this before the kill may still be in the socket."""
SETTLE_S = 1.0
"""``hold``: how long the client is left with every answer it was sent before the kill."""

CHILD = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from interviewsim_core.llm import gateway
    from interviewsim_core.llm.types import ModelConfig

    # Receipt log: one byte per answer the client has read, written the moment the transport returns
    # it (before the gateway does anything with it), with one os.write a SIGKILL cannot undo.
    receipts = os.open(os.environ["RECEIPTS"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    _direct = gateway.call_direct

    async def received(*args, **kwargs):
        completion = await _direct(*args, **kwargs)
        os.write(receipts, b"r")
        return completion

    gateway.call_direct = received
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    model = ModelConfig(model="openai/fake-model", api_base=os.environ["FAKE_BASE"], api_key_env="FAKE_KEY")
    cfg = EvalConfig(corpus=Path(sys.argv[1]), data_root=Path(sys.argv[2]), methods=("simple", "chrono-100"),
                     generator=model, judges=(model,), builder=model, premise_judge=model)
    run_evaluation(cfg)
    """
)


def _digest(entry: dict) -> str:
    return hashlib.sha256(entry["path"].encode() + entry["body"].encode()).hexdigest()


def _child(corpus: Path, root: Path, server: FakeOpenAIServer) -> subprocess.Popen:
    env = {**os.environ, "FAKE_BASE": server.base_url, "FAKE_KEY": "sk-fake", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
           "RECEIPTS": str(root.parent / f"{root.name}.receipts")}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(corpus), str(root)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def measure_repeats(tmp_path: Path, kill_share: float = 0.3, hold: bool = True) -> dict[str, int]:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / PERSONALITY).symlink_to(SAMPLE_CORPUS_DIR / PERSONALITY, target_is_directory=True)
    with FakeOpenAIServer(FakeServerConfig(latency_s=0.02, reply=offline_reply)) as server:
        proc = _child(corpus, tmp_path / "reference", server)
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out.decode(errors="replace")[-3000:]
        total = server.requests
        assert total > 100
        reference = Counter(_digest(e) for e in server.log)
        start = len(server.log)
        proc = _child(corpus, tmp_path / "resumed", server)
        deadline = time.monotonic() + 600
        while server.requests - total < int(total * kill_share):
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.002)
        if hold:
            server.config.hang = True  # every request from now on waits, unanswered, until the server stops
            time.sleep(SETTLE_S)
            assert proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        proc.wait(timeout=60)
        time.sleep(0.3)  # the server finishes what was in flight
        server.config.hang = False
        killed = server.log[start:]
        received = (tmp_path / "resumed.receipts").stat().st_size
        resume_start = len(server.log)
        proc = _child(corpus, tmp_path / "resumed", server)
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out.decode(errors="replace")[-3000:]
        resumed = Counter(_digest(e) for e in server.log[resume_start:])
    # Identical bodies are legitimate (PS votes share a prompt): a body is repeated as often as the two
    # runs together sent it beyond what one full run sends.
    def was_answered(e: dict) -> bool:  # a held request is stamped when the server stops, status 0
        return e.get("status") != 0 and e.get("answered", float("inf")) < killed_at - GRACE_S

    answered = Counter(_digest(e) for e in killed if was_answered(e))
    in_flight = [e for e in killed if not was_answered(e)]
    sent = Counter(_digest(e) for e in killed)
    again = {d for d in answered if answered[d] + resumed[d] - reference[d] > 0}
    leads = [killed_at - e["answered"] for e in killed if was_answered(e) and _digest(e) in again]
    return {"total": total, "killed_run": len(killed), "in_flight_at_kill": len(in_flight),
            "received_by_client": received, "not_received_at_kill": len(killed) - received,
            "repeated": sum(max(0, sent[d] + resumed[d] - reference[d]) for d in sent),
            "repeated_answered_before_kill": sum(max(0, answered[d] + resumed[d] - reference[d]) for d in answered),
            "oldest_repeated_answer_ms": round(1000 * max(leads, default=0.0), 1)}


@pytest.mark.slow
def test_a_rerun_after_sigkill_repeats_only_the_calls_in_flight_at_the_kill(tmp_path: Path) -> None:
    m = measure_repeats(tmp_path, hold=False)
    print(f"\nresume after SIGKILL at 30% (at an arbitrary moment): {m}")
    assert m["received_by_client"] > 0, m
    assert m["repeated"] <= m["not_received_at_kill"], m  # no answer the client had read was paid again
