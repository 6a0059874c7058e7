"""The report's human validation figures from a study (the paper's section 3.3 and appendix F).

Every figure is a count with its rate and a 95% Wilson interval (kappas: a percentile bootstrap over
tasks). Final labels: the two reviewers' shared answer, or the adjudication when they disagreed; a
task still open or in the adjudication queue has no final label and is left out (counted as such).

- CS ordering agreement per judge and score gap: the judge scored A and B apart by the gap; the
  pair agrees when the final human choice picks the higher-scored one. A human Tie counts as not
  agreeing (the judge did order them), so a rate is agreements over all decided pairs of that gap.
- FC judge accuracy: final "Yes" over the decided tasks answered Yes or No (Unsure left out, counted);
  kappa between the judge's label and the human's (the judge's when Yes, the right label when No).
- Inter-reviewer agreement per kind: tasks with two reviews whose answers match, and Cohen's kappa.
- Adjudication: disagreements per kind, over the tasks with two reviews; how many were adjudicated.
- Fact-summary contradiction rate: final "Yes" over decided statements answered Yes or No.
- MCQ gold match: final answers equal to the gold option, over decided items.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..metrics.statistics import cohen_kappa
from .study import FC_LABELS, GAPS, Label, Study, outcome, task_states

FIGURE_COLUMNS = ["figure", "kind", "judge", "group", "count", "n", "rate", "ci_low", "ci_high", "note"]


def wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float, float]:
    """(rate, low, high) of k successes in n: the Wilson score interval; NaN when n = 0."""
    if n == 0:
        return math.nan, math.nan, math.nan
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return p, max(0.0, centre - half), min(1.0, centre + half)


def _row(figure: str, kind: str, k: int, n: int, judge: str = "", group: str = "", note: str = "") -> dict:
    rate, lo, hi = wilson(k, n)
    return {"figure": figure, "kind": kind, "judge": judge, "group": group, "count": k, "n": n, "rate": rate,
            "ci_low": lo, "ci_high": hi, "note": note}


def _kappa_row(figure: str, kind: str, a: list, b: list, labels=None, judge: str = "", seed: int = 0,
               n_resamples: int = 1000) -> dict:
    n = len(a)
    k = cohen_kappa(a, b, labels=labels) if n else math.nan
    lo = hi = math.nan
    if n >= 2:
        rng = np.random.default_rng(seed)
        vals = []
        for idx in rng.integers(0, n, size=(n_resamples, n)):
            v = cohen_kappa([a[i] for i in idx], [b[i] for i in idx], labels=labels)
            if not math.isnan(v):
                vals.append(v)
        if vals:
            lo, hi = float(np.quantile(vals, 0.025)), float(np.quantile(vals, 0.975))
    note = "" if not math.isnan(k) else ("no task" if n == 0 else "undefined: the labels do not vary")
    return {"figure": figure, "kind": kind, "judge": judge, "group": "", "count": n, "n": n, "rate": k,
            "ci_low": lo, "ci_high": hi, "note": note}


def validation_figures(study: Study, labels: list[Label], *, seed: int = 0) -> pd.DataFrame:
    """Every figure of the human validation section, one row each (``FIGURE_COLUMNS``)."""
    states = task_states(study, labels)
    rows: list[dict] = []
    by_kind = {k: [s for s in states.values() if s["task"].kind == k] for k in ("cs_pair", "fc_label",
                                                                                "fact_statement", "mcq")}
    # Inter-reviewer agreement and adjudication.
    for kind, sts in by_kind.items():
        if not sts:
            continue
        two = [s for s in sts if s["agree"] is not None]
        agree = sum(bool(s["agree"]) for s in two)
        rows.append(_row("inter_reviewer_agreement", kind, agree, len(two),
                         note=f"{len(sts) - len(two)} task(s) without two reviews"))
        a = [str(outcome(kind, s["reviews"][s["task"].reviewers[0]])) for s in two]
        b = [str(outcome(kind, s["reviews"][s["task"].reviewers[1]])) for s in two]
        rows.append(_kappa_row("inter_reviewer_kappa", kind, a, b, seed=seed))
        disagreements = [s for s in two if not s["agree"]]
        rows.append(_row("disagreement_rate", kind, len(disagreements), len(two)))
        done = sum(s["status"] == "adjudicated" for s in disagreements)
        rows.append(_row("adjudicated", kind, done, len(disagreements),
                         note=f"{len(disagreements) - done} in the adjudication queue"))
    # CS ordering agreement by judge and gap.
    decided = [s for s in by_kind["cs_pair"] if s["final"] is not None]
    for judge in sorted({s["task"].hidden["judge"] for s in by_kind["cs_pair"]}):
        for gap in GAPS:
            sel = [s for s in decided if s["task"].hidden["judge"] == judge and s["task"].hidden["gap"] == gap]
            higher = ["A" if s["task"].hidden["score_a"] > s["task"].hidden["score_b"] else "B" for s in sel]
            ok = sum(s["final"].choice == h for s, h in zip(sel, higher))
            ties = sum(s["final"].choice == "Tie" for s in sel)
            rows.append(_row("cs_ordering_agreement", "cs_pair", ok, len(sel), judge=judge, group=f"gap {gap}",
                             note=f"{ties} Tie(s) counted as not agreeing"))
    # FC judge accuracy and kappa.
    decided = [s for s in by_kind["fc_label"] if s["final"] is not None]
    for judge in sorted({s["task"].hidden["judge"] for s in by_kind["fc_label"]}):
        sel = [s for s in decided if s["task"].hidden["judge"] == judge]
        sure = [s for s in sel if s["final"].correct in ("Yes", "No")]
        rows.append(_row("fc_judge_accuracy", "fc_label", sum(s["final"].correct == "Yes" for s in sure), len(sure),
                         judge=judge, note=f"{len(sel) - len(sure)} Unsure left out"))
        jl = [s["task"].hidden["judge_label"] for s in sure]
        hl = [s["task"].hidden["judge_label"] if s["final"].correct == "Yes" else s["final"].right_label for s in sure]
        rows.append(_kappa_row("fc_judge_kappa", "fc_label", jl, hl, labels=list(FC_LABELS), judge=judge, seed=seed))
    # Upstream audits.
    decided = [s for s in by_kind["fact_statement"] if s["final"] is not None]
    sure = [s for s in decided if s["final"].contradicts in ("Yes", "No")]
    if by_kind["fact_statement"]:
        rows.append(_row("fact_summary_contradiction_rate", "fact_statement",
                         sum(s["final"].contradicts == "Yes" for s in sure), len(sure),
                         note=f"{len(decided) - len(sure)} Unsure left out"))
    decided = [s for s in by_kind["mcq"] if s["final"] is not None]
    if by_kind["mcq"]:
        rows.append(_row("mcq_gold_match_rate", "mcq", sum(s["final"].answer == s["task"].hidden["gold"]
                                                          for s in decided), len(decided)))
    return pd.DataFrame(rows, columns=FIGURE_COLUMNS)
