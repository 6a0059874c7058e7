"""Is the Personality Similarity judge stable on this corpus? (paper section 3.3)

The paper validated its PS judge by inferring each person's Big Five profile twice with the same
judge, once from the training interviews and once from the held-out ones, and reporting how well
the two profiles align (89.4% over 100 personalities). A PS number means little if the judge gives
the same person a different profile depending on which of their interviews it reads; this is the
check a user runs on their own corpus before trusting that column.

The alignment is the seed's ordinal alignment of modal levels (``contracts.personality.alignment``),
the same formula that scores methods, so the two numbers are on one scale.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..contracts.personality import TRAITS
from .scores import macro_interval, ps_alignment, trait_levels

__all__ = ["PAPER_STABILITY", "ps_stability", "stability_summary"]

PAPER_STABILITY = 0.894
"""The paper's mean train/test profile alignment over 100 personalities (section 3.3)."""

STABILITY_COLUMNS = ("personality_id", "judge", "alignment", "n_traits", "invalid",
                     *(f"train_{t.lower()}" for t in TRAITS), *(f"test_{t.lower()}" for t in TRAITS))


def _levels(votes: pd.DataFrame) -> dict[str, str | None]:
    return {t: (lv[0] if lv is not None else None) for t, lv in trait_levels(votes).items()}


def ps_stability(test_votes: pd.DataFrame, train_votes: pd.DataFrame) -> pd.DataFrame:
    """Per (personality, judge): alignment of the train-inferred and test-inferred profiles.

    Args:
        test_votes: ``reference_personality`` rows (votes over the held-out responses).
        train_votes: ``training_personality`` rows (the same judge over the training responses).

    Returns:
        ``STABILITY_COLUMNS``; ``alignment`` is NaN when a trait lacks three valid votes on either
        side (``invalid`` counts the vote rows that did not end ok), never a partial profile.
    """
    rows = []
    keys = sorted(set(map(tuple, pd.concat([test_votes, train_votes])[["personality_id", "judge"]]
                          .drop_duplicates().to_numpy()))) if len(test_votes) + len(train_votes) else []
    for pid, judge in keys:
        te = test_votes[(test_votes["personality_id"] == pid) & (test_votes["judge"] == judge)]
        tr = train_votes[(train_votes["personality_id"] == pid) & (train_votes["judge"] == judge)]
        agg = ps_alignment(te, tr)
        lv_tr, lv_te = _levels(tr), _levels(te)
        rows.append({
            "personality_id": pid, "judge": judge, "alignment": agg.value, "n_traits": agg.n,
            "invalid": agg.invalid,
            **{f"train_{t.lower()}": lv_tr[t] for t in TRAITS},
            **{f"test_{t.lower()}": lv_te[t] for t in TRAITS},
        })
    return pd.DataFrame(rows, columns=list(STABILITY_COLUMNS))


def stability_summary(per_personality: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Per judge: mean alignment over personalities with a bootstrap CI, and how many had none.

    Columns: ``judge, mean_alignment, ci_low, ci_high, n_personalities, n_undefined, paper``.
    """
    out = []
    for judge, grp in per_personality.groupby("judge", sort=True):
        vals = grp["alignment"].to_numpy(dtype=np.float64)
        ok = vals[~np.isnan(vals)]
        ci = macro_interval(ok, seed=seed)  # the leaderboard's interval, so the scales compare
        out.append({
            "judge": judge, "mean_alignment": ci.estimate if len(ok) else math.nan,
            "ci_low": ci.low, "ci_high": ci.high, "n_personalities": int(len(ok)),
            "n_undefined": int(len(vals) - len(ok)), "paper": PAPER_STABILITY,
        })
    return pd.DataFrame(out, columns=["judge", "mean_alignment", "ci_low", "ci_high", "n_personalities",
                                      "n_undefined", "paper"])
