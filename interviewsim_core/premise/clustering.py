"""Offline clustering of the judges' free-text labels into a ranked table.

Seed 002 keeps labels as free text ("do not promote them to an enum") and asks for the *failure*
labels to be clustered offline. Only FAIL rows are clustered: a PASS row's labels name defects the
verdict judged harmless (a judge may still note "weak-subject" on a usable premise), and INVALID
or ERROR rows carry no complete judgement, so counting either would rank non-failures among the
failure modes the clusters exist to show. Two steps, cheapest first:

1. normalise: lowercase; hyphens, underscores and whitespace unified to one hyphen; other
   punctuation dropped; a simple plural stem per word ("-ies" -> "-y", "-sses" -> "-ss", a
   final "s" dropped unless the word ends in "ss", "us" or "is"), so "Relative_Time",
   "relative time" and "relative-times" are one label;
2. merge: average-linkage agglomerative clustering of the normalised labels on the cosine
   distance of their embeddings (the gateway's ``Embedder``; ``HashingEmbedder`` offline),
   cut at ``1 - threshold``. Average linkage, not single, so one bridging label cannot chain two
   unrelated families together.

Clusters are ranked by how many label occurrences they hold; each shows its representative (its
most frequent normalised label), member labels with counts, and example conclusions.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import numpy as np
import pandas as pd

DEFAULT_THRESHOLD = 0.7
"""Cosine similarity at which two label families are merged (cut at distance 1 - threshold)."""

_SEPARATORS = re.compile(r"[\s_\-]+")
_NOT_LABEL = re.compile(r"[^a-z0-9\-]")


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def normalise_label(label: str) -> str:
    """The comparable form of a label ("" when nothing label-like is left)."""
    text = _SEPARATORS.sub("-", label.strip().lower())
    text = _NOT_LABEL.sub("", text).strip("-")
    return "-".join(_stem(w) for w in text.split("-") if w)


def cluster_forms(forms: Sequence[str], embedder, threshold: float = DEFAULT_THRESHOLD) -> list[int]:
    """Cluster id (0-based, in order of first member) for each of the distinct normalised ``forms``."""
    if len(forms) < 2:
        return [0] * len(forms)
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    vecs = np.asarray(embedder.embed([f.replace("-", " ") for f in forms]), dtype=np.float64)
    dist = np.clip(1.0 - vecs @ vecs.T, 0.0, 2.0)
    zero = np.linalg.norm(vecs, axis=1) < 1e-9  # nothing embeddable: similar to nothing
    dist[zero, :] = 1.0
    dist[:, zero] = 1.0
    np.fill_diagonal(dist, 0.0)
    dist = (dist + dist.T) / 2.0
    raw = fcluster(linkage(squareform(dist, checks=False), method="average"), t=1.0 - threshold, criterion="distance")
    renumber: dict[int, int] = {}
    return [renumber.setdefault(int(c), len(renumber)) for c in raw]


def label_cluster_table(
    df: pd.DataFrame,
    embedder=None,
    threshold: float = DEFAULT_THRESHOLD,
    max_examples: int = 3,
) -> pd.DataFrame:
    """Ranked clusters of the ``labels`` of the FAIL rows of a ``premise_verdicts`` table.

    Args:
        df: needs ``verdict`` and ``labels``; ``conclusion`` supplies the examples when present.

    Raises:
        ValueError: ``df`` has no ``verdict`` column, so failures cannot be told apart.

    Returns:
        Columns ``rank`` (1 = largest), ``representative``, ``size`` (label occurrences),
        ``n_conclusions``, ``members`` (normalised labels as ``"label (count)"``, most frequent
        first) and ``examples`` (up to ``max_examples`` conclusion texts, in table order).
        Ties in size are broken by representative, alphabetically, so the table is stable.
    """
    if embedder is None:
        from ..embeddings import HashingEmbedder

        embedder = HashingEmbedder()
    if "verdict" not in df.columns:
        raise ValueError("label clustering needs the verdict column: only FAIL rows' labels are clustered")
    df = df[df["verdict"] == "FAIL"].reset_index(drop=True)
    occurrences: list[tuple[str, int]] = []  # (normalised label, row position among FAIL rows)
    for pos, labels in enumerate(df["labels"] if "labels" in df.columns else []):
        for lab in labels if labels is not None else []:
            form = normalise_label(str(lab))
            if form:
                occurrences.append((form, pos))
    columns = ["rank", "representative", "size", "n_conclusions", "members", "examples"]
    if not occurrences:
        return pd.DataFrame(columns=columns)
    counts = Counter(f for f, _ in occurrences)
    forms = sorted(counts)
    ids = dict(zip(forms, cluster_forms(forms, embedder, threshold)))
    conclusions = df["conclusion"].tolist() if "conclusion" in df.columns else [""] * len(df)
    clusters: dict[int, dict] = {}
    for form, pos in occurrences:
        c = clusters.setdefault(ids[form], {"forms": Counter(), "rows": []})
        c["forms"][form] += 1
        if pos not in c["rows"]:
            c["rows"].append(pos)
    rows = []
    for c in clusters.values():
        members = sorted(c["forms"].items(), key=lambda kv: (-kv[1], len(kv[0]), kv[0]))
        rows.append(
            {
                "representative": members[0][0],
                "size": sum(c["forms"].values()),
                "n_conclusions": len(c["rows"]),
                "members": [f"{f} ({n})" for f, n in members],
                "examples": [conclusions[p] for p in c["rows"][:max_examples]],
            }
        )
    rows.sort(key=lambda r: (-r["size"], r["representative"]))
    for rank, r in enumerate(rows, start=1):
        r["rank"] = rank
    return pd.DataFrame(rows, columns=columns)
