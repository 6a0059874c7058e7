"""Strict JSON reading shared by the JSON-shaped contracts (CS, FC, fact summary, MCQ generation).

A judge's reply is accepted only when it is exactly one JSON object, bare or inside one Markdown
code fence (```json or a bare ```), because models fence often and the seed allows it; anything
else (prose around the object, a second object, duplicate keys, NaN) would let a sloppy reply be
read as a score, so it is a ``ContractParseError`` carrying the raw text.

Key order inside an object is not significant (JSON objects are unordered and providers' JSON
modes reorder keys); array order is, and the callers check it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Collection, NoReturn

from ..errors import ContractParseError
from ._guards import Instructions, echo_reason, reject_echo, string_leaves

# One fence around the whole reply: ```json / ```JSON / ``` on its own line, the object, ``` last.
_FENCE = re.compile(r"\A```(?:json)?[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```\Z", re.DOTALL | re.IGNORECASE)


class _Reject(ValueError):
    """Internal: a JSON-level rule broken while decoding (duplicate key, non-finite number)."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Reject(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constant(name: str) -> NoReturn:
    raise _Reject(f"non-standard JSON constant {name}")


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_no_constant)


def fail(contract: str, reason: str, raw: str) -> NoReturn:
    """Raise the typed parse error; a helper so every contract words its failures the same way."""
    raise ContractParseError(contract, reason, raw)


def unfence(raw: str) -> str:
    """The reply without surrounding whitespace and without one enclosing Markdown fence, if present."""
    text = raw.strip()
    m = _FENCE.match(text)
    return m.group("body").strip() if m else text


def load_object(raw: str, contract: str, instructions: Instructions | None = None) -> dict[str, Any]:
    """Decode a reply that must be exactly one JSON object (optionally fenced).

    With ``instructions``, the echo rule (``_guards``) runs too: on every string in the object, and
    on a reply that is not JSON at all, so that a copied prompt is reported as a copy (which a re-ask
    can name) rather than only as "not JSON".

    Raises:
        ContractParseError: not a string, empty, not JSON, trailing text, duplicate keys,
            NaN/Infinity, a top-level value that is not an object, or an echo of the instructions.
    """
    if not isinstance(raw, str):
        fail(contract, f"reply must be text, got {type(raw).__name__}", str(raw))
    body = unfence(raw)
    if not body:
        fail(contract, "empty reply", raw)
    try:
        value = _DECODER.decode(body)  # decode() rejects any text after the value ("Extra data")
    except _Reject as exc:
        fail(contract, str(exc), raw)
    except json.JSONDecodeError as exc:
        reason = f"not one JSON object: {exc.msg} at line {exc.lineno} column {exc.colno}"
        echo = echo_reason(raw, instructions) if instructions is not None else None
        fail(contract, f"{reason}; {echo}" if echo else reason, raw)
    if not isinstance(value, dict):
        fail(contract, f"top-level JSON value must be an object, got {type(value).__name__}", raw)
    if instructions is not None:
        reject_echo(contract, string_leaves(value), raw, instructions)
    return value


def require_keys(obj: dict[str, Any], expected: Collection[str], contract: str, raw: str, where: str = "object") -> None:
    """Exactly the expected keys: a missing key and an additional key are both contract breaches."""
    missing = [k for k in expected if k not in obj]
    extra = sorted(k for k in obj if k not in expected)
    if missing:
        fail(contract, f"{where} is missing field(s) {missing}", raw)
    if extra:
        fail(contract, f"{where} has additional field(s) {extra}", raw)


def require_text(value: Any, field: str, contract: str, raw: str) -> str:
    """A non-blank string, returned stripped (surrounding whitespace carries no meaning)."""
    if not isinstance(value, str):
        fail(contract, f"{field} must be a string, got {type(value).__name__}", raw)
    if not value.strip():
        fail(contract, f"{field} must not be blank", raw)
    return value.strip()


def require_int(value: Any, field: str, lo: int, hi: int, contract: str, raw: str) -> int:
    """An integer in [lo, hi]; ``true`` and ``4.0`` are not integers here (bool subclasses int in Python)."""
    if isinstance(value, bool) or not isinstance(value, int):
        fail(contract, f"{field} must be an integer, got {type(value).__name__} {value!r}", raw)
    if not lo <= value <= hi:
        fail(contract, f"{field} must be between {lo} and {hi}, got {value}", raw)
    return value


def require_choice(value: Any, field: str, choices: Collection[str], contract: str, raw: str) -> str:
    """Exactly one of ``choices``, case-sensitive and unstripped: no synonyms, no recasing."""
    if not isinstance(value, str):
        fail(contract, f"{field} must be a string, got {type(value).__name__}", raw)
    if value not in choices:
        fail(contract, f"{field} must be one of {list(choices)}, got {value!r}", raw)
    return value
