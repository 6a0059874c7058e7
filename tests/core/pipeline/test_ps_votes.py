"""The three PS votes are independent runs (seed 000): sampled, one provider seed per vote."""

from __future__ import annotations

from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.judges import PS_VOTE_TEMPERATURE, plan_reference_personality, vote_model


def test_greedy_judge_votes_sample_with_distinct_seeds(split):
    judge = ModelConfig(model="openai/gpt-4o", temperature=0.0, label="greedy")
    planned = plan_reference_personality(split, [judge])
    assert len(planned) == 5 * 3
    by_trait: dict[str, list[ModelConfig]] = {}
    for p in planned:
        by_trait.setdefault(p.row["trait"], []).append(p.model)
        assert p.row["judge"] == "greedy"  # the judge keeps its display name in every row
        assert p.model.temperature == PS_VOTE_TEMPERATURE
    for models in by_trait.values():
        assert sorted(m.seed for m in models) == [0, 1, 2]
        # three distinct identities, hence three cache keys and three real samples
        assert len({str(m.identity()) for m in models}) == 3


def test_the_vote_temperature_is_the_configured_one_and_seeds_offset():
    judge = ModelConfig(model="openai/gpt-4o", temperature=1.0, seed=40)
    # Explicit setting, not a silent rule: the votes use ps_vote_temperature whatever the judge says...
    assert [(vote_model(judge, v).temperature, vote_model(judge, v).seed) for v in range(3)] == [
        (0.7, 40), (0.7, 41), (0.7, 42)]
    # ...and ps_vote_temperature=None sends the judge's own.
    own = EvalConfig(ps_vote_temperature=None).ps_vote_sampling
    assert [vote_model(judge, v, own).temperature for v in range(3)] == [1.0, 1.0, 1.0]


def test_vote_rows_record_the_temperature_and_planning_uses_the_setting(split):
    judge = ModelConfig(model="openai/gpt-4o")
    sampling = EvalConfig(ps_vote_temperature=1.2).ps_vote_sampling
    planned = plan_reference_personality(split, [judge], sampling)
    assert {p.model.temperature for p in planned} == {1.2}
    assert {p.row["vote_temperature"] for p in planned} == {1.2}
    # A different setting is a different call (cache key): the model config sent differs.
    other = plan_reference_personality(split, [judge])
    assert {str(p.model.identity()) for p in planned}.isdisjoint({str(p.model.identity()) for p in other})


def test_the_ps_steps_plan_with_the_setting_and_version_on_it(split):
    from interviewsim_core.pipeline.steps import BY_NAME, Cell, StepEnv

    judges = ({"model": "openai/gpt-4o", "label": "j"},)
    base, hot = EvalConfig(judges=judges), EvalConfig(judges=judges, ps_vote_temperature=1.2)
    env = StepEnv(hot, lambda pid: split)
    planned = BY_NAME["reference_personality"].plan(env, Cell(split.personality_id), {})
    assert {p.model.temperature for p in planned} == {1.2}
    # The setting changes exactly the PS steps' code versions (what re-materialisation keys on).
    changed = {s for s in BY_NAME.values() if s.code_version(base) != s.code_version(hot)}
    # (training_personality: the same PS votes on training responses, the optional stability check)
    assert {s.name for s in changed} == {"reference_personality", "generated_personality", "training_personality"}


def test_the_embedding_model_versions_the_retrieving_steps():
    from interviewsim_core.pipeline.steps import BY_NAME

    unset, offline = EvalConfig(), EvalConfig(embedding_model="offline/hashing")
    remote = EvalConfig(embedding_model="openai/text-embedding-3-small")
    for name in ("generations", "mcq_answers"):
        step = BY_NAME[name]
        assert step.code_version(unset) == step.code_version(offline)  # unset means offline/hashing
        assert step.code_version(remote) != step.code_version(offline)
