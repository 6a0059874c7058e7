"""Constrained output: which shape constraint one call sends, decided per model and per contract.

Why per call and not a model setting such as ``response_format``: one judge model answers JSON
contracts (CS, FC) and a tagged one (PS votes); JSON mode set on the model would force JSON onto the
votes too (issue 22). So the contract supplies its shape (``CallRequest.output_schema`` from the
result model, ``output_grammar`` for tagged/line contracts), the model's ``structured_output``
setting and what is known of the provider decide how it is sent, and the strict parsers judge the
reply exactly as before: a constraint is a way to get valid outputs, never a reason to accept one.

What is sent, by mode:

* ``json_schema``: ``response_format: {"type": "json_schema", "json_schema": {name, schema, strict}}``.
* ``json_object``: ``response_format: {"type": "json_object"}``, plus ``schema`` for an
  OpenAI-compatible server of our own (llama.cpp's servers turn it into a grammar): the contract's
  schema with its free-text strings kept free of ``<``/``>`` and bounded to fit the reply cap
  (``grammar_schema`` says why).
* ``grammar``: llama.cpp's ``grammar`` (GBNF) for a tagged/line contract; a JSON contract gets
  ``json_object`` + ``schema`` (what llama.cpp constrains JSON with).
* ``off``: nothing.

``auto`` (the default) means ``json_schema`` for a JSON contract when litellm's model info says the
model supports a response schema or the model is an OpenAI-compatible server (``openai/`` or
``hosted_vllm/`` with an ``api_base``), and nothing otherwise: no grammar (an unknown field may be
refused by a server that is not llama.cpp) and nothing to in-process models (the offline model reads
no constraint, and its cache keys stay what they were).

A server that refuses a constraint (HTTP 400/422/500/501 on a constrained request; llama-cpp-python
answers ``json_schema`` with 500) is remembered per endpoint for the process (``note_refusal``) and
the call is sent again one step down: ``json_schema`` -> ``json_object`` -> ``off``, never retried
as a server error. The constraint sent is part of the cache key (``cache.cache_key``), and a call
that sends none hashes exactly as before the feature, so existing caches stay valid.
"""

from __future__ import annotations

import copy
import functools
import threading
from typing import Any, Mapping

from .types import CallRequest, ModelConfig

__all__ = ["CONSTRAINT_KINDS", "REFUSAL_STATUSES", "constraint_for", "note_refusal", "strict_json_schema",
           "grammar_schema",
           "forget_refusals", "supports_response_schema", "is_in_process"]

CONSTRAINT_KINDS = ("json_schema", "json_object", "grammar", "off")
REFUSAL_STATUSES = frozenset({400, 422, 500, 501})
"""HTTP statuses that, on a constrained request, mean "not this constraint" rather than "try again"."""

_DOWNGRADE = {"json_schema": "json_object", "json_object": "off", "grammar": "off", "off": "off"}
_DIRECT_PREFIXES = ("openai/", "hosted_vllm/")

_refused: dict[tuple[str, str | None], set[str]] = {}
_refused_lock = threading.Lock()


def _endpoint(model: ModelConfig) -> tuple[str, str | None]:
    return model.model, model.api_base


def note_refusal(model: ModelConfig, kind: str) -> None:
    """Remember that ``model``'s endpoint refused constraint ``kind`` (for the rest of the process)."""
    with _refused_lock:
        _refused.setdefault(_endpoint(model), set()).add(kind)


def forget_refusals() -> None:
    """Forget every refusal (tests; a server restarted with another build)."""
    with _refused_lock:
        _refused.clear()


def is_in_process(model: str) -> bool:
    """True for a model served by an in-process plugin (providers.py), e.g. ``offline/...``."""
    from .providers import PLUGIN_PACKAGES, _plugins  # noqa: PLC0415 - the registry of in-process models

    prefix = model.split("/", 1)[0] if "/" in model else ""
    return bool(prefix) and (prefix in PLUGIN_PACKAGES or prefix in _plugins)


@functools.lru_cache(maxsize=256)
def supports_response_schema(model: str) -> bool | None:
    """litellm's ``supports_response_schema`` from its bundled model info, read without importing
    litellm (``transport._bundled_prices``); None when litellm does not know the model."""
    from .transport import _bundled_prices  # noqa: PLC0415

    info = _bundled_prices()
    bare = model.split("/", 1)[1] if "/" in model else model
    for name in (model, bare):
        entry = info.get(name)
        if isinstance(entry, dict):
            value = entry.get("supports_response_schema")
            return bool(value) if value is not None else None
    return None


def _wanted(model: ModelConfig, req: CallRequest) -> str:
    """The mode asked for this call before refusals: what the setting means for this contract."""
    json_contract = req.output_schema is not None
    mode = model.structured_output
    if mode == "off" or (not json_contract and req.output_grammar is None):
        return "off"
    if mode == "auto":
        if not json_contract or is_in_process(model.model):
            return "off"
        known = supports_response_schema(model.model)
        custom_server = model.api_base is not None and model.model.startswith(_DIRECT_PREFIXES)
        return "json_schema" if known or (known is None and custom_server) else "off"
    if mode == "grammar":
        return "json_object" if json_contract else "grammar"
    if not json_contract:  # json_schema / json_object asked, but this contract is tagged: plain prompt
        return "off"
    return mode


def constraint_for(model: ModelConfig, req: CallRequest) -> tuple[str, dict[str, Any]]:
    """(the constraint kind, the request-body fields that send it) for ``req`` on ``model`` now.

    Steps down past every kind this endpoint refused earlier in the process.
    """
    if model.response_format is not None:  # the model's own setting is sent (and keyed by its identity)
        return describe({"response_format": model.response_format}), {}
    kind = _wanted(model, req)
    with _refused_lock:
        refused = set(_refused.get(_endpoint(model), ()))
    while kind in refused and kind != "off":
        kind = _DOWNGRADE[kind]
    return kind, _params(kind, model, req)


def _params(kind: str, model: ModelConfig, req: CallRequest) -> dict[str, Any]:
    if kind == "json_schema":
        return {"response_format": {"type": "json_schema", "json_schema": {
            "name": req.contract, "schema": req.output_schema, "strict": True}}}
    if kind == "json_object":
        fmt: dict[str, Any] = {"type": "json_object"}
        if model.api_base is not None and model.model.startswith(_DIRECT_PREFIXES):
            fmt["schema"] = grammar_schema(req.output_schema, model.max_tokens or req.max_tokens)
        return {"response_format": fmt}
    if kind == "grammar":
        return {"grammar": req.output_grammar}
    return {}


def downgrade(kind: str) -> str:
    """The next constraint to try after ``kind`` was refused."""
    return _DOWNGRADE[kind]


CHARS_PER_TOKEN = 3
"""Characters of English prose per token, low on purpose (about 4 is typical): a bound derived from
it leaves the reply room to close its strings and braces before ``max_tokens``."""
MAX_STRING_CHARS = 1000
"""Upper bound on one string's length in a grammar schema: llama.cpp writes ``{1,n}`` as n nested
optional rules, and a longer chain slows every decoded token."""
_JSON_OVERHEAD_TOKENS = 10  # keys, quotes, braces and spaces of one field
GRAMMAR_STRING_CHAR = r'[^<>"\\\x00-\x1f]'
"""One character of a grammar-schema string: no angle bracket (placeholders), and none that JSON only
allows escaped (a quote, a backslash, a control character such as a raw newline): llama.cpp copies
a pattern's class into the grammar as written, so without them a raw newline made the JSON invalid."""


def grammar_schema(schema: dict[str, Any] | None, max_tokens: int | None) -> dict[str, Any] | None:
    """``schema`` as sent to a llama.cpp server (``json_object`` + ``schema``, which it compiles into a
    grammar): every free-text string gets a ``pattern`` of 1 to n ``GRAMMAR_STRING_CHAR``.

    Why, measured on Gemma 3 270M (issue 22): with the contract's schema alone the model fills each
    string with the prompt's own angle-bracketed placeholder (``"<why this score, citing the two
    responses>"``), which the parser rightly refuses; and when it writes text instead, nothing in the
    grammar ends the string, so the reply runs to ``max_tokens`` and is cut, invalid JSON. No ``<``
    or ``>`` keeps the placeholders out (the prompts write every placeholder in them); ``n``, from
    the reply cap (``CHARS_PER_TOKEN`` per token, shared by the strings, at most
    ``MAX_STRING_CHARS``), makes a complete object fit the cap. The parsers are unchanged: this
    constrains what is generated, never what is accepted. Only this path: a provider's strict
    ``json_schema`` gets the contract's schema as it is (not every strict mode takes ``pattern``).
    """
    if schema is None:
        return None
    schema = copy.deepcopy(schema)
    strings: list[dict[str, Any]] = []
    fields = 0

    def walk(node: Any) -> None:
        nonlocal fields
        if isinstance(node, dict):
            fields += len(node.get("properties", {}))
            if node.get("type") == "string" and not {"enum", "const", "pattern"} & set(node):
                strings.append(node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    if not strings:
        return schema
    bound = MAX_STRING_CHARS
    if max_tokens:
        room = max(max_tokens - _JSON_OVERHEAD_TOKENS * max(fields, 1), len(strings) * 8)
        bound = max(8, min(MAX_STRING_CHARS, CHARS_PER_TOKEN * room // len(strings)))
    for node in strings:
        node["pattern"] = f"^{GRAMMAR_STRING_CHAR}{{1,{bound}}}$"
    return schema


def strict_json_schema(result_model: type, *, small_int_enum: int = 10) -> dict[str, Any]:
    """The JSON schema of a pydantic result model in the subset strict modes accept.

    From ``model_json_schema()``: every property required (a field with a default too: the parser
    requires every key), ``additionalProperties: false`` on every object, titles and defaults
    and descriptions dropped, and an integer bounded to a small range written as an ``enum`` (llama.cpp's
    schema-to-grammar and OpenAI's strict mode both honour enums; not every one honours bounds).
    """
    return copy.deepcopy(_strict_json_schema(result_model, small_int_enum))


@functools.lru_cache(maxsize=64)
def _strict_json_schema(result_model: type, small_int_enum: int) -> dict[str, Any]:
    """Built once per result model: pydantic rebuilds ``model_json_schema()`` on every call (3.3 ms for the MCQ result),
    and a planner asks once per planned call, on the thread that competes for the GIL with the
    gateway loop reading answers (a copy is returned: callers adjust their schema in place)."""
    schema = copy.deepcopy(result_model.model_json_schema())  # type: ignore[attr-defined]

    def fix(node: Any) -> Any:
        if isinstance(node, dict):
            node.pop("title", None)
            node.pop("default", None)
            if isinstance(node.get("description"), str):
                node.pop("description")
            if node.get("type") == "integer" and "minimum" in node and "maximum" in node \
                    and node["maximum"] - node["minimum"] < small_int_enum:
                node["enum"] = list(range(int(node.pop("minimum")), int(node.pop("maximum")) + 1))
            if node.get("type") == "object" and "properties" in node:
                node["required"] = list(node["properties"])
                node["additionalProperties"] = False
            for value in node.values():
                fix(value)
        elif isinstance(node, list):
            for value in node:
                fix(value)
        return node

    return fix(schema)


def describe(params: Mapping[str, Any]) -> str:
    """The kind of a body's constraint fields (for logs and the call column)."""
    fmt = params.get("response_format")
    if isinstance(fmt, Mapping):
        return str(fmt.get("type", "off"))
    return "grammar" if "grammar" in params else "off"
