"""PS judge stability: train-inferred vs test-inferred Big Five profiles with the same judge."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from interviewsim_core.contracts.personality import TRAITS
from interviewsim_core.metrics.ps_stability import PAPER_STABILITY, ps_stability, stability_summary
from interviewsim_core.pipeline.judges import plan_training_personality, training_responses


def _votes(pid: str, judge: str, levels: dict[str, list[str]], status: str = "ok") -> pd.DataFrame:
    rows = [{"personality_id": pid, "judge": judge, "trait": t, "vote_index": i, "rate": r, "status": status}
            for t, rates in levels.items() for i, r in enumerate(rates)]
    return pd.DataFrame(rows)


ALL_HIGH = {t: ["High"] * 3 for t in TRAITS}


def test_identical_profiles_align_fully_and_one_flip_costs_a_fifth():
    test = _votes("P", "j", ALL_HIGH)
    same = _votes("P", "j", ALL_HIGH)
    flipped = _votes("P", "j", {**ALL_HIGH, TRAITS[0]: ["Low", "Low", "High"]})
    assert ps_stability(test, same)["alignment"].tolist() == [1.0]
    # Low vs High is an ordinal distance of 2: 1 - 2/10.
    assert ps_stability(test, flipped)["alignment"].tolist() == [pytest.approx(0.8)]


def test_missing_vote_gives_no_alignment_rather_than_a_partial_profile():
    test = _votes("P", "j", ALL_HIGH)
    short = _votes("P", "j", {**ALL_HIGH, TRAITS[1]: ["High", "High"]})
    row = ps_stability(test, short).iloc[0]
    assert math.isnan(row["alignment"]) and row["n_traits"] == 4


def test_summary_per_judge_counts_undefined_and_cites_the_paper():
    test = pd.concat([_votes("P", "j", ALL_HIGH), _votes("Q", "j", ALL_HIGH)])
    train = pd.concat([_votes("P", "j", ALL_HIGH), _votes("Q", "j", {**ALL_HIGH, TRAITS[0]: ["High"]})])
    per = ps_stability(test, train)
    summary = stability_summary(per)
    row = summary.iloc[0]
    assert row["judge"] == "j" and row["n_personalities"] == 1 and row["n_undefined"] == 1
    assert row["mean_alignment"] == 1.0 and row["paper"] == PAPER_STABILITY


def test_training_side_reads_training_responses_only(splits, models):
    sp = splits[sorted(splits)[0]]
    picked = training_responses(sp)
    assert len(picked) == min(len(sp.test_pairs), len(sp.train_pairs))
    assert picked == [p.response for p in sp.train_pairs][-len(picked):]
    held = {p.response for p in sp.test_pairs}
    planned = plan_training_personality(sp, models["judges"])
    assert len(planned) == len(models["judges"]) * len(TRAITS) * 3
    for call in planned:
        text = "\n".join(m["content"] for m in call.request.messages)
        assert not [h for h in held if h in text]
        assert call.key[0] == "training_personality"


def test_runner_builds_the_stability_table_only_when_asked(tmp_path):
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    pids = ["SYN_AUERLUND", "SYN_KAVANEK"]
    off = run_evaluation(EvalConfig(data_root=tmp_path / "off", methods=("simple",)), personalities=pids, write=False)
    assert "ps_stability" not in off and "training_personality" not in off
    on = run_evaluation(EvalConfig(data_root=tmp_path / "on", methods=("simple",), ps_stability=True),
                        personalities=pids, write=False)
    assert len(on["training_personality"]) == len(pids) * len(TRAITS) * 3
    stab = on["ps_stability"]
    assert sorted(stab["personality_id"]) == pids
    assert stab["alignment"].between(0, 1).all()
