"""Per-call encoding (issue 13): message contents are JSON-escaped once per call and shared by the
cache key and the request body, with the same key values and body bytes as the plain encoders."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from interviewsim_core.llm import wire
from interviewsim_core.llm.cache import cache_key, canonical_json, request_key
from interviewsim_core.llm.types import CallRequest, ModelConfig

MODEL = ModelConfig(model="openai/x", api_base="http://127.0.0.1:9/v1", temperature=0.3, seed=4)
ALPHABET = [chr(i) for i in range(128)] + ["é", "中", "\u2028", "😀", "\ufeff"]


def plain_key(model, messages, contract, version, sample_index, attempt) -> str:
    """The cache key as it was defined before issue 13: sha256 of one canonical_json dump."""
    payload = {"model": model.identity(), "messages": [{"role": m["role"], "content": m["content"]} for m in messages],
               "contract": contract, "contract_version": version, "sample_index": sample_index, "attempt": attempt}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


def _text(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(n))


@pytest.fixture
def prefix():
    """A long prefix remembered like a rendered Chrono context (with every ASCII character, DEL included)."""
    text = "".join(chr(i) for i in range(128)) * 40 + "é"
    wire.remember_prefix(text)
    return text


def test_key_values_equal_the_plain_canonical_json_key(prefix):
    rng = random.Random(13)
    for _ in range(1500):
        messages = []
        for _ in range(rng.randint(0, 3)):
            body = _text(rng, rng.randint(0, 30))
            content = (prefix + body) if rng.random() < 0.3 else (prefix[:-1] + body) if rng.random() < 0.2 else body
            messages.append({"role": rng.choice(["system", "user", "assistant"]), "content": content})
        args = (MODEL, messages, rng.choice(["generation", 'q"x', "é"]), rng.choice(["1", "2.3"]),
                rng.randint(0, 3), rng.randint(0, 2))
        assert cache_key(*args) == plain_key(*args)


def test_a_content_that_is_not_text_keeps_its_plain_key():
    messages = [{"role": "user", "content": [{"type": "text", "text": "hé"}]}, {"role": "user", "content": None}]
    assert cache_key(MODEL, messages, "c", "1", 0, 0) == plain_key(MODEL, messages, "c", "1", 0, 0)


def test_json_string_is_json_dumps(prefix):
    for text in [prefix, prefix + "\x7f\"\\\n", prefix + "中", "", "\x7f", "a\x00b", "😀" * 3, prefix[:100]]:
        assert wire.json_string(text) == json.dumps(text, ensure_ascii=False)


def test_request_body_is_byte_identical_to_httpx_json_encoding(prefix):
    messages = [{"role": "system", "content": "Speak as P1.\n"}, {"role": "user", "content": prefix + 'Q "why"?\x7f'}]
    params = {"temperature": 0.3, "seed": 4, "stop": ["\n\n"], "logit_bias": {"50256": -100}}
    body = wire.request_body("x", wire.WireText(messages), params)
    expected = json.dumps({"model": "x", "messages": messages, **params}, ensure_ascii=False,
                          separators=(",", ":"), allow_nan=False).encode("utf-8")
    assert body == expected
    odd = [{"role": "user", "content": "hi", "name": "n"}, {"role": "user", "content": [{"type": "text", "text": "é"}]}]
    assert json.loads(wire.request_body("x", wire.WireText(odd), {})) == {"model": "x", "messages": odd}


def test_request_key_is_remembered_only_for_the_same_texts():
    req = CallRequest(messages=({"role": "user", "content": "one"},), contract="c", contract_version="1")
    first = request_key(MODEL, req)
    assert first == plain_key(MODEL, req.messages, "c", "1", 0, 0)
    assert request_key(MODEL, req) == first
    other_model = MODEL.model_copy(update={"temperature": 0.9})
    assert request_key(other_model, req) == plain_key(other_model, req.messages, "c", "1", 0, 0) != first
    # model_copy shares the private memo: a copy with other texts or fields must not reuse the key.
    copy = req.model_copy(update={"messages": ({"role": "user", "content": "two"},)})
    assert request_key(MODEL, copy) == plain_key(MODEL, copy.messages, "c", "1", 0, 0)
    voted = req.model_copy(update={"sample_index": 2})
    assert request_key(MODEL, voted) == plain_key(MODEL, req.messages, "c", "1", 2, 0)
    assert request_key(MODEL, req) == first


def test_a_prefix_that_cannot_be_encoded_fails_where_the_prompt_is_keyed_as_before():
    bad = "x" * 5000 + "\ud800"
    wire.remember_prefix(bad)  # planning must not fail on it
    with pytest.raises(UnicodeEncodeError):
        cache_key(MODEL, [{"role": "user", "content": bad + "?"}], "c", "1", 0, 0)
    with pytest.raises(UnicodeEncodeError):
        plain_key(MODEL, [{"role": "user", "content": bad + "?"}], "c", "1", 0, 0)
