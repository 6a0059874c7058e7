"""A call's message texts as JSON string literals, escaped once and shared by the cache key and the body.

Why: a Chrono-1000 prompt is ~700 KB. Escaping it as a JSON string took ~2.2 ms with ``json``'s
non-ASCII encoder, and each call did it twice: for its cache key (``canonical_json``, UTF-8 kept)
and for its request body (httpx 0.28 encodes with ``ensure_ascii=False`` too). ``json``'s ASCII
encoder escapes the same text in ~1 ms and gives the same characters for ASCII text without DEL
(the only ASCII character the two encoders escape differently), so ``json_string`` uses it then;
``WireText`` escapes each message once per call for both uses (issue 13).

Most of a long prompt is a prefix shared by many calls (a personality's Chrono context in every
one of its questions). A prompt builder names such a prefix once (``remember_prefix``); a text
that starts with a remembered prefix then reuses that prefix's escaped form and escapes only the
rest. JSON escaping maps each character on its own, so the pieces joined are the same literal.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Mapping, Sequence

__all__ = ["JsonLiteral", "WireText", "json_literal", "json_string", "remember_prefix", "request_body"]

PREFIX_MIN_CHARS = 4096
"""Shorter prefixes are not worth remembering (escaping 4 KB costs a few microseconds)."""
PREFIX_SLOTS = 16
"""Prefixes remembered at once, least recently used dropped (a few personalities x methods in flight;
at Chrono-1000 each costs ~1.4 MB: the prefix and its escaped bytes)."""

JsonLiteral = tuple[bytes, ...]
"""The UTF-8 bytes of a JSON string literal, in pieces to be hashed or joined in order (a 700 KB
text is not copied again just to glue a remembered prefix to the rest)."""

_prefixes: "OrderedDict[str, bytes]" = OrderedDict()
_prefix_lock = threading.Lock()


def _escape(text: str) -> str:
    if text.isascii() and "\x7f" not in text:  # isascii is O(1) in CPython; DEL: see the module docstring
        return encode_basestring_ascii(text)
    return encode_basestring(text)


def remember_prefix(prefix: str) -> None:
    """Note that many upcoming message texts start with ``prefix`` (escaped once, here)."""
    if len(prefix) < PREFIX_MIN_CHARS:
        return
    with _prefix_lock:
        if prefix in _prefixes:
            _prefixes.move_to_end(prefix)
            return
    try:
        opened = _escape(prefix)[:-1].encode("utf-8")  # the literal without its closing quote
    except UnicodeEncodeError:  # a lone surrogate: such a prompt fails where it is keyed, as before
        return
    with _prefix_lock:
        _prefixes[prefix] = opened
        while len(_prefixes) > PREFIX_SLOTS:
            _prefixes.popitem(last=False)


def json_literal(text: str) -> JsonLiteral:
    """``json.dumps(text, ensure_ascii=False).encode()`` in pieces: the faster encoder when its
    output is equal, and a remembered prefix's escaped form reused."""
    if len(text) >= PREFIX_MIN_CHARS and _prefixes:
        with _prefix_lock:
            best = max((p for p in _prefixes if text.startswith(p)), key=len, default=None)
            opened = None if best is None else _prefixes.get(best)
        if best is not None and opened is not None:
            return opened, _escape(text[len(best):])[1:].encode("utf-8")
    return (_escape(text).encode("utf-8"),)


def json_string(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)`` for a ``str`` (``json_literal`` joined, as text)."""
    return b"".join(json_literal(text)).decode("utf-8")


class WireText:
    """The JSON literal of each message's content (``None`` for a content that is not a ``str``),
    computed on first use. Holds the messages it was made from; build a new one for new messages."""

    __slots__ = ("messages", "_literals")

    def __init__(self, messages: Sequence[Mapping[str, Any]]):
        self.messages = messages
        self._literals: list[JsonLiteral | None] | None = None

    def literals(self) -> list[JsonLiteral | None]:
        if self._literals is None:
            self._literals = [json_literal(m["content"]) if type(m["content"]) is str else None for m in self.messages]
        return self._literals


def _body_json(value: Any) -> bytes:
    """What httpx's ``json=`` sends (compact, UTF-8 kept, NaN refused), for the parts not pre-escaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def request_body(model_name: str, wire: WireText, params: Mapping[str, Any]) -> bytes:
    """The chat-completions JSON body ``{"model", "messages", **params}``, with the contents pre-escaped.

    Parses to the same object as ``json.dumps({"model": model_name, "messages": [...], **params})``.
    A message with fields other than role and content is encoded whole, as httpx would.
    """
    parts = [b'{"model":', _body_json(model_name), b',"messages":[']
    for i, (m, literal) in enumerate(zip(wire.messages, wire.literals(), strict=True)):
        if i:
            parts.append(b",")
        if literal is None or set(m) != {"role", "content"}:
            parts.append(_body_json(dict(m)))
        else:
            parts += [b'{"role":', _body_json(m["role"]), b',"content":', *literal, b"}"]
    parts.append(b"]")
    rest = {k: v for k, v in params.items() if k not in ("model", "messages")}
    if rest:
        parts += [b",", _body_json(rest)[1:-1]]
    parts.append(b"}")
    return b"".join(parts)
