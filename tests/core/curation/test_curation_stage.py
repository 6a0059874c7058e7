"""The curation as the first stage of a run (issue 31): the config names it, its plan counts every call
before the first one (the cache's answers included), and a curated folder of fixtures plans 0 to send."""

from __future__ import annotations

import pytest

from interviewsim_core.curation.plan import plan_curation
from interviewsim_core.curation.run import curate
from interviewsim_core.curation.stage import curates, curation_model
from interviewsim_core.errors import ConfigError
from interviewsim_core.factories import gateway_at
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.config import EvalConfig

from curation_fixtures import FORMATS, PERSON, write_manifest

OFFLINE = ModelConfig(model="offline/extractive")


def _fixture(tmp_path, people=("P", "Q")):
    d = tmp_path / "tx"
    d.mkdir()
    rows = []
    for pid in people:
        for i, (name, render) in enumerate(FORMATS.values()):
            (d / f"{pid}_{name}").write_text(render(), encoding="utf-8")
            rows.append({"file": f"{pid}_{name}", "personality_id": pid, "person_name": PERSON,
                         "date": f"202{i}-01-01"})
    return d, write_manifest(tmp_path / "manifest.json", rows)


def test_the_plan_counts_the_calls_the_curation_makes_and_a_rerun_plans_none_to_send(tmp_path, runner) -> None:
    d, manifest = _fixture(tmp_path)
    cache = tmp_path / "cache.sqlite"
    before = plan_curation(d, manifest, OFFLINE, cache)  # no cache file yet: nothing created by planning
    assert not cache.exists()
    by_step = {line.step: line for line in before.lines}
    assert list(by_step) == ["speaker_turns", "transcript_quality", "qa_pairs", "qa_tags", "personality_category"]
    assert by_step["speaker_turns"].calls == 2  # only the diarised files' SPEAKER_nn ids: the rule places the rest
    assert by_step["transcript_quality"].calls == 8  # one per transcript
    assert by_step["personality_category"].calls == 2  # one per personality
    assert before.cached == 0 and before.to_send == before.calls
    assert all(line.prompt_tokens > 0 for line in before.lines)

    made = curate(d, manifest, runner, OFFLINE)
    assert before.calls == made.calls == len(runner.calls)
    for contract, step in (("transcript_quality", "transcript_quality"), ("qa_structuring", "qa_pairs")):
        assert by_step[step].calls == runner.calls.count(contract)

    with gateway_at(cache) as gw:
        curate(d, manifest, gw, OFFLINE)
    after = plan_curation(d, manifest, OFFLINE, cache)
    assert after.calls == before.calls and after.cached == before.calls and after.to_send == 0


def test_a_refused_transcript_is_left_out_of_the_plan_and_its_personality_is_not(tmp_path) -> None:
    d, manifest = _fixture(tmp_path)
    (d / "Q_dialogue.txt").write_bytes(b"")  # empty: that file is refused, Q goes on with its other three
    calls = {line.step: line.calls for line in plan_curation(d, manifest, OFFLINE, None).lines}
    assert calls["transcript_quality"] == 2 * len(FORMATS) - 1 and calls["personality_category"] == 2


def test_a_personality_that_cannot_reach_the_split_s_minimum_is_refused_before_its_calls(tmp_path) -> None:
    d, manifest = _fixture(tmp_path)
    for name, _render in list(FORMATS.values())[1:]:
        (d / f"Q_{name}").write_bytes(b"")  # Q keeps one readable transcript: under the minimum of 2
    calls = {line.step: line.calls for line in plan_curation(d, manifest, OFFLINE, None).lines}
    assert calls["transcript_quality"] == len(FORMATS) and calls["personality_category"] == 1


def test_the_config_names_transcripts_with_a_manifest_and_an_own_corpus(tmp_path) -> None:
    assert not curates(EvalConfig())
    with pytest.raises(ConfigError, match="transcripts and manifest go together"):
        EvalConfig.load(env={}, overrides={"transcripts": str(tmp_path), "corpus": str(tmp_path / "c")})
    with pytest.raises(ConfigError, match="default corpus is the shipped sample"):
        EvalConfig.load(env={}, overrides={"transcripts": str(tmp_path), "manifest": str(tmp_path / "m.csv")})
    cfg = EvalConfig.load(env={}, overrides={"transcripts": str(tmp_path), "manifest": str(tmp_path / "m.csv"),
                                             "corpus": str(tmp_path / "c"), "builder": "offline/extractive"})
    assert curates(cfg) and curation_model(cfg).name == "offline/extractive"
