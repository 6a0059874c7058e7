"""A per-personality generator (one LoRA adapter per person, served by name) against a real local server."""

from __future__ import annotations

import json
import re

import pytest

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.config import EvalConfig

PIDS = ["SYN_AUERLUND", "SYN_KAVANEK"]


def test_template_fills_the_model_but_keeps_the_display_name():
    m = ModelConfig(model="hosted_vllm/lora-{personality_id}")
    bound = m.for_personality("SYN_X")
    assert bound.model == "hosted_vllm/lora-SYN_X"
    assert bound.name == "hosted_vllm/lora-{personality_id}"
    assert bound.identity() != m.for_personality("SYN_Y").identity()  # distinct cache keys per person
    plain = ModelConfig(model="openai/gpt-4.1")
    assert plain.for_personality("SYN_X") is plain


def test_only_the_generator_may_be_a_template():
    with pytest.raises(ValueError, match="only the generator"):
        EvalConfig(judges=({"model": "openai/judge-{personality_id}"},))
    with pytest.raises(ValueError, match="builder"):
        EvalConfig(builder={"model": "openai/b-{personality_id}"})


def test_each_personality_generates_with_its_own_adapter_and_other_roles_are_unchanged(tmp_path, monkeypatch):
    from interviewsim_core.factories import make_gateway
    from interviewsim_core.pipeline.runner import run_evaluation

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    with FakeOpenAIServer(FakeServerConfig()) as srv:
        cfg = EvalConfig(
            data_root=tmp_path, methods=("simple", "chrono-5"), api_base=srv.base_url,
            generator={"model": "openai/lora-{personality_id}", "max_reasks": 0},
            judges=({"model": "openai/judge-a", "max_reasks": 0},),
            builder={"model": "openai/builder", "max_reasks": 0},
        )
        tables = run_evaluation(cfg, gateway=make_gateway(cfg), personalities=PIDS, write=False)
        bodies = [json.loads(e["body"]) for e in srv.log if e["path"].endswith("/chat/completions")]
    models = {b["model"] for b in bodies}
    assert models == {"lora-SYN_AUERLUND", "lora-SYN_KAVANEK", "judge-a", "builder"}
    speak_as = re.compile(r"Speak as (\S+)\. ")
    generation_calls = 0
    for b in bodies:
        system = b["messages"][0]["content"]
        m = speak_as.search(system)
        if m and "Answer the following question" in system:  # a generation prompt
            generation_calls += 1
            assert b["model"] == f"lora-{m.group(1)}"
        elif b["model"].startswith("lora-"):  # MCQ answering: also the simulated person
            assert b["model"].removeprefix("lora-") in system
    assert generation_calls == len(tables["generations"])
    # Tables name the generator by its template, the same on every personality's rows.
    assert set(tables["generations"]["personality_id"]) == set(PIDS)
