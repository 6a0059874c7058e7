"""A partition's summary, computed on the Arrow table as written (issue 43): what the UI's metadata says."""

from __future__ import annotations

import math

import pandas as pd
import pyarrow as pa

from interviewsim_core.pipeline.table_summary import PREVIEW_CELL, PREVIEW_ROWS, summarise, summary_of
from interviewsim_core.pipeline.tables import SCHEMAS, to_table


def _generations(n: int) -> pa.Table:
    row = {c: None for c in SCHEMAS["generations"].names}
    statuses = ["ok", "invalid", "failed", None]
    rows = [{**row, "personality_id": "P", "method": "simple", "qa_id": f"q{i}", "generated": "word " * 40,
             "status": statuses[i % 4], "cache_hit": i % 2 == 0, "prompt_tokens": 10, "completion_tokens": 2,
             "cost_usd": 0.25, "raw_output": "copy", "context_qa_ids": ["a", "b"]} for i in range(n)]
    return to_table(pd.DataFrame(rows, columns=SCHEMAS["generations"].names), "generations")


def test_call_outcomes_tokens_and_cost_are_counted():
    meta = summarise(_generations(8))
    assert meta["rows"] == 8 and meta["invalid_outputs"] == 2 and meta["failed_calls"] == 2
    assert meta["model_rows"] == 6 and meta["cache_hits"] == 4 and meta["calls_made"] == 2
    assert meta["prompt_tokens"] == 80 and meta["cost_usd"] == 2.0


def test_the_preview_is_bounded_and_leaves_out_bookkeeping_and_what_the_key_says():
    meta = summarise(_generations(PREVIEW_ROWS + 5))
    names = [name for name, _kind in meta["preview"].columns]
    assert "raw_output" not in names and "cache_key" not in names
    assert "personality_id" not in names and "method" not in names  # the same on every row: the key says it
    assert len(meta["preview"].rows) == PREVIEW_ROWS and meta["preview_rows"] == f"{PREVIEW_ROWS} of {PREVIEW_ROWS + 5}"
    row = dict(zip(names, meta["preview"].rows[0]))
    assert len(row["generated"]) == PREVIEW_CELL and row["generated"].endswith("\u2026")
    assert row["context_qa_ids"] == "a, b" and row["prompt_tokens"] == 10 and row["cache_hit"] is True
    assert dict(meta["preview"].columns)["prompt_tokens"] == "int"


def test_premise_passes_are_counted_per_pass_and_labels_most_frequent_first():
    df = pd.DataFrame({"pass1_status": ["ok", "invalid", "ok"], "pass1_cache_hit": [True, False, False],
                       "pass2_status": ["ok", None, "failed"], "pass2_cache_hit": [False, None, False],
                       "label": ["b", "a", "a"], "score": [1.0, math.nan, None]})
    meta = summary_of(df, None, means=["score"])
    assert meta["invalid_outputs"] == 1 and meta["failed_calls"] == 1 and meta["model_rows"] == 5
    assert meta["cache_hits"] == 1 and meta["calls_made"] == 4
    assert list(meta["label_counts"].items()) == [("a", 2), ("b", 1)]
    assert meta["mean_score"] == 1.0  # NaN and missing left out


def test_an_empty_table_and_a_non_table_output():
    meta = summarise(_generations(0))
    assert meta["rows"] == 0 and meta["model_rows"] == 0 and meta["preview"].rows == () and "label_counts" not in meta
    assert summary_of(("report", "paths"), None) is None


def test_a_cell_of_a_frame_reads_as_one_short_line():
    import numpy as np

    from interviewsim_core.pipeline.table_summary import cell_text

    assert cell_text(np.array(["q1", "q2"], dtype=object)) == "q1, q2" and cell_text(["a"]) == "a"
    assert cell_text(np.float64(0.5)) == "0.5" and cell_text(None) == "" and cell_text(float("nan")) == ""
    assert cell_text("a |\n b") == "a \\| b"
