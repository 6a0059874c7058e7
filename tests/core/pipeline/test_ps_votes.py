"""The three PS votes are independent runs (seed 000): sampled, one provider seed per vote."""

from __future__ import annotations

from interviewsim_core.llm.types import ModelConfig
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


def test_a_sampling_judge_keeps_its_temperature_and_offsets_its_seed():
    judge = ModelConfig(model="openai/gpt-4o", temperature=1.0, seed=40)
    assert [(vote_model(judge, v).temperature, vote_model(judge, v).seed) for v in range(3)] == [
        (1.0, 40), (1.0, 41), (1.0, 42)]
