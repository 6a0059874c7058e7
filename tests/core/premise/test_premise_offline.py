"""The offline premise answers: recognised, deterministic, and valid under the strict parsers."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interviewsim_core.contracts import premise as c
from interviewsim_core.offline import premise as offline
from interviewsim_core.offline import respond

WINDOW = [
    c.WindowMessage(speaker="interviewer", time="interview NEWSCONF_X_1961-01-25_01, sequence 1", text="Will it pass?"),
    c.WindowMessage(speaker="NEWSCONF_X", time="interview NEWSCONF_X_1961-01-25_01, sequence 1",
                    text="The tax bill might pass in 1962, I think."),
]


def _both(statement: str, window=WINDOW, peer="NEWSCONF_X"):
    p1 = c.parse_pass1(respond(c.build_pass1_messages(statement), c.PASS1_NAME))
    p2 = c.parse_pass2(respond(c.build_pass2_messages(statement, p1.to_json(), peer, window, window_note="Note."), c.PASS2_NAME))
    return p1, p2


def test_answers_both_premise_passes_by_contract_name():
    assert set(offline.RESPONDS) == {c.PASS1_NAME, c.PASS2_NAME}


def test_worked_examples_read_sensibly():
    p1, _ = _both("alice is 25 years old")
    assert p1.subject == "alice" and p1.unknown() == ("time",) and p1.decontextuality_score == 0.6
    assert "unanchored-state-claim" in p1.labels
    p1, _ = _both("He likes it.")
    assert "subject" in p1.unknown() and not p1.licenses_inference and "unresolved-pronoun" in p1.labels


def test_supported_dated_statement_with_hedge_kept_can_pass():
    p1, p2 = _both("NEWSCONF_X said the tax bill might pass in 1962.")
    assert p1.unknown() == () and p1.licenses_inference
    assert p2.interpretation == "MATCH" and p2.unsupported_elements == () and p2.force_preserved
    assert p2.time_status == "ANCHORED_CORRECTLY" and p2.primary_cause == "NONE"


def test_flattened_hedge_and_invented_words_are_caught_with_attribution():
    _, p2 = _both("NEWSCONF_X said the tax bill will pass in 1962 despite Senate filibusters.")
    assert not p2.force_preserved
    assert {e.element for e in p2.unsupported_elements} >= {"senate", "filibusters"}
    assert "PRESENT_IN_WINDOW" in {a.attribution for a in p2.failure_attribution}  # the hedge was there


def test_unknown_time_without_any_date_in_window_is_absent_everywhere():
    window = [c.WindowMessage(speaker="P", time="message 3", text="I moved to Ohio.")]
    p1, p2 = _both("P moved to Ohio.", window=window, peer="P")
    assert "time" in p1.unknown()
    assert [a.attribution for a in p2.failure_attribution if a.gap == "time"] == ["ABSENT_EVERYWHERE"]
    assert p2.time_status == "ANCHOR_MISSING"


def test_empty_window_attributes_gaps_to_the_window():
    p1, p2 = _both("He moved.", window=[], peer="P")
    assert p1.unknown()
    assert {a.attribution for a in p2.failure_attribution if a.gap in p1.unknown()} == {"ABSENT_FROM_WINDOW"}


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=0, max_size=120)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(statement=_text, peer=_text, texts=st.lists(st.tuples(_text, _text), max_size=3))
def test_offline_answers_always_parse_and_are_deterministic(statement, peer, texts):
    window = [c.WindowMessage(speaker="s", time=t or "t", text=x) for t, x in texts]
    raw1 = respond(c.build_pass1_messages(statement), c.PASS1_NAME)
    p1 = c.parse_pass1(raw1)
    assert respond(c.build_pass1_messages(statement), c.PASS1_NAME) == raw1
    raw2 = respond(c.build_pass2_messages(statement, p1.to_json(), peer, window), c.PASS2_NAME)
    c.parse_pass2(raw2)
    assert json.loads(raw2) == json.loads(respond(c.build_pass2_messages(statement, p1.to_json(), peer, window), c.PASS2_NAME))
