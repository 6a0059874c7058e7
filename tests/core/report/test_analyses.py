"""The report's analyses on small hand-made tables whose answers are known by construction."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.storage import partition_path, write_frame
from interviewsim_core.pipeline.tables import empty_frame, schema_of
from interviewsim_core.report import build_report, default_pairs, paired_tests, write_report
from interviewsim_core.report.breakdowns import load_categories, memory_ablation
from interviewsim_core.report.leaderboard import leaderboard
from interviewsim_core.report.mcq_analyses import length_bias, training_groups
from interviewsim_core.report.overlap import question_overlap

from .htmlscan import ReportPage


def _scores(rows: list[tuple[str, str, str, float, float]]) -> pd.DataFrame:
    """method_scores rows from (personality, method, judge, cs, cr); other metrics fixed."""
    base = {f.name: (0 if pa.types.is_integer(f.type) or pa.types.is_floating(f.type) else None)
            for f in schema_of("method_scores")}
    out = []
    for pid, method, judge, cs, cr in rows:
        out.append({**base, "personality_id": pid, "method": method, "judge": judge, "cs_mean": cs,
                    "contradiction_ratio": cr, "ps_alignment": 0.8, "mcq3_accuracy": cs / 5, "mcq3_reward": 0.1,
                    "mcq4_accuracy": np.nan, "mcq4_reward": np.nan, "cost_usd": 0.0})
    return pd.DataFrame(out)


def test_default_pairs_follow_the_paper_for_methods_present():
    methods = ["simple", "wiki", "wiki-long", "chrono-100", "chrono-500", "chrono-1000", "memory-100"]
    pairs = default_pairs(methods)
    assert pairs[:6] == [("wiki", "simple"), ("wiki-long", "simple"), ("memory-100", "simple"),
                         ("chrono-100", "simple"), ("chrono-500", "simple"), ("chrono-1000", "simple")]
    assert set(pairs[6:]) == {("chrono-1000", "memory-100"), ("chrono-500", "chrono-100"),
                              ("chrono-1000", "chrono-500"), ("chrono-1000", "chrono-100"), ("wiki-long", "wiki")}
    assert default_pairs(["chrono-100", "memory-10"]) == []


def test_leaderboard_macro_average_per_judge_and_direction_of_best():
    ms = _scores([("p1", "simple", "J1", 2.0, 0.30), ("p2", "simple", "J1", 4.0, 0.10),
                  ("p1", "chrono-100", "J1", 3.0, 0.05), ("p2", "chrono-100", "J1", 3.5, 0.05),
                  ("p1", "simple", "J2", 1.0, 0.5), ("p2", "simple", "J2", 1.0, 0.5),
                  ("p1", "chrono-100", "J2", 2.0, 0.6), ("p2", "chrono-100", "J2", 2.0, 0.4)])
    board = leaderboard(ms)
    lb = board[board.view == "common"].set_index(["method", "judge", "metric"])
    assert lb.loc[("simple", "J1", "cs_mean"), "value"] == pytest.approx(3.0)
    assert lb.loc[("chrono-100", "J1", "cs_mean"), "value"] == pytest.approx(3.25)
    assert bool(lb.loc[("chrono-100", "J1", "cs_mean"), "best"]) and not bool(lb.loc[("simple", "J1", "cs_mean"), "best"])
    # lower CR wins; under J2 the two methods tie at 0.5 and both are marked
    assert bool(lb.loc[("chrono-100", "J1", "contradiction_ratio"), "best"])
    assert bool(lb.loc[("simple", "J2", "contradiction_ratio"), "best"])
    assert bool(lb.loc[("chrono-100", "J2", "contradiction_ratio"), "best"])
    ci = lb.loc[("simple", "J1", "cs_mean")]
    assert ci["ci_low"] <= 3.0 <= ci["ci_high"] and ci["n_personalities"] == 2
    # never averaged across judges: J1 and J2 values stay apart, MCQ appears once with judge None
    mcq = board.query("metric == 'mcq3_accuracy' and view == 'common'")
    assert mcq["judge"].isna().all() and len(mcq) == 2
    assert board.query("metric == 'mcq4_accuracy'")["value"].isna().all()


def test_paired_tests_pair_on_personality_and_drop_missing():
    ms = _scores([(f"p{i}", "simple", "J", 2.0, 0.2) for i in range(6)]
                 + [(f"p{i}", "chrono-100", "J", 3.0, 0.1) for i in range(5)])
    pt = paired_tests(ms).set_index(["judge", "metric"])
    row = pt.loc[("J", "cs_mean")]
    assert row["n"] == 5 and row["mean_difference"] == pytest.approx(1.0)
    assert row["p_value"] == pytest.approx(2 / 32)  # all five differences positive: 2 of 2^5 sign patterns
    assert row["better"] == "a" and pt.loc[("J", "contradiction_ratio"), "better"] == "a"


def test_training_groups_use_min_ten_or_n_groups():
    rows = []
    for i in range(4):
        for k in range(3):
            rows.append({"personality_id": f"p{i}", "method": "simple", "n_options": 3, "item_id": f"q{k}",
                         "correct": k < i, "reward": 1.0 if k < i else -0.5, "correct_label": "A"})
    ans = pd.DataFrame(rows)
    n_train = pd.Series({"p0": 10, "p1": 20, "p2": 30, "p3": 40})
    g = training_groups(ans, n_train)
    assert list(g["group"]) == ["1", "2", "3", "4", "All"]
    assert list(g["accuracy"][:4]) == pytest.approx([0, 1 / 3, 2 / 3, 1.0])
    assert g.iloc[-1]["avg_train_pairs"] == pytest.approx(25.0)
    assert list(training_groups(ans, n_train, max_groups=2)["n_personalities"]) == [2, 2, 4]


def test_length_bias_strictly_longest():
    items = pd.DataFrame([
        {"personality_id": "p", "item_id": "a", "labels": ["A", "B", "C"], "texts": ["long answer", "x", "y"],
         "correct_label": "A"},
        {"personality_id": "p", "item_id": "b", "labels": ["A", "B", "C"], "texts": ["tie", "abc", "q"],
         "correct_label": "A"},
    ])
    ans = pd.DataFrame([{"personality_id": "p", "item_id": i, "method": "m", "n_options": 3, "correct": c,
                         "reward": 1.0} for i, c in (("a", True), ("b", False))])
    r = length_bias(ans, items).iloc[0]
    assert (r["acc_longest"], r["n_longest"], r["acc_not_longest"], r["n_not_longest"]) == (1.0, 1, 0.0, 1)
    assert r["delta"] == pytest.approx(1.0)


def test_overlap_best_similarity_and_terciles():
    rows = [("p", "t1", "train", "tax bill vote", 0), ("p", "t2", "train", "chess opening theory", 1)]
    rows += [("p", f"h{i}", "test", q, 2 + i) for i, q in enumerate(
        ["tax bill vote", "chess opening", "favourite colour", "tax vote", "garden roses", "opening theory chess"])]
    heldout = pd.DataFrame(rows, columns=["personality_id", "qa_id", "partition", "question", "order"])
    q = question_overlap(heldout).set_index("qa_id")
    assert q.loc["h0", "best_similarity"] == pytest.approx(1.0, abs=1e-6)
    assert q.loc["h2", "best_similarity"] == pytest.approx(0.0, abs=1e-6)
    assert q.loc["h0", "tercile"] == "high" and q.loc["h2", "tercile"] == "low"
    assert q["tercile"].value_counts().to_dict() == {"low": 2, "mid": 2, "high": 2}


def test_categories_csv_validated(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("personality_id,group\np,x\n")
    with pytest.raises(ConfigError, match="category"):
        load_categories(bad)
    dup = tmp_path / "dup.csv"
    dup.write_text("personality_id,category\np,x\np,y\n")
    with pytest.raises(ConfigError, match="more than one"):
        load_categories(dup)


def test_memory_ablation_needs_two_variants():
    ms = _scores([("p1", m, "J", 3.0, 0.1) for m in ("memory-10", "memory-100", "simple")])
    ab = memory_ablation(leaderboard(ms))
    assert set(ab["method"]) == {"memory-10", "memory-100"}
    assert memory_ablation(leaderboard(_scores([("p1", "memory-10", "J", 3.0, 0.1)]))).empty


def test_empty_data_root_reports_every_section_not_run(tmp_path):
    paths = write_report(tmp_path, tmp_path / "out")
    doc = json.loads(paths.json.read_text())
    assert {s["status"] for s in doc["sections"].values()} == {"not_run"}
    page = ReportPage(paths.html.read_text())
    assert set(page.sections.values()) == {"not_run"} and "Not run:" in paths.html.read_text()


def test_one_judge_says_agreement_needs_two(tmp_path):
    ms = _scores([("p1", "simple", "only-judge", 3.0, 0.1)])
    write_frame(ms, "method_scores", partition_path(tmp_path, "method_scores", "p1", "simple"))
    write_frame(empty_frame("premise_verdicts"), "premise_verdicts", partition_path(tmp_path, "premise_verdicts", "p1"))
    data = build_report(tmp_path)
    sec = data.section("judge_agreement")
    assert sec.status == "not_run" and "at least two judges" in sec.note and "only-judge" in sec.note
    assert data.section("leaderboard").status == "ok" and data.section("premise").status == "not_run"
