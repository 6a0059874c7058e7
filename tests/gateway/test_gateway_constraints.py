"""Constrained output, reply caps, truncation and context limits in the gateway (issue 22).

The transport is replaced by a stub that answers like an OpenAI-compatible server would (one that
refuses ``json_schema`` with HTTP 500, as llama-cpp-python's does), so each rule is checked on the
request the gateway really built.
"""

from __future__ import annotations

import json

import pytest

from interviewsim_core.contracts import content_similarity, personality
from interviewsim_core.llm import gateway as gateway_module
from interviewsim_core.llm.cache import cache_key, request_key
from interviewsim_core.llm.constraints import constraint_for, forget_refusals
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.limits import context_overflow, context_window_of, prompt_tokens
from interviewsim_core.llm.retry import ProviderHTTPError
from interviewsim_core.llm.transport import Completion
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.calls import contract_request

SERVER = ModelConfig(model="openai/gemma", api_base="http://127.0.0.1:9/v1", max_retries=3)


@pytest.fixture(autouse=True)
def _fresh_refusals():
    forget_refusals()
    yield
    forget_refusals()


def cs_request(candidate: str = "We will cut taxes."):
    return contract_request(content_similarity, content_similarity.build_messages("Taxes go down.", candidate),
                            item_id="q1")


def ps_request():
    return contract_request(personality, personality.build_messages("openness", ["I like new ideas."]), item_id="t")


class Stub:
    """Records each body's shape fields; refuses json_schema; replies with ``reply``."""

    def __init__(self, reply: str = '{"score": 4, "explanation": "same point"}', finish: str = "stop"):
        self.sent: list[dict] = []
        self.reply, self.finish = reply, finish

    async def __call__(self, model, messages, *, wire=None, shape=None):
        self.sent.append(dict(shape or {}))
        fmt = (shape or {}).get("response_format") or {}
        if fmt.get("type") == "json_schema":
            raise ProviderHTTPError("HTTP 500 from openai/gemma: unsupported response_format", status_code=500)
        return Completion(text=self.reply, prompt_tokens=50, completion_tokens=12, finish_reason=self.finish)


def run(stub, model, req, monkeypatch):
    monkeypatch.setattr(gateway_module, "call_direct", stub)
    return Gateway().run(model, [req])[0]


def test_auto_sends_the_contracts_schema_and_a_tagged_contract_goes_plain():
    kind, shape = constraint_for(SERVER, cs_request())
    assert kind == "json_schema"
    schema = shape["response_format"]["json_schema"]["schema"]
    assert schema["required"] == ["score", "explanation"] and schema["additionalProperties"] is False
    assert schema["properties"]["score"]["enum"] == [1, 2, 3, 4, 5]
    assert constraint_for(SERVER, ps_request()) == ("off", {})
    assert constraint_for(ModelConfig(model="offline/extractive"), cs_request()) == ("off", {})
    grammar = SERVER.model_copy(update={"structured_output": "grammar"})
    assert constraint_for(grammar, ps_request())[1] == {"grammar": personality.OUTPUT_GRAMMAR}
    assert constraint_for(grammar, cs_request())[1]["response_format"]["type"] == "json_object"
    assert constraint_for(SERVER.model_copy(update={"structured_output": "off"}), cs_request()) == ("off", {})


def test_an_unconstrained_key_is_unchanged_and_a_constrained_one_differs():
    req = cs_request()
    off = SERVER.model_copy(update={"structured_output": "off"})
    plain = cache_key(off, req.messages, req.contract, req.contract_version, 0, 0)
    assert request_key(off, req) == plain  # keys of caches written before constraints existed
    assert request_key(SERVER, req) != plain


def test_a_refused_schema_falls_back_once_and_is_remembered(monkeypatch):
    stub = Stub()
    first = run(stub, SERVER, cs_request(), monkeypatch)
    assert first.status == "ok" and first.constraint == "json_object"
    assert [s["response_format"]["type"] for s in stub.sent] == ["json_schema", "json_object"]  # no retry storm
    assert stub.sent[1]["response_format"]["schema"]["required"] == ["score", "explanation"]
    assert stub.sent[1]["max_tokens"] == content_similarity.MAX_TOKENS
    second = run(stub, SERVER, cs_request("Taxes will be lower."), monkeypatch)
    assert second.constraint == "json_object" and len(stub.sent) == 3  # remembered: json_schema not tried again


def test_a_truncated_reply_is_marked_and_not_reasked(monkeypatch):
    stub = Stub(reply='{"score": 4, "explanation": "the candidate', finish="length")
    model = SERVER.model_copy(update={"structured_output": "off"})
    res = run(stub, model, cs_request(), monkeypatch)
    assert res.status == "invalid" and res.truncated and res.finish_reason == "length"
    assert len(stub.sent) == 1 and len(res.attempts) == 1
    assert res.parse_error.startswith(f"truncated at max_tokens={content_similarity.MAX_TOKENS}")


def test_a_prompt_over_the_context_window_is_a_typed_failure_never_sent(monkeypatch):
    stub = Stub()
    req = cs_request("word " * 400)
    model = SERVER.model_copy(update={"context_window": 100})
    res = run(stub, model, req, monkeypatch)
    n = prompt_tokens(req.messages)
    assert res.status == "failed" and stub.sent == []
    assert res.error == f"context window exceeded: prompt of {n} tokens exceeds the context window of 100"
    assert context_window_of(SERVER) is None
    assert context_overflow("Requested tokens (5000) exceed context window of 4096") == \
        "context window exceeded: prompt of 5000 tokens exceeds the context window of 4096"


def test_the_servers_context_error_becomes_the_same_failure(monkeypatch):
    async def too_long(model, messages, *, wire=None, shape=None):
        raise ProviderHTTPError("HTTP 400 from openai/gemma: Requested tokens (5000) exceed context window of 4096",
                                status_code=400)

    res = run(too_long, SERVER, cs_request(), monkeypatch)
    assert res.status == "failed"
    assert res.error == "context window exceeded: prompt of 5000 tokens exceeds the context window of 4096"


def test_the_constraint_and_finish_reason_reach_the_row(monkeypatch):
    from interviewsim_core.pipeline.calls import call_columns

    req = cs_request()
    res = run(Stub(), SERVER, req, monkeypatch)
    row = call_columns(SERVER, req, res)
    assert (row["constraint"], row["finish_reason"], row["truncated"]) == ("json_object", "stop", False)
    assert json.loads(res.raw)["score"] == 4


def test_a_llama_cpp_schema_keeps_placeholders_out_and_fits_the_cap():
    """json_object + schema (what llama.cpp compiles to a grammar): free-text strings get a pattern
    with no angle brackets (every prompt placeholder has them) and a length the reply cap can hold;
    enums are left alone, and the strict json_schema path sends the contract's schema unchanged."""
    from interviewsim_core.llm.constraints import CHARS_PER_TOKEN, GRAMMAR_STRING_CHAR, MAX_STRING_CHARS, grammar_schema

    schema = content_similarity.output_schema()
    bounded = grammar_schema(schema, 96)
    pattern = bounded["properties"]["explanation"]["pattern"]
    n = int(pattern.split(",")[1].split("}")[0])
    assert pattern == f"^{GRAMMAR_STRING_CHAR}{{1,{n}}}$" and 8 <= n <= CHARS_PER_TOKEN * 96
    assert bounded["properties"]["score"] == schema["properties"]["score"]  # the enum is the constraint
    assert "pattern" not in schema["properties"]["explanation"]  # a copy: the contract's schema is untouched
    assert grammar_schema(schema, None)["properties"]["explanation"]["pattern"] == f"^{GRAMMAR_STRING_CHAR}{{1,{MAX_STRING_CHARS}}}$"
    assert grammar_schema(schema, 100_000)["properties"]["explanation"]["pattern"].endswith(f",{MAX_STRING_CHARS}}}$")

    json_object = SERVER.model_copy(update={"structured_output": "json_object", "max_tokens": 96})
    assert constraint_for(json_object, cs_request())[1]["response_format"]["schema"] == bounded
    strict = constraint_for(SERVER, cs_request())[1]["response_format"]["json_schema"]["schema"]
    assert strict == schema


def test_a_placeholder_that_got_through_is_still_invalid(monkeypatch):
    """The constraint never loosens the parser: a reply holding the placeholder stays invalid."""
    stub = Stub(reply='{"score": 1, "explanation": "' + content_similarity.EXPLANATION_PLACEHOLDER + '"}')
    model = SERVER.model_copy(update={"structured_output": "json_object", "max_reasks": 0})
    res = run(stub, model, cs_request(), monkeypatch)
    assert res.status == "invalid" and "placeholder" in res.parse_error
