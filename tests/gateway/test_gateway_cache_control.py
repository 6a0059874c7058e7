"""Prefix caching on Anthropic: the system message is marked cacheable in what litellm is sent, not in the key."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from interviewsim_core.llm import transport
from interviewsim_core.llm.types import ModelConfig

MESSAGES = [{"role": "system", "content": "You are Ada. Her interviews: ..."}, {"role": "user", "content": "Q?"}]


def _sent(monkeypatch, model: str) -> dict:
    seen: dict = {}

    async def fake_acompletion(**kwargs):
        seen.update(kwargs)
        return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content="ok"))],
                               usage=SimpleNamespace(prompt_tokens=10, completion_tokens=1), _hidden_params={})

    monkeypatch.setattr(transport.litellm_module(), "acompletion", fake_acompletion)
    asyncio.run(transport.call_litellm(ModelConfig(model=model), MESSAGES))
    return seen


def test_anthropic_system_message_is_marked_ephemeral(monkeypatch):
    sent = _sent(monkeypatch, "anthropic/claude-sonnet-4-5")
    system, user = sent["messages"]
    assert system == {"role": "system", "content": [
        {"type": "text", "text": MESSAGES[0]["content"], "cache_control": {"type": "ephemeral"}}]}
    assert user == MESSAGES[1]  # the question is not marked
    assert MESSAGES[0]["content"] == "You are Ada. Her interviews: ..."  # the caller's messages untouched


def test_other_providers_get_the_plain_messages(monkeypatch):
    assert _sent(monkeypatch, "gemini/gemini-2.5-pro")["messages"] == MESSAGES
