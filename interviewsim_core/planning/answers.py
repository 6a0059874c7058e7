"""Stand-in answers for planning: what lets a downstream step build its prompts without a model.

A planned step needs its upstream *answers* only where a later step's prompts are made from them
(a judge's prompt holds the generation it judges; MCQ items come from atomic items; premise pass 2
reads pass 1). Three sources, in this order:

1. the answer already in the model-call cache (a real earlier generation): the downstream prompt
   keys are then the very keys the run will look up, so a finished evaluation plans 0 to send;
2. for a generation, a synthetic answer of the person's mean training-answer size, unique per
   request: a real model answers two different prompts differently, so the judges' prompts of two
   methods never collide by accident (the offline model's extractive answers did, and hid calls);
3. otherwise the offline model's responder for the contract, called directly (no gateway, no
   litellm): a valid answer in the contract's shape, from small prompts (atomic items, MCQ items,
   premise passes, the fact summary), so the number of items derived from it is the offline model's.

Every answer goes through the request's own strict parser, as the gateway would.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from ..llm.types import CallRequest, CallResult

_FILLER = ("well", "that", "was", "a", "long", "time", "ago", "and", "we", "talked", "about", "it", "often",
           "with", "the", "people", "who", "were", "there", "then")


@lru_cache(maxsize=64)
def _filler(words: int) -> str:
    return " ".join(_FILLER[i % len(_FILLER)] for i in range(max(1, words - 1)))


def synthetic_generation(key: str, words: int) -> str:
    """A generated answer of ``words`` words, distinct per request key (the key's first 16 hex digits lead)."""
    return f"Ref{key[:16]} {_filler(words)}."


def result_of(req: CallRequest, raw: str, key: str, model: str) -> CallResult:
    """``raw`` parsed by the request's own parser: ok with its value, or invalid with the error kept."""
    try:
        value: Any = req.parser(raw) if req.parser is not None else raw
    except Exception as exc:  # noqa: BLE001 - any parse failure is an invalid output, as in the gateway
        return CallResult(status="invalid", raw=raw, parse_error=str(exc), model=model, cache_key=key)
    return CallResult(status="ok", value=value, raw=raw, model=model, cache_key=key)


def offline_answer(req: CallRequest) -> str:
    from ..offline import respond

    return respond(list(req.messages), req.contract)
