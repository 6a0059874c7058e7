"""What the asset pages show for numbers: rounded for reading, while the Parquet keeps full precision (issue 33)."""

from __future__ import annotations

import pandas as pd

from interviewsim_core.pipeline.table_summary import summary_of
from interviewsim_dagster.batching import summary_metadata
from interviewsim_dagster.presenters import leaderboard_table, paired_tests_table


def _board() -> pd.DataFrame:
    return pd.DataFrame([{
        "view": "common", "method": "simple", "judge": "offline/extractive", "metric": "content_similarity",
        "value": 1.111742424242424, "ci_low": -2.312964634631667e-19, "ci_high": 1.3333333333333333,
        "cells_valid": 6, "cells_expected": 6, "coverage": 1.0, "below_coverage": False, "n_personalities": 2,
        "best": True, "empty_reason": None}])


def test_the_leaderboard_table_rounds_for_reading():
    record = leaderboard_table(_board()).records[0].data
    assert record["value"] == 1.112 and record["ci_low"] == 0.0 and record["ci_high"] == 1.333
    assert record["ci_note"] == ""


def test_the_leaderboard_table_notes_an_estimate_on_its_intervals_edge():
    """Issue 45: an interval is never shown with its estimate on an edge without a note."""
    board = _board().assign(value=0.0, ci_low=0.0, ci_high=0.0)
    assert leaderboard_table(board).records[0].data["ci_note"].startswith("no spread")


def test_the_paired_tests_table_keeps_small_p_values_readable():
    tests = pd.DataFrame([{"method_a": "simple", "method_b": "chrono-100", "judge": "j", "metric": "m",
                           "mean_difference": -2.312964634631667e-19, "p_value": 0.000123456, "p_holm": 0.000246912,
                           "n": 2, "better": ""}])
    record = paired_tests_table(tests).records[0].data
    assert record["a_minus_b"] == 0.0 and record["p_value"] == 0.000123 and record["p_holm"] == 0.000247


def test_previews_and_means_round_but_the_frame_keeps_full_precision():
    board = _board()
    meta = summary_metadata(summary_of(board.assign(score=[1.111742424242424]), None, means=["score"]))
    assert meta["mean_score"] == 1.112
    assert meta["preview"].records[0].data["value"] == 1.112
    assert board["value"].iloc[0] == 1.111742424242424


def test_a_stage_runs_metadata_imports_no_renderer():
    """The explorer's links on the leaderboard and report pages are a line of text: naming them must not
    import the report's renderer (jinja2, matplotlib), as the report package promises; ``interviewsim
    run`` paid about 1 s of CPU for it beside the calls. A fresh interpreter, so earlier tests' imports
    do not hide it."""
    import subprocess
    import sys

    code = ("import sys, types\n"
            "from interviewsim_core.report import build_report\n"
            "from interviewsim_dagster.presenters import explorer_links\n"
            "import interviewsim_view.urls\n"
            "links = explorer_links(types.SimpleNamespace(data_root='/data/my run'))\n"
            "assert \"'/data/my run'\" in links['explorer_command'].value, links\n"
            "print(sorted(m for m in ('jinja2', 'matplotlib') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
