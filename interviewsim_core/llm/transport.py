"""How one attempt reaches a provider: litellm (every provider) or a direct OpenAI-compatible POST.

Why two paths: measured on this machine (benchmarks/bench_gateway.py, C=32, L=200 ms), bare
``litellm.acompletion`` spends ~14 ms of CPU per call on an OpenAI-compatible endpoint (logging
objects, per-call cost lookup, the openai SDK's request building) against ~2-5 ms for a plain
httpx POST, which caps one process at about half of what the endpoint can serve. Turning off
litellm's callbacks and logging did not close that gap, so ``openai/`` and ``hosted_vllm/``
models that name an ``api_base`` are posted with small ``httpx.AsyncClient`` pools per server and
event loop (see ``POOL_CONNECTIONS``);
litellm is still used for every other provider (including in-process plugins, see providers.py)
and for cost data.
``Gateway(transport="litellm")`` sends everything through litellm.

Both paths return the same ``Completion`` and raise exceptions the retry classifier understands.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Awaitable, Mapping, Sequence, TypeVar

from .retry import ProviderHTTPError, retry_after_of
from .secrets import RedactingFilter, provider_key_env
from .types import ModelConfig
from .wire import WireText, request_body

__all__ = ["Completion", "litellm_module", "cost_of", "direct_eligible", "call_litellm", "call_direct",
           "LoopRunner", "POOL_CONNECTIONS", "loop_state", "shared_runner"]

T = TypeVar("T")

_DIRECT_PREFIXES = ("openai/", "hosted_vllm/")
# Body fields an OpenAI-compatible server accepts as-is; anything else in extra_params may be a
# litellm-specific option, so such a model takes the litellm path instead.
_DIRECT_EXTRA_OK = frozenset({"stop", "presence_penalty", "frequency_penalty", "logit_bias", "user", "n",
                              "reasoning_effort", "top_k", "min_p", "repetition_penalty", "logprobs",
                              "top_logprobs", "stream_options", "service_tier", "parallel_tool_calls"})

_setup_lock = threading.Lock()
_litellm: Any = None


@dataclass(frozen=True)
class Completion:
    """One successful provider answer."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those the provider served from its prefix cache (priced at the cached rate)."""
    finish_reason: str | None = None
    """Why the reply ended, as the provider said (``stop``, ``length``, ...); None if it did not say."""


def litellm_module() -> Any:
    """Import litellm once, offline-safe and quiet. Every litellm use in the package goes through here.

    LITELLM_LOCAL_MODEL_COST_MAP must be set before the import or litellm fetches its price list
    from the network at import time.
    """
    global _litellm
    if _litellm is not None:
        return _litellm
    with _setup_lock:
        if _litellm is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            os.environ.setdefault("LITELLM_LOG", "ERROR")
            import logging  # noqa: PLC0415
            import warnings  # noqa: PLC0415

            # litellm's own TypedDicts trip a pydantic notice on first use; it is noise to our users.
            warnings.filterwarnings("ignore", message=".*is using the `ReadOnly` qualifier", category=UserWarning)
            import litellm  # noqa: PLC0415

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            litellm.turn_off_message_logging = True
            litellm.disable_streaming_logging = True
            litellm.set_verbose = False
            # The gateway keeps its own ledger; litellm's callbacks only cost CPU per call here.
            litellm.callbacks = []
            litellm.success_callback = []
            litellm.failure_callback = []
            litellm._async_success_callback = []
            litellm._async_failure_callback = []
            for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
                logging.getLogger(name).setLevel(logging.ERROR)
                logging.getLogger(name).addFilter(RedactingFilter())
            _litellm = litellm
    return _litellm


@functools.lru_cache(maxsize=1)
def _bundled_prices() -> dict[str, Any]:
    """litellm's bundled price table (the one ``litellm_module`` makes it use), read without importing litellm."""
    import importlib.util  # noqa: PLC0415
    import json  # noqa: PLC0415

    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = os.path.join(os.path.dirname(spec.origin), "model_prices_and_context_window_backup.json")
    try:
        with open(path, "rb") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _surely_unpriced(model: str) -> bool:
    """True when litellm would find no price for ``model``, known without importing it.

    ``import litellm`` costs ~3 s of CPU, once per process (12% of a short run's CPU, issue 13),
    and a direct-path model on a custom server (``openai/<served name>``, ``hosted_vllm/...``) has
    no price anyway. Conservative: only those prefixes, no ``ft:``-style names (litellm prices a
    fine-tune as its base model), neither the full nor the bare name (nor lower-cased) in the
    bundled table, and litellm not already imported (prices registered at run time live there).
    Anything else asks litellm, as before.
    """
    if _litellm is not None or not model.startswith(_DIRECT_PREFIXES) or ":" in model:
        return False
    prices = _bundled_prices()
    if not prices:
        return False
    bare = model.split("/", 1)[1]
    return not any(name in prices for name in {model, bare, model.lower(), bare.lower()})


@functools.lru_cache(maxsize=256)
def _rates(model: str) -> tuple[float, float]:
    """(USD per prompt token, USD per completion token) from litellm's local price table; 0 if unknown."""
    if _surely_unpriced(model):
        return 0.0, 0.0
    litellm = litellm_module()
    try:
        p, _ = litellm.cost_per_token(model=model, prompt_tokens=1_000_000, completion_tokens=0)
        _, c = litellm.cost_per_token(model=model, prompt_tokens=0, completion_tokens=1_000_000)
        return float(p) / 1_000_000, float(c) / 1_000_000
    except Exception:  # noqa: BLE001 - unknown models and custom servers have no price: cost 0
        return 0.0, 0.0


@functools.lru_cache(maxsize=256)
def cached_rate(model: str) -> float | None:
    """USD per prompt token read from the provider's prefix cache (``cache_read_input_token_cost``), or None."""
    if _surely_unpriced(model):
        return None
    cost = litellm_module().model_cost
    prices = cost.get(model) or cost.get(model.split("/", 1)[-1]) or {}
    rate = prices.get("cache_read_input_token_cost")
    return None if rate is None else float(rate)


def cost_of(model: str, prompt_tokens: int, completion_tokens: int, cached_prompt_tokens: int = 0) -> float:
    """Cost in USD from litellm's price data (never the network); 0.0 when the model has no price.

    ``cached_prompt_tokens`` (part of ``prompt_tokens``) are priced at the model's cached rate when
    the price map has one. Rates are looked up once per model string; tiered (long-context) prices
    are not modelled.
    """
    p, c = _rates(model)
    cached = min(max(0, cached_prompt_tokens), prompt_tokens)
    read = cached_rate(model) if cached else None
    read = p if read is None else read
    return (prompt_tokens - cached) * p + cached * read + completion_tokens * c


def cached_tokens_of(usage: Any) -> int:
    """Cached prompt tokens in a provider's usage block (a dict or litellm's object), 0 if none.

    OpenAI (and litellm's normalised usage) report ``prompt_tokens_details.cached_tokens``;
    Anthropic's ``cache_read_input_tokens`` is kept by litellm on the usage object too.
    """
    def get(obj: Any, name: str) -> Any:
        return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)

    if usage is None:
        return 0
    details = get(usage, "prompt_tokens_details")
    n = get(details, "cached_tokens") if details is not None else None
    if not n:
        n = get(usage, "cache_read_input_tokens")
    try:
        return int(n or 0)
    except (TypeError, ValueError):
        return 0


def direct_eligible(model: ModelConfig) -> bool:
    """True when a model can be posted straight to its OpenAI-compatible ``api_base``."""
    return (model.api_base is not None and model.model.startswith(_DIRECT_PREFIXES)
            and set(model.extra_params) <= _DIRECT_EXTRA_OK)


def _sampling(model: ModelConfig, shape: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The body's sampling fields: the model's, then ``shape`` (one call's constraint and default
    ``max_tokens`` from its contract, see ``Gateway._ask``), then ``extra_params``. A model's own
    ``max_tokens`` or ``response_format`` wins over the contract's."""
    params: dict[str, Any] = {}
    for name in ("temperature", "top_p", "max_tokens", "seed", "response_format"):
        value = getattr(model, name)
        if value is not None:
            params[name] = value
    for name, value in (shape or {}).items():
        params.setdefault(name, value)
    params.update(model.extra_params)
    return params


def _api_key(model: ModelConfig) -> str | None:
    """Read at call time only, so the key is never held by a config, a cache row or a log line."""
    return os.environ.get(model.api_key_env) if model.api_key_env else None


def _direct_key(model: ModelConfig) -> str | None:
    """The key the direct path sends: the configured one, else the variable litellm itself would
    read for this provider (OPENAI_API_KEY for ``openai/``), so both paths authenticate alike."""
    if model.api_key_env:
        return _api_key(model)
    env = provider_key_env(model.model)
    return os.environ.get(env) if env else None


CACHE_CONTROL_PREFIXES = ("anthropic/",)
"""Providers that cache a prompt prefix only when asked (``cache_control``); OpenAI and Gemini cache
byte-identical prefixes on their own, which the prompt builders guarantee (static context first)."""


def with_cache_control(model: ModelConfig, messages: Sequence[Mapping[str, str]]) -> list[dict[str, Any]]:
    """``messages`` as sent to ``model``: for providers with explicit cache control, the system message
    (the static part every prompt of a contract, or of a personality, starts with) marked cacheable,
    in the content-part form Anthropic reads. The provider caches the prefix up to the mark (Anthropic:
    only from 1,024 tokens on); a question-independent context in the user message is not marked.

    Transport only: the cache key is computed from the plain messages, so marking changes no key.
    """
    out = [dict(m) for m in messages]
    if model.model.startswith(CACHE_CONTROL_PREFIXES):
        for m in out:
            if m.get("role") == "system" and isinstance(m.get("content"), str):
                m["content"] = [{"type": "text", "text": m["content"], "cache_control": {"type": "ephemeral"}}]
    return out


async def call_litellm(model: ModelConfig, messages: Sequence[Mapping[str, str]], *,
                       metadata: dict[str, Any] | None = None, shape: Mapping[str, Any] | None = None) -> Completion:
    """One attempt through ``litellm.acompletion``; litellm's own retries are off (ours are in retry.py).

    ``grammar`` is llama.cpp's field, which litellm does not carry: it goes as ``extra_body``."""
    litellm = litellm_module()
    kwargs: dict[str, Any] = dict(_sampling(model, shape))
    if "grammar" in kwargs:
        kwargs["extra_body"] = {**kwargs.get("extra_body", {}), "grammar": kwargs.pop("grammar")}
    if model.api_base:
        kwargs["api_base"] = model.api_base
    key = _api_key(model)
    if key:
        kwargs["api_key"] = key
    if metadata:
        kwargs["metadata"] = metadata
    # drop_params: a provider without a parameter (e.g. no `seed`) drops it instead of refusing the call.
    response = await litellm.acompletion(model=model.model, messages=with_cache_control(model, messages),
                                         timeout=model.timeout_s,
                                         max_retries=0, num_retries=0, drop_params=True, **kwargs)
    choice = response.choices[0]
    text = choice.message.content or ""
    finish = getattr(choice, "finish_reason", None)
    usage = getattr(response, "usage", None)
    pt = int(getattr(usage, "prompt_tokens", 0) or 0)
    ct = int(getattr(usage, "completion_tokens", 0) or 0)
    cached = cached_tokens_of(usage)
    cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
    if cost is None:
        cost = cost_of(model.model, pt, ct, cached)
    return Completion(text=text, prompt_tokens=pt, completion_tokens=ct, cost_usd=float(cost),
                      cached_prompt_tokens=cached, finish_reason=None if finish is None else str(finish))


POOL_CONNECTIONS = 8
"""Most requests one HTTP pool of the direct path carries at once (so most connections it holds).

httpcore's pool walks all its connections twice per request, and for every idle one counts them
all again (quadratic) and asks its socket whether the peer hung up. With one pool of 64+
connections and a provider that is not saturated (so many are idle), that walk was half of the
client's CPU per call (py-spy, issue 13). So each server gets pools of ``POOL_CONNECTIONS``: a
request in flight holds a request id (``_RequestIds``) and posts on pool ``id // POOL_CONNECTIONS``.
The walk stays short whatever the concurrency, keep-alive is kept, and a pool is never the limit.
Pools are per server (``api_base``), not per model: one adapter per personality on one vLLM server
shares the server's pools instead of leaving a set of idle sockets behind per personality.
"""


class _RequestIds:
    """Ids of the requests in flight to one server: a request takes the id released last (its
    pool's connections are the warmest), or a new one; so ``n`` requests in flight use ids < n."""

    def __init__(self) -> None:
        self._free: list[int] = []
        self._next = 0

    def take(self) -> int:
        if self._free:
            return self._free.pop()
        self._next += 1
        return self._next - 1

    def give(self, rid: int) -> None:
        self._free.append(rid)


@dataclass
class _LoopState:
    """Per-event-loop resources: semaphores and HTTP clients must not cross loops."""

    semaphores: dict[tuple[str, str | None], asyncio.Semaphore] = field(default_factory=dict)
    clients: dict[tuple[str, int], Any] = field(default_factory=dict)
    request_ids: dict[str, _RequestIds] = field(default_factory=dict)


_states: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopState]" = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def loop_state() -> _LoopState:
    loop = asyncio.get_running_loop()
    with _states_lock:
        state = _states.get(loop)
        if state is None:
            state = _states[loop] = _LoopState()
    return state


@functools.lru_cache(maxsize=1)
def _ssl_context() -> Any:
    """The process's one TLS context (the CA bundle parsed once), shared by every pool of every loop:
    a context only configures the connections made from it, none of which it holds."""
    import httpx  # noqa: PLC0415

    return httpx.create_ssl_context()


def _client(state: _LoopState, server: str, pool: int) -> Any:
    """HTTP pool number ``pool`` of ``server`` on this loop (see POOL_CONNECTIONS)."""
    client = state.clients.get((server, pool))
    if client is None:
        import httpx  # noqa: PLC0415

        limits = httpx.Limits(max_connections=POOL_CONNECTIONS, max_keepalive_connections=POOL_CONNECTIONS)
        client = state.clients[(server, pool)] = httpx.AsyncClient(limits=limits, timeout=None,
                                                                   verify=_ssl_context())
    return client


def warm_up() -> None:
    """Do now the one-time work of this process's first direct call, for a process that waits for its
    work before calling (the action worker, while its command registers and plans).

    That work is importing the HTTP client (httpx, httpcore, and the asyncio backend of anyio, which
    anyio imports when first used) and the thread pool the cache's I/O runs on, parsing the CA bundle
    and reading the bundled price table. Done by
    the first call, it ran on the gateway's thread while the scheduler's thread held the interpreter
    planning the next nodes, and each import step waited for it: the first request reached the server
    1.3-1.9 s after its submission (py-spy dump of the worker, issue 30)."""
    from concurrent.futures import ThreadPoolExecutor  # noqa: F401, PLC0415 - the cache's I/O runs on one (to_thread)

    import anyio  # noqa: PLC0415
    import httpcore  # noqa: F401, PLC0415
    import httpx  # noqa: F401, PLC0415

    anyio.run(anyio.sleep, 0)  # imports anyio's asyncio backend, as httpcore's first request would
    _ssl_context()
    _bundled_prices()


async def close_clients(state: _LoopState) -> None:
    clients, state.clients = list(state.clients.values()), {}
    for client in clients:
        await client.aclose()


async def call_direct(model: ModelConfig, messages: Sequence[Mapping[str, str]], *,
                      wire: WireText | None = None, shape: Mapping[str, Any] | None = None) -> Completion:
    """One attempt as a plain POST to ``{api_base}/chat/completions`` on one of the server's small
    pools (see POOL_CONNECTIONS). ``wire``: the messages' escaped contents if the caller has them
    (the gateway does, from the cache key)."""
    import httpx  # noqa: PLC0415

    assert model.api_base is not None
    body = request_body(model.model.split("/", 1)[1], wire if wire is not None else WireText(messages),
                        _sampling(model, shape))
    headers = {"Content-Type": "application/json"}
    key = _direct_key(model)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = model.api_base.rstrip("/") + "/chat/completions"
    state = loop_state()
    ids = state.request_ids.get(model.api_base)
    if ids is None:
        ids = state.request_ids[model.api_base] = _RequestIds()
    rid = ids.take()
    try:
        response = await _client(state, model.api_base, rid // POOL_CONNECTIONS).post(
            url, content=body, headers=headers, timeout=httpx.Timeout(model.timeout_s))
    finally:
        ids.give(rid)
    if response.status_code >= 400:
        detail = response.text[:300]
        raise ProviderHTTPError(f"HTTP {response.status_code} from {model.model}: {detail}",
                                status_code=response.status_code, retry_after=retry_after_of(response))  # type: ignore[arg-type]
    try:
        data = response.json()
        text = data["choices"][0]["message"].get("content") or ""
        finish = data["choices"][0].get("finish_reason")
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderHTTPError(f"unreadable response from {model.model}: {exc}", status_code=502) from exc
    usage = data.get("usage") or {}
    pt = int(usage.get("prompt_tokens") or 0)
    ct = int(usage.get("completion_tokens") or 0)
    cached = cached_tokens_of(usage)
    return Completion(text=text, prompt_tokens=pt, completion_tokens=ct, cost_usd=cost_of(model.model, pt, ct, cached),
                      cached_prompt_tokens=cached, finish_reason=None if finish is None else str(finish))


class LoopRunner:
    """A private event loop in a daemon thread, so sync callers (Dagster asset bodies, scripts,
    notebooks with their own running loop) can run gateway batches without owning a loop.

    Reused across batches so the HTTP client's connections and litellm's clients stay warm.
    Re-created after a fork (threads do not survive one).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = -1
        self._atexit = False

    def _ensure(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid() or not (self._thread and self._thread.is_alive()):
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def _main() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                self._thread = threading.Thread(target=_main, name="interviewsim-gateway", daemon=True)
                self._thread.start()
                ready.wait()
                self._loop, self._pid = loop, os.getpid()
                if not self._atexit:
                    # Stop the loop thread before interpreter teardown: a daemon thread frozen
                    # mid-import at exit deadlocks litellm's client finalisers (seen as a hang).
                    atexit.register(self.close)
                    self._atexit = True
            return self._loop

    def run(self, coro: Awaitable[T]) -> T:
        return self.submit(coro).result()

    def submit(self, coro: Awaitable[T]) -> "concurrent.futures.Future[T]":
        """Start ``coro`` on the loop and return at once; cancelling the future cancels the coroutine."""
        loop = self._ensure()
        if threading.current_thread() is self._thread:
            raise RuntimeError("Gateway.run called from inside the gateway's own loop; use acall")
        return asyncio.run_coroutine_threadsafe(coro, loop)  # type: ignore[arg-type]

    def close(self) -> None:
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = None
            if loop is None or self._pid != os.getpid():
                return

        async def _shutdown() -> None:
            # Calls still running (a run interrupted by Ctrl-C): cancelled and awaited here, so the
            # interpreter's exit does not destroy them pending (a "Task was destroyed" traceback).
            # Only this project's tasks: a library's own background task (litellm's logging worker)
            # may not end on a cancel, and is left as it was.
            tasks = [t for t in asyncio.all_tasks(loop) if t is not asyncio.current_task()
                     and "interviewsim_core" in getattr(getattr(t.get_coro(), "cr_code", None), "co_filename", "")]
            for t in tasks:
                t.cancel()
            if tasks:
                await asyncio.wait(tasks, timeout=5)
            state = _states.get(loop)
            if state is not None:
                await close_clients(state)

        asyncio.run_coroutine_threadsafe(_shutdown(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(10)


_shared = LoopRunner()


def shared_runner() -> LoopRunner:
    """The process-wide loop every Gateway and LiteLLMEmbedder runs on.

    One loop per process means one HTTP connection pool, one concurrency bound per model
    endpoint across all gateways of the process (Dagster may build several), and one home for
    litellm's global logging worker, which misbehaves when driven from several loops.
    """
    return _shared
