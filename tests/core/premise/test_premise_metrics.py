"""Headline metrics on a fixed verdict table, checked against numbers computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from interviewsim_core.premise.metrics import (
    PAPER_FACT_SUMMARY_CONTRADICTED,
    attribution_split,
    cross_check,
    dominant_attribution,
    headline,
    rate_table,
)

P, A, E = "PRESENT_IN_WINDOW", "ABSENT_FROM_WINDOW", "ABSENT_EVERYWHERE"


@pytest.fixture
def df():
    rows = [
        # personality, kind, verdict, score, attributions
        ("X", "fact_summary", "PASS", 1.0, []),
        ("X", "fact_summary", "FAIL", 0.6, [P, P, E]),
        ("X", "fact_summary", "FAIL", 0.4, [A, E]),
        ("X", "atomic_item", "PASS", 0.8, [P]),           # attributions of PASS rows are not counted
        ("Y", "fact_summary", "FAIL", 0.2, [E]),
        ("Y", "atomic_item", "INVALID", None, []),
        ("Y", "atomic_item", "ERROR", None, []),
        ("Y", "atomic_item", "INVALID", 0.9, []),          # pass-2 invalid keeps a score; excluded anyway
    ]
    return pd.DataFrame(
        [{"personality_id": p, "artifact_kind": k, "verdict": v, "decontextuality_score": s, "attributions": a,
          "conclusion": f"c{i}", "labels": []} for i, (p, k, v, s, a) in enumerate(rows)]
    )


def test_overall_rates_exclude_invalid_and_error(df):
    o = rate_table(df).iloc[0]
    assert (o.n, o.n_pass, o.n_fail, o.n_invalid, o.n_error) == (8, 2, 3, 2, 1)
    assert o.pass_rate == pytest.approx(2 / 5)
    assert o.mean_decontextuality == pytest.approx((1.0 + 0.6 + 0.4 + 0.8 + 0.2) / 5)
    assert 0.0 <= o.pass_rate_ci_low <= o.pass_rate <= o.pass_rate_ci_high <= 1.0
    assert 0.2 <= o.decontextuality_ci_low <= o.mean_decontextuality <= o.decontextuality_ci_high <= 1.0


def test_rates_per_kind_and_personality(df):
    k = rate_table(df, "artifact_kind").set_index("artifact_kind")
    assert k.loc["fact_summary", "pass_rate"] == pytest.approx(1 / 4)
    assert k.loc["atomic_item", "pass_rate"] == 1.0
    assert math.isnan(k.loc["atomic_item", "pass_rate_ci_low"])  # one judged row: no interval
    p = rate_table(df, "personality_id").set_index("personality_id")
    assert p.loc["X", "pass_rate"] == pytest.approx(2 / 4) and p.loc["Y", "pass_rate"] == 0.0
    assert math.isnan(p.loc["Y", "pass_rate_ci_low"])  # one judged row
    fails = rate_table(df[df["verdict"] == "FAIL"]).iloc[0]
    assert (fails.pass_rate_ci_low, fails.pass_rate_ci_high) == (0.0, 0.0)  # constant data: zero width
    assert p.loc["Y", "n_invalid"] == 2 and p.loc["Y", "n_error"] == 1


def test_bootstrap_interval_is_reproducible(df):
    assert rate_table(df).equals(rate_table(df))


def test_attribution_split_counts_only_failed_conclusions(df):
    s = attribution_split(df).set_index("attribution")
    assert list(s.index) == [P, A, E]
    assert list(s["count"]) == [2, 1, 3]
    assert list(s["share"]) == pytest.approx([2 / 6, 1 / 6, 3 / 6])
    # dominant per FAILed conclusion: [P,P,E] -> P; [A,E] tie -> A (seed order); [E] -> E
    assert list(s["dominant"]) == [1, 1, 1]
    assert list(s["dominant_share"]) == pytest.approx([1 / 3] * 3)


def test_attribution_split_with_no_failures_has_zero_rows_and_nan_shares():
    empty = pd.DataFrame({"verdict": ["PASS"], "attributions": [[P]]})
    s = attribution_split(empty)
    assert list(s["count"]) == [0, 0, 0] and s["share"].isna().all()


@pytest.mark.parametrize(
    "atts, expected",
    [([], None), ([E, P, E], E), ([E, A], A), ([A, P], P), (["OTHER"], None)],
)
def test_dominant_attribution(atts, expected):
    assert dominant_attribution(atts) == expected


def test_cross_check_against_paper_figure(df):
    cc = cross_check(df)
    assert (cc.n_statements, cc.n_fail) == (4, 3)
    assert cc.fail_share == pytest.approx(0.75)
    assert cc.paper_contradicted_share == pytest.approx(10 / 300) == PAPER_FACT_SUMMARY_CONTRADICTED
    assert "3.3%" in cc.paper_source


def test_headline_text_starts_with_attribution_split_and_json_has_no_nan(df):
    h = headline(df)
    text = h.to_text()
    assert text.splitlines()[0].startswith("Failure attribution")
    assert text.index("PRESENT_IN_WINDOW") < text.index("Pass rate")
    assert "3.3%" in text
    d = h.to_dict()
    assert list(d) == ["attribution_split", "overall", "by_artifact_kind", "by_personality", "cross_check"]

    def walk(x):
        if isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)
        else:
            assert not (isinstance(x, float) and np.isnan(x))

    walk(d)
