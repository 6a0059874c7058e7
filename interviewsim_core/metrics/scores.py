"""Per-item judgments -> per-personality metrics -> macro averages over personalities.

Pure functions over DataFrames with the columns of docs/DESIGN.md ("Tables"). The rules are
the seed's: CS is the mean score; the contradiction ratio is Contradiction over all FC
judgments; PS is the alignment of the two sides' modal trait levels; MCQ accuracy and reward
are means over items per option count. Rows whose call did not end ``ok`` are unscored for
CS, FC and PS (counted in ``*_invalid`` / ``*_failed``, never coerced to a score); MCQ rows of a
malformed group answer carry the seed's -0.5 and are scored (and counted in ``mcq*_malformed``);
MCQ rows of a failed call have no value and are counted in ``mcq*_failed``.
"""

from __future__ import annotations

import math
from typing import Iterable, NamedTuple, Sequence

import numpy as np
import pandas as pd

from ..contracts.personality import N_VOTES, TRAITS, alignment, modal_vote
from .registry import COUNT_KINDS, FAMILIES, METRICS, Family, cells_column, count_column, items_column
from .statistics import Interval, bootstrap_ci

__all__ = [
    "Aggregate",
    "CI_CONFIDENCE",
    "CI_N_RESAMPLES",
    "macro_interval",
    "METHOD_SCORE_FIELDS",
    "METHOD_SCORE_COLUMNS",
    "MACRO_METRICS",
    "cs_mean",
    "contradiction_ratio",
    "trait_levels",
    "ps_alignment",
    "personality_scores",
    "mcq_rows",
]

OK = "ok"
INVALID = "invalid"
FAILED = "failed"
CONTRADICTION = "Contradiction"

MACRO_METRICS: tuple[str, ...] = tuple(m.name for m in METRICS)
"""Per-personality metrics macro-averaged over personalities, each with a bootstrap CI."""


def _method_score_fields() -> tuple[tuple[str, str], ...]:
    fields: list[tuple[str, str]] = [("personality_id", "str"), ("method", "str"), ("judge", "str"),
                                     ("embedding_model", "str")]
    fields += [(m.name, "float") for m in METRICS]
    for fam in FAMILIES:
        fields += [(count_column(fam, k), "int") for k in COUNT_KINDS]
        if fam.cell == "item":
            fields += [(count_column(fam, "malformed"), "int"), (count_column(fam, "no_item"), "int")]
    for fam in FAMILIES:
        if fam.cell != "personality":
            fields.append((cells_column(fam), "list_str"))
            fields += [(items_column(m), "list_float") for m in METRICS if m.family_key == fam.key]
    fields += [("n_test_questions", "int"), ("n_train_pairs", "int"),
               ("prompt_tokens", "int"), ("completion_tokens", "int"), ("cost_usd", "float")]
    return tuple(fields)


METHOD_SCORE_FIELDS: tuple[tuple[str, str], ...] = _method_score_fields()
"""Columns of the ``method_scores`` table and their kinds (str, int, float, list_str, list_float),
derived from the metric registry: ``pipeline/tables.py`` turns them into the Arrow schema."""

METHOD_SCORE_COLUMNS: tuple[str, ...] = tuple(n for n, _ in METHOD_SCORE_FIELDS)
"""Columns of the ``method_scores`` table, in order."""

CI_CONFIDENCE = 0.95
"""Confidence level of every macro-average interval (leaderboard table, report, Dagster metadata)."""
CI_N_RESAMPLES = 2000
"""Bootstrap resamples of every macro-average interval."""

_TOKEN_COLS = ("prompt_tokens", "completion_tokens", "cost_usd")


class Aggregate(NamedTuple):
    """One metric over one personality: its value (NaN when nothing valid), valid n, invalid n."""

    value: float
    n: int
    invalid: int


def _ok(df: pd.DataFrame) -> pd.Series:
    return df["status"] == OK


def cs_mean(cs: pd.DataFrame) -> Aggregate:
    """Mean Content Similarity score over ``ok`` judgments."""
    if cs.empty:
        return Aggregate(math.nan, 0, 0)
    ok = _ok(cs)
    scores = cs.loc[ok, "score"].astype(float)
    return Aggregate(float(scores.mean()) if len(scores) else math.nan, int(ok.sum()), int((~ok).sum()))


def contradiction_ratio(fc: pd.DataFrame) -> Aggregate:
    """Share of ``ok`` Factual Consistency judgments labelled Contradiction."""
    if fc.empty:
        return Aggregate(math.nan, 0, 0)
    ok = _ok(fc)
    labels = fc.loc[ok, "label"]
    value = float((labels == CONTRADICTION).mean()) if len(labels) else math.nan
    return Aggregate(value, int(ok.sum()), int((~ok).sum()))


def trait_levels(votes: pd.DataFrame) -> dict[str, tuple[str, float] | None]:
    """Per trait, the modal level and its confidence, or None when it lacks three valid votes.

    The seed defines the level as the mode of exactly three runs; a trait with an invalid or
    missing run has no level rather than a mode of two. Plain Python over the columns: a side has
    15 votes, and pandas' filter-and-sort per trait cost more than the rest of a partition's scores.
    """
    out: dict[str, tuple[str, float] | None] = dict.fromkeys(TRAITS)
    if votes.empty:
        return out
    by_trait: dict[str, list[tuple[int, str]]] = {t: [] for t in TRAITS}
    for status, trait, index, rate in zip(votes["status"].tolist(), votes["trait"].tolist(),
                                          votes["vote_index"].tolist(), votes["rate"].tolist()):
        if status == OK and trait in by_trait:
            by_trait[trait].append((index, rate))
    for trait, pairs in by_trait.items():
        pairs.sort(key=lambda pair: pair[0])  # stable, as the vote order of the seed's three runs
        try:
            out[trait] = modal_vote([rate for _, rate in pairs])
        except ValueError:
            out[trait] = None
    return out


def ps_alignment(reference_votes: pd.DataFrame, generated_votes: pd.DataFrame) -> Aggregate:
    """Personality alignment between the reference and generated sides under one judge.

    ``n`` is the number of traits leveled on both sides (5 when valid); ``invalid`` counts
    vote rows (either side) whose call did not end ``ok``. NaN unless all five traits have a
    level on both sides.
    """
    ref = trait_levels(reference_votes)
    gen = trait_levels(generated_votes)
    both = [t for t in TRAITS if ref[t] is not None and gen[t] is not None]
    invalid = sum(int((~_ok(v)).sum()) for v in (reference_votes, generated_votes) if not v.empty)
    if len(both) != len(TRAITS):
        return Aggregate(math.nan, len(both), invalid)
    value = alignment({t: ref[t][0] for t in TRAITS}, {t: gen[t][0] for t in TRAITS})  # type: ignore[index]
    return Aggregate(float(value), len(both), invalid)


def _usage(frames: Iterable[pd.DataFrame]) -> dict[str, float]:
    totals = dict.fromkeys(_TOKEN_COLS, 0.0)
    for df in frames:
        for col in _TOKEN_COLS:
            if col in df.columns and len(df):
                totals[col] += float(pd.to_numeric(df[col], errors="coerce").fillna(0).sum())
    return totals


def _mcq_calls(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per group call: its call columns repeat on every item row of the group."""
    if answers.empty or "interview_id" not in answers.columns:
        return answers
    return answers.drop_duplicates(subset=["n_options", "interview_id"])


def _pick(df: pd.DataFrame | None, **keys: str) -> pd.DataFrame:
    if df is None:
        return pd.DataFrame(columns=["status", *keys])
    mask = np.ones(len(df), dtype=bool)
    for col, value in keys.items():
        if col in df.columns:
            mask &= (df[col] == value).to_numpy()
    # In the pipeline a frame is already the partition's own rows: no copy when nothing is dropped.
    return df if mask.all() else df[mask]


def _judges_in(*frames: pd.DataFrame) -> list[str]:
    names: set[str] = set()
    for df in frames:
        if "judge" in df.columns:
            names.update(df["judge"].dropna().astype(str))
    return sorted(names)



class Cells(NamedTuple):
    """One family's outputs over one personality x method x judge: counts and the valid cells' values."""

    counts: dict[str, int]
    """``COUNT_KINDS`` (plus ``malformed`` for MCQ) -> count."""
    cells: list[str]
    values: dict[str, list[float]]
    """Metric name -> per-cell values aligned with ``cells``."""


def _status_of(df: pd.DataFrame, key: str) -> dict[str, str]:
    if df.empty or key not in df.columns:
        return {}
    return dict(zip(df[key].astype(str), df["status"].astype(str)))


def _tally(expected_ids: Iterable[str], outcome: dict[str, str], upstream: dict[str, str],
           source: dict[str, str] | None = None) -> dict[str, int]:
    """Counts per cell: its own output's status first, else why it has none (the upstream status).

    ``source`` is the input of the upstream (MCQ: the atomic item an MCQ item is built from). A cell
    whose upstream output does not exist because the source was invalid or failed is counted as
    ``no_item``, not as an invalid upstream output: nothing was generated to be invalid."""
    counts = dict.fromkeys(COUNT_KINDS, 0)
    if source is not None:
        counts["no_item"] = 0
    universe = set(expected_ids) | set(outcome)
    counts["expected"] = len(universe)
    for cell in universe:
        status = outcome.get(cell)
        if status == OK:
            counts["n"] += 1
        elif status in (INVALID, FAILED):
            counts["invalid" if status == INVALID else "failed"] += 1
        elif upstream.get(cell) in (INVALID, FAILED):
            counts["invalid" if upstream[cell] == INVALID else "failed"] += 1
        elif source is not None and source.get(cell) in (INVALID, FAILED):
            counts["no_item"] += 1
        else:
            counts["not_run"] += 1
    return counts


def _question_family(judged: pd.DataFrame, gens: pd.DataFrame, qa_ids: Sequence[str],
                     value: str, transform) -> Cells:
    """CS / FC over held-out questions: a question without a valid generation is counted by why."""
    counts = _tally(qa_ids, _status_of(judged, "qa_id"), _status_of(gens, "qa_id"))
    ok = judged[_ok(judged)] if not judged.empty else judged
    ok = ok.sort_values("qa_id", kind="stable") if len(ok) else ok
    cells = [str(q) for q in ok.get("qa_id", [])]
    vals = [float(transform(v)) for v in ok.get(value, [])]
    return Cells(counts, cells, {"_": vals})


def _ps_family(rps: pd.DataFrame, gps: pd.DataFrame, gens: pd.DataFrame) -> tuple[Cells, float]:
    """PS counts votes: 5 traits x 3 votes on each side. The generated side has no rows when no
    generation was valid; those votes are then counted by what happened to the generations."""
    per_side = len(TRAITS) * N_VOTES
    counts = dict.fromkeys(COUNT_KINDS, 0)
    counts["expected"] = 2 * per_side
    for side in (rps, gps):
        if side.empty:
            continue
        status = side["status"].astype(str)
        counts["n"] += int((status == OK).sum())
        counts["invalid"] += int((status == INVALID).sum())
        counts["failed"] += int((status == FAILED).sum())
    if gps.empty and not gens.empty and not _ok(gens).any():
        gstatus = set(gens["status"].astype(str))
        counts["invalid" if INVALID in gstatus else "failed"] += per_side
    counts["expected"] = max(counts["expected"], counts["n"] + counts["invalid"] + counts["failed"])
    counts["not_run"] = counts["expected"] - counts["n"] - counts["invalid"] - counts["failed"]
    return Cells(counts, [], {}), ps_alignment(rps, gps).value


def _mcq_family(answers: pd.DataFrame, items: pd.DataFrame | None, n_options: int,
                expected_qa: Sequence[str], atomic: pd.DataFrame | None) -> Cells:
    """One option count's items, one cell per held-out question (its item of that option count).

    A malformed answer is scored (accuracy 0, reward -0.5: the seed) and counted in ``malformed``;
    a failed answering call leaves its items without a value (``failed``); a question whose MCQ item
    was invalid or failed was never asked and is counted by that status; one whose atomic item was
    invalid or failed got no MCQ item at all (``no_item``)."""
    key = "qa_id" if "qa_id" in answers.columns or answers.empty else "item_id"
    rows = answers[answers["n_options"] == n_options] if not answers.empty else answers
    item_rows = (items[items["n_options"] == n_options] if items is not None and not items.empty
                 else pd.DataFrame(columns=["item_id", "qa_id", "status"]))
    scored = rows[rows["status"].isin([OK, INVALID]) & rows["reward"].notna()] if len(rows) else rows
    outcome = {str(i): (OK if st in (OK, INVALID) and r == r and r is not None else FAILED)
               for i, st, r in zip(rows.get(key, []), rows.get("status", []), rows.get("reward", []))}
    source = _status_of(atomic, "qa_id") if atomic is not None else {}
    counts = _tally([*expected_qa, *item_rows.get(key, pd.Series(dtype=object)).astype(str)], outcome,
                    _status_of(item_rows, key), source)
    counts["malformed"] = int((scored["status"] == INVALID).sum()) if len(scored) else 0
    scored = scored.sort_values(key, kind="stable") if len(scored) else scored
    return Cells(counts, [str(i) for i in scored.get(key, [])], {
        f"mcq{n_options}_accuracy": [float(bool(c)) for c in scored.get("correct", [])],
        f"mcq{n_options}_reward": [float(r) for r in scored.get("reward", [])],
    })


def _mean(values: Sequence[float]) -> float:
    return float(np.mean(values)) if len(values) else math.nan


def _family_columns(fam: Family, cells: Cells) -> dict[str, object]:
    out: dict[str, object] = {count_column(fam, k): int(v) for k, v in cells.counts.items()}
    if fam.cell != "personality":
        out[cells_column(fam)] = list(cells.cells)
        for m in METRICS:
            if m.family_key == fam.key:
                vals = cells.values.get(m.name, cells.values.get("_", []))
                out[items_column(m)] = list(vals)
                out[m.name] = _mean(vals)
    return out


def personality_scores(
    personality_id: str,
    method: str,
    *,
    generations: pd.DataFrame | None = None,
    content_similarity: pd.DataFrame | None = None,
    factual_consistency: pd.DataFrame | None = None,
    generated_personality: pd.DataFrame | None = None,
    reference_personality: pd.DataFrame | None = None,
    mcq_answers: pd.DataFrame | None = None,
    mcq_items: pd.DataFrame | None = None,
    atomic_items: pd.DataFrame | None = None,
    mcq_options: Sequence[int] | None = None,
    test_qa_ids: Sequence[str] | None = None,
    n_train_pairs: int = 0,
    judges: Sequence[str] | None = None,
    embedding_model: str = "",
) -> pd.DataFrame:
    """The ``method_scores`` rows of one personality x method: one row per judge.

    Input frames may hold other personalities, methods or judges; they are filtered here.
    ``judges`` defaults to every judge seen in the judgment frames. ``test_qa_ids`` are the
    held-out questions every judge should have judged (default: the generations' questions);
    ``mcq_options`` the option counts configured: each held-out question then expects one MCQ
    item per count (without it, the counts and items seen are used), and ``mcq_items`` /
    ``atomic_items`` say why an item is missing (invalid or failed upstream).
    Each family's cells are counted as valid / invalid / failed / not run, and its valid cells'
    per-item values are kept in list columns, so the leaderboard can compare methods on the cells
    they all have. MCQ is judge-independent and repeats on each row.

    ``prompt_tokens``/``completion_tokens``/``cost_usd`` are what this row's numbers cost within
    the partition: the generations, the MCQ answering calls (once per group) and this judge's CS,
    FC and generated-side PS calls. Generation and MCQ usage therefore repeats on each judge row.
    """
    gen = _pick(generations, personality_id=personality_id, method=method)
    cs_all = _pick(content_similarity, personality_id=personality_id, method=method)
    fc_all = _pick(factual_consistency, personality_id=personality_id, method=method)
    gps_all = _pick(generated_personality, personality_id=personality_id, method=method)
    rps_all = _pick(reference_personality, personality_id=personality_id)
    mcq = _pick(mcq_answers, personality_id=personality_id, method=method)
    items = _pick(mcq_items, personality_id=personality_id) if mcq_items is not None else None
    if judges is None:
        judges = _judges_in(cs_all, fc_all, gps_all, rps_all)
    qa_ids = [str(q) for q in (test_qa_ids if test_qa_ids is not None else gen.get("qa_id", pd.Series()).unique())]
    atomic = _pick(atomic_items, personality_id=personality_id) if atomic_items is not None else None
    mcq_part: dict[str, object] = {}
    for fam in FAMILIES:
        if fam.n_options is not None:
            wanted = fam.n_options in mcq_options if mcq_options is not None else False
            mcq_part.update(_family_columns(fam, _mcq_family(mcq, items, fam.n_options, qa_ids if wanted else [],
                                                             atomic)))
    rows = []
    for judge in judges:
        cs = _pick(cs_all, judge=judge)
        fc = _pick(fc_all, judge=judge)
        gps = _pick(gps_all, judge=judge)
        rps = _pick(rps_all, judge=judge)
        ps_cells, ps_value = _ps_family(rps, gps, gen)
        usage = _usage([gen, _mcq_calls(mcq), cs, fc, gps])
        rows.append({
            "personality_id": personality_id, "method": method, "judge": judge, "embedding_model": embedding_model,
            **_family_columns(FAMILIES[0], _question_family(cs, gen, qa_ids, "score", float)),
            **_family_columns(FAMILIES[1], _question_family(fc, gen, qa_ids, "label", lambda v: v == CONTRADICTION)),
            **_family_columns(FAMILIES[2], ps_cells), "ps_alignment": ps_value,
            **mcq_part,
            "n_test_questions": len(qa_ids), "n_train_pairs": int(n_train_pairs),
            "prompt_tokens": int(usage["prompt_tokens"]), "completion_tokens": int(usage["completion_tokens"]),
            "cost_usd": usage["cost_usd"],
        })  # fmt: skip
    return _typed(rows)


_KINDS = dict(METHOD_SCORE_FIELDS)


def mcq_rows(method_scores: pd.DataFrame) -> pd.DataFrame:
    """One ``method_scores`` row per (personality, method): MCQ columns repeat on every judge's row.

    Beside the table it reads, so the leaderboard and the normalised scores it attaches
    (``normalised.py``) both take it from below instead of one importing the other."""
    if method_scores.empty:
        return method_scores
    return method_scores.sort_values("judge", kind="stable").drop_duplicates(["personality_id", "method"])


def _typed(rows: list[dict[str, object]]) -> pd.DataFrame:
    """The rows as a frame of ``METHOD_SCORE_FIELDS``' kinds, built column by column in its dtype
    (converting a frame of inferred dtypes afterwards cost a copy per column)."""
    data: dict[str, object] = {}
    for col in METHOD_SCORE_COLUMNS:
        kind = _KINDS[col]
        values = [row[col] for row in rows]
        if kind in ("int", "float"):
            data[col] = np.array(values, dtype="int64" if kind == "int" else "float64")
        else:
            column = np.empty(len(values), dtype=object)
            for i, value in enumerate(values):  # item by item: a slice assignment would broadcast lists
                column[i] = value if kind == "str" else list(value)  # type: ignore[call-overload]
            data[col] = pd.Series(column, dtype=object, copy=False)
    return pd.DataFrame(data, columns=list(METHOD_SCORE_COLUMNS))


def macro_interval(
    values: Sequence[float] | np.ndarray,
    *,
    seed: int = 0,
    n_resamples: int = CI_N_RESAMPLES,
    confidence: float = CI_CONFIDENCE,
) -> Interval:
    """Macro mean over personalities and its percentile bootstrap interval (NaNs dropped).

    The one interval the leaderboard (Parquet, report, Dagster metadata) shows. Percentile
    rather than BCa: BCa's jackknife acceleration is unstable with the handful of personalities
    a run usually has. Values are sorted before resampling so the interval depends only on the
    per-personality values, not on the row order the tables were read in.
    """
    arr = np.sort(np.asarray(values, dtype=np.float64).ravel())
    return bootstrap_ci(arr, confidence=confidence, n_resamples=n_resamples, seed=seed, method="percentile")
