"""Which columns hold model-output statuses, and the rule "outputs were expected here and none is valid".

Why one module: the run summary (``interviewsim_cli/outcome.py``), the report header and the Dagster
invalid-rate check all count failed/invalid outputs; counted three ways they disagreed (issue 22:
the report said 116 where the summary said 128, because it did not load ``atomic_items``).

``missing_outputs`` is the rule behind "a step that ran on no valid input says so": a step whose
inputs had rows (it was meant to produce outputs from them) but that has no valid output is a
shortfall, with the reason read off the inputs ("0 valid fact summaries (1 invalid)"). An empty
table whose inputs are empty too is not a shortfall: nothing was expected of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .storage import partition_path, read_frame
from .tables import PER_METHOD

__all__ = ["INPUTS", "NOUNS", "Shortfall", "bad_outputs", "missing_outputs", "read_inputs", "status_columns",
           "valid_inputs_reason"]

INPUTS: dict[str, tuple[str, ...]] = {
    "content_similarity": ("generations",),
    "factual_consistency": ("generations", "fact_summary"),
    "generated_personality": ("generations",),
    "mcq_items": ("atomic_items",),
    "mcq_answers": ("mcq_items",),
    "premise_verdicts": ("atomic_items", "fact_summary"),
}
"""A step's table -> the tables its outputs are made from. The first one counts the outputs expected
(one judgment per generation, one item per atomic item...); every one of them must have a valid row
for the step to have anything to work on."""

NOUNS: dict[str, str] = {
    "generations": "generations", "fact_summary": "fact summaries", "atomic_items": "atomic items",
    "mcq_items": "MCQ items", "content_similarity": "CS judgments", "factual_consistency": "FC judgments",
    "generated_personality": "PS votes", "mcq_answers": "MCQ answers", "premise_verdicts": "premise verdicts",
}


def status_columns(names: Iterable[str]) -> list[str]:
    """The columns of a table that hold a model call's status: ``status`` and per-pass ``*_status``."""
    return [c for c in names if c == "status" or c.endswith("_status")]


def bad_outputs(df: pd.DataFrame) -> tuple[int, int]:
    """(invalid or failed, all) model outputs recorded in ``df``, over every status column."""
    bad = total = 0
    for c in status_columns(df.columns):
        s = df[c].dropna()
        total += len(s)
        bad += int((s != "ok").sum())
    return bad, total


def _valid(df: pd.DataFrame) -> int:
    cols = status_columns(df.columns)
    if df.empty or not cols:
        return 0
    ok = pd.Series(True, index=df.index)
    for c in cols:
        ok &= df[c] == "ok"
    return int(ok.sum())


def _counts(df: pd.DataFrame) -> str:
    cols = status_columns(df.columns)
    if not cols:
        return f"{len(df)} row(s)"
    statuses = df[cols[-1]].fillna("not run").value_counts()
    return ", ".join(f"{int(n)} {s}" for s, n in sorted(statuses.items()) if s != "ok") or "all ok"


def valid_inputs_reason(table: str, inputs: Mapping[str, pd.DataFrame]) -> str | None:
    """"0 valid fact summaries (1 invalid)" for the first input of ``table`` without a valid row, or None."""
    for name in INPUTS.get(table, ()):
        df = inputs.get(name)
        if df is None or df.empty:
            return f"no {NOUNS.get(name, name)}"
        if _valid(df) == 0:
            return f"0 valid {NOUNS.get(name, name)} ({_counts(df)} of {len(df)})"
    return None


@dataclass(frozen=True)
class Shortfall:
    """Outputs a step was expected to make and did not: ``expected``, ``got`` (valid rows), ``why``."""

    table: str
    expected: int
    got: int
    why: str

    def message(self) -> str:
        return f"{self.table}: expected {self.expected} output(s), got {self.got} valid: {self.why}"


def missing_outputs(table: str, rows: pd.DataFrame, inputs: Mapping[str, pd.DataFrame]) -> Shortfall | None:
    """The shortfall of one partition of ``table``, or None when it has a valid output or none was expected.

    ``expected`` is the row count of the step's first input (``INPUTS``); the outputs were expected
    whatever those inputs' statuses, since the step exists to turn them into outputs. ``why`` names
    the input with no valid row, else what the step's own rows hold.
    """
    if table not in INPUTS:
        return None
    first = inputs.get(INPUTS[table][0])
    expected = 0 if first is None else len(first)
    got = _valid(rows)
    if expected == 0 or got > 0:
        return None
    why = valid_inputs_reason(table, inputs)
    if why is None:
        noun = NOUNS.get(table, table)
        why = f"no {noun} written" if rows.empty else f"0 valid {noun} ({_counts(rows)} of {len(rows)})"
    return Shortfall(table, expected, got, why)


def read_inputs(data_root: Path | str, table: str, personality_id: str, method: str | None) -> dict[str, pd.DataFrame]:
    """The input partitions of one partition of ``table`` as stored (absent ones left out).

    A per-personality input of a per-method table is the personality's partition (the fact summary
    every method's FC judgments read).
    """
    out: dict[str, pd.DataFrame] = {}
    for name in INPUTS.get(table, ()):
        path = partition_path(data_root, name, personality_id, method if name in PER_METHOD else None)
        try:
            out[name] = read_frame(path)
        except (FileNotFoundError, OSError):
            continue  # that input has not run for this partition
    return out
