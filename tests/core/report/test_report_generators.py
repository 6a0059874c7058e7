"""Issue 44, report side: a study with two generators, built from tables in memory whose numbers are known.

The first generator ("cold") keeps the plain method names, the other ("warm") has ``warm/<method>`` keys, and the
calibration methods are shared; every number the Generators section shows must be the leaderboard's.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from interviewsim_core.report import build_report, leaderboard_markdown
from interviewsim_core.report.generators import FIRST_GENERATOR, first_generator
from interviewsim_core.report.html import render_html
from interviewsim_core.report.plots import tradeoff_plot

from .test_analyses import _scores

PEOPLE = [f"p{i}" for i in range(6)]
# (method key, CS, CR) per personality i: warm is better on simple, worse on chrono-100, by amounts that vary.
ROWS = [(f"p{i}", m, "J", cs, cr) for i in range(6) for m, cs, cr in (
    ("simple", 2.0 + 0.1 * i, 0.30), ("warm/simple", 3.0 + 0.05 * i, 0.10 + 0.01 * i),
    ("chrono-100", 3.5, 0.05 + 0.01 * i), ("warm/chrono-100", 3.0 - 0.1 * i, 0.20),
    ("reference", 4.5 + 0.05 * i, 0.0), ("copy-nearest", 1.0 + 0.1 * i, 0.5))]


@pytest.fixture(scope="module")
def two():
    return build_report(tables={"method_scores": _scores(ROWS)}, first_generator="cold")


@pytest.fixture(scope="module")
def one():
    return build_report(tables={"method_scores": _scores([r for r in ROWS if not r[1].startswith("warm/")])},
                        first_generator="cold")


def _board(data):
    return data.section("leaderboard").tables["leaderboard"]


def test_leaderboard_rows_carry_their_generator_and_method(two):
    board = _board(two)
    names = set(zip(board["method"], board["generator"], board["base_method"]))
    assert names == {("simple", "cold", "simple"), ("chrono-100", "cold", "chrono-100"),
                     ("warm/simple", "warm", "simple"), ("warm/chrono-100", "warm", "chrono-100"),
                     ("reference", "", "reference"), ("copy-nearest", "", "copy-nearest")}
    assert two.meta["generators"] == ["cold", "warm"]
    md = leaderboard_markdown(two)
    assert md.startswith("| Generator | Method |")
    assert "| warm | chrono-100 |" in md and "| shared | reference |" in md


def test_every_generator_is_normalised_against_the_same_shared_calibration_rows(two):
    norm = two.section("calibration").tables["normalised"].set_index(["method", "metric"])
    board = _board(two)
    allv = board[board["view"] == "all_valid"].set_index(["method", "metric"])["value"]
    floor, ceiling = allv[("copy-nearest", "cs_mean")], allv[("reference", "cs_mean")]
    for key, gen in (("simple", "cold"), ("warm/simple", "warm"), ("warm/chrono-100", "warm")):
        r = norm.loc[(key, "cs_mean")]
        assert r["generator"] == gen and r["norm_floor"] == "copy-nearest" and r["norm_ceiling"] == "reference"
        assert r["floor_value"] == pytest.approx(floor) and r["ceiling_value"] == pytest.approx(ceiling)
        assert r["normalised"] == pytest.approx((allv[(key, "cs_mean")] - floor) / (ceiling - floor))


def test_the_generator_table_holds_the_leaderboards_values(two):
    sec = two.section("generators")
    assert sec.status == "ok" and "Holm" in sec.note
    table = sec.tables["by_generator"]
    common = _board(two).query("view == 'common'").set_index(["method", "metric"])
    assert len(table) == 4 * 7  # 2 methods x 2 generators x 7 metrics; no calibration method
    assert set(table["generator"]) == {"cold", "warm"} and set(table["method"]) == {"simple", "chrono-100"}
    for r in table.itertuples():
        expected = common.loc[(r.key, r.metric), "value"]
        assert (math.isnan(r.value) and math.isnan(expected)) or r.value == expected
    cs = table[table["metric"] == "cs_mean"].set_index(["method", "generator"])["value"]
    assert cs[("simple", "warm")] == pytest.approx(3.125) and cs[("simple", "cold")] == pytest.approx(2.25)
    assert list(table[table["metric"] == "cs_mean"]["method"]) == ["simple", "simple", "chrono-100", "chrono-100"]


def test_generators_are_paired_method_by_method_with_holm(two):
    pg = two.section("generators").tables["paired_generators"]
    assert set(zip(pg["method_a"], pg["method_b"])) == {("warm/simple", "simple"), ("warm/chrono-100", "chrono-100")}
    assert set(zip(pg["method"], pg["generator_a"], pg["generator_b"])) == {("simple", "warm", "cold"),
                                                                            ("chrono-100", "warm", "cold")}
    cs = pg[(pg["metric"] == "cs_mean")].set_index("method")
    assert cs.loc["simple", "mean_difference"] == pytest.approx(0.875) and cs.loc["simple", "better"] == "a"
    assert cs.loc["chrono-100", "better"] == "b"
    _holm_holds(pg)
    # Two tests per family: the smaller p doubled, the larger never below it.
    lo, hi = sorted(cs["p_value"])
    assert sorted(cs["p_holm"]) == pytest.approx([min(1, 2 * lo), max(min(1, 2 * lo), hi)])


def test_the_method_paired_tests_carry_holm_too(two):
    pt = two.section("paired_tests").tables["paired_tests"]
    # Each generator's methods against its own simple, never across generators.
    assert ("warm/chrono-100", "warm/simple") in set(zip(pt["method_a"], pt["method_b"]))
    assert not [(a, b) for a, b in zip(pt["method_a"], pt["method_b"]) if ("/" in a) != ("/" in b)]
    _holm_holds(pt)
    assert "Holm" in two.section("paired_tests").note


def _holm_holds(tests: pd.DataFrame) -> None:
    """p_holm >= p, and within a (judge, metric) family the adjusted values keep the raw values' order."""
    ok = tests.dropna(subset=["p_value"])
    assert len(ok) and (ok["p_holm"] >= ok["p_value"] - 1e-15).all() and (ok["p_holm"] <= 1).all()
    for _, fam in ok.groupby([ok["judge"].fillna(""), ok["metric"]]):
        adjusted = fam.sort_values("p_value", kind="stable")["p_holm"].to_numpy()
        assert (adjusted[1:] >= adjusted[:-1]).all()
        assert adjusted[0] == pytest.approx(min(1.0, len(fam) * fam["p_value"].min()))


def test_the_trade_off_plot_is_drawn_in_the_generators_section(two):
    table = two.section("generators").tables["by_generator"]
    uri = tradeoff_plot(table)
    assert uri and uri.startswith("data:image/png;base64,")
    assert tradeoff_plot(table[table["generator"] == "cold"]) is None  # one generator: nothing to compare
    html = render_html(two)
    section = html[html.index('<section id="generators"'):]
    section = section[:section.index("</section>")]
    assert "data:image/png;base64," in section and "p (Holm)" in section and "generators_cs_mean" in section


def test_one_generator_leaves_the_report_as_it_was(one):
    sec = one.section("generators")
    assert sec.status == "not_run" and "`generators:`" in sec.note and "--generators A,B" in sec.note
    board = _board(one)
    assert "generator" not in board.columns and "base_method" not in board.columns
    assert "generator" not in one.section("calibration").tables["normalised"].columns
    assert leaderboard_markdown(one).startswith("| Method |")
    assert one.meta["generators"] == ["cold"]


def test_the_first_generators_label_comes_from_its_answers_when_not_given():
    gens = pd.DataFrame({"method": ["simple", "chrono-100", "warm/simple", "reference"],
                         "model": ["openai/gpt-4.1", "openai/gpt-4.1", "anthropic/claude", "calibration (no model)"]})
    assert first_generator(gens) == "gpt-4.1"
    assert first_generator(gens, "mine") == "mine"
    assert first_generator(gens.assign(model=["lora-p1", "lora-p2", "x", "y"])) == FIRST_GENERATOR
    assert first_generator(pd.DataFrame()) == FIRST_GENERATOR
