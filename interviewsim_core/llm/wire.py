"""A call's message texts as JSON string literals, escaped once and shared by the cache key and the body.

Why: a Chrono-1000 prompt is ~700 KB. Escaping it as a JSON string took ~2.2 ms with ``json``'s
non-ASCII encoder, and each call did it twice: for its cache key (``canonical_json``, UTF-8 kept)
and for its request body (httpx 0.28 encodes with ``ensure_ascii=False`` too). ``json``'s ASCII
encoder escapes the same text in ~1 ms and gives the same characters for ASCII text without DEL
(the only ASCII character the two encoders escape differently), so ``json_string`` uses it then;
``WireText`` escapes each message once per call for both uses (issue 13).
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Mapping, Sequence

__all__ = ["WireText", "json_string", "request_body"]


def json_string(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)`` for a ``str``, via the faster encoder when that is equal."""
    if text.isascii() and "\x7f" not in text:  # isascii is O(1) in CPython; DEL: see the module docstring
        return encode_basestring_ascii(text)
    return encode_basestring(text)


class WireText:
    """The JSON literal of each message's content (``None`` for a content that is not a ``str``),
    computed on first use. Holds the messages it was made from; build a new one for new messages."""

    __slots__ = ("messages", "_literals")

    def __init__(self, messages: Sequence[Mapping[str, Any]]):
        self.messages = messages
        self._literals: list[str | None] | None = None

    def literals(self) -> list[str | None]:
        if self._literals is None:
            self._literals = [json_string(m["content"]) if type(m["content"]) is str else None for m in self.messages]
        return self._literals


def _body_json(value: Any) -> str:
    """What httpx's ``json=`` sends (compact, UTF-8 kept, NaN refused), for the parts not pre-escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def request_body(model_name: str, wire: WireText, params: Mapping[str, Any]) -> bytes:
    """The chat-completions JSON body ``{"model", "messages", **params}``, with the contents pre-escaped.

    Parses to the same object as ``json.dumps({"model": model_name, "messages": [...], **params})``.
    A message with fields other than role and content is encoded whole, as httpx would.
    """
    parts = ['{"model":', _body_json(model_name), ',"messages":[']
    for i, (m, literal) in enumerate(zip(wire.messages, wire.literals(), strict=True)):
        if i:
            parts.append(",")
        if literal is None or set(m) != {"role", "content"}:
            parts.append(_body_json(dict(m)))
        else:
            parts += ['{"role":', _body_json(m["role"]), ',"content":', literal, "}"]
    parts.append("]")
    rest = {k: v for k, v in params.items() if k not in ("model", "messages")}
    if rest:
        parts += [",", _body_json(rest)[1:-1]]
    parts.append("}")
    return "".join(parts).encode("utf-8")
