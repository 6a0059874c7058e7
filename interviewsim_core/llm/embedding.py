"""Embedding requests under the gateway's policy: the same cache, leases, retries, redaction and ledger.

Embeddings are model calls like any other: they cost money, providers fail them the same ways
(401 with the key echoed, 429, a server that accepts and never answers) and two runs on one cache
must not pay for them twice. So they go through the objects chat calls use rather than a second,
weaker path: the gateway's cache (one row per text, table ``embeddings``), a lease per request so
a concurrent process waits for the vectors instead of asking again, ``retry.retrying`` with the
model's own ``timeout_s`` / ``max_retries`` / ``max_total_wait_s``, the per-endpoint concurrency
bound, ``secrets.redact`` on every error text, and the gateway's ``stats``.

Unlike a chat item, a failed embedding cannot become a row of its own: the caller (retrieval, the
report's overlap section) needs every vector or none, so a failure raises ``EmbeddingError``, a
``GatewayError`` whose message is already redacted and which carries no provider exception (it is
raised outside the handler, so it has no ``__context__``: a traceback printed by Dagster or the
CLI shows our text, not the provider's, which may repeat the key).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import logging
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

import numpy as np

from ..errors import GatewayError
from .cache import Cache, CacheWriteError, NullCache, embedding_key
from .retry import ProviderHTTPError, retry_after_of, retrying, should_retry
from .transport import _DIRECT_PREFIXES, _client, _direct_key, cost_of, litellm_module, loop_state

if TYPE_CHECKING:
    from .types import ModelConfig

__all__ = ["EmbeddingError", "embedding_identity", "aembed"]


class GatewayPolicy(Protocol):
    """What the embedding path uses of the gateway that calls it (``Gateway.embed``): its cache, ledger,
    logger, per-endpoint bounds and redaction. Named here, not imported: the gateway imports this module,
    so this one knows the gateway only by what it is handed."""

    cache: Cache
    cache_error: CacheWriteError | None
    log: logging.Logger
    _ledger: Any

    def _semaphore(self, model: ModelConfig) -> asyncio.Semaphore: ...

    def _redact(self, text: str, model: ModelConfig | None) -> str: ...

    async def _cache_io(self, fn: Callable[..., Any], *args: Any) -> Any: ...


class EmbeddingError(GatewayError):
    """An embedding request failed for good (after the retry policy); the message names the model,
    the error class, the HTTP status and the attempts, with every known credential masked."""


def embedding_identity(model: ModelConfig) -> dict[str, Any]:
    """What changes an embedding model's vectors: part of each text's cache key.

    ``dimensions`` (from ``extra_params``) keeps its place in the key's first three fields so
    vectors cached before the embedding path went through the gateway still match.
    """
    extra = dict(model.extra_params)
    identity: dict[str, Any] = {"model": model.model, "api_base": model.api_base,
                                "dimensions": extra.pop("dimensions", None)}
    if extra:
        identity["extra_params"] = extra
    return identity


def _normalise(rows: list[Any], n: int, model: ModelConfig) -> list[np.ndarray]:
    def get(item: Any, name: str) -> Any:
        return item[name] if isinstance(item, dict) else getattr(item, name)

    rows = sorted(rows, key=lambda d: get(d, "index"))
    if len(rows) != n:
        raise EmbeddingError(f"{model.name}: the server returned {len(rows)} embeddings for {n} texts")
    out = []
    for d in rows:
        v = np.asarray(get(d, "embedding"), dtype=np.float32)
        norm = float(np.linalg.norm(v))
        out.append(v / norm if norm > 0 else v)  # unit norm: cosine similarity is a dot product
    return out


def _direct(model: ModelConfig) -> bool:
    """An OpenAI-compatible server named by ``api_base``: posted directly, like chat calls (transport.py).

    Not through litellm there because its OpenAI client retries a timed-out embedding request on its
    own, whatever ``max_retries`` says: one configured attempt became two requests and twice the wait.
    """
    return model.api_base is not None and model.model.startswith(_DIRECT_PREFIXES)


async def _post(model: ModelConfig, batch: list[str]) -> dict[str, Any]:
    """One attempt as a plain POST to ``{api_base}/embeddings`` on the server's shared HTTP pool."""
    import httpx  # noqa: PLC0415

    assert model.api_base is not None
    body = {"model": model.model.split("/", 1)[1], "input": batch, **model.extra_params}
    headers = {"Content-Type": "application/json"}
    key = _direct_key(model)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    response = await _client(loop_state(), model.api_base, 0).post(
        model.api_base.rstrip("/") + "/embeddings", json=body, headers=headers, timeout=httpx.Timeout(model.timeout_s))
    if response.status_code >= 400:
        raise ProviderHTTPError(f"HTTP {response.status_code} from {model.model}: {response.text[:300]}",
                                status_code=response.status_code, retry_after=retry_after_of(response))  # type: ignore[arg-type]
    try:
        return response.json()
    except ValueError as exc:
        raise ProviderHTTPError(f"unreadable response from {model.model}: {exc}", status_code=502) from None


async def _send(gw: GatewayPolicy, model: ModelConfig, batch: list[str]) -> list[np.ndarray]:
    """One embedding request with the model's retry policy, inside its concurrency bound."""
    direct = _direct(model)
    kwargs: dict[str, Any] = {"timeout": model.timeout_s, **model.extra_params}
    if model.api_base:
        kwargs["api_base"] = model.api_base
    if model.api_key_env and os.environ.get(model.api_key_env):
        kwargs["api_key"] = os.environ[model.api_key_env]
    attempts = 0
    response = None

    async def once() -> Any:
        nonlocal attempts
        attempts += 1
        gw._ledger.add(calls_made=1, retries=int(attempts > 1))
        async with gw._semaphore(model):
            request = (_post(model, batch) if direct else
                       litellm_module().aembedding(model=model.model, input=batch, max_retries=0, **kwargs))
            # The HTTP client enforces the timeout; the outer bound is for a client that does not
            # honour it on some path (a stuck server must never hold a run for long).
            return await asyncio.wait_for(request, timeout=model.timeout_s * 1.5 + 1.0)

    failure: EmbeddingError | None = None
    try:
        async for attempt in retrying(model.max_retries, model.max_total_wait_s):
            with attempt:
                response = await once()
    except Exception as exc:  # noqa: BLE001 - classified, redacted and re-raised typed
        gw._ledger.add(failed=1)
        decision = should_retry(exc)
        status = getattr(exc, "status_code", None)
        detail = str(exc) or f"no answer within {model.timeout_s:g} s"
        text = gw._redact(f"embedding model {model.name}: {type(exc).__name__}{f' ({status})' if status else ''} "
                          f"after {attempts} attempt(s): {detail}", model)
        gw.log.warning("gateway: %s [%s]", text, decision.kind)
        failure = EmbeddingError(text, status_code=status if isinstance(status, int) else None,
                                 retryable=decision.retry)
    if failure is not None:
        # Raised outside the handler: no __context__ holding the provider's exception (and its text,
        # which may repeat the key) for a traceback printer to follow.
        raise failure
    data = response if isinstance(response, dict) else {"data": response.data, "usage": getattr(response, "usage", None)}
    usage = data.get("usage")
    tokens = int((usage.get("prompt_tokens") if isinstance(usage, dict) else getattr(usage, "prompt_tokens", 0)) or 0)
    cost = None if isinstance(response, dict) else (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    gw._ledger.add(prompt_tokens=tokens, cost_usd=float(cost if cost is not None else cost_of(model.model, tokens, 0)))
    return _normalise(list(data.get("data") or []), len(batch), model)


def _batch_key(model: ModelConfig, keys: Sequence[str]) -> str:
    """The lease of one request: two processes that miss the same texts contend for the same key."""
    return "embedding-batch:" + hashlib.sha256(repr((model.model, model.api_base, list(keys))).encode()).hexdigest()


async def _claim(gw: GatewayPolicy, model: ModelConfig, lease_key: str, keys: list[str], ttl: float
                 ) -> dict[str, np.ndarray] | None:
    """None when the lease is ours (we send); the vectors when another process stored them meanwhile."""
    cache = gw.cache
    delay, told = 0.05, False
    while True:
        if await gw._cache_io(cache.lease, lease_key, ttl):
            found = await gw._cache_io(cache.get_vectors, keys)  # landed between our miss and the lease?
            if len(found) == len(keys):
                await gw._cache_io(cache.release, lease_key)
                return found
            return None
        if not told:
            told = True
            gw._ledger.add(lease_waits=1)
            gw.log.warning("gateway: %d text(s) for %s are being embedded by another process; waiting for its "
                           "vectors", len(keys), model.name)
        await asyncio.sleep(delay)
        delay = min(1.0, delay * 2)
        found = await gw._cache_io(cache.get_vectors, keys)
        if len(found) == len(keys):
            return found


async def aembed(gw: GatewayPolicy, model: ModelConfig, texts: Sequence[str], batch_size: int = 256) -> np.ndarray:
    """One L2-normalised float32 row per text; texts in the cache (or being embedded by another
    process holding the lease) are not sent again, duplicates are sent once.

    Raises:
        EmbeddingError: a request failed after the retry policy (message redacted).
    """
    texts = list(texts)
    if not texts:
        return np.zeros((0, 0), dtype=np.float32)
    identity = embedding_identity(model)
    keys = [embedding_key(identity, t) for t in texts]
    unique = dict(zip(keys, texts))
    cache = gw.cache
    found = await gw._cache_io(cache.get_vectors, list(unique))
    gw._ledger.add(cache_hits=len(found))
    missing = [(k, t) for k, t in unique.items() if k not in found]
    ttl = model.timeout_s * (model.max_retries + 1) + model.max_total_wait_s
    shared = not isinstance(cache, NullCache)
    for start in range(0, len(missing), batch_size):
        batch = missing[start:start + batch_size]
        bkeys = [k for k, _ in batch]
        lease_key = _batch_key(model, bkeys)
        if shared:
            theirs = await _claim(gw, model, lease_key, bkeys, ttl)
            if theirs is not None:
                found.update(theirs)
                continue
        try:
            if gw.cache_error is not None:
                # The chat path's fail-fast (Gateway._ask): what the cache cannot keep is paid again.
                raise EmbeddingError(gw._redact(f"embedding model {model.name}: not sent: {gw.cache_error}; no "
                                                "further call is made until it can be written", None))
            vectors = await _send(gw, model, [t for _, t in batch])
            fresh = dict(zip(bkeys, vectors))
            try:
                await gw._cache_io(cache.put_vectors, model.model, fresh)
            except CacheWriteError as exc:
                if not exc.stored:  # paid vectors are kept for this run; a re-run pays again
                    gw._ledger.add(cache_write_errors=1)
                if gw.cache_error is None:
                    gw.cache_error = exc
                    gw.log.error("gateway: %s", gw._redact(str(exc), None))
        finally:
            if shared:
                await gw._cache_io(cache.release, lease_key)
        found.update(fresh)
    return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)
