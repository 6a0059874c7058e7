"""Judge-vs-human agreement from a user's CSV: strict reading and the paper's measures."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from interviewsim_core.errors import InputValidationError
from interviewsim_core.metrics.human_agreement import human_agreement, load_human_labels

HEADER = "personality_id,method,qa_id,metric,value\n"


def _csv(tmp_path, body: str):
    p = tmp_path / "human.csv"
    p.write_text(HEADER + body, encoding="utf-8")
    return p


def test_every_problem_is_reported_with_line_and_rule(tmp_path):
    p = _csv(tmp_path, "P,simple,q1,cs,7\nP,,q2,fc,Contradiction\nP,simple,q3,vibes,1\n"
                       "P,simple,q4,fc,contradiction\nP,simple,q5,cs,3\nP,simple,q5,cs,4\n")
    with pytest.raises(InputValidationError) as exc:
        load_human_labels(p)
    got = {(pr.path, pr.rule) for pr in exc.value.problems}
    assert got == {("$[line 2].value", "value"), ("$[line 3].method", "blank"), ("$[line 4].metric", "metric"),
                   ("$[line 5].value", "value"), ("$[line 7]", "duplicate")}
    assert all(pr.file == str(p) for pr in exc.value.problems)


def test_header_must_be_exact(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("personality_id,qa_id,metric,value,score\n", encoding="utf-8")
    with pytest.raises(InputValidationError, match="missing \\['method'\\].*unknown \\['score'\\]"):
        load_human_labels(p)


def _cs(judge, rows):
    return pd.DataFrame([{"personality_id": "P", "method": "simple", "judge": judge, "qa_id": q, "score": s,
                          "status": st} for q, s, st in rows])


def test_cs_fc_and_item_precision_per_judge(tmp_path):
    p = _csv(tmp_path, "".join(f"P,simple,q{i},cs,{v}\n" for i, v in enumerate([1, 2, 3, 4, 5]))
             + "P,simple,q0,fc,Contradiction\nP,simple,q1,fc,Entailment\nP,simple,q2,fc,Neutral\n"
             + "P,,q0#0,mcq_item_valid,1\nP,,q0#1,mcq_item_valid,0\nP,,q9#0,mcq_item_valid,true\n")
    labels = load_human_labels(p)
    cs = pd.concat([
        _cs("a", [(f"q{i}", v, "ok") for i, v in enumerate([1, 2, 3, 4, 5])]),       # agrees exactly
        _cs("b", [(f"q{i}", v, "ok") for i, v in enumerate([5, 4, 3, 2, 1])]),       # reversed
        _cs("c", [("q0", None, "invalid")]),                                        # nothing valid
    ])
    fc = pd.DataFrame([{"personality_id": "P", "method": "simple", "judge": "a", "qa_id": q, "label": lab,
                        "status": "ok"} for q, lab in [("q0", "Contradiction"), ("q1", "Entailment"),
                                                       ("q2", "Contradiction")]])
    items = pd.DataFrame([{"personality_id": "P", "item_id": i, "model": "builder", "status": st}
                          for i, st in [("q0#0", "ok"), ("q0#1", "ok"), ("q9#0", "invalid")]])
    out = human_agreement(labels, {"content_similarity": cs, "factual_consistency": fc, "mcq_items": items})
    val = {(r.judge, r.measure): r for r in out.itertuples()}
    assert val[("a", "weighted kappa (linear)")].value == pytest.approx(1.0)
    assert val[("a", "spearman")].value == pytest.approx(1.0)
    assert val[("b", "spearman")].value == pytest.approx(-1.0)
    assert val[("c", "spearman")].n == 0 and math.isnan(val[("c", "spearman")].value)
    assert "no valid judgment" in val[("c", "spearman")].note or "none of the" in val[("c", "spearman")].note
    assert val[("a", "kappa (3-way)")].n == 3
    # Binary: human C,E,N -> C,N,N ; judge C,E,C -> C,N,C: 2 of 3 agree.
    assert val[("a", "kappa (binary contradiction)")].value < 1.0
    # Items: only the two valid items count; one of them a person found valid.
    assert val[("builder", "precision")].n == 2 and val[("builder", "precision")].value == pytest.approx(0.5)
