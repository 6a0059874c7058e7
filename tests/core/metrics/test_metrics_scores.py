from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from interviewsim_core.metrics.scores import (
    METHOD_SCORE_COLUMNS,
    contradiction_ratio,
    cs_mean,
    macro_average,
    mcq_scores,
    personality_scores,
    ps_alignment,
    trait_levels,
)


def calls(status, prompt=10, completion=2, cost=0.001):
    return {"status": status, "prompt_tokens": prompt, "completion_tokens": completion, "cost_usd": cost}


def cs_rows(pid, method, judge, scores):
    """scores: int for an ok row, 'invalid'/'failed' for an unscored one."""
    return [{"personality_id": pid, "method": method, "judge": judge, "qa_id": f"q{i}",
             "score": s if isinstance(s, int) else None, **calls(s if isinstance(s, str) else "ok")}
            for i, s in enumerate(scores)]


def fc_rows(pid, method, judge, labels):
    return [{"personality_id": pid, "method": method, "judge": judge, "qa_id": f"q{i}",
             "label": None if lab in ("invalid", "failed") else lab,
             **calls(lab if lab in ("invalid", "failed") else "ok")} for i, lab in enumerate(labels)]


def vote_rows(levels: dict[str, list[str]], **keys):
    rows = []
    for trait, votes in levels.items():
        for i, v in enumerate(votes):
            bad = v in ("invalid", "failed")
            rows.append({**keys, "trait": trait, "vote_index": i, "rate": None if bad else v,
                         **calls(v if bad else "ok")})
    return rows


REF = {"openness": ["High", "High", "Low"], "conscientiousness": ["Low", "Neutral", "High"],
       "extraversion": ["Low"] * 3, "agreeableness": ["Neutral"] * 3, "neuroticism": ["Low", "Low", "Neutral"]}
GEN = {"openness": ["High"] * 3, "conscientiousness": ["High"] * 3, "extraversion": ["High", "High", "Neutral"],
       "agreeableness": ["Neutral"] * 3, "neuroticism": ["Low"] * 3}
# ref levels: High, Neutral (three-way tie), Low, Neutral, Low; gen: High, High, High, Neutral, Low.
# distance 0 + 1 + 2 + 0 + 0 = 3 -> alignment 0.7


def test_cs_mean_counts_invalid_separately():
    agg = cs_mean(pd.DataFrame(cs_rows("p", "m", "j", [5, 3, "invalid", 4, "failed"])))
    assert agg.value == pytest.approx(4.0) and agg.n == 3 and agg.invalid == 2
    none = cs_mean(pd.DataFrame(cs_rows("p", "m", "j", ["invalid"])))
    assert math.isnan(none.value) and none.n == 0 and none.invalid == 1


def test_contradiction_ratio_over_all_ok_judgments():
    agg = contradiction_ratio(pd.DataFrame(fc_rows("p", "m", "j", ["Contradiction", "Neutral", "Entailment",
                                                                    "Contradiction", "invalid"])))
    assert agg.value == pytest.approx(0.5) and agg.n == 4 and agg.invalid == 1


def test_trait_levels_and_alignment():
    ref = pd.DataFrame(vote_rows(REF))
    gen = pd.DataFrame(vote_rows(GEN))
    levels = trait_levels(ref)
    assert levels["conscientiousness"] == ("Neutral", pytest.approx(1 / 3))
    assert levels["openness"] == ("High", pytest.approx(2 / 3))
    agg = ps_alignment(ref, gen)
    assert agg.value == pytest.approx(0.7) and agg.n == 5 and agg.invalid == 0
    assert ps_alignment(ref, ref).value == pytest.approx(1.0)


def test_alignment_is_nan_without_three_valid_votes_per_trait():
    broken = {**GEN, "extraversion": ["High", "invalid", "High"]}
    agg = ps_alignment(pd.DataFrame(vote_rows(REF)), pd.DataFrame(vote_rows(broken)))
    assert math.isnan(agg.value) and agg.n == 4 and agg.invalid == 1
    missing = {t: v for t, v in GEN.items() if t != "openness"}
    assert math.isnan(ps_alignment(pd.DataFrame(vote_rows(REF)), pd.DataFrame(vote_rows(missing))).value)


def mcq_rows(pid, method, spec):
    """spec: (n_options, interview_id, correct, reward, status)."""
    return [{"personality_id": pid, "method": method, "n_options": n, "item_id": f"x{i}#{n}", "interview_id": itv,
             "correct": c, "reward": r, **calls(st, prompt=100, completion=5, cost=0.01)}
            for i, (n, itv, c, r, st) in enumerate(spec)]


MCQ = [(3, "i1", True, 1.0, "ok"), (3, "i1", False, -1.0, "ok"), (3, "i2", False, -0.5, "invalid"),
       (4, "i1", True, 1.0, "ok"), (4, "i1", False, -0.5, "ok")]


def test_mcq_scores_per_option_count():
    out = mcq_scores(pd.DataFrame(mcq_rows("p", "m", MCQ)))
    assert out["mcq3_accuracy"] == pytest.approx(1 / 3) and out["mcq3_reward"] == pytest.approx(-0.5 / 3)
    assert out["mcq4_accuracy"] == pytest.approx(0.5) and out["mcq4_reward"] == pytest.approx(0.25)
    assert out["mcq_invalid"] == 1
    only3 = mcq_scores(pd.DataFrame(mcq_rows("p", "m", MCQ[:3])))
    assert math.isnan(only3["mcq4_accuracy"]) and math.isnan(only3["mcq4_reward"])


def frames():
    gens = pd.DataFrame([{"personality_id": "p1", "method": "m", "qa_id": f"q{i}", **calls("ok", 1000, 50, 0.1)}
                         for i in range(4)]
                        + [{"personality_id": "p1", "method": "other", "qa_id": "q9", **calls("ok", 1, 1, 1.0)}])
    cs = pd.DataFrame(cs_rows("p1", "m", "A", [5, 3, 4, "invalid"]) + cs_rows("p1", "m", "B", [1, 2, 2, 1])
                      + cs_rows("p2", "m", "A", [1, 1]) + cs_rows("p1", "other", "A", [1]))
    fc = pd.DataFrame(fc_rows("p1", "m", "A", ["Contradiction", "Neutral", "Neutral", "Neutral"])
                      + fc_rows("p1", "m", "B", ["Entailment"] * 3 + ["failed"]))
    gps = pd.DataFrame(vote_rows(GEN, personality_id="p1", method="m", judge="A")
                       + vote_rows(REF, personality_id="p1", method="m", judge="B"))
    rps = pd.DataFrame(vote_rows(REF, personality_id="p1", judge="A") + vote_rows(REF, personality_id="p1", judge="B")
                       + vote_rows(GEN, personality_id="p2", judge="A"))
    mcq = pd.DataFrame(mcq_rows("p1", "m", MCQ) + mcq_rows("p1", "other", MCQ[:1]))
    return dict(generations=gens, content_similarity=cs, factual_consistency=fc, generated_personality=gps,
                reference_personality=rps, mcq_answers=mcq)


def test_personality_scores_one_row_per_judge():
    df = personality_scores("p1", "m", **frames(), n_train_pairs=17)
    assert list(df.columns) == list(METHOD_SCORE_COLUMNS)
    assert df["judge"].tolist() == ["A", "B"]
    a, b = df.iloc[0], df.iloc[1]
    assert (a.cs_mean, a.cs_n, a.cs_invalid) == (pytest.approx(4.0), 3, 1)
    assert (b.cs_mean, b.cs_n, b.cs_invalid) == (pytest.approx(1.5), 4, 0)
    assert (a.contradiction_ratio, a.fc_n, a.fc_invalid) == (pytest.approx(0.25), 4, 0)
    assert (b.contradiction_ratio, b.fc_n, b.fc_invalid) == (pytest.approx(0.0), 3, 1)
    assert a.ps_alignment == pytest.approx(0.7) and b.ps_alignment == pytest.approx(1.0)
    for row in (a, b):  # MCQ is judge-independent
        assert row.mcq3_accuracy == pytest.approx(1 / 3) and row.mcq4_reward == pytest.approx(0.25)
        assert row.mcq_invalid == 1 and row.n_test_questions == 4 and row.n_train_pairs == 17
    # usage: 4 generations (1000/50/0.1 each) + 3 MCQ group calls (100/5/0.01) + judge A's 4 CS + 4 FC + 15 PS.
    assert a.prompt_tokens == 4 * 1000 + 3 * 100 + (4 + 4 + 15) * 10
    assert a.completion_tokens == 4 * 50 + 3 * 5 + (4 + 4 + 15) * 2
    assert a.cost_usd == pytest.approx(0.4 + 0.03 + 23 * 0.001)
    assert df["cs_n"].dtype == np.int64 and df["cs_mean"].dtype == np.float64


def test_personality_scores_explicit_judges_and_missing_tables():
    df = personality_scores("p1", "m", generations=frames()["generations"], judges=["Z"], n_train_pairs=3)
    row = df.iloc[0]
    assert row.judge == "Z" and row.cs_n == 0 and math.isnan(row.cs_mean) and math.isnan(row.ps_alignment)
    assert math.isnan(row.mcq3_accuracy) and row.mcq_invalid == 0 and row.n_test_questions == 4
    assert personality_scores("p1", "m").empty


def _scores(rows):
    base = {c: 0 for c in METHOD_SCORE_COLUMNS}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_macro_average_per_method_and_judge():
    nan = float("nan")
    ms = _scores([
        {"personality_id": "p1", "method": "m", "judge": "A", "cs_mean": 4.0, "contradiction_ratio": 0.1,
         "ps_alignment": 0.8, "mcq3_accuracy": 1.0, "cs_invalid": 2, "cost_usd": 0.5, "prompt_tokens": 10},
        {"personality_id": "p2", "method": "m", "judge": "A", "cs_mean": 2.0, "contradiction_ratio": nan,
         "ps_alignment": 0.6, "mcq3_accuracy": 0.5, "cs_invalid": 1, "cost_usd": 0.25, "prompt_tokens": 5},
        {"personality_id": "p3", "method": "m", "judge": "A", "cs_mean": 3.0, "contradiction_ratio": 0.3,
         "ps_alignment": nan, "mcq3_accuracy": 0.0},
        {"personality_id": "p1", "method": "m", "judge": "B", "cs_mean": 5.0, "contradiction_ratio": 0.0,
         "ps_alignment": 1.0, "mcq3_accuracy": 1.0},
    ])
    out = macro_average(ms, n_resamples=500, seed=1)
    assert out[["method", "judge"]].values.tolist() == [["m", "A"], ["m", "B"]]
    a, b = out.iloc[0], out.iloc[1]
    assert a.n_personalities == 3 and b.n_personalities == 1
    assert a.cs_mean == pytest.approx(3.0) and a.contradiction_ratio == pytest.approx(0.2)
    assert a.ps_alignment == pytest.approx(0.7) and a.mcq3_accuracy == pytest.approx(0.5)
    assert a.cs_mean_ci_low <= 3.0 <= a.cs_mean_ci_high and a.cs_mean_ci_low >= 2.0 and a.cs_mean_ci_high <= 4.0
    assert math.isnan(b.cs_mean_ci_low) and b.cs_mean == 5.0  # one personality: no interval
    assert a.cs_invalid == 3 and a.cost_usd == pytest.approx(0.75) and a.prompt_tokens == 15
    plain = macro_average(ms, with_ci=False)
    assert plain.cs_mean.tolist() == out.cs_mean.tolist() and plain.cs_mean_ci_low.isna().all()


def test_macro_average_columns_match_the_leaderboard_schema():
    pa = pytest.importorskip("pyarrow")
    tables = pytest.importorskip("interviewsim_core.pipeline.tables")
    out = macro_average(_scores([{"personality_id": "p", "method": "m", "judge": "j"}]), with_ci=False)
    assert list(out.columns) == tables.SCHEMAS["leaderboard"].names
    pa.Table.from_pandas(out, schema=tables.SCHEMAS["leaderboard"], preserve_index=False)
    ms = personality_scores("p1", "m", **frames(), n_train_pairs=1)
    pa.Table.from_pandas(ms, schema=tables.SCHEMAS["method_scores"], preserve_index=False)


def _percentile_by_hand(values, seed, n_resamples, confidence=0.95):
    """The percentile bootstrap written out: resample sorted values, take the tail quantiles."""
    x = np.asarray(values, dtype=float)
    x = np.sort(x[~np.isnan(x)])
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_resamples, len(x)))
    alpha = (1 - confidence) / 2
    return tuple(np.percentile(x[idx].mean(axis=1), [100 * alpha, 100 * (1 - alpha)]))


def test_macro_interval_is_a_seeded_percentile_bootstrap_independent_of_row_order():
    from interviewsim_core.metrics.scores import CI_N_RESAMPLES, macro_interval

    values = [0.9, 0.1, 0.5, float("nan"), 0.3, 0.2, 0.75]
    ci = macro_interval(values, seed=4)
    low, high = _percentile_by_hand(values, 4, CI_N_RESAMPLES)
    assert (ci.low, ci.high) == pytest.approx((low, high), abs=1e-12)
    assert ci.estimate == pytest.approx(np.nanmean(values)) and ci.n == 6
    shuffled = macro_interval(list(reversed(values)), seed=4)
    assert (shuffled.low, shuffled.high) == (ci.low, ci.high)
    assert macro_interval(values, seed=5) != ci  # the seed does drive the draws


def test_macro_average_and_report_leaderboard_give_the_same_intervals():
    """The leaderboard Parquet and the report show one CI for one number, whatever the row order."""
    from interviewsim_core.report.leaderboard import leaderboard

    rng = np.random.default_rng(0)
    rows = []
    for judge in ("A", "B"):
        for method in ("simple", "chrono-100"):
            for i in range(7):
                rows.append({"personality_id": f"p{i}", "method": method, "judge": judge,
                             "cs_mean": float(rng.uniform(1, 5)), "contradiction_ratio": float(rng.uniform(0, 0.5)),
                             "ps_alignment": float(rng.uniform(0.4, 1)), "mcq3_accuracy": float(i % 3) / 2,
                             "mcq3_reward": float(i % 4) / 4 - 0.25, "mcq4_accuracy": float(i % 2),
                             "mcq4_reward": float(i % 5) / 5})
    ms = _scores(rows)
    # MCQ is judge-independent: give judge B the same MCQ values as judge A.
    mcq_cols = ["mcq3_accuracy", "mcq3_reward", "mcq4_accuracy", "mcq4_reward"]
    ms.loc[ms.judge == "B", mcq_cols] = ms.loc[ms.judge == "A", mcq_cols].to_numpy()
    macro = macro_average(ms, seed=3).set_index(["method", "judge"])
    board = leaderboard(ms.sample(frac=1, random_state=1), seed=3)
    assert len(board) == 2 * 2 * 3 + 2 * 4
    for r in board.itertuples():
        judges = [r.judge] if isinstance(r.judge, str) else ["A", "B"]
        for judge in judges:
            m = macro.loc[(r.method, judge)]
            assert (m[r.metric], m[f"{r.metric}_ci_low"], m[f"{r.metric}_ci_high"]) == pytest.approx(
                (r.value, r.ci_low, r.ci_high), abs=1e-12), (r.method, judge, r.metric)
            assert m[f"{r.metric}_ci_low"] < m[f"{r.metric}_ci_high"]
