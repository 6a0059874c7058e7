"""Speaker labels as publishers print them (issue 41): one fixture per label style, written for the project about a
fictional senator, each a dialogue of 12 turns. Curated offline as a user would (``curate``), every response must be
the person's turns and hold none of the interviewer's words."""

from __future__ import annotations

import pytest

from interviewsim_core.curation.run import curate
from interviewsim_core.llm.types import ModelConfig

from curation_fixtures import OfflineRunner, write_manifest

PERSON = "Ada L. Moreno"
PAIRS = [
    ("What did you learn from the river flood last spring?", "We learned that the levees were built for another century."),
    ("How will the county pay for the new levees?", "A bond measure, paid back over twenty years by the water districts."),
    ("Do the farmers downstream support that plan?", "Most of them do, once they saw the maps of the flooded fields."),
    ("What about the towns that were not flooded at all?", "They pay a smaller share, because their risk is smaller too."),
    ("Will you run for the seat again next year?", "I have not decided, and my family will have the first word on it."),
    ("What would you tell a young person entering politics now?", "Learn the budget before you learn the speeches, always."),
]


def _paragraphs(ask: str, answer: str, first_ask: str = "", first_answer: str = "", sep: str = " ") -> str:
    out = []
    for i, (q, a) in enumerate(PAIRS):
        out.append(f"{first_ask if i == 0 and first_ask else ask}{sep}{q}")
        out.append(f"{first_answer if i == 0 and first_answer else answer}{sep}{a}")
    return "\n\n".join(out) + "\n"


def _label_lines(ask: str, answer: str) -> str:
    """A label alone on its line, the words on the next (podcast services, some broadcasters)."""
    return "\n\n".join(f"{ask}\n{q}\n\n{answer}\n{a}" for q, a in PAIRS) + "\n"


def _captions(ask: str, answer: str) -> str:
    """WebVTT without voice tags: the label at the cue that changes speaker, a cut utterance's next cue unlabelled."""
    cues, t = ["WEBVTT", ""], 0
    for q, a in PAIRS:
        half = len(a.split()) // 2
        for text in (f"{ask} {q}", f"{answer} {' '.join(a.split()[:half])}", " ".join(a.split()[half:])):
            cues += [f"00:{t // 60:02d}:{t % 60:02d}.000 --> 00:{(t + 2) // 60:02d}:{(t + 2) % 60:02d}.000", text, ""]
            t += 2
    return "\n".join(cues)


STYLES = {
    # broadcast transcripts
    "broadcast_caps_colon.txt": ("STEVE HALL, HOST, CABLE NEWS NETWORK: Good evening.\n\n(BEGIN VIDEO CLIP)\n\n"
                                 "(END VIDEO CLIP)\n\n" + _paragraphs("HALL:", "MORENO:", "HALL:",
                                                                        "SEN. ADA MORENO (D-OH):"), {}),
    "radio_role_after_comma.txt": (_paragraphs("DANA WHITLOCK, HOST:", "ADA MORENO, SENATOR FROM OHIO:"), {}),
    "office_before_name.txt": (_paragraphs("MODERATOR:", "SENATOR MORENO:"), {}),
    # presidential-library and congressional-record transcripts
    "library_caps_period.txt": ("[Release dated May 3]\n\n" + _paragraphs("Q.", "THE SENATOR."),
                                {"addressed_as": "The Senator"}),
    "library_answerer.txt": (_paragraphs("Q.", "THE CHAIRMAN."), {}),
    "library_bracketed_outlet.txt": (_paragraphs("MR. WHITLOCK [Dana Whitlock, Ledger].", "SENATOR MORENO."), {}),
    "title_case_period.txt": (_paragraphs("Mr. Whitlock.", "Senator Moreno."), {}),
    "surname_period.txt": (_paragraphs("Whitlock.", "Moreno."), {}),
    # newspaper Q&A
    "newspaper_q_a.txt": (_paragraphs("Q.", "A."), {}),
    "newspaper_question_answer.txt": (_paragraphs("Question:", "Answer:"), {}),
    "newspaper_outlet_label.txt": (_paragraphs("THE LEDGER:", "MORENO:"), {}),
    "newspaper_bold.txt": (_paragraphs("**Ledger:**", "**Moreno:**"), {}),
    "doubled_colon.txt": (_paragraphs("Whitlock::", "Moreno::"), {}),
    # podcast captions and transcripts
    "podcast_captions.vtt": (_captions("Dana Whitlock:", "Ada Moreno:"), {}),
    "podcast_changes.vtt": (_captions(">> DANA WHITLOCK:", ">> MORENO:"), {}),
    "podcast_label_lines.txt": (_label_lines("Dana Whitlock (00:00:05):", "Ada Moreno (00:00:12):"), {}),
    "podcast_timestamps.txt": (_paragraphs("[00:01:02] Dana Whitlock:", "[00:01:09] Ada Moreno:"), {}),
}


@pytest.fixture(scope="module")
def curated(tmp_path_factory):
    d = tmp_path_factory.mktemp("styles")
    rows = []
    for i, (name, (body, extra)) in enumerate(STYLES.items()):
        (d / name).write_text(body, encoding="utf-8")
        rows.append({"file": name, "personality_id": "MORENO", "person_name": PERSON,
                     "date": f"2001-01-{i + 1:02d}", **extra})
    manifest = write_manifest(d / "manifest.json", rows)
    return curate(d, manifest, OfflineRunner(), ModelConfig(model="offline/extractive"), out=d / "corpus")


@pytest.mark.parametrize("name", sorted(STYLES))
def test_every_response_is_the_person_s_and_holds_no_interviewer_words(curated, name) -> None:
    (c,) = [c for c in curated.transcripts["MORENO"] if c.row.file == name]
    assert c.keep, (c.kind, c.reason)
    assert len(c.transcript.turns) >= 12
    assert [(p.question, p.response) for p in c.pairs] == PAIRS, [a.model_dump() for a in c.attributions.values()]
    for p in c.pairs:
        assert all(c.roles[i] == "person" for i in p.response_turns)
        assert not any(q in p.raw_response for q, _a in PAIRS)


def test_the_styles_corpus_is_written_with_every_style_kept(curated) -> None:
    assert curated.problems == [] and "MORENO" in curated.written
    assert curated.personalities()["MORENO"] == {"transcripts": len(STYLES), "kept": len(STYLES), "excluded": {},
                                                 "pairs": len(STYLES) * len(PAIRS), "written": True}
    by = {(x["label"], x["decided_by"]) for x in curated.labels()["MORENO"] if x["role"] == "person"}
    assert ("THE CHAIRMAN", "answerer") in by and ("A", "answerer") in by and ("THE SENATOR", "rule") in by
