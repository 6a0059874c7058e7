"""Every branch of seed 002's verdict combination, each condition flipped alone."""

from __future__ import annotations

import json

import pytest
from premise_fakes import pass1_obj, pass2_obj

from interviewsim_core.contracts.premise import TIME_STATUSES, parse_pass1, parse_pass2
from interviewsim_core.premise.verdict import ALLOWED_TIME_STATUSES, combine, unusable


def _v(p1: dict, p2: dict):
    return combine(parse_pass1(json.dumps(p1)), parse_pass2(json.dumps(p2)))


def test_clean_passes_both_is_pass_without_cause():
    v = _v(pass1_obj(), pass2_obj())
    assert v.verdict == "PASS" and v.reasons == () and v.primary_cause is None
    assert v.decontextuality_score == 0.8


CASES = [
    # (pass-1 overrides, pass-2 overrides, expected reason)
    ({"unknown_slots": ["subject"]}, {}, "pass1_unknown_slot:subject"),
    ({"subject": "UNKNOWN"}, {}, "pass1_unknown_slot:subject"),
    ({"predicate_and_force": "UNKNOWN"}, {}, "pass1_unknown_slot:predicate_and_force"),
    ({"object_or_content": "UNKNOWN \u2014 'yes' alone is not content"}, {}, "pass1_unknown_slot:object_or_content"),
    ({"time": "UNKNOWN", "unknown_slots": ["time"]}, {}, "pass1_unknown_slot:time"),
    ({"scope": "UNKNOWN"}, {}, "pass1_unknown_slot:scope"),
    ({"licensed_inference": "NONE"}, {}, "pass1_no_licensed_inference"),
    ({}, {"interpretation": "MISMATCH"}, "pass2_interpretation:MISMATCH"),
    ({}, {"interpretation": "N/A"}, "pass2_interpretation:N/A"),
    ({}, {"unsupported_elements": [{"element": "NYC", "classification": "OVER_INFERENCE", "evidence": "m2"}]},
     "pass2_unsupported_elements:1"),
    ({}, {"force_preserved": False}, "pass2_force_not_preserved"),
    ({}, {"time_status": "ANCHOR_MISSING"}, "pass2_time_status:ANCHOR_MISSING"),
    ({}, {"time_status": "ANCHOR_GUESSED"}, "pass2_time_status:ANCHOR_GUESSED"),
]


@pytest.mark.parametrize("o1, o2, reason", CASES)
def test_each_condition_alone_fails_with_pass2_primary_cause(o1, o2, reason):
    v = _v(pass1_obj(**o1), pass2_obj(**o2, primary_cause="dropped-context"))
    assert v.verdict == "FAIL"
    assert v.reasons == (reason,)
    assert v.primary_cause == "dropped-context"


@pytest.mark.parametrize("status", sorted(ALLOWED_TIME_STATUSES))
def test_allowed_time_statuses_pass_including_bad_timestamp_input_failure(status):
    assert _v(pass1_obj(), pass2_obj(time_status=status)).verdict == "PASS"


def test_allowed_set_is_exactly_the_seeds_four():
    assert ALLOWED_TIME_STATUSES == {"ANCHORED_CORRECTLY", "HEDGED_APPROPRIATELY", "SELF_ANCHORING",
                                     "ANCHORED_TO_BAD_TIMESTAMP"}
    assert set(TIME_STATUSES) - ALLOWED_TIME_STATUSES == {"ANCHOR_MISSING", "ANCHOR_GUESSED"}


def test_slots_not_required_do_not_fail():
    v = _v(pass1_obj(time="SELF_ANCHORING", scope="N/A"), pass2_obj(time_status="SELF_ANCHORING"))
    assert v.verdict == "PASS"


def test_fail_with_clean_pass2_keeps_pass2s_cause_verbatim_and_reasons_say_why():
    v = _v(pass1_obj(time="UNKNOWN", licensed_inference="NONE"), pass2_obj(primary_cause="NONE"))
    assert v.verdict == "FAIL"
    assert v.primary_cause == "NONE"
    assert v.reasons == ("pass1_unknown_slot:time", "pass1_no_licensed_inference")


@pytest.mark.parametrize("cause", ["none", " Relative time, mostly ", "dropped-context"])
def test_primary_cause_is_never_rewritten(cause):
    v = _v(pass1_obj(scope="UNKNOWN"), pass2_obj(primary_cause=cause))
    assert v.verdict == "FAIL" and v.primary_cause == cause.strip()


@pytest.mark.parametrize(
    "o1, reason",
    [
        ({"time": "Unknown - the statement gives no date"}, "pass1_unknown_slot:time"),
        ({"time": "unknown"}, "pass1_unknown_slot:time"),
        ({"subject": "Unknown \u2014 'he' is unresolved"}, "pass1_unknown_slot:subject"),
        ({"object_or_content": "UNKNOWN - nothing named"}, "pass1_unknown_slot:object_or_content"),
        ({"licensed_inference": "None - survives deletion"}, "pass1_no_licensed_inference"),
        ({"licensed_inference": "none"}, "pass1_no_licensed_inference"),
        ({"licensed_inference": "NONE"}, "pass1_no_licensed_inference"),
    ],
)
def test_markers_fail_the_verdict_in_any_case(o1, reason):
    v = _v(pass1_obj(**o1), pass2_obj(primary_cause="NONE"))
    assert v.verdict == "FAIL" and v.reasons == (reason,) and v.primary_cause == "NONE"


def test_an_inference_opening_with_the_word_none_still_passes():
    v = _v(pass1_obj(licensed_inference="None of his aides will resign before the vote."), pass2_obj())
    assert v.verdict == "PASS"


def test_all_failed_conditions_are_listed_in_seed_order():
    v = _v(pass1_obj(subject="UNKNOWN", licensed_inference="NONE"),
           pass2_obj(interpretation="N/A", force_preserved=False, time_status="ANCHOR_GUESSED",
                     primary_cause="vague-referent"))
    assert v.reasons == ("pass1_unknown_slot:subject", "pass1_no_licensed_inference", "pass2_interpretation:N/A",
                         "pass2_force_not_preserved", "pass2_time_status:ANCHOR_GUESSED")
    assert v.primary_cause == "vague-referent"


def test_attributions_come_from_pass2():
    att = [{"gap": "time", "attribution": "ABSENT_EVERYWHERE", "evidence": "no dates"}]
    v = _v(pass1_obj(time="UNKNOWN"), pass2_obj(failure_attribution=att, primary_cause="relative-time"))
    assert [a.attribution for a in v.attributions] == ["ABSENT_EVERYWHERE"]


def test_unusable_verdicts_keep_the_pass1_score_when_there_is_one():
    p1 = parse_pass1(json.dumps(pass1_obj()))
    assert unusable("INVALID", "pass1").decontextuality_score is None
    v = unusable("INVALID", "pass2", p1)
    assert v.verdict == "INVALID" and v.decontextuality_score == 0.8 and v.reasons == ("pass2_invalid",)
    assert unusable("ERROR", "pass1").reasons == ("pass1_error",)
