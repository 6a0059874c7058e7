"""The local OpenAI-compatible server of the scale benchmark, run in its own process.

``interviewsim_core.llm.testing.FakeOpenAIServer`` with three additions the end-to-end benchmark
needs:

- replies are the offline model's (contract-valid), so every step of the pipeline runs as with a
  real provider; a prompt the offline model does not recognise (raw httpx traffic) is echoed;
- it records when no call is in flight (gaps), the "share of wall time with no call in flight";
- it can record every chat request body to a file, so that the raw-httpx baseline replays the very
  requests the pipeline sent (same sizes) and the ratio measures only the client side;
- it counts the chat calls per model name (``models`` in ``stats``), so a benchmark can tell which of the study's
  models a path asked (a judge change's re-score asks only the new judge);
- it remembers each reply by request body: the offline model costs 2-30 ms of server CPU per reply,
  enough to make this one-process server the bottleneck at 320 calls/s. The benchmark makes one
  untimed pass to fill the memory, then the timed pipeline pass and the raw-httpx replay both get
  the same cheap server (a hash and a lookup per reply).

It forgets the request log the base class keeps (it would hold every prompt in memory).

Protocol: prints ``PORT <n>``; then reads commands on stdin, one per line, answering one JSON
line on stdout: ``stats`` (counters and idle gaps since the last ``reset``), ``reset``,
``latency <seconds>``, ``record <path>`` / ``record -`` (start / stop recording bodies). EOF stops
the server.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import sys
import threading
import time
from contextvars import ContextVar
from typing import Any

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig, echo_reply


def offline_reply(messages: list[dict[str, Any]]) -> str:
    """The offline model's answer (contract read off the prompt), or an echo for a prompt it does not know."""
    from interviewsim_core.offline.stand_in import offline_reply as answer

    try:
        return answer(messages)
    except ValueError:  # no contract heading found (min of nothing), or a responder refused the prompt
        return echo_reply(messages)


_BODY_KEY: ContextVar[bytes] = ContextVar("body_key")
_MODEL = re.compile(rb'"model":\s*"([^"]*)"')
"""The request's model name, read without parsing a body that can be hundreds of KB."""


class TrackingServer(FakeOpenAIServer):
    def __init__(self, config: FakeServerConfig, port: int = 0):
        super().__init__(config, port)
        self._t_lock = threading.Lock()
        self._record = None
        self._memo: dict[bytes, str] = {}
        self.memo_hits = 0
        self.reset()
        offline = self.config.reply

        def reply(messages: list[dict[str, Any]]) -> str:
            key = _BODY_KEY.get()  # set by _dispatch in this request's task
            if key in self._memo:
                self.memo_hits += 1
                return self._memo[key]
            text = self._memo[key] = offline(messages)
            return text

        self.config.reply = reply

    def reset(self) -> None:
        with self._t_lock:
            self.in_flight, self.chat, self.bytes_in, self.memo_hits = 0, 0, 0, 0
            self.models: dict[str, int] = {}
            self.first_at: float | None = None
            self.gaps: list[tuple[float, float]] = []
            self.zero_since: float | None = time.time()

    def record(self, path: str | None) -> None:
        with self._t_lock:
            if self._record:
                self._record.close()
            self._record = open(path, "ab") if path else None  # noqa: SIM115 - closed by the next record()

    def stats(self) -> dict[str, Any]:
        with self._t_lock:
            return {"chat": self.chat, "models": dict(self.models), "first_at": self.first_at, "bytes_in": self.bytes_in, "in_flight": self.in_flight, "memo_hits": self.memo_hits,
                    "gaps": list(self.gaps), "zero_since": self.zero_since, "now": time.time(),
                    "cpu": time.process_time()}

    async def _dispatch(self, method: str, path: str, headers: dict[str, str], body: bytes):
        with self._t_lock:
            now = time.time()
            if self.in_flight == 0 and self.zero_since is not None:
                self.gaps.append((self.zero_since, now))
                self.zero_since = None
            self.in_flight += 1
            if path.rstrip("/").endswith("/chat/completions"):
                self.chat += 1
                if self.first_at is None:
                    self.first_at = now
                self.bytes_in += len(body)
                model = _MODEL.search(body)
                name = model.group(1).decode() if model else "?"
                self.models[name] = self.models.get(name, 0) + 1
                if self._record:
                    self._record.write(struct.pack("<I", len(body)) + body)
        _BODY_KEY.set(hashlib.sha256(body).digest())
        try:
            return await super()._dispatch(method, path, headers, body)
        finally:
            with self._lock:
                self._c.log.clear()
                self._c.seen_bodies.clear()
            with self._t_lock:
                self.in_flight -= 1
                if self.in_flight == 0:
                    self.zero_since = time.time()


def read_bodies(path: str):
    """The bodies ``record`` wrote, one at a time (the file can be hundreds of MB)."""
    with open(path, "rb") as f:
        while head := f.read(4):
            yield f.read(struct.unpack("<I", head)[0])


def idle_seconds(stats: dict[str, Any], t0: float, t1: float) -> tuple[float, list[tuple[float, float]]]:
    """Seconds of [t0, t1] with no call in flight, and the gaps of at least one second in it."""
    gaps = list(stats["gaps"])
    if stats["zero_since"] is not None:
        gaps.append((stats["zero_since"], max(t1, stats["now"])))
    total, long_ = 0.0, []
    for a, b in gaps:
        a, b = max(a, t0), min(b, t1)
        if b > a:
            total += b - a
            if b - a >= 1.0:
                long_.append((a - t0, b - a))
    return total, long_


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--port", type=int, default=0, help="0: a free one (a kept instance's config names the port it used)")
    a = p.parse_args(argv)
    srv = TrackingServer(FakeServerConfig(latency_s=a.latency, reply=offline_reply), port=a.port)
    srv.start()
    print(f"PORT {srv.port}", flush=True)
    try:
        for line in sys.stdin:
            cmd, _, arg = line.strip().partition(" ")
            if cmd == "stats":
                out: Any = srv.stats()
            elif cmd == "reset":
                srv.reset()
                out = {"ok": True}
            elif cmd == "latency":
                srv.config.latency_s = float(arg)
                out = {"ok": True}
            elif cmd == "record":
                srv.record(None if arg in ("", "-") else arg)
                out = {"ok": True}
            else:
                out = {"error": f"unknown command {cmd!r}"}
            print(json.dumps(out), flush=True)
    finally:
        srv.record(None)
        srv.stop()


if __name__ == "__main__":
    main()
