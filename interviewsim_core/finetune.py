"""Supervised fine-tuning data from the training side of the hold-out (paper section 4.3).

Training adapters needs GPUs and is done with the user's own tools; evaluating them is this
project's job. So this module writes what those tools take: chat-format JSONL, one record per
*training* pair, with the system message of the Simple method's prompt, the question as the user
turn and the person's real response as the assistant turn.

Why the system message is the generation contract's own: an adapter evaluated with the ``simple``
method then sees at evaluation time exactly the instruction it was trained under (the paper
compares per-personality LoRA with the base model "with the same simple prompt format").

Only ``HeldOutSplit.train_pairs`` are read: the held-out interviews are the test set, and a record
built from one of them would train on the answers the adapter is later scored against.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .atomic_files import atomic_write_text
from .contracts import generation
from .split import HeldOutSplit

__all__ = ["SftRecord", "sft_records", "sft_jsonl", "write_sft_files", "write_sft_records", "ALL_PERSONALITIES_FILE"]

ALL_PERSONALITIES_FILE = "all_personalities.jsonl"
"""Name of the one file that holds every personality's records (the paper's all-personality SFT)."""


@dataclass(frozen=True)
class SftRecord:
    """One supervised example: where it came from, and the three chat turns."""

    personality_id: str
    qa_id: str
    interview_id: str
    system: str
    user: str
    assistant: str

    def to_chat(self) -> dict[str, list[dict[str, str]]]:
        """The OpenAI / TRL / Axolotl chat format: only ``messages`` (strict uploaders refuse other keys)."""
        return {"messages": [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user},
            {"role": "assistant", "content": self.assistant},
        ]}


def system_prompt(personality_id: str) -> str:
    """The Simple method's system message for ``personality_id``, byte-identical to generation's."""
    return generation.SYSTEM_TEMPLATE.format(personality_id=personality_id)


def sft_records(split: HeldOutSplit) -> list[SftRecord]:
    """One record per training pair of ``split``, in interview order; never a held-out pair."""
    pid = split.personality_id
    system = system_prompt(pid)
    return [
        SftRecord(pid, p.qa_id, p.interview_id, system, p.question, p.response)
        for p in split.train_pairs
    ]


def sft_jsonl(records: Iterable[SftRecord]) -> str:
    """JSONL text (one chat record per line, UTF-8 kept readable, trailing newline)."""
    lines = [json.dumps(r.to_chat(), ensure_ascii=False) for r in records]
    return "".join(line + "\n" for line in lines)


def write_sft_files(splits: Sequence[HeldOutSplit], out_dir: Path,
                    file_name: Callable[[str], str] | None = None) -> dict[str, Path]:
    """``write_sft_records`` of every training pair of ``splits``."""
    return write_sft_records({sp.personality_id: sft_records(sp) for sp in splits}, out_dir, file_name)


def write_sft_records(by_person: dict[str, list[SftRecord]], out_dir: Path,
                      file_name: Callable[[str], str] | None = None) -> dict[str, Path]:
    """Write ``<out_dir>/<name>.jsonl`` per personality plus the all-personality file, atomically.

    Args:
        by_person: personality id -> its records.
        out_dir: created if missing.
        file_name: personality id -> file stem (default: the data root's partition naming, so ids
            that are not safe file names still get distinct files).

    Returns:
        personality id (and ``ALL_PERSONALITIES_FILE``) -> written path.
    """
    from .pipeline.storage import path_segment  # the data root's id -> file name mapping

    stem = file_name or path_segment
    out_dir.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    everything: list[SftRecord] = []
    for pid, records in by_person.items():
        everything += records
        path = out_dir / f"{stem(pid)}.jsonl"
        atomic_write_text(path, sft_jsonl(records))
        written[pid] = path
    path = out_dir / ALL_PERSONALITIES_FILE
    atomic_write_text(path, sft_jsonl(everything))
    written[ALL_PERSONALITIES_FILE] = path
    return written
