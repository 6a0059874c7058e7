from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from interviewsim_core.metrics.scores import (
    METHOD_SCORE_COLUMNS,
    contradiction_ratio,
    cs_mean,
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


def test_mcq_family_per_option_count_counts_malformed_and_failed():
    failed = [(3, "i3", None, None, "failed"), (3, "i3", None, None, "failed")]
    df = personality_scores("p", "m", mcq_answers=pd.DataFrame(mcq_rows("p", "m", MCQ + failed)), judges=["J"])
    row = df.iloc[0]
    # The malformed answer is scored (0 / -0.5) and counted; the failed call's items have no value.
    assert row.mcq3_accuracy == pytest.approx(1 / 3) and row.mcq3_reward == pytest.approx(-0.5 / 3)
    assert row.mcq4_accuracy == pytest.approx(0.5) and row.mcq4_reward == pytest.approx(0.25)
    assert (row.mcq3_expected, row.mcq3_n, row.mcq3_malformed, row.mcq3_failed) == (5, 3, 1, 2)
    assert row.mcq3_cells == ["x0#3", "x1#3", "x2#3"] and row.mcq3_reward_items == [1.0, -1.0, -0.5]
    only3 = personality_scores("p", "m", mcq_answers=pd.DataFrame(mcq_rows("p", "m", MCQ[:3])), judges=["J"])
    assert math.isnan(only3.iloc[0].mcq4_accuracy) and only3.iloc[0].mcq4_expected == 0


def test_mcq_items_that_were_never_answered_are_counted_by_why():
    """20 items, all invalid: no answer rows at all, yet 20 expected and 20 invalid (not "not run")."""
    items = pd.DataFrame([{"personality_id": "p", "item_id": f"it{i}#3", "qa_id": f"it{i}", "n_options": 3,
                           "status": "invalid"} for i in range(20)])
    row = personality_scores("p", "m", mcq_answers=pd.DataFrame(columns=["personality_id", "method", "n_options",
                                                                         "item_id", "status", "reward", "correct"]),
                             mcq_items=items, judges=["J"]).iloc[0]
    assert (row.mcq3_expected, row.mcq3_n, row.mcq3_invalid, row.mcq3_not_run) == (20, 0, 20, 0)
    assert math.isnan(row.mcq3_accuracy)


def test_failed_generations_still_get_judge_level_accounting():
    gens = pd.DataFrame([{"personality_id": "p", "method": "m", "qa_id": f"q{i}", **calls(st)}
                         for i, st in enumerate(["ok", "ok", "failed", "invalid"])])
    cs = pd.DataFrame(cs_rows("p", "m", "J", [4, "failed"]))
    row = personality_scores("p", "m", generations=gens, content_similarity=cs, judges=["J"],
                             test_qa_ids=["q0", "q1", "q2", "q3", "q4"]).iloc[0]
    # q0 valid; q1 judge call failed; q2 generation failed; q3 generation invalid; q4 no row at all.
    assert (row.cs_expected, row.cs_n, row.cs_failed, row.cs_invalid, row.cs_not_run) == (5, 1, 2, 1, 1)
    assert row.cs_cells == ["q0"] and row.cs_mean_items == [4.0]
    # PS: no valid generation would leave the generated side without votes; counted, not absent.
    dead = gens.assign(status="failed")
    ps = personality_scores("p", "m", generations=dead, judges=["J"]).iloc[0]
    assert ps.ps_expected == 30 and ps.ps_failed == 15 and ps.ps_not_run == 15


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
    df = personality_scores("p1", "m", **frames(), n_train_pairs=17, embedding_model="text-embedding-3-small")
    assert list(df.columns) == list(METHOD_SCORE_COLUMNS)
    assert df["judge"].tolist() == ["A", "B"]
    assert (df["embedding_model"] == "text-embedding-3-small").all()
    a, b = df.iloc[0], df.iloc[1]
    assert (a.cs_mean, a.cs_n, a.cs_invalid, a.cs_failed) == (pytest.approx(4.0), 3, 1, 0)
    assert (b.cs_mean, b.cs_n, b.cs_invalid) == (pytest.approx(1.5), 4, 0)
    assert (a.contradiction_ratio, a.fc_n, a.fc_invalid) == (pytest.approx(0.25), 4, 0)
    assert (b.contradiction_ratio, b.fc_n, b.fc_invalid, b.fc_failed) == (pytest.approx(0.0), 3, 0, 1)
    assert a.ps_alignment == pytest.approx(0.7) and b.ps_alignment == pytest.approx(1.0)
    assert a.ps_n == a.ps_expected == 30
    for row in (a, b):  # MCQ is judge-independent
        assert row.mcq3_accuracy == pytest.approx(1 / 3) and row.mcq4_reward == pytest.approx(0.25)
        assert row.mcq3_malformed == 1 and row.n_test_questions == 4 and row.n_train_pairs == 17
    # usage: 4 generations (1000/50/0.1 each) + 3 MCQ group calls (100/5/0.01) + judge A's 4 CS + 4 FC + 15 PS.
    assert a.prompt_tokens == 4 * 1000 + 3 * 100 + (4 + 4 + 15) * 10
    assert a.completion_tokens == 4 * 50 + 3 * 5 + (4 + 4 + 15) * 2
    assert a.cost_usd == pytest.approx(0.4 + 0.03 + 23 * 0.001)
    assert df["cs_n"].dtype == np.int64 and df["cs_mean"].dtype == np.float64


def test_personality_scores_explicit_judges_and_missing_tables():
    df = personality_scores("p1", "m", generations=frames()["generations"], judges=["Z"], n_train_pairs=3)
    row = df.iloc[0]
    assert row.judge == "Z" and row.cs_n == 0 and math.isnan(row.cs_mean) and math.isnan(row.ps_alignment)
    assert row.cs_not_run == row.cs_expected == 4
    assert math.isnan(row.mcq3_accuracy) and row.mcq3_expected == 0 and row.n_test_questions == 4
    assert personality_scores("p1", "m").empty


def test_method_scores_rows_fit_the_table_schema_and_round_trip():
    tables = pytest.importorskip("interviewsim_core.pipeline.tables")
    ms = personality_scores("p1", "m", **frames(), n_train_pairs=1)
    back = tables.conform(ms, "method_scores")
    assert back["cs_cells"].tolist() == ms["cs_cells"].tolist()
    assert back["mcq3_reward_items"].tolist() == ms["mcq3_reward_items"].tolist()


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


def test_every_heldout_question_expects_an_item_per_configured_option_count():
    qa = [f"q{i}" for i in range(5)]
    atomic = pd.DataFrame({"personality_id": "p", "qa_id": qa, "status": ["ok", "invalid", "failed", "ok", "ok"]})
    items = pd.DataFrame([{"personality_id": "p", "item_id": f"{q}#{n}", "qa_id": q, "n_options": n, "status": st}
                          for q in ("q0", "q3", "q4") for n, st in ((3, "ok"), (4, "invalid" if q == "q4" else "ok"))])
    answers = pd.DataFrame([{"personality_id": "p", "method": "m", "n_options": n, "item_id": f"{q}#{n}", "qa_id": q,
                             "interview_id": "i", "correct": True, "reward": 1.0, **calls("ok")}
                            for q in ("q0", "q3") for n in (3, 4)])
    row = personality_scores("p", "m", mcq_answers=answers, mcq_items=items, atomic_items=atomic, mcq_options=(3, 4),
                             test_qa_ids=qa, judges=["J"]).iloc[0]
    # 3-option: q0, q3 answered; q4's item valid but unanswered (not run); q1, q2 had no valid atomic
    # item, so no MCQ item was generated for them: counted as no_item, not as invalid/failed MCQ items.
    assert (row.mcq3_expected, row.mcq3_n, row.mcq3_invalid, row.mcq3_failed, row.mcq3_not_run,
            row.mcq3_no_item) == (5, 2, 0, 0, 1, 2)
    # 4-option: q4's item itself was invalid.
    assert (row.mcq4_expected, row.mcq4_n, row.mcq4_invalid, row.mcq4_failed, row.mcq4_not_run,
            row.mcq4_no_item) == (5, 2, 1, 0, 0, 2)
    assert row.mcq3_cells == ["q0", "q3"]
    # An option count not configured expects nothing.
    only3 = personality_scores("p", "m", mcq_answers=answers[answers.n_options == 3], mcq_items=items,
                               atomic_items=atomic, mcq_options=(3,), test_qa_ids=qa, judges=["J"]).iloc[0]
    assert only3.mcq4_expected == 3 and only3.mcq4_n == 0  # items seen are still counted
