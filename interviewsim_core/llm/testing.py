"""A local OpenAI-compatible HTTP server for tests and benchmarks (stdlib only, 127.0.0.1).

Why it lives in the package rather than under ``tests/``: the gateway tests, the Dagster tests
and ``benchmarks/bench_gateway.py`` all need the same server, and the benchmark must start it in
a separate process (``python -m interviewsim_core.llm.testing``) so the server's CPU is not
counted against the client. Importing this module costs nothing unless a server is started.

The server is a small asyncio HTTP/1.1 loop (keep-alive, Content-Length bodies) because a
thread-per-request server becomes the bottleneck at 32 concurrent requests of 200 ms. Faults are
decided by hashing (seed, request body, how many times that body was seen), so a test run is
reproducible whatever the arrival order, and a retried request can succeed where the first
try failed.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["FakeServerConfig", "FakeOpenAIServer", "echo_reply", "free_port", "key_rejection", "targeted"]

MODES: dict[str, dict[str, bool]] = {"ok": {}, "echo-key-401": {"reject_key": True}, "hang": {"hang": True}}
"""``--mode`` of the command-line server: named failure behaviours (``FakeServerConfig`` fields)."""

MALFORMED_TEXT = "<<garbled output: not what the contract asked for>>"


def echo_reply(messages: list[dict[str, Any]]) -> str:
    """Default scripted reply: repeat the last user message, so replies differ per prompt."""
    for m in reversed(messages):
        if m.get("role") == "user":
            return f"echo: {m.get('content', '')}"
    return "echo"


def key_rejection(headers: dict[str, str]) -> tuple[int, dict[str, str], dict[str, Any]]:
    """A 401 that repeats the bearer key it was sent, as some providers do (``reject_key``)."""
    key = headers.get("authorization", "").removeprefix("Bearer ").strip()
    return 401, {}, {"error": {"message": f"Incorrect API key provided: {key}.",
                               "type": "invalid_request_error", "code": "invalid_api_key"}}


def targeted(config: "FakeServerConfig", path: str) -> bool:
    """Whether ``path`` is subject to the configured faults (``fault_paths``; empty: every path)."""
    return not config.fault_paths or path.split("?", 1)[0].rstrip("/").endswith(tuple(config.fault_paths))


def free_port() -> int:
    """A currently free TCP port on 127.0.0.1."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class FakeServerConfig:
    """Knobs of the fake server; every rate is a probability per request in [0, 1]."""

    latency_s: float = 0.0
    """Sleep before every answer (simulates model latency)."""
    rate_limit_rate: float = 0.0
    """Answer 429 with a Retry-After header."""
    retry_after_s: float = 1.0
    server_error_rate: float = 0.0
    """Answer 500."""
    timeout_rate: float = 0.0
    """Sleep ``timeout_sleep_s`` (past the client's timeout) before answering."""
    timeout_sleep_s: float = 5.0
    malformed_rate: float = 0.0
    """Answer 200 with garbage content instead of the scripted reply."""
    first_n_fault: int = 0
    """Every distinct request body meets ``first_n_kind`` on its first n arrivals, then passes:
    the deterministic way to test that a retry succeeds and how long it waited."""
    first_n_kind: str = "429"
    """One of "429", "500", "timeout", "malformed"."""
    seed: int = 0
    reply: Callable[[list[dict[str, Any]]], str] = echo_reply
    """Scripted replies by prompt content, so contract parsers can be exercised."""
    model_reply: Callable[[str, list[dict[str, Any]]], str] | None = None
    """Replies by the request's model name and prompt, in place of ``reply``: two model names of one server
    that answer differently (two generators compared in one study)."""
    embedding_dim: int = 16
    record_path: str | None = None
    """Append one JSON line per answered request (path, status, body) to this file, flushed at once:
    how a test reads what a server in another process saw (``python -m interviewsim_core.llm.testing``)."""
    reject_key: bool = False
    """Answer every request 401, repeating the bearer key it was sent (as some providers do):
    the way to test that a key echoed in an error is redacted."""
    reject_key_rate: float = 0.0
    """Answer this share of requests (decided by hashing the body, whatever ``fault_paths``) like
    ``reject_key``: a run goes on while every role meets some 401s that repeat the key."""
    reject_key_first: bool = False
    """Answer the first request of each model name (the body's ``model``) like ``reject_key``: every
    role of a run meets exactly one 401 that repeats the key, and the run goes on."""
    hang: bool = False
    """Accept every request and never answer (until the client gives up or the server stops):
    the way to test that a configured timeout bounds a call to a stuck server."""
    fault_paths: tuple[str, ...] = ()
    """When non-empty, ``reject_key`` and ``hang`` apply only to requests whose path ends with one of
    these (e.g. ``("/embeddings",)``): chat answers while the embedding endpoint fails."""
    count_tokens: Callable[[str], int] | None = None
    """Token count reported in ``usage`` per message content; default: whitespace words."""
    cache_system_prompt: bool = False
    """Report the system message's tokens as ``usage.prompt_tokens_details.cached_tokens`` from the second
    request with the same system message on (a provider's prefix cache, as OpenAI reports it)."""


@dataclass
class _Counters:
    requests: int = 0
    by_path: dict[str, int] = field(default_factory=dict)
    by_status: dict[int, int] = field(default_factory=dict)
    in_flight: int = 0
    max_in_flight: int = 0
    seen_bodies: dict[str, int] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)


class FakeOpenAIServer:
    """Serves ``/v1/chat/completions`` and ``/v1/embeddings`` on 127.0.0.1 in a background thread.

    Use as a context manager; ``base_url`` is ``http://127.0.0.1:PORT/v1``. ``requests`` counts
    every HTTP request received, ``max_in_flight`` the largest number handled at once, and
    ``log`` keeps (arrival time, path, status, headers, body) for assertions.
    """

    def __init__(self, config: FakeServerConfig | None = None, port: int = 0):
        self.config = config or FakeServerConfig()
        self._port = port
        self._c = _Counters()
        self._lock = threading.Lock()
        self._seen_systems: set[str] = set()
        self._rejected_models: set[Any] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.AbstractServer | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------
    def __enter__(self) -> "FakeOpenAIServer":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run_loop, name="fake-openai", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake server did not start")

    def stop(self) -> None:
        if self._loop is None:
            return
        loop = self._loop

        async def _close() -> None:
            assert self._server is not None
            self._server.close()
            for t in [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]:
                t.cancel()

        asyncio.run_coroutine_threadsafe(_close(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop = None

    def _run_loop(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        self._server = loop.run_until_complete(
            asyncio.start_server(self._handle_conn, "127.0.0.1", self._port, backlog=1024)
        )
        self._port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    # -- observations ----------------------------------------------------------------------
    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def requests(self) -> int:
        with self._lock:
            return self._c.requests

    @property
    def max_in_flight(self) -> int:
        with self._lock:
            return self._c.max_in_flight

    @property
    def by_status(self) -> dict[int, int]:
        with self._lock:
            return dict(self._c.by_status)

    @property
    def log(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._c.log)

    def reset_counters(self) -> None:
        """Zero the counters but keep the per-body occurrence memory (faults stay reproducible)."""
        with self._lock:
            seen = self._c.seen_bodies
            self._c = _Counters(seen_bodies=seen)

    # -- HTTP ------------------------------------------------------------------------------
    async def _handle_conn(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0") or 0))
                status, extra, payload = await self._dispatch(method, path, headers, body)
                raw = isinstance(payload, bytes)  # file downloads (batch output) are not JSON documents
                out = payload if raw else json.dumps(payload).encode()
                reason = {200: "OK", 404: "Not Found", 429: "Too Many Requests", 500: "Internal Server Error"}
                hdr = [f"HTTP/1.1 {status} {reason.get(status, 'Status')}",
                       f"Content-Type: {'application/octet-stream' if raw else 'application/json'}",
                       f"Content-Length: {len(out)}", "Connection: keep-alive"]
                hdr += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(hdr) + "\r\n\r\n").encode("latin-1") + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError, ValueError):
            pass
        finally:
            try:
                writer.close()
            except Exception:  # noqa: BLE001 - closing a dead socket must not crash the server
                pass

    def _roll(self, body: bytes, occurrence: int, kind: str) -> float:
        h = hashlib.sha256(f"{self.config.seed}|{kind}|{occurrence}|".encode() + body).digest()
        return int.from_bytes(h[:8], "big") / 2**64

    async def _dispatch(self, method: str, path: str, headers: dict[str, str], body: bytes):
        cfg = self.config
        digest = hashlib.sha256(path.encode() + body).hexdigest()
        with self._lock:
            c = self._c
            c.requests += 1
            c.by_path[path] = c.by_path.get(path, 0) + 1
            occurrence = c.seen_bodies.get(digest, 0)
            c.seen_bodies[digest] = occurrence + 1
            c.in_flight += 1
            c.max_in_flight = max(c.max_in_flight, c.in_flight)
            entry = {"t": time.monotonic(), "path": path, "headers": headers, "body": body.decode("utf-8", "replace")}
            c.log.append(entry)
        status = 200
        try:
            if cfg.latency_s:
                await asyncio.sleep(cfg.latency_s)
            if method != "POST" or path.rstrip("/") not in ("/v1/chat/completions", "/v1/embeddings"):
                status = 404
                return status, {}, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}
            try:
                req = json.loads(body or b"{}")
            except ValueError:
                status = 400
                return status, {}, {"error": {"message": "invalid JSON body", "type": "invalid_request_error"}}
            hit = targeted(cfg, path)
            if cfg.hang and hit:
                status = 0  # recorded as "never answered"
                await asyncio.Event().wait()  # cancelled when the client hangs up or the server stops
            first = cfg.reject_key_first and req.get("model") not in self._rejected_models
            if first:
                self._rejected_models.add(req.get("model"))
            if (cfg.reject_key and hit) or first or self._roll(body, occurrence, "401") < cfg.reject_key_rate:
                status, extra, payload = key_rejection(headers)
                return status, extra, payload
            forced = cfg.first_n_kind if occurrence < cfg.first_n_fault else None
            if forced == "429" or self._roll(body, occurrence, "429") < cfg.rate_limit_rate:
                status = 429
                return status, {"Retry-After": f"{cfg.retry_after_s:g}"}, {
                    "error": {"message": "rate limited (fake)", "type": "rate_limit_error", "code": "rate_limit"}}
            if forced == "500" or self._roll(body, occurrence, "500") < cfg.server_error_rate:
                status = 500
                return status, {}, {"error": {"message": "internal error (fake)", "type": "server_error"}}
            if forced == "timeout" or self._roll(body, occurrence, "timeout") < cfg.timeout_rate:
                await asyncio.sleep(cfg.timeout_sleep_s)
            if path.rstrip("/").endswith("/embeddings"):
                return status, {}, self._embeddings(req)
            malformed = forced == "malformed" or self._roll(body, occurrence, "malformed") < cfg.malformed_rate
            return status, {}, self._chat(req, malformed)
        finally:
            with self._lock:
                c.in_flight -= 1
                c.by_status[status] = c.by_status.get(status, 0) + 1
                entry["status"] = status
                entry["answered"] = time.monotonic()  # the reply is written next: resume tests compare it to a kill
                if cfg.record_path:
                    line = {"path": path, "status": status, "body": entry["body"]}
                    with open(cfg.record_path, "a", encoding="utf-8") as fh:
                        fh.write(json.dumps(line) + "\n")

    def _chat(self, req: dict[str, Any], malformed: bool) -> dict[str, Any]:
        messages = req.get("messages") or []
        reply = self.config.reply if self.config.model_reply is None else (
            lambda m: self.config.model_reply(str(req.get("model", "")), m))
        text = MALFORMED_TEXT if malformed else reply(messages)
        count = self.config.count_tokens or (lambda text: len(text.split()))
        prompt_tokens = sum(count(str(m.get("content", ""))) for m in messages)
        completion_tokens = len(text.split())
        usage: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                                 "total_tokens": prompt_tokens + completion_tokens}
        system = next((str(m.get("content", "")) for m in messages if m.get("role") == "system"), None)
        if self.config.cache_system_prompt and system is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": count(system) if system in self._seen_systems else 0}
            self._seen_systems.add(system)
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.get("model", "fake-model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": usage,
        }

    def _embeddings(self, req: dict[str, Any]) -> dict[str, Any]:
        inputs = req.get("input") or []
        if isinstance(inputs, str):
            inputs = [inputs]
        data = []
        for i, text in enumerate(inputs):
            h = hashlib.sha256(str(text).encode()).digest()
            vec = [(b - 127.5) / 127.5 for b in (h * ((self.config.embedding_dim // len(h)) + 1))[: self.config.embedding_dim]]
            data.append({"object": "embedding", "index": i, "embedding": vec})
        n = sum(len(str(t).split()) for t in inputs)
        return {"object": "list", "data": data, "model": req.get("model", "fake-embed"),
                "usage": {"prompt_tokens": n, "total_tokens": n}}


def main(argv: list[str] | None = None) -> None:
    """Run the server in the foreground (for benchmarks); prints ``PORT <n>`` once listening."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.2)
    p.add_argument("--rate-limit-rate", type=float, default=0.0)
    p.add_argument("--server-error-rate", type=float, default=0.0)
    p.add_argument("--malformed-rate", type=float, default=0.0)
    p.add_argument("--reply", default="echo",
                   help="echo the prompt, or MODULE:FUNCTION, a reply(messages) -> str to import "
                        "(e.g. interviewsim_core.offline.stand_in:offline_reply, the offline model as a remote one)")
    p.add_argument("--record", default=None, help="append one JSON line per request to this file")
    p.add_argument("--mode", choices=sorted(MODES), default="ok",
                   help="echo-key-401: answer 401 repeating the bearer key; hang: accept and never answer")
    p.add_argument("--only", default=None, metavar="PATH_SUFFIX",
                   help="apply --mode only to paths ending so, e.g. /embeddings (chat keeps answering)")
    a = p.parse_args(argv)
    reply = echo_reply
    if a.reply != "echo":
        import importlib

        module, _, name = a.reply.partition(":")
        reply = getattr(importlib.import_module(module), name)
    cfg = FakeServerConfig(latency_s=a.latency, rate_limit_rate=a.rate_limit_rate,
                           server_error_rate=a.server_error_rate, malformed_rate=a.malformed_rate,
                           reply=reply, record_path=a.record, **MODES[a.mode],
                           fault_paths=(a.only,) if a.only else ())
    srv = FakeOpenAIServer(cfg, port=a.port)
    srv.start()
    print(f"PORT {srv.port}", flush=True)
    try:
        sys.stdin.read()  # the parent closes our stdin to stop us
    finally:
        srv.stop()


if __name__ == "__main__":
    main()
