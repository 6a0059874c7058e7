"""Against a local OpenAI-compatible server: every curation request carries its output constraint,
and a re-run of the same curation makes no call (the gateway's cache)."""

from __future__ import annotations

import json

from interviewsim_core.curation.run import curate
from interviewsim_core.factories import gateway_at
from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.offline.stand_in import offline_reply

from curation_fixtures import FORMATS, PERSON, write_manifest

def test_every_request_is_constrained_and_a_rerun_makes_no_call(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    d = tmp_path / "tx"
    d.mkdir()
    for name, render in FORMATS.values():
        (d / name).write_text(render(), encoding="utf-8")
    rows = [{"file": name, "personality_id": "P", "person_name": PERSON, "date": f"202{i}-01-01"}
            for i, (name, _r) in enumerate(FORMATS.values())]
    manifest = write_manifest(tmp_path / "m.json", rows)
    with FakeOpenAIServer(FakeServerConfig(reply=offline_reply)) as srv:
        model = ModelConfig(model="openai/curator", api_base=srv.base_url, max_retries=0)
        with gateway_at(tmp_path / "cache.sqlite") as gw:
            first = curate(d, manifest, gw, model)
            assert gw.stats.calls_made == srv.requests > 0
        bodies = [json.loads(entry["body"]) if isinstance(entry["body"], str) else entry["body"] for entry in srv.log]
        with gateway_at(tmp_path / "cache.sqlite") as gw:
            again = curate(d, manifest, gw, model)
            assert gw.stats.calls_made == 0
        assert srv.requests == len(bodies)
    assert first.problems == [] and again.documents == first.documents
    assert len(first.documents["P"]["interviews"]) == 4
    for body in bodies:
        fmt = body.get("response_format") or {}
        assert fmt.get("type") == "json_schema", body.get("response_format")
