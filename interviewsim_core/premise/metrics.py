"""Headline numbers of the premise section (seed 002, "HEADLINE METRICS TO AGGREGATE").

* The failure-attribution split PRESENT_IN_WINDOW / ABSENT_FROM_WINDOW / ABSENT_EVERYWHERE over
  every attribution of FAILed conclusions, plus each FAILed conclusion's dominant attribution:
  the seed's most decision-relevant number (prompt work or input-context work?), shown first.
* Pass rate and mean decontextuality score, overall, per artifact kind and per personality, each
  with a 95% percentile bootstrap confidence interval (seeded, so reports are reproducible).
* The cross-check with the paper: the share of fact-summary statements that FAIL, beside the
  paper's hand audit (3.3% of sampled statements contradicted their source). The two measure
  different things (usability as a premise vs. contradiction), so the figure is context, not a
  target.

Population: PASS and FAIL rows. INVALID (a pass broke its contract after re-asks) and ERROR
(transport failure) rows are counted beside the rates, never folded into them; the mean
decontextuality score uses the same PASS/FAIL rows so both numbers describe one population.
"""

from __future__ import annotations

from collections import Counter
from typing import Iterable, Sequence

import pandas as pd
from pydantic import BaseModel, ConfigDict

from ..contracts.premise import ATTRIBUTIONS

PAPER_FACT_SUMMARY_CONTRADICTED = 10 / 300
"""Share of sampled fact-summary statements the paper's researcher found contradicting the source."""
PAPER_AUDIT_SOURCE = (
    "InterviewSim (Li et al., arXiv:2602.20294), Section 3 and Appendix G 'Upstream artifact audits': "
    "of 300 sampled fact-summary statements, 10 (3.3%) contradicted the source Q&As"
)

CONFIDENCE = 0.95
N_RESAMPLES = 2000
SEED = 0

JUDGED = ("PASS", "FAIL")


def bootstrap_ci(values: Sequence[float], seed: int = SEED) -> tuple[float, float]:
    """95% percentile bootstrap CI of the mean (``metrics.statistics.bootstrap_ci``).

    Percentile rather than BCa: pass/fail is a 0/1 variable, on which BCa's acceleration
    estimate is unstable for small partitions. NaN bounds for fewer than two values; identical
    values give a zero-width interval.
    """
    from ..metrics.statistics import bootstrap_ci as _bootstrap  # lazy: scipy.stats is slow to import

    ci = _bootstrap(values, confidence=CONFIDENCE, n_resamples=N_RESAMPLES, seed=seed, method="percentile")
    return (ci.low, ci.high)


def _rates(rows: pd.DataFrame) -> dict:
    judged = rows[rows["verdict"].isin(JUDGED)]
    passed = (judged["verdict"] == "PASS").astype(float).to_numpy()
    scores = judged["decontextuality_score"].dropna().astype(float).to_numpy()
    pr_lo, pr_hi = bootstrap_ci(passed)
    sc_lo, sc_hi = bootstrap_ci(scores)
    return {
        "n": int(len(rows)),
        "n_pass": int((rows["verdict"] == "PASS").sum()),
        "n_fail": int((rows["verdict"] == "FAIL").sum()),
        "n_invalid": int((rows["verdict"] == "INVALID").sum()),
        "n_error": int((rows["verdict"] == "ERROR").sum()),
        "pass_rate": float(passed.mean()) if passed.size else float("nan"),
        "pass_rate_ci_low": pr_lo,
        "pass_rate_ci_high": pr_hi,
        "mean_decontextuality": float(scores.mean()) if scores.size else float("nan"),
        "decontextuality_ci_low": sc_lo,
        "decontextuality_ci_high": sc_hi,
    }


def rate_table(df: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Pass rate and mean decontextuality with CIs, per value of ``by`` (or one ``all`` row)."""
    if by is None:
        return pd.DataFrame([{"group": "all", **_rates(df)}])
    rows = [{by: key, **_rates(part)} for key, part in df.groupby(by, sort=True)]
    return pd.DataFrame(rows, columns=[by, *_rates(df.iloc[:0]).keys()])


def dominant_attribution(attributions: Iterable[str]) -> str | None:
    """The most frequent attribution of one conclusion; ties go to the seed's order
    (PRESENT_IN_WINDOW, ABSENT_FROM_WINDOW, ABSENT_EVERYWHERE); None when there is none."""
    counts = Counter(a for a in attributions if a in ATTRIBUTIONS)
    if not counts:
        return None
    return max(ATTRIBUTIONS, key=lambda a: (counts[a], -ATTRIBUTIONS.index(a)))


def attribution_split(df: pd.DataFrame) -> pd.DataFrame:
    """Counts and shares of each attribution over all attributions of FAILed conclusions.

    Columns: attribution, count, share (of all attributions), dominant (FAILed conclusions whose
    dominant attribution it is), dominant_share (of FAILed conclusions with any attribution).
    Every attribution has a row, zero or not, in the seed's order.
    """
    failed = df[df["verdict"] == "FAIL"]
    lists = [list(a) if a is not None else [] for a in failed["attributions"]]
    counts = Counter(a for lst in lists for a in lst)
    dominant = Counter(d for d in (dominant_attribution(lst) for lst in lists) if d is not None)
    total, total_dom = sum(counts[a] for a in ATTRIBUTIONS), sum(dominant.values())
    return pd.DataFrame(
        [
            {
                "attribution": a,
                "count": counts[a],
                "share": counts[a] / total if total else float("nan"),
                "dominant": dominant[a],
                "dominant_share": dominant[a] / total_dom if total_dom else float("nan"),
            }
            for a in ATTRIBUTIONS
        ]
    )


class CrossCheck(BaseModel):
    """Our fact-summary FAIL share next to the paper's hand-audit contradiction share."""

    model_config = ConfigDict(frozen=True)

    n_statements: int
    n_fail: int
    fail_share: float
    fail_share_ci_low: float
    fail_share_ci_high: float
    paper_contradicted_share: float = PAPER_FACT_SUMMARY_CONTRADICTED
    paper_source: str = PAPER_AUDIT_SOURCE


def cross_check(df: pd.DataFrame) -> CrossCheck:
    """Share of judged (PASS/FAIL) fact-summary statements that FAIL."""
    fs = df[(df["artifact_kind"] == "fact_summary") & df["verdict"].isin(JUDGED)]
    failed = (fs["verdict"] == "FAIL").astype(float).to_numpy()
    lo, hi = bootstrap_ci(failed)
    return CrossCheck(
        n_statements=int(failed.size),
        n_fail=int(failed.sum()),
        fail_share=float(failed.mean()) if failed.size else float("nan"),
        fail_share_ci_low=lo,
        fail_share_ci_high=hi,
    )


class PremiseHeadline(BaseModel):
    """Everything the premise section shows, in the order it shows it."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    attribution: pd.DataFrame
    overall: pd.DataFrame
    by_kind: pd.DataFrame
    by_personality: pd.DataFrame
    cross_check: CrossCheck

    def to_dict(self) -> dict:
        """JSON-ready (NaN becomes None)."""

        def records(frame: pd.DataFrame) -> list[dict]:
            return [{k: (None if isinstance(v, float) and v != v else v) for k, v in r.items()}
                    for r in frame.to_dict(orient="records")]

        cc = self.cross_check.model_dump()
        return {
            "attribution_split": records(self.attribution),
            "overall": records(self.overall)[0],
            "by_artifact_kind": records(self.by_kind),
            "by_personality": records(self.by_personality),
            "cross_check": {k: (None if isinstance(v, float) and v != v else v) for k, v in cc.items()},
        }

    def to_text(self) -> str:
        """A plain-text rendering for the terminal: attribution split first."""

        def pct(x: float) -> str:
            return "n/a" if x != x else f"{100 * x:.1f}%"

        lines = ["Failure attribution (over all attributions of FAILed conclusions):"]
        for r in self.attribution.itertuples(index=False):
            lines.append(f"  {r.attribution:<20} {r.count:>5}  {pct(r.share):>7}   dominant in {r.dominant} conclusion(s)")
        o = self.overall.iloc[0]
        lines.append(
            f"Pass rate: {pct(o.pass_rate)} [{pct(o.pass_rate_ci_low)}, {pct(o.pass_rate_ci_high)}] of "
            f"{o.n_pass + o.n_fail} judged; {o.n_invalid} invalid, {o.n_error} error(s)"
        )
        lines.append(
            f"Mean decontextuality: {o.mean_decontextuality:.3f} "
            f"[{o.decontextuality_ci_low:.3f}, {o.decontextuality_ci_high:.3f}]"
        )
        for title, frame, key in (("By artifact kind:", self.by_kind, "artifact_kind"),
                                  ("By personality:", self.by_personality, "personality_id")):
            lines.append(title)
            for r in frame.itertuples(index=False):
                lines.append(
                    f"  {getattr(r, key):<24} pass {pct(r.pass_rate):>7} [{pct(r.pass_rate_ci_low)}, "
                    f"{pct(r.pass_rate_ci_high)}]  decontextuality {r.mean_decontextuality:.3f}  "
                    f"(n={r.n}, invalid {r.n_invalid}, error {r.n_error})"
                )
        cc = self.cross_check
        if cc.n_statements:
            lines.append(
                f"Fact-summary statements that FAIL: {pct(cc.fail_share)} of {cc.n_statements} "
                f"(paper's hand audit: {pct(cc.paper_contradicted_share)} contradicted; {cc.paper_source})"
            )
        return "\n".join(lines)


def headline(df: pd.DataFrame) -> PremiseHeadline:
    """All headline numbers of a ``premise_verdicts`` table (any number of partitions)."""
    return PremiseHeadline(
        attribution=attribution_split(df),
        overall=rate_table(df),
        by_kind=rate_table(df, "artifact_kind"),
        by_personality=rate_table(df, "personality_id"),
        cross_check=cross_check(df),
    )
