"""Shared constants and helpers of the gateway tests (a uniquely named module: ``conftest`` is
ambiguous when several test folders have one)."""

from __future__ import annotations

from interviewsim_core.llm.testing import FakeOpenAIServer
from interviewsim_core.llm.types import ModelConfig

FAKE_KEY_ENV = "INTERVIEWSIM_TEST_FAKE_KEY"
FAKE_KEY = "sk-fake-PLANTED-4f9c2e71b8a0d3"


def fake_model(server: FakeOpenAIServer, name: str = "fake-model", **kw) -> ModelConfig:
    """An ``openai/`` model on the fake server with the planted key's env var name."""
    defaults = dict(api_base=server.base_url, api_key_env=FAKE_KEY_ENV, timeout_s=30.0, max_retries=4,
                    max_total_wait_s=10.0)
    defaults.update(kw)
    return ModelConfig(model=f"openai/{name}", **defaults)
