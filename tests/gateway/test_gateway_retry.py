"""The retry classifier and policy: what is retried, how long we wait, when we stop."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time

import httpx
import pytest

from interviewsim_core.llm.retry import ProviderHTTPError, backoff_s, retry_after_of, retrying, should_retry
from interviewsim_core.llm.transport import litellm_module


def _resp(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://127.0.0.1/v1"))


def test_litellm_exceptions_are_classified():
    litellm = litellm_module()
    rl = litellm.RateLimitError("slow down", llm_provider="openai", model="m",
                                response=_resp(429, {"retry-after": "7"}))
    assert should_retry(rl) == should_retry(rl).__class__(True, "rate_limit", 7.0)
    assert should_retry(litellm.Timeout("t", model="m", llm_provider="openai")).kind == "timeout"
    assert should_retry(litellm.InternalServerError("x", llm_provider="openai", model="m")).kind == "server"
    assert should_retry(litellm.APIConnectionError("x", llm_provider="openai", model="m")).retry
    for fatal in (litellm.BadRequestError("bad", model="m", llm_provider="openai"),
                  litellm.AuthenticationError("no", llm_provider="openai", model="m"),
                  litellm.NotFoundError("gone", model="m", llm_provider="openai")):
        decision = should_retry(fatal)
        assert (decision.retry, decision.kind) == (False, "fatal"), type(fatal)


@pytest.mark.parametrize("exc, retry, kind", [
    (httpx.ConnectError("refused"), True, "connection"),
    (httpx.ReadTimeout("slow"), True, "timeout"),
    (asyncio.TimeoutError(), True, "timeout"),
    (ConnectionResetError(), True, "connection"),
    (ProviderHTTPError("x", status_code=503), True, "server"),
    (ProviderHTTPError("x", status_code=429, retry_after=2.5), True, "rate_limit"),
    (ProviderHTTPError("x", status_code=401), False, "fatal"),
    (ProviderHTTPError("x", status_code=404), False, "fatal"),
    (ProviderHTTPError("x", status_code=400), False, "fatal"),
    (ValueError("a bug"), False, "fatal"),
    (KeyError("a bug"), False, "fatal"),
])
def test_classifier_table(exc, retry, kind):
    decision = should_retry(exc)
    assert (decision.retry, decision.kind) == (retry, kind)


def test_retry_after_forms():
    assert retry_after_of(ProviderHTTPError("x", status_code=429, retry_after=2.5)) == 2.5
    assert retry_after_of(_resp(429, {"Retry-After": "3"})) == 3.0
    assert retry_after_of(_resp(429, {"retry-after-ms": "250"})) == 0.25
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_of(_resp(429, {"retry-after": future})) <= 31
    assert retry_after_of(_resp(429, {"retry-after": "soon"})) is None
    assert retry_after_of(ValueError("x")) is None


def test_backoff_is_bounded_full_jitter():
    rng = random.Random(1)
    for n in range(1, 12):
        values = [backoff_s(n, base=0.5, cap=8.0, rng=rng) for _ in range(200)]
        assert 0 <= min(values) and max(values) <= min(8.0, 0.5 * 2 ** (n - 1))
    assert len({round(backoff_s(5, rng=rng), 6) for _ in range(20)}) > 10  # jittered, not lock-step


async def _attempts(policy, fail_with, succeed_after: int | None = None) -> tuple[int, BaseException | None]:
    calls = 0
    try:
        async for attempt in policy:
            with attempt:
                calls += 1
                if succeed_after is None or calls <= succeed_after:
                    raise fail_with
    except BaseException as exc:  # noqa: BLE001
        return calls, exc
    return calls, None


async def test_policy_caps_attempts_and_stops_at_fatal():
    calls, exc = await _attempts(retrying(3, 10.0, base_s=0.001), ProviderHTTPError("x", status_code=500))
    assert calls == 4 and isinstance(exc, ProviderHTTPError)
    calls, exc = await _attempts(retrying(3, 10.0, base_s=0.001), ProviderHTTPError("x", status_code=401))
    assert calls == 1 and exc.status_code == 401
    calls, exc = await _attempts(retrying(3, 10.0, base_s=0.001), ProviderHTTPError("x", status_code=502), 2)
    assert calls == 3 and exc is None


async def test_policy_honours_retry_after_and_caps_total_wait():
    t0 = time.perf_counter()
    calls, exc = await _attempts(retrying(5, 10.0), ProviderHTTPError("x", status_code=429, retry_after=0.3), 1)
    assert exc is None and calls == 2 and time.perf_counter() - t0 >= 0.3
    # A provider asking for 30 s when the cap is 1 s: give up at once instead of sleeping.
    t0 = time.perf_counter()
    calls, exc = await _attempts(retrying(5, 1.0), ProviderHTTPError("x", status_code=429, retry_after=30))
    assert calls == 1 and isinstance(exc, ProviderHTTPError) and time.perf_counter() - t0 < 0.5
