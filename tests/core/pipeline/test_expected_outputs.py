"""``pipeline.expected``: outputs expected and none valid is a shortfall with its reason; statuses counted once."""

from __future__ import annotations

import pandas as pd

from interviewsim_core.pipeline.expected import bad_outputs, missing_outputs, status_columns, valid_inputs_reason
from interviewsim_core.pipeline.tables import empty_frame


def _rows(table: str, statuses: list[str], col: str = "status") -> pd.DataFrame:
    return pd.DataFrame({col: statuses, "personality_id": ["P"] * len(statuses)}) if statuses else empty_frame(table)


def test_fc_on_an_invalid_fact_summary_is_a_shortfall_naming_it() -> None:
    inputs = {"generations": _rows("generations", ["ok"] * 24), "fact_summary": _rows("fact_summary", ["invalid"])}
    gap = missing_outputs("factual_consistency", empty_frame("factual_consistency"), inputs)
    assert gap is not None and (gap.expected, gap.got) == (24, 0)
    assert gap.why == "0 valid fact summaries (1 invalid of 1)"
    assert gap.message() == ("factual_consistency: expected 24 output(s), got 0 valid: "
                             "0 valid fact summaries (1 invalid of 1)")


def test_premise_on_invalid_atomic_items_is_a_shortfall() -> None:
    inputs = {"atomic_items": _rows("atomic_items", ["invalid"] * 12), "fact_summary": _rows("fact_summary", ["ok"])}
    gap = missing_outputs("premise_verdicts", empty_frame("premise_verdicts"), inputs)
    assert gap is not None and gap.expected == 12 and gap.why == "0 valid atomic items (12 invalid of 12)"


def test_no_shortfall_when_nothing_was_expected_or_something_is_valid() -> None:
    assert missing_outputs("factual_consistency", empty_frame("factual_consistency"), {}) is None
    inputs = {"generations": _rows("generations", ["ok"]), "fact_summary": _rows("fact_summary", ["ok"])}
    assert missing_outputs("factual_consistency", _rows("factual_consistency", ["ok"]), inputs) is None
    assert missing_outputs("generations", empty_frame("generations"), inputs) is None  # a table without a rule


def test_valid_inputs_but_every_output_invalid_says_so() -> None:
    inputs = {"generations": _rows("generations", ["ok", "ok"]), "fact_summary": _rows("fact_summary", ["ok"])}
    gap = missing_outputs("factual_consistency", _rows("factual_consistency", ["invalid", "failed"]), inputs)
    assert gap is not None and gap.why == "0 valid FC judgments (1 failed, 1 invalid of 2)"
    assert valid_inputs_reason("factual_consistency", inputs) is None


def test_per_pass_statuses_count_as_outputs() -> None:
    df = pd.DataFrame({"pass1_status": ["ok", "invalid"], "pass2_status": ["ok", None]})
    assert status_columns(df.columns) == ["pass1_status", "pass2_status"]
    assert bad_outputs(df) == (1, 3)
