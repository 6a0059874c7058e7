"""Provider batch APIs: the same calls at the batch discount (about half price), through the cache.

Design: batch mode *pre-fills the cache*. Before the gateway runs a set of calls online, the calls
of models configured ``batch: true`` whose first attempt is not cached yet are sent as one OpenAI
Batch (Files + Batches endpoints); each answered line is stored
under exactly the cache key the online call would look up, priced at the batch rate. The online
pass that follows then finds those answers as cache hits and parses them like any other, so:

- results fill the same cache and the same tables as online calls (nothing downstream changes);
- a line the batch answered with an output that breaks its contract goes through the normal
  re-ask path (the re-ask is a different key, sent online);
- a line the batch failed, or left unanswered when the batch expired, is simply a cache miss and
  is sent online with the normal retry policy;
- nothing is paid twice: keys already cached are never batched, and a submitted batch's id is
  stored (table ``batches`` in the cache database) before the run waits on it, so a killed run
  that is started again polls and collects that batch instead of submitting a new one.

Providers: any endpoint that speaks the OpenAI Batch API (``openai/*``, and OpenAI-compatible
servers that implement it), posted with httpx under the gateway's retry policy. Not through litellm's
batch functions: in litellm 1.110 ``retrieve_batch`` fetches a completed batch's output file itself
(for its cost tracking) from the default host, ignoring ``api_base``, which breaks every endpoint but
OpenAI's own and downloads the output twice. Anthropic's Message Batches API has a different shape that litellm
1.110 does not expose for creation; a ``batch: true`` model on another provider is refused when
the config is checked (``check_batch_support``), never silently run online.

The run waits for its batches (polling, with a progress line per poll), rather than submitting
and returning: a Dagster step then materialises its partitions when their answers exist, with no
sensor to reconcile, and a killed step resumes from the stored batch ids.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cache import Cache, CachedEntry, CacheWriteError, in_batches, request_key
from .transport import cached_tokens_of
from .types import CallRequest, ModelConfig

__all__ = ["BATCH_PROVIDERS", "BatchLedger", "BatchOutcome", "batch_cost", "check_batch_support", "prefill"]

BATCH_PROVIDERS = ("openai/",)
"""Model prefixes whose endpoint speaks the OpenAI Files + Batches API."""

TERMINAL = frozenset({"completed", "expired", "failed", "cancelled"})
_log = logging.getLogger(__name__)

_LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    batch_id TEXT PRIMARY KEY,
    endpoint TEXT NOT NULL,
    keys TEXT NOT NULL,
    submitted REAL NOT NULL,
    state TEXT NOT NULL
);
"""


def check_batch_support(model: ModelConfig) -> None:
    """Raise ValueError when ``model`` asks for batch mode on a provider this module cannot batch."""
    if model.batch and not model.model.startswith(BATCH_PROVIDERS):
        raise ValueError(f"batch mode needs an OpenAI-compatible Batch API ({', '.join(BATCH_PROVIDERS)}*); "
                         f"{model.model!r} is not one: remove batch: true for it")


class BatchLedger:
    """Submitted batches, in the cache's SQLite file, so a re-run collects instead of re-submitting."""

    def __init__(self, path: Path):
        self.path = Path(path)
        with self._conn() as conn:
            conn.executescript(_LEDGER_SCHEMA)

    def _conn(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    def record(self, batch_id: str, endpoint: str, keys: Sequence[str]) -> None:
        with self._conn() as conn:
            conn.execute("INSERT OR REPLACE INTO batches VALUES (?, ?, ?, ?, 'submitted')",
                         (batch_id, endpoint, json.dumps(list(keys)), time.time()))

    def open_batches(self, endpoint: str) -> list[tuple[str, list[str]]]:
        with self._conn() as conn:
            rows = conn.execute("SELECT batch_id, keys FROM batches WHERE endpoint = ? AND state = 'submitted' "
                                "ORDER BY submitted", (endpoint,)).fetchall()
        return [(bid, json.loads(keys)) for bid, keys in rows]

    def close_batch(self, batch_id: str, state: str) -> None:
        with self._conn() as conn:
            conn.execute("UPDATE batches SET state = ? WHERE batch_id = ?", (state, batch_id))


@dataclass
class BatchOutcome:
    """What batch mode did for one set of calls (the online pass does the rest)."""

    submitted: list[str] = field(default_factory=list)
    """Batch ids submitted by this run."""
    resumed: list[str] = field(default_factory=list)
    """Batch ids found in the ledger (submitted by an earlier, interrupted run) and collected."""
    lines_sent: int = 0
    answered: int = 0
    """Lines stored in the cache (these calls will not be sent online)."""
    left_online: int = 0
    """Lines failed or expired in the batch: sent online by the normal path."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_error: CacheWriteError | None = None
    """The first failed write of a batch's answers (the gateway then sends nothing more)."""
    unstored: list[str] = field(default_factory=list)
    """Batch ids whose answers were not all stored: left open in the ledger, collected again by a re-run."""


def _endpoint(model: ModelConfig) -> str:
    return f"{model.model}|{model.api_base or ''}"


def batch_cost(model: str, prompt_tokens: int, completion_tokens: int, cached_prompt_tokens: int = 0) -> float:
    """USD at the provider's batch rates from litellm's local price map; half the online rate if absent.

    ``cached_prompt_tokens`` are priced at ``cache_read_input_token_cost_batches`` where the map has it,
    else at the batch input rate (never below what the provider may charge)."""
    from .transport import cost_of, litellm_module

    name = model.split("/", 1)[1] if model.startswith("openai/") else model
    prices = litellm_module().model_cost.get(name) or litellm_module().model_cost.get(model) or {}
    p, c = prices.get("input_cost_per_token_batches"), prices.get("output_cost_per_token_batches")
    if p is not None and c is not None:
        cached = min(max(0, cached_prompt_tokens), prompt_tokens)
        read = prices.get("cache_read_input_token_cost_batches", p)
        return (prompt_tokens - cached) * float(p) + cached * float(read) + completion_tokens * float(c)
    return 0.5 * cost_of(model, prompt_tokens, completion_tokens, cached_prompt_tokens)


def _messages(req: CallRequest) -> list[dict[str, str]]:
    return [{"role": m["role"], "content": m["content"]} for m in req.messages]


def _endpoint_url(model: ModelConfig) -> str:
    return (model.api_base or "https://api.openai.com/v1").rstrip("/")


def _headers(model: ModelConfig) -> dict[str, str]:
    """The key is read now, sent, and kept nowhere (never in the ledger, the cache or a log)."""
    key = os.environ.get(model.api_key_env) if model.api_key_env else os.environ.get("OPENAI_API_KEY")
    return {"Authorization": f"Bearer {key}"} if key else {}


def _line(key: str, model: ModelConfig, req: CallRequest) -> dict[str, Any]:
    from .transport import _sampling

    body = {"model": model.model.split("/", 1)[1], "messages": _messages(req), **_sampling(model)}
    return {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body}


async def _http(model: ModelConfig, method: str, path: str, **kw: Any) -> Any:
    """One request to the Files/Batches API with the gateway's retry policy (429, 5xx, timeouts)."""
    import httpx  # noqa: PLC0415

    from .retry import ProviderHTTPError, retry_after_of, retrying
    from .secrets import redact

    async for attempt in retrying(model.max_retries, model.max_total_wait_s):
        with attempt:
            async with httpx.AsyncClient(timeout=httpx.Timeout(model.timeout_s)) as client:
                resp = await client.request(method, _endpoint_url(model) + path, headers=_headers(model), **kw)
            if resp.status_code >= 400:
                # Providers echo the key in a 401 body: the text is redacted before it can reach a log or a step error.
                raise ProviderHTTPError(f"HTTP {resp.status_code} from {model.model} batch API {path}: "
                                        f"{redact(resp.text[:300], [model])}", status_code=resp.status_code,
                                        retry_after=retry_after_of(resp))
            return resp


async def _submit(model: ModelConfig, lines: list[dict[str, Any]]) -> str:
    data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")
    uploaded = await _http(model, "POST", "/files", data={"purpose": "batch"},
                           files={"file": ("interviewsim_batch.jsonl", data, "application/jsonl")})
    batch = await _http(model, "POST", "/batches", json={
        "input_file_id": uploaded.json()["id"], "endpoint": "/v1/chat/completions", "completion_window": "24h"})
    return str(batch.json()["id"])


async def _file_lines(model: ModelConfig, file_id: str | None) -> list[dict[str, Any]]:
    if not file_id:
        return []
    resp = await _http(model, "GET", f"/files/{file_id}/content")
    return [json.loads(line) for line in resp.text.splitlines() if line.strip()]


async def _wait(model: ModelConfig, batch_id: str, log: logging.Logger) -> dict[str, Any]:
    started = time.monotonic()
    while True:
        batch = (await _http(model, "GET", f"/batches/{batch_id}")).json()
        counts = batch.get("request_counts") or {}
        log.info("batch %s on %s: %s, %s/%s lines done, %.0f s", batch_id, model.name, batch.get("status"),
                 counts.get("completed", "?"), counts.get("total", "?"), time.monotonic() - started)
        if batch.get("status") in TERMINAL:
            return batch
        if time.monotonic() - started > model.batch_max_wait_s:
            raise TimeoutError(f"batch {batch_id} on {model.name} still {batch.get('status')} after "
                               f"{model.batch_max_wait_s:.0f} s; re-run to keep waiting (it is not resubmitted)")
        await asyncio.sleep(model.batch_poll_s)


async def _collect(model: ModelConfig, batch_id: str, wanted: dict[str, CallRequest], cache: Cache,
                   out: BatchOutcome, log: logging.Logger) -> None:
    batch = await _wait(model, batch_id, log)
    answered: set[str] = set()
    entries: list[tuple[str, CachedEntry]] = []
    for line in await _file_lines(model, batch.get("output_file_id")):
        key = line.get("custom_id")
        resp = line.get("response") or {}
        if key not in wanted or resp.get("status_code") != 200:
            continue
        try:
            body = resp["body"]
            text = body["choices"][0]["message"].get("content") or ""
        except (KeyError, IndexError, TypeError):
            continue  # unreadable line: left to the online path
        usage = body.get("usage") or {}
        pt, ct = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
        cached = cached_tokens_of(usage)
        cost = batch_cost(model.model, pt, ct, cached)
        req = wanted[key]
        entries.append((key, CachedEntry(raw=text, messages=tuple(_messages(req)), model=model.model,
                                         contract=req.contract, prompt_tokens=pt, completion_tokens=ct,
                                         cost_usd=cost, cached_prompt_tokens=cached)))
    stored, error = await asyncio.to_thread(_store, cache, entries)
    for key, entry in entries[:stored]:
        answered.add(key)
        out.answered += 1
        out.prompt_tokens += entry.prompt_tokens
        out.completion_tokens += entry.completion_tokens
        out.cost_usd += entry.cost_usd
    if error is not None:
        # The chat path's policy (Gateway.cache_error): nothing more is sent. Lines not stored stay
        # with the provider: the batch is left open in the ledger, and the re-run after space is
        # freed downloads its output again instead of paying for those calls.
        out.cache_error = out.cache_error or error
        if stored < len(entries):
            out.unstored.append(batch_id)
        log.error("batch %s on %s: %d of %d answers stored, then: %s", batch_id, model.name, stored,
                  len(entries), error)
        return
    missing = len(set(wanted) - answered)
    out.left_online += missing
    if missing:
        log.warning("batch %s on %s ended %s: %d of %d lines left to the online path", batch_id, model.name,
                    batch.get("status"), missing, len(wanted))


STORE_GROUP = 64
"""Batch answers per cache transaction: a group that meets a full disk fits the cache's reserve."""


def _store(cache: Cache, entries: Sequence[tuple[str, CachedEntry]]) -> tuple[int, CacheWriteError | None]:
    """Store ``entries`` in groups through ``Cache.put_many`` (the answers' full-disk path: the
    reserve, then stop); returns how many were stored and the first write error."""
    done = 0
    for group in in_batches(list(entries), STORE_GROUP):
        try:
            cache.put_many(group)
        except CacheWriteError as exc:
            return done + (len(group) if exc.stored else 0), exc
        done += len(group)
    return done, None


async def prefill(cache: Cache, pairs: Sequence[tuple[ModelConfig, CallRequest]],
                  log: logging.Logger | None = None) -> BatchOutcome:
    """Send the uncached first attempts of ``batch: true`` models as batches and cache the answers.

    Raises:
        ValueError: batch mode without a persistent cache (nothing could hold the answers), or a
            provider without a batch API.
    """
    log = log or _log
    out = BatchOutcome()
    todo = [(m, r) for m, r in pairs if m.batch]
    if not todo:
        return out
    if cache.path is None:
        raise ValueError("batch mode needs the persistent cache (the answers are collected into it)")
    ledger = BatchLedger(cache.path)
    by_endpoint: dict[str, tuple[ModelConfig, dict[str, CallRequest]]] = {}
    for model, req in todo:
        check_batch_support(model)
        key = request_key(model, req)
        if await asyncio.to_thread(cache.get_answer, key) is not None:
            continue
        by_endpoint.setdefault(_endpoint(model), (model, {}))[1].setdefault(key, req)  # identical calls once
    jobs = []
    for endpoint, (model, wanted) in by_endpoint.items():
        pending = dict(wanted)
        for batch_id, keys in ledger.open_batches(endpoint):
            mine = {k: pending.pop(k) for k in keys if k in pending}
            if mine:
                out.resumed.append(batch_id)
                jobs.append((model, batch_id, mine))
        for start in range(0, len(pending), model.batch_max_lines):
            chunk = dict(list(pending.items())[start:start + model.batch_max_lines])
            batch_id = await _submit(model, [_line(k, model, r) for k, r in chunk.items()])
            ledger.record(batch_id, endpoint, list(chunk))  # before waiting: a kill now resumes, never resubmits
            out.submitted.append(batch_id)
            out.lines_sent += len(chunk)
            log.info("batch %s submitted on %s: %d calls", batch_id, model.name, len(chunk))
            jobs.append((model, batch_id, chunk))

    async def one(model: ModelConfig, batch_id: str, wanted: dict[str, CallRequest]) -> None:
        await _collect(model, batch_id, wanted, cache, out, log)
        if batch_id not in out.unstored:
            try:
                ledger.close_batch(batch_id, "collected")
            except sqlite3.Error:
                pass  # a full disk: left open, the re-run collects it again (stored lines are hits)

    await asyncio.gather(*(one(*job) for job in jobs))
    return out
