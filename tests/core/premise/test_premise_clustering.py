"""Label clustering: normalisation, threshold merging with controlled vectors, ranked table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from interviewsim_core.premise.clustering import cluster_forms, label_cluster_table, normalise_label


@pytest.mark.parametrize(
    "label, form",
    [
        ("Relative_Time", "relative-time"),
        ("relative  time", "relative-time"),
        ("relative-times", "relative-time"),
        ("  Missing object (of reply)! ", "missing-object-of-reply"),
        ("vague referents", "vague-referent"),
        ("ambiguities", "ambiguity"),
        ("bus", "bus"),
        ("process", "process"),
        ("analysis", "analysis"),
        ("--", ""),
    ],
)
def test_normalise_label(label, form):
    assert normalise_label(label) == form


class TableEmbedder:
    """Fixed vectors per text, so the merge decision is known in advance."""

    name = "table"

    def __init__(self, vectors):
        self.vectors = vectors

    def embed(self, texts):
        out = np.array([self.vectors[t] for t in texts], dtype=np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms > 0, norms, 1)


def test_merge_follows_cosine_threshold():
    # a.b cos = 0.8; a.c and b.c cos = 0
    emb = TableEmbedder({"a": [1, 0, 0], "b": [0.8, 0.6, 0], "c": [0, 0, 1], "z": [0, 0, 0]})
    assert cluster_forms(["a", "b", "c"], emb, threshold=0.75) == [0, 0, 1]
    assert cluster_forms(["a", "b", "c"], emb, threshold=0.85) == [0, 1, 2]
    assert cluster_forms(["a", "z"], emb, threshold=0.5) == [0, 1]  # an empty vector merges with nothing
    assert cluster_forms(["a"], emb) == [0]


def test_table_ranks_by_size_with_members_and_examples():
    df = pd.DataFrame({
        "conclusion": ["c0", "c1", "c2", "c3"],
        "verdict": ["FAIL"] * 4,
        "labels": [["Relative_Time", "vague referent"], ["relative-times"], ["relative time", "vague-referents"],
                   []],
    })
    emb = TableEmbedder({"relative time": [1, 0], "vague referent": [0, 1]})
    t = label_cluster_table(df, emb, max_examples=2)
    assert list(t["rank"]) == [1, 2]
    assert list(t["representative"]) == ["relative-time", "vague-referent"]
    assert list(t["size"]) == [3, 2]
    assert list(t["n_conclusions"]) == [3, 2]
    assert t.iloc[0]["members"] == ["relative-time (3)"]
    assert t.iloc[0]["examples"] == ["c0", "c1"]
    assert t.iloc[1]["examples"] == ["c0", "c2"]


def test_default_hashing_embedder_merges_near_variants_only():
    df = pd.DataFrame({"conclusion": ["a", "b", "c"], "verdict": ["FAIL"] * 3,
                       "labels": [["relative-time"], ["relative time reference"], ["fabricated detail"]]})
    t = label_cluster_table(df)
    reps = dict(zip(t["representative"], t["members"]))
    assert len(t) == 2
    assert sorted(reps["relative-time"]) == ["relative-time (1)", "relative-time-reference (1)"]


COLUMNS = ["rank", "representative", "size", "n_conclusions", "members", "examples"]


def test_empty_labels_give_an_empty_table():
    t = label_cluster_table(pd.DataFrame({"conclusion": ["x"], "verdict": ["FAIL"], "labels": [[]]}))
    assert t.empty and list(t.columns) == COLUMNS


def test_only_fail_rows_are_clustered():
    df = pd.DataFrame({
        "conclusion": ["pass", "fail0", "invalid", "fail1", "error"],
        "verdict": ["PASS", "FAIL", "INVALID", "FAIL", "ERROR"],
        "labels": [["weak-subject", "relative-time"], ["relative-time"], ["bad-json"], ["vague-referent"],
                   ["timeout"]],
    })
    emb = TableEmbedder({"relative time": [1, 0], "vague referent": [0, 1], "weak subject": [1, 1],
                         "bad json": [0, 1], "timeout": [1, 0]})
    t = label_cluster_table(df, emb)
    assert list(t.columns) == COLUMNS
    assert sorted(t["representative"]) == ["relative-time", "vague-referent"]
    assert list(t["size"]) == [1, 1]
    assert sorted(e for ex in t["examples"] for e in ex) == ["fail0", "fail1"]


def test_no_fail_rows_give_an_empty_table_with_the_columns():
    df = pd.DataFrame({"conclusion": ["a"], "verdict": ["PASS"], "labels": [["minor-gap"]]})
    t = label_cluster_table(df)
    assert t.empty and list(t.columns) == COLUMNS


def test_a_frame_without_verdicts_is_refused():
    with pytest.raises(ValueError, match="verdict"):
        label_cluster_table(pd.DataFrame({"conclusion": ["x"], "labels": [["relative-time"]]}))
