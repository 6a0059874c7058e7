"""The report's calibration section: normalised scores and the judge audits (issue 32).

- Normalised scores: the leaderboard's ``all_valid`` rows with ``normalised`` beside the raw value,
  floor and ceiling named (``metrics.normalised``).
- CS against candidate length: per judge, the Pearson correlation of score and candidate length
  (characters) *within question* (both centred on their question's mean, so a question's difficulty
  is not read as a length effect); and a CS leaderboard with length held fixed: each score minus
  the judge's pooled within-question slope times the candidate's length deviation from its
  question's mean, then macro-averaged over personalities.
- Self-preference: a judge whose model family (the provider prefix of ``provider/model``, else the
  name's first token) is the generator's is flagged.
- The ``reference`` run's Contradictions: the person's own words judged contradicting the fact
  summary built from them are each a fact-summary or a judge error; listed, one row each.
"""

from __future__ import annotations

import math
import re

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..metrics.normalised import NORMALISED_FIELDS
from ..metrics.statistics import interval_note
from ..pipeline.tables import from_table
from ..strategies.calibration import REFERENCE
from .loading import UNREAD_COLUMNS, read_table

NORMALISED_COLUMNS = ["method", "judge", "metric", "value", *(n for n, _ in NORMALISED_FIELDS), "norm_ci_note"]


def normalised_table(board: pd.DataFrame) -> pd.DataFrame:
    """The ``all_valid`` leaderboard rows with their normalised columns (one row per method, judge, metric),
    and ``norm_ci_note``: what to know of the interval when its estimate is on an edge (``interval_note``).

    A leaderboard with several generators (``generators.with_generators``) keeps its ``generator`` and
    ``base_method`` columns: every generator's methods are normalised against the same shared calibration rows
    (the calibration methods are never keyed by a generator)."""
    names = [c for c in ("generator", "base_method") if c in board.columns]
    columns = NORMALISED_COLUMNS[:1] + names + NORMALISED_COLUMNS[1:]
    if board.empty or "normalised" not in board.columns:
        return pd.DataFrame(columns=columns)
    rows = board[board["view"] == "all_valid"]
    notes = [interval_note(v, lo, hi) for v, lo, hi in zip(rows["normalised"], rows["norm_ci_low"], rows["norm_ci_high"])]
    return rows.assign(norm_ci_note=notes)[columns].reset_index(drop=True)


def _within(df: pd.DataFrame, col: str) -> pd.Series:
    return df[col] - df.groupby(["personality_id", "qa_id"])[col].transform("mean")


KEYS = ["personality_id", "method", "qa_id"]


def with_lengths(generations: pd.DataFrame) -> pd.DataFrame:
    """Keys and the candidate's length in characters (``length``), from a frame with ``generated``."""
    if "length" in generations.columns:
        return generations[[*KEYS, "length"]]
    if "generated" not in generations.columns:  # text left on disk and no data root to read it from
        return pd.DataFrame(columns=[*KEYS, "length"])
    gen = generations[generations["generated"].notna()]
    return gen[KEYS].assign(length=gen["generated"].str.len().astype(float))


def read_lengths(root) -> pd.DataFrame:
    """``with_lengths`` of the generations under ``root``, each file's texts measured in Arrow as it is read: the
    report's loader leaves answer text on disk, and the population's answers are never held at once (converting
    each file to pandas first was 23% of the report's time over 11,000 partitions, issue 43)."""
    def lengths(t: pa.Table) -> pa.Table:
        t = t.filter(pc.is_valid(t["generated"]))
        return t.select(KEYS).append_column("length", pc.cast(pc.utf8_length(t["generated"]), pa.float64()))

    table = read_table(root, "generations", UNREAD_COLUMNS - {"generated"}, lengths)
    return pd.DataFrame(columns=[*KEYS, "length"]) if table is None else table.to_pandas()


def read_reference_contradictions(root) -> pd.DataFrame:
    """The factual-consistency rows of the reference labelled Contradiction, with their explanations (left on disk
    by the report's loader), each file filtered in Arrow as it is read."""
    def contradictions(t: pa.Table) -> pa.Table:
        return t.filter(pc.and_(pc.equal(t["method"], REFERENCE), pc.equal(t["label"], "Contradiction")))

    table = read_table(root, "factual_consistency", UNREAD_COLUMNS - {"explanation"}, contradictions)
    return pd.DataFrame(columns=["personality_id", "method", "qa_id", "judge", "label", "explanation"]) \
        if table is None else from_table(table)


def _judged_lengths(cs: pd.DataFrame, generations: pd.DataFrame) -> pd.DataFrame:
    ok = cs[(cs["status"] == "ok") & cs["score"].notna()] if "status" in cs else cs[cs["score"].notna()]
    out = ok.merge(with_lengths(generations), on=KEYS, how="inner")
    return out.assign(score=out["score"].astype(float))


def length_audit(cs: pd.DataFrame, generations: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per judge: within-question correlation and slope; per judge and method: CS raw and length-adjusted)."""
    corr_cols = ["judge", "n", "questions", "r_within_question", "slope_per_100_chars", "note"]
    adj_cols = ["judge", "method", "cs_raw", "cs_length_adjusted", "n"]
    if cs.empty or generations.empty:
        return pd.DataFrame(columns=corr_cols), pd.DataFrame(columns=adj_cols)
    d = _judged_lengths(cs, generations)
    corr_rows, adj_rows = [], []
    for judge, g in d.groupby("judge", sort=True):
        x, y = _within(g, "length"), _within(g, "score")
        sxx, syy = float((x * x).sum()), float((y * y).sum())
        note = ""
        if sxx == 0 or syy == 0:
            r, slope = math.nan, math.nan
            note = "undefined: " + ("lengths" if sxx == 0 else "scores") + " do not vary within a question"
        else:
            r, slope = float((x * y).sum() / math.sqrt(sxx * syy)), float((x * y).sum() / sxx)
        corr_rows.append({"judge": judge, "n": len(g), "questions": g.groupby(["personality_id", "qa_id"]).ngroups,
                          "r_within_question": r, "slope_per_100_chars": slope * 100, "note": note})
        adjusted = g["score"] - (0.0 if math.isnan(slope) else slope) * x
        g = g.assign(adjusted=adjusted)
        for method, gm in g.groupby("method", sort=True):
            per = gm.groupby("personality_id")[["score", "adjusted"]].mean()
            adj_rows.append({"judge": judge, "method": method, "cs_raw": float(per["score"].mean()),
                             "cs_length_adjusted": float(per["adjusted"].mean()), "n": len(gm)})
    return pd.DataFrame(corr_rows, columns=corr_cols), pd.DataFrame(adj_rows, columns=adj_cols)


def model_family(model: str) -> str:
    """``openai/gpt-4o`` -> ``openai``; ``gpt-4o-mini`` -> ``gpt``; lower case."""
    m = str(model).strip().lower()
    return m.split("/", 1)[0] if "/" in m else re.split(r"[-_:.]", m, maxsplit=1)[0]


def self_preference(judged: pd.DataFrame, generations: pd.DataFrame) -> pd.DataFrame:
    """Per judge: its model, its family, the generator models' families, and whether they share one."""
    cols = ["judge", "judge_model", "judge_family", "generator_families", "same_family"]
    if judged.empty or generations.empty or "model" not in judged or "model" not in generations:
        return pd.DataFrame(columns=cols)  # no model names to compare (tables written without them)
    from ..pipeline.calls import CALIBRATION_MODEL

    gens = {model_family(m) for m in generations["model"].dropna().astype(str) if m != CALIBRATION_MODEL}
    rows = []
    for judge, g in judged.dropna(subset=["model"]).groupby("judge", sort=True):
        model = str(g["model"].iloc[0])
        fam = model_family(model)
        rows.append({"judge": judge, "judge_model": model, "judge_family": fam,
                     "generator_families": ", ".join(sorted(gens)), "same_family": fam in gens})
    return pd.DataFrame(rows, columns=cols)


def reference_contradictions(fc: pd.DataFrame) -> pd.DataFrame:
    """Every Contradiction label a judge gave the person's own held-out response (``reference``)."""
    cols = ["personality_id", "qa_id", "judge", "explanation"]
    if fc.empty:
        return pd.DataFrame(columns=cols)
    sel = fc[(fc["method"] == REFERENCE) & (fc["label"] == "Contradiction")]
    if "explanation" not in sel.columns:
        sel = sel.assign(explanation="")
    return sel[cols].sort_values(cols[:3], kind="stable").reset_index(drop=True)


def self_preference_note(table: pd.DataFrame) -> str:
    if table.empty:
        return "Self-preference not checked: no judged rows with their judge and generator model names."
    flagged = table[table["same_family"].astype(bool)]
    if flagged.empty:
        return "No judge shares the generator's model family."
    return ("Self-preference risk: " + ", ".join(f"{r.judge} ({r.judge_family})" for r in flagged.itertuples())
            + " judge(s) from the generator's model family; their scores of generated answers may favour them.")
