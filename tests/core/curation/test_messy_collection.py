"""A messy collection as real ones are (issue 41), written for the project about fictional people: one person's
interviews from several outlets and decades (broadcast, public radio, a newspaper Q&A, a presidential-library
style transcript, podcast captions and a podcast service's transcript, a debate), beside files that are not what
the manifest says (someone else's interview, a speech with no speaker, an empty file) and a second person left
with one usable transcript. Curated offline as a user would (``interviewsim curate``): every transcript is kept or
excluded or refused with a stated reason, at least 80% of the person's answers are found, no personality is
refused for one bad file, and the command exits 1 (the empty file) having written the corpus."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from curation_fixtures import write_manifest

PERSON = "Marguerite O'Donnell-Reyes"
ANSWERS = [
    ("What will the water compact mean for farmers in the valley?", "It means they can plan a season ahead, which they have never been able to do."),
    ("Why did the legislature stall on the budget for so long?", "Because two committees wanted the same money for the same roads, and neither would move."),
    ("Do you expect the mines to reopen before the winter?", "Not before the winter, no, but the inspections finish in the early spring."),
    ("How do you answer critics who call the plan too expensive?", "I tell them the flood last year cost four times as much as the whole plan."),
    ("Will you support the tribal councils in the land dispute?", "I will sit at their table first, and only then say anything in public."),
]


def _turns(ask: str, answer: str, first_ask: str | None = None, first_answer: str | None = None) -> list[str]:
    out = []
    for i, (q, a) in enumerate(ANSWERS):
        out += [f"{first_ask or ask} {q}" if i == 0 else f"{ask} {q}",
                f"{first_answer or answer} {a}" if i == 0 else f"{answer} {a}"]
    return out


def _srt(ask: str, answer: str) -> str:
    cues, n = [], 0
    for q, a in ANSWERS:
        words = a.split()
        for text in (f"{ask} {q}", f"{answer} {' '.join(words[:6])}", " ".join(words[6:])):
            n += 1
            cues.append(f"{n}\n00:00:{n * 3:02d},000 --> 00:00:{n * 3 + 2:02d},500\n{text}\n")
    return "\n".join(cues)


FILES = {
    "cnn_2004.txt": ("2004-03-07", "\n\n".join(
        ["CNN LATE EDITION", "Aired March 7, 2004 - 12:00 ET",
         "THIS IS A RUSH TRANSCRIPT. THIS COPY MAY NOT BE IN ITS FINAL FORM AND MAY BE UPDATED.",
         "WOLFE BARRETT, CNN ANCHOR: Welcome back. Joining us from Santa Fe is the governor."]
        + _turns("BARRETT:", "O'DONNELL-REYES:", first_answer="GOV. MARGUERITE O'DONNELL-REYES (D), NEW MEXICO:")
        + ["(COMMERCIAL BREAK)", "UNIDENTIFIED MALE: This is CNN."])),
    "npr_2011.txt": ("2011-05-02", "\n\n".join(
        ["Governor Says Water Deal Is A Start", "May 2, 2011 4:00 PM ET", "Heard on All Things Considered"]
        + _turns("BLOCK:", "O'DONNELL-REYES:", first_ask="MELISSA BLOCK, HOST:",
                 first_answer="Governor MARGUERITE O'DONNELL-REYES (Democrat, New Mexico):")
        + ["BLOCK: Governor O'Donnell-Reyes, thank you.", "O'DONNELL-REYES: Thank you."])),
    "newspaper_2016.txt": ("2016-08-14", "\n\n".join(
        ["The governor spoke with our reporter at her office in Santa Fe. The interview has been edited and condensed."]
        + [f"{'Q.' if i % 2 == 0 else 'A.'} {t.split(' ', 1)[1]}" for i, t in enumerate(_turns("X", "Y"))])),
    "library_1987.txt": ("1987-10-20", "\n\n".join(
        ["Interview With Regional Journalists", "October 20, 1987"]
        + _turns("Q.", "The Governor.") + ["Mr. Alvarez. Thank you, Governor.", "The Governor. Thank you all."])),
    "podcast_2021.srt": ("2021-02-11", _srt("Jess Tamura:", "Marguerite:")),
    "podcast_2019.txt": ("2019-06-30", "\n\n".join(
        f"{'Jess Tamura (00:00:03):' if i % 2 == 0 else 'Marguerite O' + chr(39) + 'Donnell-Reyes (00:00:40):'}\n{t.split(' ', 1)[1]}"
        for i, t in enumerate(_turns("X", "Y")))),
    "debate_2006.txt": ("2006-10-12", "\n\n".join(
        ["MODERATOR: Good evening and welcome to the debate."]
        + [x for q, a in ANSWERS for x in (f"MODERATOR: {q}", f"O'DONNELL-REYES: {a}",
                                           "CALLOWAY: My opponent has had eight years and the answer is still the same, "
                                           "which is no answer at all, and the valley knows it.")])),
    "mislabelled_senator.txt": ("2008-01-01", "\n\n".join(
        [x for q, a in ANSWERS for x in (f"INTERVIEWER: {q}", f"SENATOR PAULSEN: {a}")])),
    "speech_2009.txt": ("2009-01-20", "Thank you all for coming today.\n\nWe have work to do in this state, and we will do it."),
    "empty.txt": ("2010-01-01", ""),
    "wren_1999.txt": ("1999-04-04", "\n\n".join(_turns("HOST:", "WREN:"))),
    "wren_notes.txt": ("1999-05-05", "Notes for the segment, not a transcript.\n"),
}
"""file -> (date, body); the last two are Tobias Wren's, the rest O'Donnell-Reyes's."""
DIALOGUES = ("cnn_2004.txt", "npr_2011.txt", "newspaper_2016.txt", "library_1987.txt", "podcast_2021.srt",
             "podcast_2019.txt", "debate_2006.txt")


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.casefold()))


def test_a_messy_collection_keeps_the_person_and_says_why_for_every_file(tmp_path) -> None:
    from interviewsim_cli import app

    d = tmp_path / "raw"
    d.mkdir()
    rows = []
    for name, (date, body) in FILES.items():
        (d / name).write_text(body, encoding="utf-8")
        wren = name.startswith("wren")
        rows.append({"file": name, "personality_id": "WREN" if wren else "ODR", "date": date, "title": "Interview",
                     "person_name": "Tobias Wren" if wren else PERSON})
    manifest = write_manifest(tmp_path / "manifest.json", rows)
    out = tmp_path / "corpus"
    result = CliRunner().invoke(app, ["curate", "--transcripts", str(d), "--manifest", str(manifest), "--out", str(out)])
    assert result.exit_code == 1, result.output  # the empty file: an input problem, listed; the rest is written
    assert "empty.txt: $: [empty-file]" in result.output
    report = json.loads((out / "curation_report.json").read_text())
    why = {r["file"]: (r["kept"], r["kind"]) for r in report["transcripts"]}
    assert set(why) == set(FILES)
    assert why["mislabelled_senator.txt"] == (False, "person-never-speaks")
    assert why["speech_2009.txt"] == (False, "not-a-dialogue") and why["empty.txt"] == (False, "refused")
    assert all(kept or kind for kept, kind in why.values()), why  # kept, or out with a stated reason
    assert list(report["written"]) == ["ODR"] and "not-a-dialogue" in report["refused"]["WREN"][0]
    doc = json.loads((out / "ODR" / "prepared_input.json").read_text())
    prov = json.loads((out / "ODR" / "provenance.json").read_text())
    by_file = {t["file"]: t["interview_id"] for t in prov["transcripts"]}
    pairs = {i["interview_id"]: i["qa_pairs"] for i in doc["interviews"]}
    found = {f: sum(any(_norm(a) in _norm(p["response"]) for p in pairs.get(by_file[f], [])) for _q, a in ANSWERS)
             for f in DIALOGUES}
    print(found, why)
    assert sum(found.values()) >= 0.8 * len(DIALOGUES) * len(ANSWERS)
    asked = [_norm(q) for q, _a in ANSWERS]
    assert not any(q in _norm(p["response"]) for q in asked for ps in pairs.values() for p in ps)  # no interviewer words
    assert "excluded per reason:" in result.output and "by answerer" in result.output
