"""The premise-judge contract (seed 002): verbatim templates, isolated builders, strict parsers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from interviewsim_core.contracts import premise as c
from interviewsim_core.errors import ContractParseError

SEEDS = Path(__file__).resolve().parents[3] / ".." / "shared" / "seeds"


def _seed_template(name: str) -> str:
    files = sorted(SEEDS.glob("002_*.txt"))
    if not files:
        pytest.skip("shared seeds not available")
    text = files[0].read_text(encoding="utf-8")
    start = text.index(f'{name} = """') + len(f'{name} = """')
    return text[start : text.index('"""', start)]


@pytest.mark.parametrize(
    "name", ["PASS_1_BLIND_RECONSTRUCTION_PROMPT", "PASS_2_SOURCE_VERIFICATION_PROMPT"]
)
def test_templates_are_the_seed_verbatim_except_json_example_quotes(name):
    seed = _seed_template(name)
    ours = getattr(c, name)
    k = seed.index("Return ONLY a JSON object: {")
    e = seed.index(" }", k) + 2
    assert ours[:k] == seed[:k]
    assert ours[e:] == seed[e:]
    assert ours[k:e] == seed[k:e].replace("\u201c", '"').replace("\u201d", '"')
    assert "\u201c" not in ours[k:e] and "\u201d" not in ours[k:e]


def test_json_examples_become_parseable_once_ellipses_are_filled():
    for tpl in (c.PASS_1_BLIND_RECONSTRUCTION_PROMPT, c.PASS_2_SOURCE_VERIFICATION_PROMPT):
        k = tpl.index("Return ONLY a JSON object: ") + len("Return ONLY a JSON object: ")
        example = tpl[k : tpl.index(" }", k) + 2]
        json.loads(example)  # the straight-quoted example is valid JSON as written


def _p1(**over):
    base = {
        "subject": "NEWSCONF_KENNEDY",
        "predicate_and_force": "said (reported speech)",
        "object_or_content": "that the tax cut would pass",
        "time": "interview I3, sequence 3",
        "scope": "N/A",
        "unknown_slots": [],
        "licensed_inference": "He expected Congress to pass the tax cut.",
        "decontextuality_score": 1.0,
        "labels": [],
        "bundled": False,
        "notes": "",
    }
    base.update(over)
    return base


def _p2(**over):
    base = {
        "interpretation": "MATCH",
        "interpretation_notes": "consistent",
        "unsupported_elements": [],
        "force_preserved": True,
        "force_notes": "",
        "time_status": "HEDGED_APPROPRIATELY",
        "failure_attribution": [],
        "labels": [],
        "primary_cause": "NONE",
    }
    base.update(over)
    return base


# -- builders -----------------------------------------------------------------------------------


def test_pass1_prompt_holds_the_statement_and_nothing_else():
    msgs = c.build_pass1_messages("alice is 25 years old")
    assert len(msgs) == 1 and msgs[0]["role"] == "user"
    expected = c.PASS_1_BLIND_RECONSTRUCTION_PROMPT.replace("{conclusion}", "alice is 25 years old")
    assert msgs[0]["content"] == expected


def test_placeholders_filled_in_one_pass_so_conclusion_text_is_never_rescanned():
    msgs = c.build_pass2_messages("x {window} {peer_id}", "{}", "PEER", [c.WindowMessage(speaker="s", time="t", text="w")])
    content = msgs[0]["content"]
    assert "Conclusion under evaluation: x {window} {peer_id}\n" in content
    assert "Target peer: PEER" in content


def test_pass2_prompt_holds_conclusion_pass1_json_peer_and_every_window_message():
    window = [
        c.WindowMessage(speaker="interviewer", time="interview I1, sequence 1", text="How was the trip?"),
        c.WindowMessage(speaker="P1", time="interview I1, sequence 1", text="It was long and hot."),
        c.WindowMessage(speaker="interviewer", time="interview I2, sequence 4", text="And Texas?"),
    ]
    p1 = json.dumps(_p1())
    content = c.build_pass2_messages("P1 found the trip long.", p1, "P1", window, window_note="No dates.")[0]["content"]
    assert content.startswith("You are grading a blind reading")
    assert "Conclusion under evaluation: P1 found the trip long." in content
    assert f"Blind reconstruction (pass 1 output): {p1}" in content
    assert "Target peer: P1" in content
    assert "No dates." in content
    for i, m in enumerate(window, start=1):
        assert f"[{i}] [time: {m.time}] {m.speaker}: {m.text}" in content


def test_empty_window_is_said_to_be_empty():
    content = c.build_pass2_messages("x", "{}", "P", [])[0]["content"]
    assert "the window is empty" in content


# -- pass 1 parser ------------------------------------------------------------------------------


def test_pass1_valid_bare_and_fenced():
    raw = json.dumps(_p1())
    r = c.parse_pass1(raw)
    assert r.subject == "NEWSCONF_KENNEDY" and r.decontextuality_score == 1.0 and r.bundled is False
    assert c.parse_pass1(f"```json\n{raw}\n```") == r
    assert c.parse_pass1(f"```\n{raw}\n```") == r


def test_pass1_notes_may_be_empty_and_intermediate_scores_are_kept():
    r = c.parse_pass1(json.dumps(_p1(decontextuality_score=0.7, notes="  ")))
    assert r.notes == "" and r.decontextuality_score == 0.7
    assert c.parse_pass1(json.dumps(_p1(decontextuality_score=0))).decontextuality_score == 0.0


@pytest.mark.parametrize("key", list(_p1()))
def test_pass1_every_key_of_the_seed_shape_is_required_notes_included(key):
    d = _p1()
    del d[key]
    with pytest.raises(ContractParseError, match="missing field"):
        c.parse_pass1(json.dumps(d))


def test_pass1_round_trips_through_its_normalised_json():
    r = c.parse_pass1(json.dumps(_p1(unknown_slots=["TIME"], time="UNKNOWN", labels=["relative-time"])))
    assert r.unknown_slots == ("time",)
    assert c.parse_pass1(r.to_json()) == r
    assert list(json.loads(r.to_json())) == list(_p1())


@pytest.mark.parametrize(
    "raw, reason",
    [
        (json.dumps({**_p1(), "extra": 1}), "additional field"),
        (json.dumps({k: v for k, v in _p1().items() if k != "scope"}), "missing field"),
        ('{"subject": "a", "subject": "b"}', "duplicate key"),
        (json.dumps(_p1(decontextuality_score=True)), "must be a number"),
        (json.dumps(_p1(decontextuality_score="0.6")), "must be a number"),
        (json.dumps(_p1(decontextuality_score=1.2)), "between 0 and 1"),
        (json.dumps(_p1(decontextuality_score=-0.2)), "between 0 and 1"),
        (json.dumps(_p1()).replace("1.0", "NaN"), "non-standard"),
        (json.dumps(_p1(unknown_slots=["object"])), "not one of the slots"),
        (json.dumps(_p1(unknown_slots=["time", "TIME"])), "repeats"),
        (json.dumps(_p1(unknown_slots="time")), "must be a list"),
        (json.dumps(_p1(labels=["ok", " "])), "must not be blank"),
        (json.dumps(_p1(labels="relative-time")), "must be a list"),
        (json.dumps(_p1(bundled="false")), "true or false"),
        (json.dumps(_p1(bundled=0)), "true or false"),
        (json.dumps(_p1(subject="")), "must not be blank"),
        (json.dumps(_p1(time=None)), "must be a string"),
        (json.dumps(_p1(licensed_inference="  ")), "must not be blank"),
        (json.dumps(_p1(notes=3)), "must be a string"),
        ("Here you go: " + json.dumps(_p1()), "not one JSON object"),
        (json.dumps(_p1()) + json.dumps(_p1()), "not one JSON object"),
        ("[]", "must be an object"),
        ("", "empty reply"),
    ],
)
def test_pass1_rejects(raw, reason):
    with pytest.raises(ContractParseError) as ei:
        c.parse_pass1(raw)
    assert reason in ei.value.reason
    assert ei.value.raw == raw and ei.value.contract == c.PASS1_NAME


def test_unknown_slots_are_the_union_of_the_list_and_unknown_values():
    r = c.parse_pass1(json.dumps(_p1(
        object_or_content="UNKNOWN \u2014 the thing assented to is absent", unknown_slots=["time"], time="UNKNOWN",
        scope="UNKNOWNISH conditions",
    )))
    assert r.unknown() == ("object_or_content", "time")


@pytest.mark.parametrize(
    "value, unknown",
    [("UNKNOWN", True), ("Unknown", True), ("unknown", True), ("Unknown - no date in the statement", True),
     ("unknown \u2014 relative", True), ("Unknown (event claim)", True), ("Unknown, no anchor", True),
     ("UNKNOWN no anchor", True), ("Unknown Soldier", False), ("Unknowable", False), ("UNKNOWN_X", False),
     ("July 2, 2026", False)],
)
def test_unknown_marker_is_read_in_any_case(value, unknown):
    r = c.parse_pass1(json.dumps(_p1(time=value)))
    assert c.is_unknown(value) is unknown
    assert (r.unknown() == ("time",)) is unknown


@pytest.mark.parametrize(
    "text, licenses",
    [("NONE", False), ("NONE \u2014 survives deletion", False), ("NONE: nothing", False),
     ("None", False), ("none", False), ("None - survives deletion", False), ("none.", False),
     ("None (nothing specific)", False), ("None of his aides will resign before the vote.", True),
     ("NONETHELESS he will run", True), ("Nonetheless he will run", True), ("He will run again.", True)],
)
def test_licensed_inference_none_marker(text, licenses):
    assert c.parse_pass1(json.dumps(_p1(licensed_inference=text))).licenses_inference is licenses


# -- pass 2 parser ------------------------------------------------------------------------------


def test_pass2_valid_with_elements_and_attributions():
    raw = json.dumps(_p2(
        interpretation="MISMATCH",
        unsupported_elements=[{"element": "lives in NYC", "classification": "OVER_INFERENCE", "evidence": "msg 3"}],
        force_preserved=False,
        time_status="ANCHOR_MISSING",
        failure_attribution=[{"gap": "time", "attribution": "ABSENT_EVERYWHERE", "evidence": "no dates"}],
        labels=["over-inference"],
        primary_cause="over-inference",
    ))
    r = c.parse_pass2(f"```json\n{raw}\n```")
    assert r.unsupported_elements[0].classification == "OVER_INFERENCE"
    assert r.failure_attribution[0].attribution == "ABSENT_EVERYWHERE"
    assert c.parse_pass2(r.to_json()) == r


@pytest.mark.parametrize("status", c.TIME_STATUSES)
def test_pass2_accepts_every_time_status(status):
    assert c.parse_pass2(json.dumps(_p2(time_status=status))).time_status == status


@pytest.mark.parametrize("key", list(_p2()))
def test_pass2_every_key_is_required(key):
    d = _p2()
    del d[key]
    with pytest.raises(ContractParseError, match="missing field"):
        c.parse_pass2(json.dumps(d))


@pytest.mark.parametrize(
    "over, reason",
    [
        ({"interpretation": "match"}, "interpretation must be one of"),
        ({"interpretation": "NA"}, "interpretation must be one of"),
        ({"time_status": "ANCHORED"}, "time_status must be one of"),
        ({"force_preserved": "true"}, "true or false"),
        ({"primary_cause": ""}, "must not be blank"),
        ({"labels": [1]}, "must be a string"),
        ({"unsupported_elements": {}}, "must be a list"),
        ({"unsupported_elements": ["x"]}, "must be an object"),
        ({"unsupported_elements": [{"element": "x", "classification": "GUESS", "evidence": "e"}]}, "classification"),
        ({"unsupported_elements": [{"element": "x", "classification": "FABRICATION"}]}, "missing field"),
        ({"unsupported_elements": [{"element": "x", "classification": "FABRICATION", "evidence": "e", "w": 1}]},
         "additional field"),
        ({"failure_attribution": [{"gap": "t", "attribution": "PRESENT", "evidence": "e"}]}, "attribution must be"),
        ({"failure_attribution": [{"gap": " ", "attribution": "PRESENT_IN_WINDOW", "evidence": "e"}]}, "blank"),
        ({"extra": True}, "additional field"),
    ],
)
def test_pass2_rejects(over, reason):
    raw = json.dumps(_p2(**over))
    with pytest.raises(ContractParseError) as ei:
        c.parse_pass2(raw)
    assert reason in ei.value.reason and ei.value.raw == raw and ei.value.contract == c.PASS2_NAME


def test_registry_serves_both_passes():
    from interviewsim_core.contracts import REGISTRY, version_of

    assert REGISTRY[c.PASS1_NAME].parse is c.parse_pass1
    assert REGISTRY[c.PASS2_NAME].parse is c.parse_pass2
    assert re.fullmatch(r"\S+\+\S+", version_of(c.PASS1_NAME))
