"""Retry policy for provider calls: one classifier and one tenacity factory.

Retrying is policy, not scattered ``try/except``: ``should_retry`` decides from an exception
alone whether another try can help (rate limits, 5xx, timeouts, dropped connections) or not
(400/401/403/404: the same request will fail the same way), and ``retrying`` turns a
ModelConfig's caps into a tenacity ``AsyncRetrying``. A provider's Retry-After wins over our own
backoff because the provider knows when its window reopens; a retry whose sleep would push the
total past ``max_total_wait_s`` is not attempted, so one call never stalls a batch for long.
"""

from __future__ import annotations

import email.utils
import random
import time
from dataclasses import dataclass
from typing import Any, Callable, Literal

from tenacity import AsyncRetrying, RetryCallState

from ..errors import GatewayError

__all__ = ["RetryDecision", "ProviderHTTPError", "should_retry", "retry_after_of", "retrying", "backoff_s"]

RetryKind = Literal["rate_limit", "server", "timeout", "connection", "fatal"]


@dataclass(frozen=True)
class RetryDecision:
    """Whether to try again, why, and how long the provider asked us to wait (seconds), if it did."""

    retry: bool
    kind: RetryKind
    retry_after: float | None = None


class ProviderHTTPError(GatewayError):
    """A non-2xx answer on the direct OpenAI-compatible path, carrying what the classifier needs.

    Exists so the direct path and litellm's exceptions are classified by the same rules.
    """

    def __init__(self, message: str, *, status_code: int, retry_after: float | None = None):
        self.retry_after = retry_after
        super().__init__(message, status_code=status_code, retryable=status_code == 429 or status_code >= 500)


_TIMEOUT_NAMES = {"Timeout", "APITimeoutError", "TimeoutException", "ReadTimeout", "ConnectTimeout",
                  "WriteTimeout", "PoolTimeout", "TimeoutError", "ServerTimeoutError"}
_CONNECTION_NAMES = {"APIConnectionError", "ConnectError", "ReadError", "WriteError", "RemoteProtocolError",
                     "ConnectionError", "ConnectionResetError", "ConnectionRefusedError", "ServerDisconnectedError",
                     "ClientConnectionError", "ClientOSError", "ServiceUnavailableError"}


def _parse_retry_after(value: Any) -> float | None:
    """Seconds from a Retry-After value: delta-seconds, or an HTTP date (RFC 9110)."""
    if value is None:
        return None
    text = str(value).strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _headers_of(exc: BaseException) -> list[Any]:
    found = []
    response = getattr(exc, "response", None)
    if response is not None and getattr(response, "headers", None) is not None:
        found.append(response.headers)
    for attr in ("litellm_response_headers", "headers"):
        h = getattr(exc, attr, None)
        if h:
            found.append(h)
    return found


def retry_after_of(exc: BaseException) -> float | None:
    """The provider's requested wait in seconds, from the exception or its HTTP response, if any."""
    direct = getattr(exc, "retry_after", None)
    if isinstance(direct, (int, float)):
        return float(direct)
    for headers in _headers_of(exc):
        try:
            ms = headers.get("retry-after-ms")
            if ms is not None:
                return max(0.0, float(ms) / 1000.0)
            value = headers.get("retry-after") or headers.get("Retry-After")
        except (AttributeError, TypeError, ValueError):
            continue
        seconds = _parse_retry_after(value)
        if seconds is not None:
            return seconds
    return None


def _status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "provider_status_code"):
        code = getattr(exc, attr, None)
        if isinstance(code, int):
            return code
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    return code if isinstance(code, int) else None


def should_retry(exc: BaseException) -> RetryDecision:
    """Classify one failed attempt. Works on litellm/openai/httpx exceptions and ProviderHTTPError.

    Type names are matched rather than imported so this module never pulls in litellm.
    """
    names = {t.__name__ for t in type(exc).__mro__}
    if names & _TIMEOUT_NAMES:
        return RetryDecision(True, "timeout")
    status = _status_of(exc)
    if status == 429 or "RateLimitError" in names:
        return RetryDecision(True, "rate_limit", retry_after_of(exc))
    if status is not None and (status >= 500 or status == 408):
        return RetryDecision(True, "server", retry_after_of(exc))
    if status is not None and 400 <= status < 500:
        return RetryDecision(False, "fatal")
    if names & _CONNECTION_NAMES or isinstance(exc, (ConnectionError, OSError)):
        return RetryDecision(True, "connection")
    return RetryDecision(False, "fatal")


def backoff_s(attempt_number: int, *, base: float = 0.5, cap: float = 60.0, rng: random.Random | None = None) -> float:
    """Full-jitter exponential backoff: uniform in [0, min(cap, base * 2**(n-1))]; n starts at 1.

    Full jitter spreads the retries of a whole batch hit by one 429 storm instead of having
    them return in lock-step.
    """
    r = rng or random
    return r.uniform(0.0, min(cap, base * (2 ** max(0, attempt_number - 1))))


class _Wait:
    def __init__(self, base: float, cap: float):
        self.base, self.cap = base, cap

    def __call__(self, rs: RetryCallState) -> float:
        exc = rs.outcome.exception() if rs.outcome is not None else None
        decision = should_retry(exc) if exc is not None else None
        jitter = backoff_s(rs.attempt_number, base=self.base, cap=self.cap)
        if decision is not None and decision.retry_after is not None:
            # Honour the provider's window, plus a little jitter so a batch does not return at once.
            return decision.retry_after + min(jitter, 0.1 * max(decision.retry_after, 0.1))
        return jitter


class _Stop:
    def __init__(self, max_retries: int, max_total_wait_s: float):
        self.max_retries, self.max_total_wait_s = max_retries, max_total_wait_s

    def __call__(self, rs: RetryCallState) -> bool:
        if rs.attempt_number > self.max_retries:
            return True
        return rs.idle_for + rs.upcoming_sleep > self.max_total_wait_s


def retrying(max_retries: int, max_total_wait_s: float, *, base_s: float = 0.5, cap_s: float = 60.0,
             before_sleep: Callable[[RetryCallState], None] | None = None) -> AsyncRetrying:
    """A tenacity AsyncRetrying: up to ``max_retries`` extra attempts, total sleep capped, re-raising the last error.

    ``before_sleep`` runs only when a retry will really happen (for logging).
    """
    return AsyncRetrying(
        before_sleep=before_sleep,
        retry=lambda rs: rs.outcome is not None and rs.outcome.failed and should_retry(rs.outcome.exception()).retry,
        wait=_Wait(base_s, cap_s),
        stop=_Stop(max_retries, max_total_wait_s),
        reraise=True,
    )
