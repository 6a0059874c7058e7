"""Fault injection for in-process providers (the offline model), so the real retry and re-ask paths run in tests and CI.

A fault is drawn from a hash of (seed, request messages, retry attempt, fault kind), not from a
shared random stream: the same request at the same attempt always meets the same fault, whatever
order a concurrent batch runs in, so a failing test reproduces exactly.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["FaultSpec", "FaultKind", "draw_fault", "MALFORMED_TEXT"]

FaultKind = Literal["rate_limit", "timeout", "server_error", "malformed"]

MALFORMED_TEXT = "%% garbled offline output (fault injection) %%"
"""What a malformed answer looks like: valid text that no contract parser accepts."""


class FaultSpec(BaseModel):
    """Rates (probability per attempt, 0..1) of each injected fault on an in-process provider."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    malformed_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Answer with garbage text: exercises the re-ask path."""
    rate_limit_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Raise litellm.RateLimitError (429) carrying a Retry-After header."""
    timeout_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Raise litellm.Timeout at once (no real waiting, so tests stay fast)."""
    server_error_rate: float = Field(0.0, ge=0.0, le=1.0)
    """Raise litellm.InternalServerError (500)."""
    seed: int = 0
    retry_after_s: float = Field(0.05, ge=0.0)
    """The Retry-After the injected 429 asks for."""


def _unit(seed: int, kind: str, attempt: int, messages: Sequence[Mapping[str, Any]]) -> float:
    blob = json.dumps([seed, kind, attempt, [[m.get("role"), m.get("content")] for m in messages]],
                      sort_keys=True, ensure_ascii=False)
    return int.from_bytes(hashlib.sha256(blob.encode("utf-8")).digest()[:8], "big") / 2**64


def draw_fault(spec: FaultSpec | None, messages: Sequence[Mapping[str, Any]], attempt: int) -> FaultKind | None:
    """The fault this (request, retry attempt) meets under ``spec``, or None. Transport faults first."""
    if spec is None:
        return None
    for kind, rate in (("rate_limit", spec.rate_limit_rate), ("timeout", spec.timeout_rate),
                       ("server_error", spec.server_error_rate), ("malformed", spec.malformed_rate)):
        if rate > 0 and _unit(spec.seed, kind, attempt, messages) < rate:
            return kind  # type: ignore[return-value]
    return None
