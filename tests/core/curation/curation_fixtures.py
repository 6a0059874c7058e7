"""Helpers of the curation tests: one dialogue in four formats, and a call runner that answers with
the offline model directly (the responders, no litellm), so a whole curation runs in milliseconds."""

from __future__ import annotations

import json
from pathlib import Path

from interviewsim_core.errors import ContractParseError
from interviewsim_core.llm.types import CallResult

PERSON = "Mara Voss"
DIALOGUE = [
    ("Interviewer", "Welcome to the programme, it is good to have you here."),
    (PERSON, "Thank you, it is a pleasure to be here with you today."),
    ("Interviewer", "What made you start sailing alone across the ocean?"),
    (PERSON, "I grew up by the harbour and the boats were always calling me out."),
    (PERSON, "My father built the first one with his own hands in our garden."),
    ("Interviewer", "Were you ever afraid out there at night?"),
    (PERSON, "Uh, afraid, yes, but the fear kept me careful and awake."),
    ("Interviewer", "And what comes next for you after this long voyage?"),
    (PERSON, "A book about the crossing and then a quiet winter at home."),
]


class OfflineRunner:
    """A CallRunner that asks the offline responders directly and parses with each request's parser."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def run_many(self, pairs):
        from interviewsim_core.offline import respond

        out = []
        for _model, req in pairs:
            self.calls.append(req.contract)
            raw = respond(list(req.messages), req.contract)
            try:
                out.append(CallResult(status="ok", value=req.parser(raw), raw=raw))
            except ContractParseError as exc:
                out.append(CallResult(status="invalid", raw=raw, parse_error=exc.reason))
        return out


def _ts(seconds: int, sep: str) -> str:
    return f"00:00:{seconds:02d}{sep}000"


def as_text(turns=DIALOGUE) -> str:
    """Published style: 'NAME: text' paragraphs, a heading, a stage direction and a footnote mark."""
    lines = ["THE CROSSING", ""]
    for who, text in turns:
        lines += [f"{who.upper() if who == PERSON else who}: {text}", ""]
    lines[4] = lines[4].replace("today.", "today. [Laughter]")
    return "\n".join(lines)


def as_vtt(turns=DIALOGUE) -> str:
    out = ["WEBVTT", ""]
    for i, (who, text) in enumerate(turns):
        half = len(text.split()) // 2  # captions cut an utterance in two cues
        for k, part in enumerate((" ".join(text.split()[:half]), " ".join(text.split()[half:]))):
            s = 4 * i + 2 * k
            out += [f"{_ts(s, '.')} --> {_ts(s + 2, '.')}", f"<v {who}>{part}</v>", ""]
    return "\n".join(out)


def as_srt(turns=DIALOGUE) -> str:
    out = []
    for i, (who, text) in enumerate(turns):
        out += [str(i + 1), f"{_ts(2 * i, ',')} --> {_ts(2 * i + 2, ',')}", f"<v {who}>{text}", ""]
    return "\n".join(out)


def as_diarised(turns=DIALOGUE) -> str:
    ids = {"Interviewer": "SPEAKER_00", PERSON: "SPEAKER_01"}
    return json.dumps({"segments": [{"start": float(i), "end": i + 0.9, "speaker": ids[who], "text": text}
                                    for i, (who, text) in enumerate(turns)]})


FORMATS = {"text": ("dialogue.txt", as_text), "vtt": ("dialogue.vtt", as_vtt),
           "srt": ("dialogue.srt", as_srt), "diarised_json": ("dialogue.json", as_diarised)}


def write_manifest(path: Path, rows: list[dict]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


