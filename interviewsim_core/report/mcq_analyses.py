"""The paper's MCQ diagnostics (Appendix M), computed from ``mcq_answers`` and ``mcq_items``.

All judge-independent and pooled over answered items within each cell, as the paper's Tables
3, 12-17 are. Rows with no reward (the method did not answer the item at all) are left out;
malformed or unavailable answers are kept, scored as the seed says (accuracy 0, reward -0.5),
and shown as their own "invalid" kind in the prediction distribution.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .catalog import order_methods

__all__ = ["KINDS", "prediction_distribution", "accuracy_by_position", "length_bias", "training_groups",
           "training_pairs_per_personality"]

KINDS = ("correct", "opposite_negation", "near_miss", "plausible_misconception", "invalid")


def _scored(answers: pd.DataFrame) -> pd.DataFrame:
    return answers[answers["reward"].notna()] if not answers.empty else answers


def _sort(df: pd.DataFrame, *after: str) -> pd.DataFrame:
    if df.empty:
        return df
    rank = {m: i for i, m in enumerate(order_methods(df["method"]))}
    return df.sort_values(["n_options", "method", *after], key=lambda s: s.map(rank) if s.name == "method" else s,
                          kind="stable").reset_index(drop=True)


def prediction_distribution(answers: pd.DataFrame) -> pd.DataFrame:
    """Share of answers per chosen option kind, per method and option count (Tables 3 and 14)."""
    cols = ["method", "n_options", "kind", "count", "share", "n"]
    a = _scored(answers)
    if a.empty:
        return pd.DataFrame(columns=cols)
    kind = a["chosen_kind"].where(a["chosen_kind"].isin(KINDS[:-1]), "invalid")
    rows = []
    for (method, n_opt), grp in a.assign(kind=kind).groupby(["method", "n_options"], sort=True):
        counts = grp["kind"].value_counts()
        for k in KINDS:
            if k == "plausible_misconception" and n_opt == 3:
                continue
            c = int(counts.get(k, 0))
            rows.append({"method": method, "n_options": int(n_opt), "kind": k, "count": c,
                         "share": c / len(grp), "n": len(grp)})
    return _sort(pd.DataFrame(rows, columns=cols))


def accuracy_by_position(answers: pd.DataFrame) -> pd.DataFrame:
    """Accuracy by the shuffled position (label) of the correct option (Tables 15 and 16)."""
    cols = ["method", "n_options", "position", "accuracy", "n"]
    a = _scored(answers)
    if a.empty:
        return pd.DataFrame(columns=cols)
    out = a.groupby(["method", "n_options", "correct_label"], sort=True)["correct"].agg(
        accuracy=lambda s: float(s.astype(float).mean()), n="size").reset_index()
    out = out.rename(columns={"correct_label": "position"})
    return _sort(out[cols], "position")


def _correct_is_longest(items: pd.DataFrame) -> pd.DataFrame:
    """Per item: is the correct option's text strictly the longest? Ties count as not longest.

    Only well-formed items take part: a failed or invalid item has no options (``labels`` is None),
    and an answer to it has no reward anyway, so leaving it out changes no figure; keeping it would
    need a made-up "longest" flag.
    """
    ids, flags = [], []
    for pid, item_id, labels, texts, correct in zip(items["personality_id"], items["item_id"], items["labels"],
                                                    items["texts"], items["correct_label"]):
        if not _options_usable(labels, texts, correct):
            continue
        lengths = dict(zip(list(labels), (len(t) for t in texts)))
        mine = lengths.get(correct)
        others = [n for lab, n in lengths.items() if lab != correct]
        ids.append((pid, item_id))
        flags.append(bool(mine is not None and others and mine > max(others)))
    return pd.DataFrame({"personality_id": [p for p, _ in ids], "item_id": [i for _, i in ids], "longest": flags},
                        columns=["personality_id", "item_id", "longest"])


def _options_usable(labels, texts, correct) -> bool:
    """An item row whose options can be measured: labels and texts present, paired, all strings."""
    if labels is None or texts is None or not isinstance(correct, str):
        return False
    labels, texts = list(labels), list(texts)
    return bool(labels) and len(labels) == len(texts) and all(isinstance(t, str) for t in texts)


def length_bias(answers: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    """Accuracy when the correct option is / is not the longest, and the gap (Table 17)."""
    cols = ["method", "n_options", "acc_longest", "n_longest", "acc_not_longest", "n_not_longest", "delta"]
    a = _scored(answers)
    if a.empty or items.empty:
        return pd.DataFrame(columns=cols)
    a = a.merge(_correct_is_longest(items), on=["personality_id", "item_id"], how="inner")
    rows = []
    for (method, n_opt), grp in a.groupby(["method", "n_options"], sort=True):
        yes, no = grp[grp["longest"]], grp[~grp["longest"]]
        acc_y = float(yes["correct"].astype(float).mean()) if len(yes) else np.nan
        acc_n = float(no["correct"].astype(float).mean()) if len(no) else np.nan
        rows.append({"method": method, "n_options": int(n_opt), "acc_longest": acc_y, "n_longest": len(yes),
                     "acc_not_longest": acc_n, "n_not_longest": len(no), "delta": acc_y - acc_n})
    return _sort(pd.DataFrame(rows, columns=cols))


def training_pairs_per_personality(heldout: pd.DataFrame) -> pd.Series:
    """Number of training QA pairs per personality (the paper's data-regime variable)."""
    if heldout.empty:
        return pd.Series(dtype="int64", name="n_train_pairs")
    return heldout[heldout["partition"] == "train"].groupby("personality_id").size().rename("n_train_pairs")


def training_groups(answers: pd.DataFrame, n_train: pd.Series, max_groups: int = 10) -> pd.DataFrame:
    """Accuracy and reward by training-data group (Tables 12 and 13).

    Personalities are ranked by training pairs and cut into min(``max_groups``, n) groups of
    near-equal size (the paper's ten groups, but a small corpus cannot fill ten). A final
    ``group`` "All" row pools everyone.
    """
    cols = ["group", "n_personalities", "avg_train_pairs", "method", "n_options", "accuracy", "reward", "n"]
    a = _scored(answers)
    if a.empty or n_train.empty:
        return pd.DataFrame(columns=cols)
    people = n_train[n_train.index.isin(a["personality_id"].unique())].sort_index()
    order = people.sort_values(kind="stable").index.to_list()
    k = min(max_groups, len(order))
    group_of = {pid: str(g + 1) for g, chunk in enumerate(np.array_split(np.array(order, dtype=object), k))
                for pid in chunk}
    rows = []
    labelled = a.assign(group=a["personality_id"].map(group_of))
    for label, frame in [*sorted(labelled.groupby("group"), key=lambda kv: int(kv[0])), ("All", labelled)]:
        members = frame["personality_id"].unique()
        for (method, n_opt), grp in frame.groupby(["method", "n_options"], sort=True):
            rows.append({"group": label, "n_personalities": len(members),
                         "avg_train_pairs": float(people[members].mean()), "method": method, "n_options": int(n_opt),
                         "accuracy": float(grp["correct"].astype(float).mean()),
                         "reward": float(grp["reward"].astype(float).mean()), "n": len(grp)})
    return pd.DataFrame(rows, columns=cols)
