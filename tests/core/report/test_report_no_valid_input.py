"""Issue 22: the report header counts what the run summary counts, and a step that ran on no valid input
says which input, instead of "not run" or counting missing MCQ items as invalid ones."""

from __future__ import annotations

import pandas as pd

from interviewsim_core.pipeline.storage import partition_path, write_frame
from interviewsim_core.pipeline.tables import empty_frame, schema_of
from interviewsim_core.report.build import build_report


def _rows(table: str, n: int, status: str, **cols) -> pd.DataFrame:
    base = {c: [None] * n for c in schema_of(table).names}
    base.update({"personality_id": ["P"] * n, "status": [status] * n, **{k: [v] * n for k, v in cols.items()}})
    return pd.DataFrame(base, columns=schema_of(table).names)


def test_no_valid_input_is_named_and_every_invalid_output_is_counted(tmp_path):
    atomic = _rows("atomic_items", 12, "invalid", qa_id=None)
    atomic["qa_id"] = [f"q{i}" for i in range(12)]
    write_frame(atomic, "atomic_items", partition_path(tmp_path, "atomic_items", "P"))
    write_frame(_rows("fact_summary", 1, "invalid"), "fact_summary", partition_path(tmp_path, "fact_summary", "P"))
    for table in ("mcq_items", "premise_verdicts"):
        write_frame(empty_frame(table), table, partition_path(tmp_path, table, "P"))
    data = build_report(tmp_path)

    assert data.meta["invalid_or_failed_outputs"] == 13  # 12 atomic items + 1 fact summary, as the summary says
    premise = data.section("premise")
    assert premise.status == "not_run" and "0 valid atomic items (12 invalid of 12)" in premise.note
    mcq = data.section("mcq")
    assert "No MCQ item was generated" in mcq.note and "0 valid atomic items" in mcq.note
    assert "invalid 3-option" not in mcq.note
    tags = data.section("tag_breakdown")
    assert tags.status == "not_run"
