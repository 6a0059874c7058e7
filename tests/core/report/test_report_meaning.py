"""Issue 45, item 3: no number without its meaning, in the report (HTML and markdown).

The trial's figures, rebuilt by hand: a contradiction ratio whose floor and ceiling are equal within
noise, a `CR %` column that held fractions, `reference` shaded best in the tag breakdown, an interval
printed with its estimate on its edge, and a common-cells leaderboard without a word on normalised scores.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from interviewsim_core.metrics.normalised import COMMON_VIEW_NOTE, WITHIN_NOISE
from interviewsim_core.pipeline.tables import empty_frame
from interviewsim_core.report import build_report, leaderboard_markdown
from interviewsim_core.report.html import render_html

PEOPLE = [f"P{i}" for i in range(1, 7)]
CR = {"reference": [0.0, 0.1, 0.05, 0.0, 0.157, 0.0], "copy-nearest": [0.05, 0.05, 0.1, 0.0, 0.06, 0.06],
      "simple": [0.0] * 6, "wiki": [0.0, 0.05, 0.0, 0.0, 0.0, 0.04]}
CS = {"reference": [5.0] * 6, "copy-nearest": [2.0, 2.5, 1.5, 2.0, 2.5, 2.0], "simple": [3.0, 3.5, 2.5, 3.0, 3.0, 3.5],
      "wiki": [2.5, 3.0, 2.5, 3.5, 3.0, 2.0]}


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    ms = pd.DataFrame([{"personality_id": p, "method": m, "judge": "j", "cs_mean": CS[m][i],
                        "contradiction_ratio": CR[m][i]} for m in CR for i, p in enumerate(PEOPLE)])
    # One tagged question per personality: the reference never contradicts there, so it is the lowest CR.
    heldout = pd.DataFrame([{"personality_id": p, "qa_id": f"{p}_q", "partition": "test", "tags": ["Work"]}
                            for p in PEOPLE])
    labels = {"reference": "Entailment", "copy-nearest": "Contradiction", "simple": "Neutral", "wiki": "Contradiction"}
    fc = pd.DataFrame([{"personality_id": p, "qa_id": f"{p}_q", "method": m, "judge": "j", "status": "ok",
                        "label": labels[m] if i % 2 == 0 or m == "reference" else "Neutral"}
                       for m in CR for i, p in enumerate(PEOPLE)])
    cs = fc.drop(columns=["label"]).assign(score=3)
    given = {"method_scores": ms, "heldout_split": heldout, "factual_consistency": fc, "content_similarity": cs}
    # Every column of each table (the sections read model names, explanations...), empty where not given.
    return {n: pd.concat([empty_frame(n), t], ignore_index=True) for n, t in given.items()}


@pytest.fixture(scope="module")
def data(tables):
    return build_report(tables=tables, seed=0)


def test_a_normalised_score_within_noise_is_undefined_with_both_values(data):
    norm = data.section("calibration").tables["normalised"].set_index(["method", "metric"])
    row = norm.loc[("simple", "contradiction_ratio")]
    assert pd.isna(row["normalised"]) and row["norm_reason"].startswith(WITHIN_NOISE)
    assert "ceiling 5.12% [" in row["norm_reason"] and "floor 5.33% [" in row["norm_reason"]
    assert norm.loc[("simple", "cs_mean"), "norm_reason"] == ""  # CS: 2 vs 5, far apart: defined
    md = leaderboard_markdown(data)
    assert "| simple | j | contradiction_ratio | 0.000 | undefined: ceiling and floor within noise" in md


def test_the_cr_percent_column_holds_percents(data):
    page = render_html(data)
    cal = page[page.find('id="calibration"'):]
    m = re.search(r'<td[^>]*>wiki</td><td[^>]*>j</td><td[^>]*>CR %</td><td class="num" data-key="value" '
                  r'data-v="([^"]+)">([^<]+)</td>', cal)
    assert m, "the calibration table's CR row of wiki"
    assert float(m.group(1)) == pytest.approx(0.015, abs=1e-9) and m.group(2) == "1.50"  # value kept, shown in %
    assert "as fractions here" not in page


def test_calibration_methods_are_never_shaded_best_in_the_breakdowns(data):
    page = render_html(data)
    tag = page[page.find('id="tag_breakdown"'):]
    tag = tag[:tag.find("</table>")]
    best = re.findall(r'class="num best" data-key="[^"]*\|([^"|]+)"', tag)
    assert best and not set(best) & {"reference", "copy-nearest", "other-person"}, best


def test_an_interval_with_its_estimate_on_an_edge_carries_a_note(data):
    # simple's CR is 0 for everyone: 0.00 [0.00, 0.00]; the anchors' normalised values are 0 [0, 0] and 1 [1, 1].
    page = render_html(data)
    lb = page[page.find('id="leaderboard"'):]
    assert "[0.00, 0.00] (no spread: every resample gives the same value)" in lb[:lb.find("</table>")]
    norm = data.section("calibration").tables["normalised"].set_index(["method", "metric"])
    assert norm.loc[("reference", "cs_mean"), "norm_ci_note"].startswith("no spread")
    md = leaderboard_markdown(data)
    assert "0.00 [0.00, 0.00]†" in md and "\n† no spread: every resample gives the same value" in md


def test_the_common_view_says_in_one_line_why_it_has_no_normalised_score(data):
    page = render_html(data)
    lb = page[page.find('id="leaderboard"'):]
    assert f"No normalised score in this view: {COMMON_VIEW_NOTE}" in lb[:lb.find("</table>")]


def test_the_report_finds_the_categories_the_data_root_holds(tmp_path, tables):
    """Issue 45, item 4: without --categories, the category breakdown comes from the data root's own
    curation (qa_tags), as the demo's report had it; before, it said "No categories file given"."""
    (tmp_path / "qa_tags").mkdir()
    for i, p in enumerate(PEOPLE):
        pd.DataFrame([{"personality_id": p, "file": f"{p}/{k}.txt", "category": "Sports" if i < 3 else "Music",
                       "category_reason": "offline lexicon"} for k in range(2)]).to_parquet(tmp_path / "qa_tags" / f"{p}.parquet")
    sec = build_report(tmp_path, tables=tables, seed=0).section("category_breakdown")
    assert sec.status == "ok", sec.note
    assert set(sec.tables["by_category"]["group"]) == {"Sports", "Music"} and "qa_tags" in sec.note
    assert build_report(tables=tables, seed=0).section("category_breakdown").status == "not_run"
