"""The one path for every model call: cache, bounded concurrency, retries, re-asks, cost.

Generation, every judge, the builders and the premise judge all call ``Gateway`` so that one
policy decides what is asked twice (never, thanks to the cache), how hard a provider is pushed
(a semaphore per model endpoint), what a transient failure costs (retry.py) and what an output
that breaks its contract becomes (a bounded re-ask, then an ``invalid`` row with its raw text).
A single failed item never raises: it comes back as ``status="failed"`` with its error, and the
rest of the batch goes on.

Token and cost accounting: a ``CallResult`` carries the tokens and cost of the attempts that
produced it, cached or not, so a table re-built from the cache shows the same cost; ``stats``
counts only what this gateway actually spent.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import time
from dataclasses import dataclass, fields
from typing import Any, Awaitable, Callable, Literal, Sequence

from ..errors import ContractParseError
from .answer_writer import AnswerWriter
from .cache import Cache, CachedEntry, CacheWriteError, NullCache, cache_key, request_key
from .constraints import REFUSAL_STATUSES, constraint_for, is_in_process, note_refusal
from .faults import FaultSpec
from .limits import context_overflow, prompt_overflow, prompt_tokens
from .providers import RequestContext, plugin_for
from .retry import retrying, should_retry
from .secrets import RedactingFilter, redact
from .transport import Completion, call_direct, call_litellm, direct_eligible, loop_state, shared_runner
from .types import Attempt, CallRequest, CallResult, ModelConfig
from .wire import WireText

__all__ = ["Gateway", "GatewayStats", "REASK_TEMPLATE"]

REASK_TEMPLATE = (
    "Your answer broke the required format: {reason}. "
    "Reply again with only the answer in the exact format the instructions require, and nothing else."
)
"""The follow-up user message of a re-ask: names the breach so the model can fix that and only that."""

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GatewayStats:
    """What this gateway did since it was created (or last ``reset_stats``)."""

    calls_made: int = 0
    """Requests sent to providers, retries included."""
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    failed: int = 0
    """Items that ended ``failed`` (error after retries)."""
    invalid: int = 0
    """Items that ended ``invalid`` (every attempt broke its contract)."""
    retries: int = 0
    deduplicated: int = 0
    """Items answered by an identical request already in flight in this gateway (not sent again)."""
    lease_waits: int = 0
    """Calls that waited for another process's in-flight answer instead of paying for it again."""
    cache_write_errors: int = 0
    """Answers that could not be stored (kept in the results; see ``Gateway.cache_error``)."""


class _Ledger:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values = {f.name: 0 for f in fields(GatewayStats)}

    def add(self, **delta: float) -> None:
        with self._lock:
            for k, v in delta.items():
                self._values[k] += v

    def snapshot(self) -> GatewayStats:
        with self._lock:
            return GatewayStats(**self._values)  # type: ignore[arg-type]

    def reset(self) -> None:
        with self._lock:
            self._values = {k: 0 for k in self._values}


class _Failed(RuntimeError):
    """Internal: one attempt's call failed for good; carries what the result needs."""

    def __init__(self, error: str, calls: int):
        self.error, self.calls = error, calls
        super().__init__(error)


class _NotSent(_Failed):
    """Internal: the call was not sent because the cache cannot store its answer (``Gateway.cache_error``)."""


class _Refused(RuntimeError):
    """Internal: the server refused this call's output constraint (constraints.REFUSAL_STATUSES)."""

    def __init__(self, error: str, calls: int):
        self.error, self.calls = error, calls
        super().__init__(error)


class Gateway:
    """Runs CallRequests against configured models. See the module docstring for the policy.

    Args:
        cache: where outputs persist; ``None`` means no caching (``NullCache``).
        faults: fault injection, handed to in-process provider plugins such as the offline model
            (tests, demos of the failure paths); remote providers never see it.
        log: logger for retries and failures (never receives API keys).
        transport: ``"auto"`` posts OpenAI-compatible endpoints directly (see transport.py) and
            uses litellm for the rest; ``"litellm"`` sends every call through litellm.
    """

    def __init__(self, cache: Cache | None = None, faults: FaultSpec | None = None, log: logging.Logger | None = None,
                 *, transport: Literal["auto", "litellm"] = "auto"):
        self.cache: Cache = cache if cache is not None else NullCache()
        self.faults = faults
        self.log = log or _log
        if not any(isinstance(f, RedactingFilter) for f in self.log.filters):
            self.log.addFilter(RedactingFilter())
        self.transport = transport
        self._ledger = _Ledger()
        self._runner = shared_runner()
        self._pending: dict[tuple[int, str], asyncio.Future[CallResult]] = {}
        self._writer: AnswerWriter | None = None
        self.cache_error: CacheWriteError | None = None
        """The first failed cache write, if any (the answers were kept; the run should fail)."""
        self.last_batch = None
        """The ``BatchOutcome`` of the last run that used batch mode (ids submitted or resumed, lines answered)."""

    # -- public API ------------------------------------------------------------------------
    @property
    def stats(self) -> GatewayStats:
        return self._ledger.snapshot()

    def reset_stats(self) -> None:
        self._ledger.reset()

    def raise_for_cache_errors(self) -> None:
        """Raise the first ``CacheWriteError`` of this gateway, if a write failed.

        Call it after the batch's results are written: the answers were kept in memory and
        returned, but they are not in the cache, so a re-run would pay for them again. The CLI
        turns it into a non-zero exit.
        """
        if self.cache_error is not None:
            raise self.cache_error

    def run(self, model: ModelConfig, requests: Sequence[CallRequest]) -> list[CallResult]:
        """Run a batch for one model; results in request order. Safe from any thread, sync."""
        return self.run_many([(model, r) for r in requests])

    def run_many(self, pairs: Sequence[tuple[ModelConfig, CallRequest]]) -> list[CallResult]:
        """Run a batch mixing models in one event loop (each model keeps its own concurrency bound)."""
        if not pairs:
            return []
        if any(m.batch for m, _ in pairs):
            self._prefill_from_batches(pairs)
        return self._runner.run(self._arun_many(pairs))

    def embed(self, model: ModelConfig, texts: Sequence[str], batch_size: int = 256) -> Any:
        """Embed ``texts`` with ``model`` under this gateway's cache, leases, retry policy, redaction
        and ledger (``llm/embedding.py``): one float32 row of unit norm per text, in order.

        Raises ``embedding.EmbeddingError`` (a ``GatewayError``, message redacted) when a request fails
        for good: a caller needs every vector or none, so there is no per-item failed row here.
        """
        from .embedding import aembed  # noqa: PLC0415 - numpy-only callers of the gateway never need it

        return self._runner.run(aembed(self, model, texts, batch_size))

    def submit_many(self, pairs: Sequence[tuple[ModelConfig, CallRequest]]) -> "concurrent.futures.Future[list[CallResult]]":
        """Start a batch and return at once: the future's result is ``run_many``'s.

        For a caller that keeps many batches in flight and reacts to each as it completes (the
        streaming runner): every batch shares the same per-endpoint concurrency bounds, so the
        provider stays at its limit while the caller plans the next calls. Cancelling the future
        stops the calls not yet sent. Batch-mode models (``ModelConfig.batch``) are refused: their
        point is one provider batch for everything, which only ``run_many`` gives.
        """
        if any(m.batch for m, _ in pairs):
            raise ValueError("batch-mode models go through run_many (one provider batch), not submit_many")
        return self._runner.submit(self._arun_many(pairs))

    async def _arun_many(self, pairs: Sequence[tuple[ModelConfig, CallRequest]]) -> list[CallResult]:
        # A fixed pool of workers rather than one task per item: a partition may hold hundreds of
        # thousands of calls, and only about sum(max_concurrency) of them can be in flight anyway.
        bounds = {(m.model, m.api_base): m.max_concurrency for m, _ in pairs}
        width = min(len(pairs), max(64, 2 * sum(bounds.values())))
        results: list[CallResult | None] = [None] * len(pairs)
        order = iter(range(len(pairs)))

        async def _worker() -> None:
            for i in order:
                model, req = pairs[i]
                results[i] = await self.acall(model, req)

        await asyncio.gather(*(_worker() for _ in range(width)))
        return results  # type: ignore[return-value]

    def _prefill_from_batches(self, pairs: Sequence[tuple[ModelConfig, CallRequest]]) -> None:
        """Batch mode (llm/batch.py): answer the uncached calls of batch models into the cache first;
        the online pass below then reads them as hits, and sends only what the batch did not answer."""
        from .batch import prefill  # noqa: PLC0415

        if self.cache_error is not None:  # nothing is sent once the cache refused a write, batches neither
            return
        out = self._runner.run(prefill(self.cache, pairs, self.log))
        self._ledger.add(calls_made=out.lines_sent, prompt_tokens=out.prompt_tokens,
                         completion_tokens=out.completion_tokens, cost_usd=out.cost_usd)
        self.last_batch = out
        if out.cache_error is not None and self.cache_error is None:
            self.cache_error = out.cache_error  # the online pass then sends nothing (``_ask``)
            self.log.error("gateway: %s", self._redact(str(out.cache_error), None))

    async def acall(self, model: ModelConfig, req: CallRequest) -> CallResult:
        """One logical call: cache, then ask (with retries), then parse; re-ask on a contract breach.

        An identical request (same cache key) already in flight in this gateway is not sent
        again: this call waits for that one and shares its result.
        """
        started = time.perf_counter()
        try:
            messages = [{"role": m["role"], "content": m["content"]} for m in req.messages]
            wire = WireText(messages)  # contents escaped once, for the key and the request body
            key = request_key(model, req, wire=wire)
        except Exception as exc:  # noqa: BLE001 - e.g. a message without content: this item only
            return self._crashed(model, req, exc, started)
        slot = (id(asyncio.get_running_loop()), key)
        twin = self._pending.get(slot)
        if twin is not None:
            shared = await asyncio.shield(twin)
            self._ledger.add(deduplicated=1)
            return shared.model_copy(update={"calls_made": 0, "latency_s": time.perf_counter() - started})
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._pending[slot] = future
        try:
            try:
                result = await self._acall(model, req, started, messages, key, wire)
            except Exception as exc:  # noqa: BLE001 - one broken item must never sink the batch
                result = self._crashed(model, req, exc, started)
            future.set_result(result)
            return result
        finally:
            if not future.done():  # cancelled: let waiting twins fail with it
                future.cancel()
            self._pending.pop(slot, None)

    def _crashed(self, model: ModelConfig, req: CallRequest, exc: Exception, started: float) -> CallResult:
        self._ledger.add(failed=1)
        message = self._redact(f"{type(exc).__name__}: {exc}", model)
        self.log.warning("gateway: item %r on %s failed: %s", req.item_id, model.name, message)
        return CallResult(status="failed", error=message, model=model.name, latency_s=time.perf_counter() - started)

    def close(self) -> None:
        """Close the cache connection. The process-wide loop (transport.shared_runner) stays up:
        other gateways may be using it, and its thread is a daemon."""
        if self._writer is not None:
            self._writer.close()
        closer = getattr(self.cache, "close", None)
        if callable(closer):
            closer()

    def __enter__(self) -> "Gateway":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals -------------------------------------------------------------------------
    @staticmethod
    def _entry(completion: Completion, messages: tuple, model: ModelConfig, req: CallRequest) -> CachedEntry:
        return CachedEntry(raw=completion.text, messages=messages, model=model.model, contract=req.contract,
                           prompt_tokens=completion.prompt_tokens, completion_tokens=completion.completion_tokens,
                           cost_usd=completion.cost_usd, cached_prompt_tokens=completion.cached_prompt_tokens)

    async def _cache_io(self, fn, *args):
        """Run a cache read or write off the event loop.

        SQLite calls block (a write may wait for another process's lock); on the loop thread one
        waiting write would stall every call in flight. The no-op cache skips the thread hop.
        """
        if isinstance(self.cache, NullCache):
            return fn(*args)
        return await asyncio.to_thread(fn, *args)

    async def _acall(self, model: ModelConfig, req: CallRequest, started: float, messages: list[dict[str, str]],
                     first_key: str, wire: WireText) -> CallResult:
        attempts: list[Attempt] = []
        totals = {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, "calls_made": 0, "cache_hits": 0,
                  "cached_prompt_tokens": 0}
        raw = parse_error = None
        kind, shape = constraint_for(model, req)
        # The contract's cap applies to providers that generate tokens; an in-process model
        # (offline) writes its answer whole, so it gets none and its replies are never "truncated".
        default_cap = None if is_in_process(model.model) else req.max_tokens
        cap = model.max_tokens or default_cap
        sent_extra = dict(shape) if model.max_tokens is not None or not default_cap \
            else {**shape, "max_tokens": default_cap}
        shaped = {"constraint": kind}
        finish: str | None = None
        truncated = False
        for attempt in range(model.max_reasks + 1):
            if attempt:
                wire = WireText(messages)
            key = first_key if attempt == 0 else cache_key(model, messages, req.contract, req.contract_version,
                                                           req.sample_index, attempt, wire=wire, constraint=shape)
            entry = await self._lookup(model, req, key)
            hit = entry is not None
            finish = None
            if entry is None:
                too_long = prompt_overflow(model, messages)
                if too_long is not None:  # typed failure, nothing sent (llm/limits.py)
                    await self._cache_io(self.cache.release, key)
                    self._ledger.add(failed=1)
                    attempts.append(Attempt(error=too_long))
                    return CallResult(status="failed", error=too_long, raw=raw, parse_error=parse_error,
                                      attempts=tuple(attempts), model=model.name, cache_key=first_key,
                                      latency_s=time.perf_counter() - started, **shaped, **totals)
                while True:
                    async def persist(completion: Completion, key: str = key, sent: tuple = tuple(messages),
                                      wire: WireText = wire) -> None:
                        await self._store(key, self._entry(completion, sent, model, req), wire)

                    try:
                        completion, calls = await self._ask(model, messages, req, persist, wire, sent_extra, kind)
                        break
                    except _Refused as refusal:
                        # The server will not take this constraint: remember it, step down once, send again.
                        await self._cache_io(self.cache.release, key)
                        totals["calls_made"] += refusal.calls
                        note_refusal(model, kind)
                        self.log.warning("gateway: %s refused the %s constraint (%s); sending %s from now on",
                                         model.name, kind, self._redact(refusal.error, model),
                                         constraint_for(model, req)[0])
                        kind, shape = constraint_for(model, req)
                        sent_extra = {**shape, **({k: v for k, v in sent_extra.items() if k == "max_tokens"})}
                        shaped = {"constraint": kind}
                        key = cache_key(model, messages, req.contract, req.contract_version, req.sample_index,
                                        attempt, wire=wire, constraint=shape)
                        if attempt == 0:
                            first_key = key
                        entry = await self._lookup(model, req, key)
                        if entry is not None:
                            break
                    except _Failed as failure:
                        await self._cache_io(self.cache.release, key)
                        totals["calls_made"] += failure.calls
                        self._ledger.add(failed=1)
                        attempts.append(Attempt(error=failure.error))
                        return CallResult(status="failed", error=failure.error, raw=raw, parse_error=parse_error,
                                          attempts=tuple(attempts), model=model.name, cache_key=first_key,
                                          latency_s=time.perf_counter() - started, **shaped, **totals)
            if entry is None:
                totals["calls_made"] += calls
                finish = completion.finish_reason
                entry = self._entry(completion, tuple(messages), model, req)
                self._ledger.add(prompt_tokens=completion.prompt_tokens,
                                 completion_tokens=completion.completion_tokens, cost_usd=completion.cost_usd)
            else:
                hit = True
                totals["cache_hits"] += 1
                self._ledger.add(cache_hits=1)
            totals["prompt_tokens"] += entry.prompt_tokens
            totals["completion_tokens"] += entry.completion_tokens
            totals["cached_prompt_tokens"] += entry.cached_prompt_tokens
            totals["cost_usd"] += entry.cost_usd
            raw = entry.raw
            # Cut at its cap: said by the provider, or (a cached reply keeps no finish reason) by its size.
            truncated = finish == "length" or (finish is None and cap is not None and entry.completion_tokens >= cap)
            shaped = {"constraint": kind, "finish_reason": finish, "truncated": truncated}
            try:
                value = self._parse(req, raw)
            except ContractParseError as exc:
                parse_error = exc.reason
                if truncated:
                    # Not a format breach: the reply was cut at its cap. Re-asking at the same cap
                    # would be cut again, so the row says so and no re-ask is spent on it.
                    parse_error = f"truncated at max_tokens={cap} (finish_reason={finish or 'unknown'}): {parse_error}"
                    attempts.append(Attempt(raw=raw, parse_error=parse_error, cache_hit=hit))
                    break
                attempts.append(Attempt(raw=raw, parse_error=parse_error, cache_hit=hit))
                messages = [*messages, {"role": "assistant", "content": raw},
                            {"role": "user", "content": REASK_TEMPLATE.format(reason=parse_error)}]
                continue
            attempts.append(Attempt(raw=raw, cache_hit=hit))
            return CallResult(status="ok", value=value, raw=raw, attempts=tuple(attempts), model=model.name,
                              cache_key=first_key, latency_s=time.perf_counter() - started, **shaped, **totals)
        self._ledger.add(invalid=1)
        return CallResult(status="invalid", raw=raw, parse_error=parse_error, attempts=tuple(attempts),
                          model=model.name, cache_key=first_key, latency_s=time.perf_counter() - started,
                          **shaped, **totals)

    async def _store(self, key: str, entry: CachedEntry, wire: WireText | None = None) -> None:
        """Write one answer; a failed write keeps the answer (the caller gets it) and is recorded.

        Through the cache's own writer thread (answer_writer.py), not the look-up pool: an answer
        that arrived is stored within one commit, whatever the look-ups of other calls are doing.
        """
        try:
            if isinstance(self.cache, NullCache):
                return
            await asyncio.wrap_future(self._answer_writer().submit(key, entry, wire))
        except CacheWriteError as exc:
            if exc.stored:  # in the space of the cache's reserve: kept, but nothing more may be sent
                if self.cache_error is None:
                    self.cache_error = exc
                    self.log.error("gateway: %s", self._redact(str(exc), None))
                return
            self._ledger.add(cache_write_errors=1)
            if self.cache_error is None:
                self.cache_error = exc
                self.log.error("gateway: %s; answers are kept for this run's tables but will be paid for "
                               "again by a re-run", self._redact(str(exc), None))
            try:
                await self._cache_io(self.cache.release, key)
            except Exception:  # noqa: BLE001 - the lease expires or is taken over after we exit
                pass

    def _answer_writer(self) -> AnswerWriter:
        """The writer of this gateway's cache (a new one if ``cache`` was replaced)."""
        writer = self._writer
        if writer is None or writer.cache is not self.cache:
            writer = self._writer = AnswerWriter(self.cache)
        return writer

    async def _lookup(self, model: ModelConfig, req: CallRequest, key: str) -> CachedEntry | None:
        """The cached answer of ``key``, or None with the lease on it taken (ours to ask).

        A miss then a lease then a re-check were three hops to a worker thread; they are one
        (``_first_look``), which is a miss's usual path. Waiting for another process is ``_claim``.
        """
        if isinstance(self.cache, NullCache):
            return self.cache.get_answer(key)
        if self.cache_error is not None:
            # Nothing will be sent (``_ask``): a lease is a write, and a few hundred of them would
            # take the space the answers still in flight need on a full disk.
            return await self._cache_io(self.cache.get_answer, key)
        ttl = model.timeout_s * (model.max_retries + 1) + model.max_total_wait_s
        try:
            entry, leased = await asyncio.to_thread(self._first_look, key, ttl)
        except CacheWriteError as exc:  # cannot even lease: ask anyway, the write will tell
            if self.cache_error is None:
                self.cache_error = exc
                self.log.error("gateway: %s", self._redact(str(exc), None))
            return None
        if entry is not None or leased:
            return entry
        return await self._claim(model, req, key, ttl, lease_first=False)

    def _first_look(self, key: str, ttl: float) -> tuple[CachedEntry | None, bool]:
        """(the answer, False) on a hit; (None, True) when the lease is ours; (None, False) when
        another live process holds it. Runs on a worker thread."""
        entry = self.cache.get_answer(key)
        if entry is not None:
            return entry, False
        if not self.cache.lease(key, ttl):
            return None, False
        # Re-check: the answer may have landed between our miss and the lease.
        entry = self.cache.get_answer(key)
        if entry is not None:
            self.cache.release(key)
        return entry, entry is None

    async def _claim(self, model: ModelConfig, req: CallRequest, key: str, ttl: float,
                     lease_first: bool = True) -> CachedEntry | None:
        """Take the lease on ``key`` (None: ours to ask), or wait for another process's answer.

        Another live process asking the same key right now will store its answer; paying for it
        twice is what the lease prevents. If that process fails (lease released) or dies (lease
        taken over), this one asks after all. ``lease_first=False``: the first try at the lease
        was made (and refused) by ``_lookup``.
        """
        delay, told = 0.05, False
        while True:
            try:
                if lease_first and await self._cache_io(self.cache.lease, key, ttl):
                    # Re-check: the answer may have landed between our miss and the lease.
                    entry = await self._cache_io(self.cache.get_answer, key)
                    if entry is not None:
                        await self._cache_io(self.cache.release, key)
                    return entry
                lease_first = True
            except CacheWriteError as exc:  # cannot even lease: ask anyway, the write will tell
                if self.cache_error is None:
                    self.cache_error = exc
                    self.log.error("gateway: %s", self._redact(str(exc), None))
                return None
            if not told:
                told = True
                self._ledger.add(lease_waits=1)
                holder = getattr(self.cache, "lease_holder", lambda _k: None)(key)
                self.log.warning("gateway: item %r on %s is being asked by another process %s; waiting for its answer",
                              req.item_id, model.name, holder or "")
            await asyncio.sleep(delay)
            delay = min(1.0, delay * 2)
            entry = await self._cache_io(self.cache.get_answer, key)
            if entry is not None:
                return entry

    @staticmethod
    def _parse(req: CallRequest, raw: str) -> Any:
        if req.parser is not None:
            return req.parser(raw)
        if not raw.strip():
            raise ContractParseError(req.contract, "empty output", raw)
        return raw

    async def _ask(self, model: ModelConfig, messages: list[dict[str, str]], req: CallRequest,
                   persist: Callable[[Completion], Awaitable[None]], wire: WireText,
                   extra: dict[str, Any] | None = None, kind: str = "off") -> tuple[Completion, int]:
        """Send one attempt with the retry policy, inside the model's concurrency bound.

        ``persist`` (the cache write) runs before the slot is released: a kill then loses at most
        one answer per slot, so a resumed run repeats no more calls than the concurrency limit.
        ``extra``: this call's constraint and default cap (``_acall``); a constrained request the
        server refuses (``constraints.REFUSAL_STATUSES``) raises ``_Refused`` at once, unretried.

        The timeout is the transport's, on the request itself: it starts when the slot is taken
        and the request is sent, never while the call waits for the semaphore. On a timeout httpx
        closes that connection before a retry is sent, so a retry never stacks on an abandoned
        request (a one-slot server is told to stop by the hang-up; see docs/CONFIG.md "A local server").
        """
        semaphore = self._semaphore(model)
        direct = self.transport == "auto" and direct_eligible(model)
        plugin = None if direct else plugin_for(model.model)
        calls = 0

        async def once() -> Completion:
            nonlocal calls
            async with semaphore:
                if self.cache_error is not None:
                    # An answer the cache cannot keep is paid for again by the re-run that follows the
                    # fix: once one write failed, nothing more is sent (issue 20, data root full).
                    raise _NotSent(self._redact(f"not sent: {self.cache_error}; the answers already paid for "
                                                "are kept, no further call is made until it can be written",
                                                None), calls)
                calls += 1
                self._ledger.add(calls_made=1, retries=int(calls > 1))
                # Each transport enforces model.timeout_s on the request itself; no outer
                # wait_for, which would also count time the loop spent on other calls' CPU work.
                try:
                    if direct:
                        completion = await call_direct(model, messages, wire=wire, shape=extra)
                    else:
                        meta = None if plugin is None else plugin.metadata(RequestContext(
                            req.contract, req.contract_version, req.sample_index, calls - 1, self.faults))
                        completion = await call_litellm(model, messages, metadata=meta, shape=extra)
                except Exception as exc:  # noqa: BLE001 - re-raised; only a refused constraint is changed
                    if kind != "off" and getattr(exc, "status_code", None) in REFUSAL_STATUSES \
                            and context_overflow(str(exc)) is None:
                        raise _Refused(f"{type(exc).__name__}: {exc}"[:300], calls) from exc
                    raise
                await persist(completion)
                return completion

        try:
            try:
                # The happy path skips tenacity's bookkeeping (measurable at 100+ calls/s).
                completion = await once()
            except Exception as first:  # noqa: BLE001 - handed to the retry policy just below
                replay = [first]
                policy = retrying(model.max_retries, model.max_total_wait_s,
                                  before_sleep=lambda rs: self._before_retry(model, req, rs))
                async for attempt in policy:
                    with attempt:
                        if replay:  # tenacity's attempt 1 is the failure we already have
                            raise replay.pop()
                        completion = await once()
        except (_Refused, _NotSent):
            raise
        except Exception as exc:  # noqa: BLE001 - classified below; anything uncaught fails the item only
            overflow = context_overflow(str(exc), prompt_tokens(messages))
            if overflow is not None:  # the server's context-length error: the same typed failure as ours
                raise _Failed(overflow, calls) from exc
            decision = should_retry(exc)
            status = getattr(exc, "status_code", None)
            text = f"{type(exc).__name__}{f' ({status})' if status else ''} after {calls} attempt(s): {exc}"
            text = self._redact(text, model)
            self.log.warning("gateway: %s item %r: %s [%s]", model.name, req.item_id, text, decision.kind)
            raise _Failed(text, calls) from exc
        return completion, calls

    def _before_retry(self, model: ModelConfig, req: CallRequest, state: Any) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        if exc is not None:
            d = should_retry(exc)
            self.log.info("gateway: retrying %s item %r after %s in %.2fs (retry_after=%s)", model.name,
                          req.item_id, d.kind, state.upcoming_sleep, d.retry_after)

    def _semaphore(self, model: ModelConfig) -> asyncio.Semaphore:
        """One bound per provider endpoint (model string + api_base) per event loop.

        Keyed by endpoint rather than full identity: two judges that differ only in temperature
        hit the same provider limit. The first config seen for an endpoint sizes the bound.
        """
        state = loop_state()
        key = (model.model, model.api_base)
        sem = state.semaphores.get(key)
        if sem is None:
            sem = state.semaphores[key] = asyncio.Semaphore(max(1, model.max_concurrency))
        return sem

    @staticmethod
    def _redact(text: str, model: ModelConfig | None) -> str:
        """Providers echo credentials in errors: scrub every key the process knows (secrets.py)."""
        return redact(text, [model] if model is not None else [])
