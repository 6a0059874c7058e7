"""An empty MCQ answer table is a failure with a reason, never a pass "on nothing"."""

from __future__ import annotations

import pandas as pd

from interviewsim_core.pipeline.scoring import mcq_output_gaps
from interviewsim_core.pipeline.tables import empty_frame


def _items(n, status, n_options=3):
    return pd.DataFrame([{"personality_id": "p", "item_id": f"q{i}#{n_options}", "n_options": n_options,
                          "status": status} for i in range(n)])


def test_all_items_invalid_is_named_with_counts():
    gaps = mcq_output_gaps(20, _items(20, "invalid"), empty_frame("mcq_answers"), (3,))
    assert gaps == ["0 valid 3-option MCQ items (20 of 20 invalid)"]


def test_atomic_items_invalid_leave_no_mcq_item_and_are_counted():
    atomic = pd.DataFrame({"status": ["invalid"] * 20})
    gaps = mcq_output_gaps(20, empty_frame("mcq_items"), empty_frame("mcq_answers"), (3, 4), atomic)
    assert gaps == ["0 valid 3-option MCQ items (20 of 20 invalid)", "0 valid 4-option MCQ items (20 of 20 invalid)"]


def test_failed_answering_calls_and_not_run():
    answers = pd.DataFrame([{"n_options": 3, "item_id": f"q{i}#3", "status": "failed", "reward": None}
                            for i in range(5)])
    assert mcq_output_gaps(5, _items(5, "ok"), answers, (3,)) == ["0 valid 3-option MCQ items (5 of 5 failed)"]
    assert mcq_output_gaps(5, _items(5, "ok"), empty_frame("mcq_answers"), (3,)) == [
        "not run (0 of 5 3-option MCQ items)"]


def test_scored_answers_or_no_questions_pass():
    answers = pd.DataFrame([{"n_options": 3, "item_id": "q0#3", "status": "invalid", "reward": -0.5}])
    assert mcq_output_gaps(1, _items(1, "ok"), answers, (3,)) == []  # malformed but scored (seed: -0.5)
    assert mcq_output_gaps(0, empty_frame("mcq_items"), empty_frame("mcq_answers"), (3,)) == []
