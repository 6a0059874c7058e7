"""The run summary says how many outputs were valid on the first attempt and after re-asks (issue 22)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from interviewsim_cli.outcome import RunSummary, validity_counts
from interviewsim_core.pipeline.storage import partition_path


def _write(root, table, pid, method, columns: dict) -> None:
    path = partition_path(root, table, pid, method)
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.table(columns), path)


def test_validity_before_and_after_reasks_per_table(tmp_path):
    _write(tmp_path, "generations", "P", "simple",
           {"status": ["ok", "ok", "invalid", "ok"], "attempts": [1, 2, 3, 1]})
    _write(tmp_path, "premise_verdicts", "P", None,
           {"pass1_status": ["ok", "invalid"], "pass1_attempts": [3, 3],
            "pass2_status": ["ok", None], "pass2_attempts": [1, None]})
    v = validity_counts(tmp_path, ["P"], ["simple"])
    assert v["generations"] == {"first": 2, "valid": 3, "outputs": 4}
    assert v["premise_verdicts"] == {"first": 1, "valid": 2, "outputs": 3}
    lines = RunSummary(validity=v).lines()
    assert "  generations: valid on first attempt 2 of 4, after re-asks 3 of 4" in lines
    assert "  premise_verdicts: valid on first attempt 1 of 3, after re-asks 2 of 3" in lines


def test_no_line_when_every_output_was_valid_at_once(tmp_path):
    _write(tmp_path, "generations", "P", "simple", {"status": ["ok"], "attempts": [1]})
    assert not [line for line in RunSummary(validity=validity_counts(tmp_path, ["P"], ["simple"])).lines()
                if "first attempt" in line]


def test_the_counts_join_every_covered_partition_and_leave_out_an_unreadable_file(tmp_path):
    """The summary reads each table's partitions joined (issue 43): partitions of another personality or method are
    not counted, a file it cannot read is left out and the others still count."""
    from interviewsim_cli.outcome import status_counts

    _write(tmp_path, "generations", "A", "simple", {"status": ["ok"], "attempts": [1]})
    partition_path(tmp_path, "generations", "A", "simple").write_bytes(b"not parquet")  # the first file read
    _write(tmp_path, "generations", "P", "simple", {"status": ["ok", "invalid"], "attempts": [1, 3]})
    _write(tmp_path, "generations", "Q", "simple", {"status": ["failed"], "attempts": [2]})
    _write(tmp_path, "generations", "P", "wiki", {"status": ["ok"], "attempts": [1]})  # not covered
    _write(tmp_path, "generations", "R", "simple", {"status": ["ok"], "attempts": [1]})
    partition_path(tmp_path, "generations", "R", "simple").write_bytes(b"not parquet")
    counts = status_counts(tmp_path, ["A", "P", "Q", "R"], ["simple"])
    assert counts["generations"] == {"ok": 1, "invalid": 1, "failed": 1}
    assert validity_counts(tmp_path, ["A", "P", "Q", "R"], ["simple"])["generations"] == {"first": 1, "valid": 1, "outputs": 3}
