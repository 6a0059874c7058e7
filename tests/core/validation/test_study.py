"""The paper's human validation protocol (issue 32): a fixture study with two reviewers and one
adjudication gives the report's figures exactly (hand-computed); storage appends, never overwrites."""

from __future__ import annotations

import csv
import io
import math

import pandas as pd
import pytest

from interviewsim_core.errors import ConfigError
from interviewsim_core.validation import (
    Label, Study, Task, add_label, adjudication_queue, labels_csv, load_labels, queue_for, reviewer_view,
    sample_tasks, validation_figures, wilson,
)
from interviewsim_core.atomic_files import atomic_write_text
from interviewsim_core.validation.study import study_dir

R = ("ann", "bob")


def _cs(tid, gap, a, b):
    return Task(task_id=tid, kind="cs_pair", reviewers=R, shown={"question": "q", "reference": "r",
                "response_a": "x", "response_b": "y"},
                hidden={"judge": "j", "gap": gap, "score_a": a, "score_b": b, "method_a": "m1", "method_b": "m2"})


TASKS = (
    _cs("T1", 1, 4, 3), _cs("T2", 2, 2, 4), _cs("T3", 1, 3, 2),
    Task(task_id="T4", kind="fc_label", reviewers=R, shown={"judge_label": "Contradiction"},
         hidden={"judge": "j", "judge_label": "Contradiction"}),
    Task(task_id="T5", kind="fc_label", reviewers=R, shown={"judge_label": "Neutral"},
         hidden={"judge": "j", "judge_label": "Neutral"}),
    Task(task_id="T6", kind="fact_statement", reviewers=R, shown={"statement": "s", "source": "src"}, hidden={}),
    Task(task_id="T7", kind="mcq", reviewers=R, shown={"labels": ["A", "B", "C"]}, hidden={"gold": "B"}),
)


@pytest.fixture()
def study(tmp_path):
    s = Study(study_id="s1", seed=0, created="t", reviewers=R, tasks=TASKS)
    atomic_write_text(study_dir(tmp_path, "s1") / "study.json", s.model_dump_json())
    return s


def label_all(root, study):
    both = {"T1": {"choice": "A", "confidence": "High"}, "T3": {"choice": "Tie", "confidence": "Low"},
            "T4": {"correct": "Yes"}, "T5": {"correct": "No", "right_label": "Entailment"},
            "T6": {"contradicts": "No"}, "T7": {"answer": "B"}}
    for tid, ans in both.items():
        for r in R:
            add_label(root, study, Label(task_id=tid, reviewer=r, **ans))
    add_label(root, study, Label(task_id="T2", reviewer="ann", choice="A", confidence="Low"))
    add_label(root, study, Label(task_id="T2", reviewer="bob", choice="B", confidence="Medium"))


def test_fixture_study_gives_the_figures_exactly(tmp_path, study):
    label_all(tmp_path, study)
    assert [t.task_id for t in adjudication_queue(study, load_labels(tmp_path, study))] == ["T2"]
    add_label(tmp_path, study, Label(task_id="T2", reviewer="carol", role="adjudication", choice="B",
                                     confidence="High", justification="B keeps the dates right"))
    labels = load_labels(tmp_path, study)
    assert adjudication_queue(study, labels) == []
    f = validation_figures(study, labels)

    def get(figure, kind, group=""):
        sel = f[(f["figure"] == figure) & (f["kind"] == kind) & (f["group"] == group)]
        assert len(sel) == 1, (figure, kind, group)
        return sel.iloc[0]

    assert (get("inter_reviewer_agreement", "cs_pair")[["count", "n"]].tolist()) == [2, 3]
    assert get("inter_reviewer_kappa", "cs_pair")["rate"] == pytest.approx(0.5)  # po 2/3, pe 1/3
    assert get("disagreement_rate", "cs_pair")[["count", "n"]].tolist() == [1, 3]
    assert get("adjudicated", "cs_pair")[["count", "n"]].tolist() == [1, 1]
    for kind in ("fc_label", "fact_statement", "mcq"):
        assert get("inter_reviewer_agreement", kind)["rate"] == 1.0
        assert get("disagreement_rate", kind)["count"] == 0
    g1 = get("cs_ordering_agreement", "cs_pair", "gap 1")
    assert (g1["count"], g1["n"], g1["rate"], g1["note"]) == (1, 2, 0.5, "1 Tie(s) counted as not agreeing")
    assert g1["ci_low"] == pytest.approx(0.094531, abs=1e-5) and g1["ci_high"] == pytest.approx(0.905469, abs=1e-5)
    assert get("cs_ordering_agreement", "cs_pair", "gap 2")[["count", "n"]].tolist() == [1, 1]  # the adjudicated B
    assert math.isnan(get("cs_ordering_agreement", "cs_pair", "gap 3")["rate"])
    acc = get("fc_judge_accuracy", "fc_label")
    assert (acc["count"], acc["n"], acc["judge"]) == (1, 2, "j")
    # judge (Contradiction, Neutral) vs human (Contradiction, Entailment): po 1/2, pe 1/4, kappa 1/3
    assert get("fc_judge_kappa", "fc_label")["rate"] == pytest.approx(1 / 3)
    assert get("fact_summary_contradiction_rate", "fact_statement")[["count", "n"]].tolist() == [0, 1]
    assert get("mcq_gold_match_rate", "mcq")[["count", "n", "rate"]].tolist() == [1, 1, 1.0]


def test_labels_are_appended_never_overwritten(tmp_path, study):
    add_label(tmp_path, study, Label(task_id="T7", reviewer="ann", answer="A"))
    add_label(tmp_path, study, Label(task_id="T7", reviewer="ann", answer="B"))  # a later change of mind
    rows = list(csv.DictReader(io.StringIO(labels_csv(study, load_labels(tmp_path, study)))))
    assert [(r["task_id"], r["reviewer"], r["answer"], r["kind"]) for r in rows] == [
        ("T7", "ann", "A", "mcq"), ("T7", "ann", "B", "mcq")]
    assert all(r["time"] for r in rows)
    assert len(list((study_dir(tmp_path, "s1") / "labels").glob("*.json"))) == 2
    assert [t.task_id for t in queue_for(study, load_labels(tmp_path, study), "ann")] == \
        ["T1", "T2", "T3", "T4", "T5", "T6"]


def test_bad_labels_are_refused_with_every_problem(tmp_path, study):
    with pytest.raises(ConfigError, match="choice is required.*confidence is required.*not assigned"):
        add_label(tmp_path, study, Label(task_id="T1", reviewer="zed"))
    with pytest.raises(ConfigError, match="right label is required"):
        add_label(tmp_path, study, Label(task_id="T5", reviewer="ann", correct="No"))
    with pytest.raises(ConfigError, match="no disagreement to adjudicate"):
        add_label(tmp_path, study, Label(task_id="T1", reviewer="carol", role="adjudication", choice="A",
                                         confidence="High", justification="j"))
    with pytest.raises(ValueError, match="justification"):
        Label(task_id="T1", reviewer="carol", role="adjudication", choice="A")
    assert load_labels(tmp_path, study) == []


def test_wilson_known_value():
    assert wilson(0, 0)[0] != wilson(0, 0)[0]  # NaN
    rate, lo, hi = wilson(8, 10)
    assert rate == 0.8 and lo == pytest.approx(0.4902, abs=1e-4) and hi == pytest.approx(0.9433, abs=1e-4)


def tables():
    held = pd.DataFrame([{"personality_id": "P", "qa_id": f"q{i}", "question": f"Q{i}?", "response": f"R{i}."}
                         for i in range(3)])
    cs = pd.DataFrame([{"personality_id": "P", "qa_id": f"q{i}", "judge": "j", "method": m, "score": s,
                        "status": "ok", "explanation": ""}
                       for i in range(3) for m, s in (("m1", 1), ("m2", 2 + i), ("m3", 5))])
    gens = pd.DataFrame([{"personality_id": "P", "qa_id": f"q{i}", "method": m, "generated": f"{m} says {i}"}
                         for i in range(3) for m in ("m1", "m2", "m3")])
    return {"heldout_split": held, "content_similarity": cs, "generations": gens}


def test_sampling_is_seeded_stratified_by_gap_and_hides_the_scores():
    a = sample_tasks(tables(), seed=7, per_kind=8, reviewers=("ann", "bob", "cy"))
    assert a == sample_tasks(tables(), seed=7, per_kind=8, reviewers=("ann", "bob", "cy"))
    assert sorted({t.hidden["gap"] for t in a}) == [1, 2, 3, 4]
    assert all(sum(t.hidden["gap"] == g for t in a) <= 2 for g in (1, 2, 3, 4))
    assert all(len(set(t.reviewers)) == 2 for t in a)
    for t in a:
        view = reviewer_view(t)
        assert not {"score_a", "score_b", "judge", "method_a", "gap"} & set(view)
        assert view["reference"].startswith("R") and view["response_a"] != view["response_b"]
    with pytest.raises(ConfigError, match="two distinct reviewers"):
        sample_tasks(tables(), seed=0, per_kind=4, reviewers=("ann",))
