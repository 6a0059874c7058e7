"""Raw transcripts of the shipped synthetic sample (fictional people), for demos and round-trip tests.

The sample corpus (``sample_corpus/``) was written as prepared documents; this renders each of its
interviews back into a raw transcript, taking the four formats in turn (plain text with a heading
and a stage direction, WebVTT with voice tags and utterances cut over two cues, SRT with voice tags,
diarised JSON with ``SPEAKER_00``/``SPEAKER_01``), with a manifest and the profile texts, so the whole
curation can run end to end on data anyone may redistribute. The person's name is the profile's
subject (the words before its first " is ").
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from ..atomic_files import atomic_write
from ..loader import load_corpus
from ..sample_corpus import SAMPLE_CORPUS_DIR
from ..schema import PreparedInput

FORMATS = ("text", "vtt", "srt", "diarised_json")
EXTENSIONS = {"text": "txt", "vtt": "vtt", "srt": "srt", "diarised_json": "json"}
INTERVIEWER = "Interviewer"


def _ts(seconds: int, sep: str) -> str:
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}{sep}000"


def render(fmt: str, person: str, turns: list[tuple[str, str]], heading: str) -> str:
    """One transcript of ``turns`` ((speaker, text) with speaker the person or ``INTERVIEWER``) in ``fmt``."""
    if fmt == "text":
        lines = [heading.upper(), ""]
        for k, (who, text) in enumerate(turns):
            label = who.upper() if who == person else who
            lines += [f"{label}: {text}{' [Laughter]' if k == 1 else ''}", ""]
        return "\n".join(lines)
    if fmt == "diarised_json":
        ids = {INTERVIEWER: "SPEAKER_00", person: "SPEAKER_01"}
        return json.dumps({"segments": [{"start": float(2 * i), "end": 2 * i + 1.5, "speaker": ids[who], "text": text}
                                        for i, (who, text) in enumerate(turns)]}, ensure_ascii=False, indent=1)
    out = ["WEBVTT", ""] if fmt == "vtt" else []
    sep = "." if fmt == "vtt" else ","
    cue = 0
    for who, text in turns:
        words = text.split()
        parts = [" ".join(words[: len(words) // 2]), " ".join(words[len(words) // 2:])] if fmt == "vtt" and len(words) > 8 else [text]
        for part in parts:
            cue += 1
            out += ([] if fmt == "vtt" else [str(cue)]) + [f"{_ts(3 * cue, sep)} --> {_ts(3 * cue + 3, sep)}", f"<v {who}>{part}", ""]
    return "\n".join(out)


def person_of(doc: PreparedInput) -> str:
    return doc.personality.profile.split(" is ", 1)[0].strip()


def write_sample_transcripts(out: Path | str) -> Path:
    """Write every sample interview as a raw transcript under ``out`` plus ``manifest.json``; returns the manifest."""
    out = Path(out)
    rows = []
    k = 0
    for doc in load_corpus(SAMPLE_CORPUS_DIR):
        person = person_of(doc)
        pid = doc.personality_id
        for name, text in (("profile.txt", doc.personality.profile), ("long_profile.txt", doc.personality.long_profile)):
            data = text.encode("utf-8")
            atomic_write(out / pid / name, lambda fh, data=data: fh.write(data))
        for iv in sorted(doc.interviews, key=lambda i: i.sequence):
            fmt = FORMATS[k % len(FORMATS)]
            k += 1
            turns = [t for p in iv.qa_pairs for t in ((INTERVIEWER, p.question), (person, p.response))]
            rel = f"{pid}/{iv.interview_id}.{EXTENSIONS[fmt]}"
            data = render(fmt, person, turns, iv.interview_id.replace("-", " ")).encode("utf-8")
            atomic_write(out / rel, lambda fh, data=data: fh.write(data))
            date = (dt.date(2000, 1, 1) + dt.timedelta(days=30 * iv.sequence)).isoformat()
            rows.append({"file": rel, "personality_id": pid, "person_name": person, "date": date,
                         "profile_file": f"{pid}/profile.txt", "long_profile_file": f"{pid}/long_profile.txt"})
    payload = json.dumps(rows, indent=1).encode("utf-8")
    return atomic_write(out / "manifest.json", lambda fh: fh.write(payload))
