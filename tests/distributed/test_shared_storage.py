"""Parquet on a real S3-compatible server (moto): what one worker reads after another rewrote it.

fsspec filesystems live for the whole process and remember listings and ETags, and a Celery worker
lives for many steps: a rerun that replaced the partitions made the report step fail with s3fs's
``FileExpired`` (stale ETag) before reads and listings forgot what they had seen.
"""

from __future__ import annotations

import os

import pandas as pd
import pytest

from interviewsim_core.dataroot import as_root
from interviewsim_core.pipeline.storage import partition_path, read_frame, write_frame
from interviewsim_core.report.loading import read_asset

pytestmark = pytest.mark.distributed


def _rows(pid: str, question: str) -> pd.DataFrame:
    return pd.DataFrame([{
        "personality_id": pid, "qa_id": "Q1", "partition": "test", "interview_id": "I1", "sequence": 1,
        "position": 0, "order": 0, "question": question, "response": "r.", "tags": ["a"],
    }])


def test_reads_and_listings_see_what_another_process_wrote_since(servers, monkeypatch):
    import s3fs

    _pg, _redis, s3 = servers
    for k, v in s3.env().items():
        monkeypatch.setenv(k, v)
    s3.make_bucket("interviewsim-storage-test")
    url = "s3://interviewsim-storage-test/run"
    path = partition_path(url, "heldout_split", "P1")
    write_frame(_rows("P1", "first?"), "heldout_split", path)
    assert read_frame(path)["question"].tolist() == ["first?"]
    assert len(read_asset(as_root(url), "heldout_split")) == 1
    # "Another worker": its own filesystem object, not this process's cached one.
    other = s3fs.S3FileSystem(skip_instance_cache=True, endpoint_url=os.environ["AWS_ENDPOINT_URL"])
    with other.open(f"{path.path}.tmp", "wb") as fh:
        _rows("P1", "second, longer?").to_parquet(fh)
    other.mv(f"{path.path}.tmp", path.path)
    other.pipe_file(partition_path(url, "heldout_split", "P2").path, other.cat_file(path.path))
    assert read_frame(path)["question"].tolist() == ["second, longer?"]
    assert sorted(read_asset(as_root(url), "heldout_split")["question"]) == ["second, longer?"] * 2
