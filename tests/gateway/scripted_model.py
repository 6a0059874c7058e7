"""A scripted model for gateway tests: replies chosen by prompt content, usable as the fake
server's ``reply`` and as the offline provider's responder.

The "contract" here is a tiny JSON shape (``{"score": <1..5>}``) so the gateway's re-ask and
invalid paths are exercised by a real parser that raises ContractParseError.
"""

from __future__ import annotations

import json
from typing import Any

from interviewsim_core.errors import ContractParseError
from interviewsim_core.llm.types import CallRequest

CONTRACT = "toy_score"
VERSION = "1+1"


def parse_score(raw: str) -> int:
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ContractParseError(CONTRACT, f"not JSON ({exc.msg})", raw) from None
    if not isinstance(data, dict) or set(data) != {"score"}:
        raise ContractParseError(CONTRACT, "expected exactly the key 'score'", raw)
    if not isinstance(data["score"], int) or not 1 <= data["score"] <= 5:
        raise ContractParseError(CONTRACT, "score must be an integer 1..5", raw)
    return data["score"]


def scripted_reply(messages: list[dict[str, Any]]) -> str:
    """``always-bad`` never complies; ``fix-on-reask`` complies only once told of the breach;
    anything else answers a valid score derived from the prompt length."""
    first_user = next(m["content"] for m in messages if m["role"] == "user")
    reasked = any(m["role"] == "assistant" for m in messages)
    if "always-bad" in first_user:
        return "I think it is a four."
    if "fix-on-reask" in first_user and not reasked:
        return "score: 4"
    return json.dumps({"score": 1 + len(first_user) % 5})


def toy_request(text: str, sample_index: int = 0, item_id: str = "") -> CallRequest:
    return CallRequest(messages=({"role": "system", "content": "Reply with {\"score\": n}."},
                                 {"role": "user", "content": text}),
                       contract=CONTRACT, contract_version=VERSION, parser=parse_score,
                       sample_index=sample_index, item_id=item_id or text)
