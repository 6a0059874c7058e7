"""An embedding model that fails (key echoed in a 401, a server that never answers) fails the report's
overlap section and the premise label clusters only: the rest of the report is written (issue 20)."""

from __future__ import annotations

import json

import pytest

from interviewsim_core.embeddings.litellm_embedder import LiteLLMEmbedder
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.report import build_report, write_report

KEY = "sk-report-EMBED-echo-5c1e9a77"


@pytest.mark.parametrize("fault", [{"reject_key": True}, {"hang": True}], ids=["echo-key-401", "hang"])
def test_embedding_failure_fails_its_sections_and_the_report_is_written(small_run, tmp_path, monkeypatch, fault):
    monkeypatch.setenv("REPORT_TEST_EMBED_KEY", KEY)
    with FakeOpenAIServer(FakeServerConfig(**fault)) as srv:
        model = ModelConfig(model="openai/fake-embed", api_base=srv.base_url, api_key_env="REPORT_TEST_EMBED_KEY",
                            timeout_s=0.5, max_retries=0)
        embedder = LiteLLMEmbedder(model, gateway=Gateway())
        data = build_report(small_run, embedder=embedder)
        paths = write_report(small_run, tmp_path / "report", report_data=data)
        assert srv.requests >= 1  # the embedding model was really asked
    overlap = data.section("overlap")
    assert overlap.status == "failed" and "embedding model" in overlap.note
    assert ("401" in overlap.note and "***" in overlap.note) if "reject_key" in fault else "Timeout" in overlap.note
    premise = data.section("premise")
    assert premise.status == "ok" and "Label clusters not computed" in premise.note
    assert premise.tables["label_clusters"].empty and not premise.tables["overall"].empty
    assert data.section("leaderboard").status == "ok"
    doc = json.loads((tmp_path / "report" / "report.json").read_text())
    assert doc["sections"]["overlap"]["status"] == "failed"
    html = (tmp_path / "report" / "report.html").read_text()
    assert "Failed:" in html
    for p in (tmp_path / "report").rglob("*"):
        if p.is_file():
            assert KEY.encode() not in p.read_bytes(), p
    assert paths
