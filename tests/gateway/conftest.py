"""Fixtures for the gateway tests: a fake OpenAI-compatible server on 127.0.0.1 and a planted key.

Everything runs through real litellm (or the gateway's direct path) against that server; no
test touches the network.
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig  # noqa: E402
from interviewsim_core.llm.types import ModelConfig  # noqa: E402

FAKE_KEY_ENV = "INTERVIEWSIM_TEST_FAKE_KEY"
FAKE_KEY = "sk-fake-PLANTED-4f9c2e71b8a0d3"


@pytest.fixture
def planted_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(FAKE_KEY_ENV, FAKE_KEY)
    return FAKE_KEY


@pytest.fixture
def fake_server(request: pytest.FixtureRequest) -> Iterator[FakeOpenAIServer]:
    """A fresh server per test; configure with ``@pytest.mark.server(latency_s=..., ...)``."""
    marker = request.node.get_closest_marker("server")
    cfg = FakeServerConfig(**(marker.kwargs if marker else {}))
    with FakeOpenAIServer(cfg) as srv:
        yield srv


def fake_model(server: FakeOpenAIServer, name: str = "fake-model", **kw) -> ModelConfig:
    """An ``openai/`` model on the fake server with the planted key's env var name."""
    defaults = dict(api_base=server.base_url, api_key_env=FAKE_KEY_ENV, timeout_s=30.0, max_retries=4,
                    max_total_wait_s=10.0)
    defaults.update(kw)
    return ModelConfig(model=f"openai/{name}", **defaults)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server(**kwargs): FakeServerConfig for the fake_server fixture")
