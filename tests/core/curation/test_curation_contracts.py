"""The four curation contracts: strict parsers (bound counts, exact choices), builders, and offline
responders that answer from the prompt's content (different inputs, different answers)."""

from __future__ import annotations

import json

import pytest

from interviewsim_core.contracts import personality_category, speaker_attribution, thematic_tagging, transcript_quality
from interviewsim_core.errors import ContractParseError
from interviewsim_core.offline import respond


def test_attribution_parser_binds_the_item_count_and_order() -> None:
    ok = '{"speakers": [{"item": 1, "role": "person", "reason": "r"}, {"item": 2, "role": "interviewer", "reason": "r"}]}'
    assert [s.role for s in speaker_attribution.parse(ok, 2).speakers] == ["person", "interviewer"]
    for bad, n in [(ok, 3), (ok.replace('"item": 2', '"item": 1'), 2), (ok.replace("interviewer", "host"), 2),
                   ('{"speakers": []}', None), (ok[:-1] + ', "extra": 1}', 2)]:
        with pytest.raises(ContractParseError) as exc:
            speaker_attribution.parse(bad, n)
        assert exc.value.raw == bad


def test_offline_attribution_reads_the_items() -> None:
    items = [speaker_attribution.Item(label="SPEAKER_00", turns=3, words=30, asks=3, samples=("Why?", "How?", "When?")),
             speaker_attribution.Item(label="SPEAKER_01", turns=3, words=90, asks=0, samples=("Because.",)),
             speaker_attribution.Item(label="SECRETARY JONES", turns=1, words=40, asks=0, samples=("Figures.",))]
    msgs = speaker_attribution.build_messages("Ann Lee", "", (), "2020-01-01", {}, items)
    roles = [s.role for s in speaker_attribution.parse(respond(msgs, speaker_attribution.NAME), 3).speakers]
    assert roles == ["interviewer", "person", "other"]
    msgs = speaker_attribution.build_messages("Ann Lee", "", (), "2020-01-01", {"ANN LEE": "person"}, items)
    assert [s.role for s in speaker_attribution.parse(respond(msgs, speaker_attribution.NAME), 3).speakers][1] == "other"


@pytest.mark.parametrize("stats, kind", [
    ({"person_words": 3, "other_words": 0, "answered_questions": 0}, "person_silent"),
    ({"person_words": 900, "other_words": 0, "answered_questions": 1}, "scripted_monologue"),
    ({"person_words": 300, "other_words": 800, "answered_questions": 6}, "group_discussion"),
    ({"person_words": 900, "other_words": 100, "answered_questions": 6}, "interview"),
])
def test_offline_quality_verdict_follows_the_statistics(stats, kind) -> None:
    msgs = transcript_quality.build_messages("Ann Lee", stats, [("person (ANN)", "Hello.")])
    res = transcript_quality.parse(respond(msgs, transcript_quality.NAME))
    assert res.kind == kind and res.keep == (kind == "interview") and res.reason


def test_quality_parser_is_strict() -> None:
    for bad in ['{"kind": "interview"}', '{"kind": "talk", "reason": "r"}', 'interview', '{"kind": "interview", "reason": ""}',
                json.dumps({"kind": "interview", "reason": transcript_quality.REASON_PLACEHOLDER})]:
        with pytest.raises(ContractParseError):
            transcript_quality.parse(bad)


def test_offline_tags_follow_the_words_and_the_parser_binds_the_count() -> None:
    pairs = [("When did you start, what do you remember of your childhood?", "I grew up by the sea."),
             ("How do you feel when you are angry or worried?", "I feel calm, mostly."),
             ("What does your family and your country mean to you?", "My community is my home.")]
    msgs = thematic_tagging.build_messages(pairs)
    tags = thematic_tagging.parse(respond(msgs, thematic_tagging.NAME), 3).tags
    assert tags == ("Identity Narrative", "Psychological Traits", "Social Identity")
    with pytest.raises(ContractParseError):
        thematic_tagging.parse(json.dumps({"tags": list(tags)}), 2)


def test_offline_category_follows_the_profile() -> None:
    for profile, cat in [("A singer whose album and tour sold out.", "Music"),
                         ("The senator who chaired the government committee.", "Public Service & Social Influence"),
                         ("A professor whose research and study changed science.", "Science & Academia")]:
        msgs = personality_category.build_messages("X", profile, ["Tell us more?"])
        assert personality_category.parse(respond(msgs, personality_category.NAME)).category == cat


def test_output_schemas_carry_the_choices() -> None:
    assert "Music" in json.dumps(personality_category.output_schema())
    assert "Identity Narrative" in json.dumps(thematic_tagging.output_schema())
    assert "person_silent" in json.dumps(transcript_quality.output_schema())
    assert "interviewer" in json.dumps(speaker_attribution.output_schema())


def test_qa_structuring_parser_holds_the_model_to_the_turns() -> None:
    from interviewsim_core.contracts import qa_structuring

    turns = [("interviewer", "Q", "Was it, uh, hard for you?"), ("person", "ANN", "Um, it was hard, I think."),
             ("person", "ANN", "But worth it."), ("other", "AIDE", "Time is up.")]
    ok = {"pairs": [{"question_turn": 0, "response_turns": [1, 2], "question": "Was it hard for you?",
                     "response": "It was hard, I think. But worth it."}]}
    assert qa_structuring.parse(json.dumps(ok), turns).pairs[0].response_turns == (1, 2)
    msgs = qa_structuring.build_messages("Ann", turns)
    assert json.loads(respond(msgs, qa_structuring.NAME))["pairs"][0]["response_turns"] == [1, 2]
    bad = [dict(ok["pairs"][0], response_turns=[1, 2, 3]),                          # another speaker's turn
           dict(ok["pairs"][0], question_turn=1, response_turns=[2]),               # a question that is the person's
           dict(ok["pairs"][0], response="Difficult yet worthwhile, in my opinion."),  # a paraphrase
           dict(ok["pairs"][0], response_turns=[2])]                                 # not right after the question
    for pair in bad:
        with pytest.raises(ContractParseError):
            qa_structuring.parse(json.dumps({"pairs": [pair]}), turns)
