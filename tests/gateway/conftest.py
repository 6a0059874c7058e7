"""Fixtures for the gateway tests: a fake OpenAI-compatible server on 127.0.0.1 and a planted key.

Everything runs through real litellm (or the gateway's direct path) against that server; no
test touches the network.
"""

from __future__ import annotations

import os
from typing import Iterator

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from gateway_support import FAKE_KEY, FAKE_KEY_ENV  # noqa: E402

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig  # noqa: E402


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "server(**kwargs): FakeServerConfig for the fake_server fixture")
