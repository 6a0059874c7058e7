"""Ingest: four formats to turns, noise removed and counted, bad files refused with file + rule."""

from __future__ import annotations

import pytest

from interviewsim_core.curation.ingest import detect, ingest_bytes

from curation_fixtures import DIALOGUE, FORMATS, PERSON


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_every_format_gives_the_dialogue_turns_in_order(fmt: str) -> None:
    name, render = FORMATS[fmt]
    t, problems = ingest_bytes(render().encode(), name)
    assert problems == []
    assert t.format == fmt
    # consecutive turns of one speaker are one turn in captions and segments, two paragraphs in text
    texts = [x.text for x in t.turns]
    assert " ".join(texts).replace(" [Laughter]", "") == " ".join(text for _w, text in DIALOGUE)
    assert all("[Laughter]" not in x for x in texts)


def test_text_noise_is_removed_and_counted() -> None:
    body = ("NEWS CONFERENCE\n\nTHE PRESIDENT. I have a statement. 1\n\n1 A release describes it.\n\n"
            "TAXES [3.] Q. Mr. President, will taxes rise? [Laughter]\n\nTHE PRESIDENT. No. [laughter]\n\n"
            "Q. Robert Smith, Daily News: And spending?\n\nTHE PRESIDENT. It will fall.\n\nMore on that.\n")
    t, problems = ingest_bytes(body.encode(), "x.txt")
    assert problems == []
    assert [(x.label, x.text) for x in t.turns] == [
        ("THE PRESIDENT", "I have a statement."), ("Q", "Mr. President, will taxes rise?"),
        ("THE PRESIDENT", "No."), ("Q", "And spending?"), ("THE PRESIDENT", "It will fall. More on that.")]
    assert t.removed == {"headings": 2, "item_numbers": 1, "footnote_marks": 1, "footnotes": 1, "stage_directions": 2}


def test_two_questioners_with_the_same_label_are_two_turns() -> None:
    t, _ = ingest_bytes(b"Q. First question?\n\nQ. Second question?\n\nTHE PRESIDENT. One answer.\n", "x.txt")
    assert [x.label for x in t.turns] == ["Q", "Q", "THE PRESIDENT"]


def test_unlabelled_captions_keep_an_empty_label() -> None:
    t, _ = ingest_bytes(b"WEBVTT\n\n00:01.000 --> 00:02.000\nHello there?\n\n00:02.000 --> 00:03.000\nHi.\n", "c.vtt")
    assert [(x.label, x.text) for x in t.turns] == [("", "Hello there?"), ("", "Hi.")]


@pytest.mark.parametrize("data, rule", [
    (b"", "empty-file"), (b"  \n\n", "empty-file"), (b"PK\x03\x04\x00\x00binary", "binary-file"),
    (b"caf\xe9 au lait", "undecodable"), (b"just some prose without any speaker at all.", "unrecognised-format"),
    (b'{"items": []}', "unrecognised-format"), (b'{"segments": [{"speaker": "A"}]}', "bad-diarisation"),
    (b"WEBVTT\n\nNOTE only a note\n", "no-turns"),
])
def test_bad_files_are_refused_with_the_rule(data: bytes, rule: str) -> None:
    t, problems = ingest_bytes(data, "bad.txt")
    assert t is None
    assert [p.rule for p in problems] == [rule]
    assert all(p.file == "bad.txt" for p in problems)


def test_detect() -> None:
    assert detect("WEBVTT\n") == ("vtt", None)
    assert detect("1\n00:00:01,000 --> 00:00:02,000\nhi\n") == ("srt", None)
    assert detect(' {"segments": []}') == ("diarised_json", {"segments": []})
    assert detect(f"{PERSON}: hi") == ("text", None)


def test_print_slips_of_real_transcripts() -> None:
    body = ("[6.] Q.. Doubled stop?\n\nTHE PRESIDENT Well, no stop at all.\n\n11The Accords were signed. \n\n"
            "VIET-NAM--OUR DESIRE FOR PEACE [15.] Q Mr. President, a bare Q?\n\n"
            "Q. Frank Cormier, Associated Press: Named?\n\nFrank Cormier, Associated Press: Colon label?\n")
    t, problems = ingest_bytes(body.encode(), "x.txt")
    assert problems == []
    assert [(x.label, x.text) for x in t.turns] == [
        ("Q", "Doubled stop?"), ("THE PRESIDENT", "Well, no stop at all."), ("Q", "Mr. President, a bare Q?"),
        ("Q", "Named?"), ("Frank Cormier, Associated Press", "Colon label?")]
    assert t.removed["footnotes"] == 1 and t.removed["headings"] == 1 and t.removed["item_numbers"] == 2


def test_the_heading_pattern_matches_what_its_plain_definition_matches() -> None:
    import itertools
    import random
    import re

    from interviewsim_core.curation.ingest import _HEADING

    plain = re.compile(r"^(?=.*[A-Z]{2})[A-Z0-9][^a-z]{0,120}$")  # as first written: the oracle
    rng = random.Random(1)
    samples = ["".join(p) for n in range(6) for p in itertools.product("Aa1 .\n", repeat=n)]
    samples += ["".join(rng.choice("AB a1.[]\t\nZ?") for _ in range(rng.randint(100, 130))) for _ in range(5000)]
    samples += ["A" * n for n in range(118, 125)] + ["AB" + "1" * n for n in range(115, 125)] + ["AB" + "1" * 119 + "\n"]
    assert sum(bool(plain.match(s)) for s in samples) > 100
    assert [bool(_HEADING.match(s)) for s in samples] == [bool(plain.match(s)) for s in samples]
