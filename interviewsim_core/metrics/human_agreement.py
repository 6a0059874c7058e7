"""Agreement of each LLM judge with human labels (paper section 3.3), from a user's CSV.

The paper validated its judges against trained annotators: Content Similarity by ordinal
agreement, Factual Consistency by Cohen's kappa (three-way, and binary contradiction vs not, the
form the contradiction ratio uses), and MCQ items by how many of the items the pipeline kept a
person found valid. This module reads such labels from a CSV and computes the same figures for
every judge of a run, next to the judge-judge agreement the report already shows.

CSV columns (header required, UTF-8, extra columns refused so a typo is not silently ignored):

==================  ===========================================================================
personality_id      the personality
method              the method whose generation was labelled (cs, fc); empty for mcq_item_valid
qa_id               the held-out question (cs, fc) or the MCQ item id ``<qa_id>#<n>`` (mcq_item_valid)
metric              ``cs`` | ``fc`` | ``mcq_item_valid``
value               cs: integer 1-5; fc: Entailment | Neutral | Contradiction; mcq_item_valid: 1/0/true/false
==================  ===========================================================================
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputValidationError, Problem
from .statistics import cohen_kappa, spearman

__all__ = ["HUMAN_COLUMNS", "HUMAN_METRICS", "load_human_labels", "human_agreement"]

HUMAN_COLUMNS = ("personality_id", "method", "qa_id", "metric", "value")
HUMAN_METRICS = ("cs", "fc", "mcq_item_valid")
FC_LABELS = ("Entailment", "Neutral", "Contradiction")
CS_LEVELS = (1, 2, 3, 4, 5)
_TRUE = {"1", "true"}
_FALSE = {"0", "false"}


def _value(metric: str, raw: str) -> object:
    """The typed value of one label, or raise ValueError naming the rule."""
    text = raw.strip()
    if metric == "cs":
        if text not in {str(v) for v in CS_LEVELS}:
            raise ValueError("cs value must be an integer 1-5")
        return int(text)
    if metric == "fc":
        if text not in FC_LABELS:
            raise ValueError(f"fc value must be one of {', '.join(FC_LABELS)} (exact case)")
        return text
    low = text.lower()
    if low not in _TRUE | _FALSE:
        raise ValueError("mcq_item_valid value must be 1, 0, true or false")
    return low in _TRUE


def load_human_labels(path: Path | str) -> pd.DataFrame:
    """Read and check the CSV; every problem in the file is reported at once.

    Returns:
        Columns ``personality_id, method, qa_id, metric, value`` (value typed per metric).

    Raises:
        InputValidationError: missing/extra columns, unknown metric, bad value, blank key, or the
            same (personality_id, method, qa_id, metric) labelled twice; each problem names the
            file, the row (``$[line N]``) and the rule.
    """
    path = Path(path)
    name = str(path)
    problems: list[Problem] = []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise InputValidationError([Problem(name, "$", "file-missing", "no such file")]) from None
    except UnicodeDecodeError as exc:
        raise InputValidationError([Problem(name, "$", "encoding", f"not UTF-8: {exc}")]) from None
    reader = csv.DictReader(text.splitlines())
    header = tuple(reader.fieldnames or ())
    missing = [c for c in HUMAN_COLUMNS if c not in header]
    extra = [c for c in header if c not in HUMAN_COLUMNS]
    if missing or extra:
        detail = "; ".join(filter(None, [f"missing {missing}" if missing else "",
                                          f"unknown {extra}" if extra else ""]))
        raise InputValidationError([Problem(name, "$[header]", "columns",
                                            f"columns must be {list(HUMAN_COLUMNS)}: {detail}")])
    rows: list[dict[str, object]] = []
    seen: dict[tuple[str, str, str, str], int] = {}
    for line, rec in enumerate(reader, start=2):
        where = f"$[line {line}]"
        if None in rec or any(v is None for v in rec.values()):
            problems.append(Problem(name, where, "columns", "row does not have exactly 5 fields"))
            continue
        pid, method, qa, metric = (rec[c].strip() for c in ("personality_id", "method", "qa_id", "metric"))
        bad = False
        if metric not in HUMAN_METRICS:
            problems.append(Problem(name, f"{where}.metric", "metric", f"unknown metric {metric!r}; "
                                    f"known: {', '.join(HUMAN_METRICS)}"))
            bad = True
        for col, val in (("personality_id", pid), ("qa_id", qa)):
            if not val:
                problems.append(Problem(name, f"{where}.{col}", "blank", f"{col} must not be blank"))
                bad = True
        if metric in ("cs", "fc") and not method:
            problems.append(Problem(name, f"{where}.method", "blank", f"{metric} labels name the method"))
            bad = True
        if bad:
            continue
        try:
            value = _value(metric, rec["value"])
        except ValueError as exc:
            problems.append(Problem(name, f"{where}.value", "value", f"{exc}; got {rec['value']!r}"))
            continue
        key = (pid, method, qa, metric)
        if key in seen:
            problems.append(Problem(name, where, "duplicate", f"{key} already labelled on line {seen[key]}"))
            continue
        seen[key] = line
        rows.append({"personality_id": pid, "method": method, "qa_id": qa, "metric": metric, "value": value})
    if problems:
        raise InputValidationError(problems)
    return pd.DataFrame(rows, columns=list(HUMAN_COLUMNS))


def _ok(df: pd.DataFrame | None) -> pd.DataFrame:
    if df is None or df.empty:
        return pd.DataFrame()
    return df[df["status"] == "ok"]


def _row(judge: str, metric: str, measure: str, n: int, value: float, note: str = "") -> dict[str, object]:
    return {"judge": judge, "metric": metric, "measure": measure, "n": n, "value": value, "note": note}


def _binary(labels: pd.Series) -> list[str]:
    return ["Contradiction" if v == "Contradiction" else "Non-contradiction" for v in labels]


def human_agreement(labels: pd.DataFrame, tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Per judge, agreement with the human labels that match a valid judgment.

    Args:
        labels: ``load_human_labels`` output.
        tables: the run's tables; reads ``content_similarity``, ``factual_consistency`` and
            ``mcq_items`` when present.

    Returns:
        One row per (judge, metric, measure): ``n`` labelled items matched to a valid judgment,
        ``value`` (NaN with a ``note`` saying why when nothing matched). Measures: cs -> weighted
        kappa (linear, levels 1-5) and Spearman; fc -> kappa (three-way) and kappa (binary
        contradiction vs not); mcq_item_valid -> precision (share of the pipeline's valid items a
        person also found valid). MCQ items are built by the builder model, which is what the
        ``judge`` column names on those rows.
    """
    out: list[dict[str, object]] = []
    keys = ["personality_id", "method", "qa_id"]
    for metric, table, col in (("cs", "content_similarity", "score"), ("fc", "factual_consistency", "label")):
        human = labels[labels["metric"] == metric]
        if human.empty:
            continue
        everything = tables.get(table)
        if everything is None or everything.empty:
            out.append(_row("-", metric, "matched", 0, math.nan, f"no {table} rows in this run"))
            continue
        judged = _ok(everything)
        for judge in sorted(everything["judge"].unique()):
            grp = judged[judged["judge"] == judge]
            both = human.merge(grp[keys + [col]], on=keys, how="inner")
            n = len(both)
            note = "" if n else f"none of the {len(human)} labelled items has a valid judgment by this judge"
            if metric == "cs":
                h = both["value"].astype(int).tolist()
                j = both[col].astype(int).tolist()
                out.append(_row(judge, metric, "weighted kappa (linear)", n,
                                cohen_kappa(h, j, weights="linear", labels=CS_LEVELS) if n else math.nan, note))
                out.append(_row(judge, metric, "spearman", n, spearman(h, j)[0] if n else math.nan, note))
            else:
                h, j = both["value"].tolist(), both[col].tolist()
                out.append(_row(judge, metric, "kappa (3-way)", n,
                                cohen_kappa(h, j, labels=FC_LABELS) if n else math.nan, note))
                out.append(_row(judge, metric, "kappa (binary contradiction)", n,
                                cohen_kappa(_binary(pd.Series(h)), _binary(pd.Series(j)),
                                            labels=("Non-contradiction", "Contradiction")) if n else math.nan,
                                note))
    human = labels[labels["metric"] == "mcq_item_valid"]
    if not human.empty:
        items = _ok(tables.get("mcq_items"))
        if items.empty:
            out.append(_row("-", "mcq_item_valid", "precision", 0, math.nan, "no valid mcq_items rows in this run"))
        else:
            both = human.merge(items[["personality_id", "item_id", "model"]],
                               left_on=["personality_id", "qa_id"], right_on=["personality_id", "item_id"])
            for builder, grp in (both.groupby("model", sort=True) if len(both) else [("-", both)]):
                n = len(grp)
                value = float(np.mean(grp["value"].astype(bool))) if n else math.nan
                note = "" if n else f"none of the {len(human)} labelled items is a valid item of this run"
                out.append(_row(str(builder), "mcq_item_valid", "precision", n, value, note))
    return pd.DataFrame(out, columns=["judge", "metric", "measure", "n", "value", "note"])
