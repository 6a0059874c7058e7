"""The progress line of a run (issue 43): partitions written of the total, calls/s, time left from the measured rate."""

from __future__ import annotations

import pytest

from interviewsim_core.pipeline.progress import RATE_AFTER, duration, progress_line, time_left_s

COUNTS = {"generations": {"planned": 900, "answered": 600, "cached": 100, "invalid": 3, "failed": 1, "cost_usd": 0.25},
          "judgments": {"planned": 500, "answered": 200, "cached": 0, "invalid": 0, "failed": 0, "cost_usd": 0.05}}


def test_the_line_says_partitions_written_of_the_total_the_call_rate_and_the_time_left():
    line = progress_line(COUNTS, done=250, total=1000, elapsed_s=100)
    assert line == ("progress: 250 of 1,000 partitions written in 1 min 40 s, 8.0 calls/s (800 calls answered, "
                    "100 of them from the cache; 3 invalid, 1 failed; $0.3000 so far); "
                    "about 5 min 00 s left at this rate")


def test_the_time_left_is_the_partitions_left_at_the_rate_measured_so_far():
    assert time_left_s(done=250, total=1000, elapsed_s=100) == pytest.approx(300)
    assert time_left_s(done=1000, total=1000, elapsed_s=100) == 0


def test_nothing_is_said_of_the_time_left_before_there_is_a_rate():
    assert time_left_s(done=0, total=1000, elapsed_s=100) is None
    assert time_left_s(done=int(RATE_AFTER * 1000) - 1, total=1000, elapsed_s=100) is None  # a few: noise
    assert time_left_s(done=int(RATE_AFTER * 1000), total=1000, elapsed_s=100) is not None
    line = progress_line(COUNTS, done=0, total=1000, elapsed_s=100)
    assert line.startswith("progress: 0 of 1,000 partitions written in 1 min 40 s, 8.0 calls/s") and "left" not in line
    assert "calls/s" in progress_line({}, done=0, total=10, elapsed_s=0)  # no time yet: no division by it


def test_the_last_line_says_done_or_stopped_and_no_time_left():
    assert progress_line(COUNTS, 1000, 1000, 7384, final=True).startswith(
        "done: 1,000 of 1,000 partitions written in 2 h 03 min, 0.1 calls/s")
    stopped = progress_line(COUNTS, 400, 1000, 100, final=True)
    assert stopped.startswith("stopped: 400 of 1,000 partitions written") and "left" not in stopped


@pytest.mark.parametrize("seconds, text", [(0, "0 s"), (59.4, "59 s"), (60, "1 min 00 s"), (3599, "59 min 59 s"),
                                           (3600, "1 h 00 min"), (36 * 3600 + 125, "36 h 02 min")])
def test_a_duration_reads_as_precisely_as_its_length_deserves(seconds, text):
    assert duration(seconds) == text
