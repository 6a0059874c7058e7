"""Ingest (no model): a transcript file in any of four formats -> ordered turns (label, text).

Formats are detected from the content, not the file name (a ``.txt`` export of captions is captions):

- ``vtt``: starts with ``WEBVTT``; cues, ``<v Name>`` voice tags when present, other tags stripped; without voice
  tags, a label at a cue's start (``>> NAME:``, ``Name:``) names the speaker until the next one.
- ``srt``: a cue number line then a ``00:00:01,000 --> ...`` timing line; voice tags as in WebVTT.
- ``diarised_json``: ``{"segments": [{"start", "end", "speaker", "text"}, ...]}`` (WhisperX/pyannote).
- ``text``: plain text as published, paragraphs opening with a speaker label in any style publishers print
  (``labels.speaker_label``: ``THE PRESIDENT.``, ``Q.``, ``HELEN THOMAS [UPI].``, ``Senator Moreno:``,
  ``STEVE INSKEEP, HOST:``, ``Speaker 1 (00:00:05):``...); a paragraph without a label continues the turn
  before it.

Consecutive captions/segments of one speaker are one turn (captioners cut utterances at line length,
not at turns). Removed and counted, because they are not anybody's words: section headings (a line
in capitals), editorial item numbers (``[5.]``), footnote marks (a number after a sentence's end)
and footnote paragraphs, stage directions (``[Laughter]``, ``(applause)``, ``[Inaudible]``).
A file that is empty, binary, undecodable or in no recognised format is a ``Problem``, never turns.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from ..errors import Problem
from .labels import Found, speaker_label
from .models import Format, Transcript

REMOVED_KINDS = ("headings", "item_numbers", "footnote_marks", "footnotes", "stage_directions")

_STAGE = re.compile(
    r"\s*[\[(](?:laughter|laughs|applause|inaudible|indistinct|unintelligible|crosstalk|music|silence|pause|"
    r"cheers|cheering|booing|coughs|noise|reading|ends reading|end of reading|in [A-Z][a-z]+|confers[^\])]*|"
    r"(?:begin|end) (?:video ?tape|video clip|audio clip|clip|sound ?bite)|commercial break|sound ?bite|off[- ]camera)"
    r"\.?[\])]", re.IGNORECASE)
_ITEM = re.compile(r"\[(?:\d{1,3}|[IVXl]{1,4}|U)[.\-']?\]\s*")
_HEAD_ITEM = re.compile(r"^(?P<head>[^a-z\[\]]*?[A-Z]{2}[^a-z\[\]]*?)\s*(?=\[(?:\d{1,3}|[IVXl]{1,4}|U)[.\-']?\])")
_HEAD_Q = re.compile(r"^[A-Z][A-Z ,.'&-]*[A-Z]\s+(?=(?:Q|THE PRESIDENT)\.\s)")
_ALWAYS_LABEL = re.compile(r"^(?:THE\.?\s+PRESIDENT|Q)$", re.IGNORECASE)
_HEADING = re.compile(r"^(?=[A-Z0-9][^a-z]{0,120}$).*[A-Z]{2}")
"""A short line without a lower-case letter and with two capitals in a row. The shape is tested first: it fails at
a paragraph's first lower-case letter, where the two-capitals test scanned every paragraph to its end."""
_FOOTNOTE_PARA = re.compile(r"^\d{1,2}\s*[A-Z]")
_FOOTNOTE_MARK = re.compile(r"(?<=[.?!\"'])\s*\d{1,2}$")
_VOICE = re.compile(r"<v(?:\.[\w.-]+)?\s+(?P<name>[^>]+)>", re.IGNORECASE)
_TAG = re.compile(r"</?[a-z][^>]*>|<\d{2}:[\d:.]+>", re.IGNORECASE)
_VTT_TIME = re.compile(r"^\s*(?:\d{2}:)?\d{2}:\d{2}\.\d{3}\s+-->\s+")
_SRT_TIME = re.compile(r"^\s*\d{1,2}:\d{2}:\d{2},\d{3}\s+-->\s+\d{1,2}:\d{2}:\d{2},\d{3}")
_QUESTIONER = re.compile(r"^(?:Q|Question|Reporter)$", re.IGNORECASE)
_NAMED = re.compile(r"^(?:Mr\.|Mrs\.|Miss|Ms\.)?\s?[A-Z][\w.'\-]*(?: [A-Z][\w.'\-]*){0,4}(?:, [\w.'&\- ]{2,60}){0,2}:\s+")
"""A questioner's name (and paper) printed after "Q.": who asked, not what was asked."""


def _unstaged(text: str) -> tuple[str, int]:
    """``_STAGE.subn("", text)``, tried only where it can match (a bracket): the same result, and the
    pattern's leading ``\s*`` makes the regex try every position, which was most of ingest's CPU (the
    curation's plan reads every transcript)."""
    return _STAGE.subn("", text) if "[" in text or "(" in text else (text, 0)


def clean(text: str, removed: Counter) -> str:
    """Stage directions and footnote marks out of one piece of spoken text (counted), spaces collapsed."""
    # The footnote mark is tried only where it can match (a final digit), as the stage directions (``_unstaged``).
    text, n = _unstaged(text)
    removed["stage_directions"] += n  # counted even when 0: the report lists every kind
    text, n = text.strip(), 0
    if text[-1:].isdigit():
        text, n = _FOOTNOTE_MARK.subn("", text)
    removed["footnote_marks"] += n
    return " ".join(text.split())


def _merge(pieces: list[tuple[str, str, int]], same_label_joins: bool = True) -> list[dict]:
    """Consecutive pieces of one (non-empty) label joined into one turn (captions and segments cut one
    utterance into many; in published text a repeated label is a new turn: two reporters both "Q.");
    empty texts dropped. The turns' fields, which ``Transcript`` validates into ``Turn``s in one call
    (3x faster than a ``Turn(...)`` each: the curation's plan ingests every transcript)."""
    turns: list[tuple[str, list[str], int]] = []
    for label, text, line in pieces:
        if not text:
            continue
        if same_label_joins and turns and label and turns[-1][0] == label:
            turns[-1][1].append(text)
        else:
            turns.append((label, [text], line))
    return [{"index": i, "label": lab, "text": " ".join(parts), "line": line} for i, (lab, parts, line) in enumerate(turns)]


def _paragraphs(body: str, removed: Counter) -> list[tuple[int, str, Found | None]]:
    """(line, paragraph, its label) for each non-blank line, headings' and item numbers' leftovers taken off."""
    out = []
    for n, line in enumerate(body.splitlines(), start=1):
        para = line.strip()
        if not para:
            continue
        m = _HEAD_ITEM.match(para)
        if m:  # "THE CIA AND CHILE [5.] Q. ...": a heading run into the item number
            removed["headings"] += 1
            para = para[m.end():]
        para, k = _ITEM.subn("", para, count=1) if para.startswith("[") else (para, 0)
        removed["item_numbers"] += k
        para, k = _unstaged(para)  # before the label: "THE PRESIDENT [reading]." is THE PRESIDENT
        removed["stage_directions"] += k
        para = para.strip()
        m = _HEAD_Q.match(para)
        if m:  # "QUESTIONS Q. Mr. President...": a heading run into the first question
            removed["headings"] += 1
            para = para[m.end():]
        if para:
            out.append((n, para, speaker_label(para)))
    return out


def _text(body: str, removed: Counter) -> tuple[list[tuple[str, str, int]], bool]:
    paragraphs = _paragraphs(body, removed)
    weak = Counter(f.label for _n, _p, f in paragraphs if f is not None and not f.strong)
    pieces: list[tuple[str, str, int]] = []
    labelled = False
    for n, para, found in paragraphs:
        if found is not None and not found.strong and weak[found.label] < 2:
            found = None  # a Title Case word and a full stop opening one paragraph only: a sentence, not a speaker
        label_line = found is not None and not found.text and para.endswith(":")  # "STEVE INSKEEP, HOST:" alone
        if (_HEADING.match(para) and not para.endswith((".", "?", "!", ",")) and not label_line
                and (found is None or not _ALWAYS_LABEL.match(found.label))):
            removed["headings"] += 1
            continue
        if found is None and _FOOTNOTE_PARA.match(para) and pieces:
            removed["footnotes"] += 1
            continue
        text = clean(para if found is None else found.text, removed)
        if found is None and pieces:  # a paragraph without a label continues the turn before it
            label, before, start = pieces[-1]
            pieces[-1] = (label, f"{before} {text}".strip(), start)
            continue
        if found is not None:
            labelled = True
            if _QUESTIONER.match(found.label):  # "Q. Robert J. Donovan, New York Herald Tribune: Speaking of..."
                text = _NAMED.sub("", text, count=1)
        pieces.append((found.label if found else "", text, n))
    return pieces, labelled


def _cues(body: str, timing: re.Pattern[str], removed: Counter) -> list[tuple[str, str, int]]:
    """(voice, text, line) per caption cue; the cue's voice tag names the speaker, else ""."""
    pieces: list[tuple[str, str, int]] = []
    lines = body.splitlines()
    i = 0
    last = ""
    while i < len(lines):
        if not timing.match(lines[i]):
            i += 1
            continue
        start, i = i + 1, i + 1
        text_lines = []
        while i < len(lines) and lines[i].strip():
            text_lines.append(lines[i].strip())
            i += 1
        raw = " ".join(text_lines)
        voices = list(_VOICE.finditer(raw))
        if not voices:
            text = _TAG.sub("", raw).strip()
            found = speaker_label(text)
            if found is not None and found.strong:  # "NAME: ..." or ">> NAME: ..." in the cue's text
                last = found.label
                text = found.text
            pieces.append((last, clean(text, removed), start))  # an unlabelled cue goes on with the last speaker
            continue
        for k, v in enumerate(voices):  # one cue may hold several voices
            end = voices[k + 1].start() if k + 1 < len(voices) else len(raw)
            pieces.append((v.group("name").strip(), clean(_TAG.sub("", raw[v.end():end]), removed), start))
    return pieces


def _diarised(data: dict, file: str, removed: Counter) -> tuple[list[tuple[str, str, int]], list[Problem]]:
    problems: list[Problem] = []
    pieces: list[tuple[str, str, int]] = []
    segments = data.get("segments")
    if not isinstance(segments, list):
        return [], [Problem(file, "$.segments", "bad-diarisation", "segments must be an array")]
    for n, seg in enumerate(segments):
        where = f"$.segments[{n}]"
        if not isinstance(seg, dict) or not isinstance(seg.get("text"), str):
            problems.append(Problem(file, where, "bad-diarisation", "a segment is an object with a text string"))
            continue
        speaker = seg.get("speaker", "")
        if not isinstance(speaker, str):
            problems.append(Problem(file, f"{where}.speaker", "bad-diarisation", "speaker must be a string"))
            continue
        pieces.append((speaker.strip(), clean(seg["text"], removed), n + 1))
    return pieces, problems


def detect(body: str) -> tuple[Format | None, dict | None]:
    """The format of a decoded transcript, or None when it is none of the four; and for diarised JSON the
    object the detection parsed (so a file is parsed once)."""
    head = body.lstrip()
    if head.startswith("WEBVTT"):
        return "vtt", None
    first = head.splitlines()[:2]
    if len(first) == 2 and first[0].strip().isdigit() and _SRT_TIME.match(first[1]):
        return "srt", None
    if head.startswith("{"):
        try:
            data = json.loads(head)
        except json.JSONDecodeError:
            return None, None
        return ("diarised_json", data) if isinstance(data, dict) and "segments" in data else (None, None)
    return "text", None


def ingest_bytes(data: bytes, file: str) -> tuple[Transcript | None, list[Problem]]:
    """One transcript's bytes -> its turns, or every problem that refuses it."""
    if not data.strip():
        return None, [Problem(file, "$", "empty-file", "the transcript is empty")]
    if b"\x00" in data[:8192]:
        return None, [Problem(file, "$", "binary-file", "the transcript holds NUL bytes: a binary file, not text")]
    try:
        body = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [Problem(file, f"line {line}", "undecodable", f"not UTF-8: byte {exc.object[exc.start]:#x} at offset {exc.start}")]
    fmt, parsed = detect(body)
    removed: Counter = Counter({k: 0 for k in REMOVED_KINDS})
    problems: list[Problem] = []
    if fmt is None:
        return None, [Problem(file, "$", "unrecognised-format",
                              "neither WebVTT, SRT, diarised JSON ({\"segments\": [...]}) nor labelled plain text")]
    if fmt == "vtt":
        pieces = _cues(body, _VTT_TIME, removed)
    elif fmt == "srt":
        pieces = _cues(body, _SRT_TIME, removed)
    elif fmt == "diarised_json":
        pieces, problems = _diarised(parsed, file, removed)
    else:
        pieces, labelled = _text(body, removed)
        if not labelled:
            return None, [Problem(file, "$", "unrecognised-format",
                                  "plain text with no speaker label (such as 'NAME.' or 'Name:') at a paragraph's start")]
    turns = _merge(pieces, same_label_joins=fmt != "text")
    if not problems and not turns:
        problems.append(Problem(file, "$", "no-turns", f"{fmt} transcript with no spoken text"))
    if problems:
        return None, problems
    return Transcript(file=file, format=fmt, turns=turns, removed=dict(removed)), []


def ingest_file(folder: Path, rel: str) -> tuple[Transcript | None, list[Problem]]:
    """Read ``folder/rel`` (the manifest already checked it lies inside the folder) and ingest it."""
    path = folder / rel
    try:
        data = path.read_bytes()
    except OSError as exc:
        return None, [Problem(str(path), "$", "unreadable", f"cannot read: {exc.strerror or exc}")]
    transcript, problems = _ingest_cached(data, rel)
    return transcript, list(problems)


@lru_cache(maxsize=256)
def _ingest_cached(data: bytes, rel: str) -> tuple[Transcript | None, tuple[Problem, ...]]:
    """``ingest_bytes`` by content: a process that plans a curation (the run's budget gate, ``plan.py``) and then
    runs its ``transcript_turns`` step reads the same files twice but parses them once (the transcript is a
    frozen model)."""
    transcript, problems = ingest_bytes(data, rel)
    return transcript, tuple(problems)
