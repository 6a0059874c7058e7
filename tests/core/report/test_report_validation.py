"""The report's two judge-validation sections: PS judge stability (paper 3.3) and agreement with
human labels. Present (numbers recomputed here from the Parquet files), absent (the section says
why and how to enable it), and a bad labels file (every problem listed, nothing written)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from interviewsim_cli import app
from interviewsim_core.errors import InputValidationError
from interviewsim_core.report import build_report, write_report
from interviewsim_core.report.html import render_html

from .htmlscan import ReportPage

PEOPLE = ("SYN_AUERLUND", "SYN_FENWRIGHT")
JUDGES = ("judge-a", "judge-b")


@pytest.fixture(scope="module")
def stability_run(tmp_path_factory) -> tuple[Path, object]:
    """A small offline run with ``ps_stability: true``: data root and config."""
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    root = tmp_path_factory.mktemp("stability_run")
    cfg = EvalConfig(data_root=root, methods=("simple",), ps_stability=True,
                     judges=tuple(ModelConfig(model="offline/extractive", label=j) for j in JUDGES))
    run_evaluation(cfg, personalities=PEOPLE)
    return root, cfg


def _labels(root: Path, path: Path) -> Path:
    """Human labels over the run's real keys: CS 1..5 cycling, FC all Neutral, MCQ 3 valid 1 not,
    plus one CS label on a question nobody judged (it must not count in n)."""
    cs = pd.read_parquet(root / "content_similarity").query("judge == 'judge-a'").head(10)
    items = pd.read_parquet(root / "mcq_items").query("status == 'ok'").head(4)
    lines = ["personality_id,method,qa_id,metric,value"]
    lines += [f"{r.personality_id},{r.method},{r.qa_id},cs,{i % 5 + 1}" for i, r in enumerate(cs.itertuples())]
    lines += [f"{r.personality_id},{r.method},{r.qa_id},fc,Neutral" for r in cs.head(6).itertuples()]
    lines += [f"{r.personality_id},,{r.item_id},mcq_item_valid,{'0' if i == 3 else '1'}"
              for i, r in enumerate(items.itertuples())]
    lines.append("SYN_AUERLUND,simple,no-such-question,cs,3")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_ps_stability_section_recomputed_beside_the_paper(stability_run, tmp_path):
    root, _ = stability_run
    per = pd.read_parquet(root / "ps_stability.parquet")
    assert set(per["personality_id"]) == set(PEOPLE) and set(per["judge"]) == set(JUDGES)
    paths = write_report(root, tmp_path / "out")
    doc = json.loads(paths.json.read_text())
    sec = doc["sections"]["ps_stability"]
    assert sec["status"] == "ok" and sec["paper_alignment"] == pytest.approx(0.894)
    rows = {r["judge"]: r for r in sec["tables"]["summary"]}
    for judge, grp in per.groupby("judge"):
        ok = grp["alignment"].dropna()
        assert rows[judge]["mean_alignment"] == pytest.approx(ok.mean())
        assert rows[judge]["n_personalities"] == len(ok)
        assert rows[judge]["n_undefined"] == len(grp) - len(ok)
        assert rows[judge]["paper"] == pytest.approx(0.894)
        assert rows[judge]["ci_low"] <= rows[judge]["mean_alignment"] <= rows[judge]["ci_high"]
    assert len(sec["tables"]["per_personality"]) == len(per)
    html = paths.html.read_text()
    page = ReportPage(html)
    assert page.sections["ps_stability"] == "ok"
    assert "ps_stability" in page.tables and "ps_stability_per_personality" in page.tables
    last = sec["tables"]["summary"][-1]
    text, dv = page.cells[("ps_stability", "mean_alignment")]
    assert float(dv) == last["mean_alignment"] and text == f"{last['mean_alignment'] * 100:.1f}"
    assert page.cells[("ps_stability", "paper")][0] == "89.4"
    assert "paper: 89.4% over 100 personalities" in html
    # The report step of the run itself wrote the section too (it runs after ps_stability).
    step_doc = json.loads((root / "report" / "report.json").read_text())
    assert step_doc["sections"]["ps_stability"]["status"] == "ok"


def test_ps_stability_absent_says_how_to_enable():
    data = build_report(tables={})
    sec = data.section("ps_stability")
    assert sec.status == "not_run"
    assert "ps_stability: true" in sec.note and "has not run" in sec.note
    page = ReportPage(render_html(data))
    assert page.sections["ps_stability"] == "not_run"
    assert "Not run: No ps_stability table" in render_html(data)


def test_ps_stability_undefined_personalities_are_counted_and_explained():
    per = pd.DataFrame({"personality_id": ["P1", "P2", "P1"], "judge": ["j1", "j1", "j2"],
                        "alignment": [0.8, math.nan, math.nan], "n_traits": [5, 4, 3], "invalid": [0, 1, 2]})
    data = build_report(tables={"ps_stability": per})
    summary = data.section("ps_stability").tables["summary"].set_index("judge")
    assert summary.at["j1", "mean_alignment"] == pytest.approx(0.8)
    assert (summary.at["j1", "n_personalities"], summary.at["j1", "n_undefined"]) == (1, 1)
    assert summary.at["j1", "reason"] == ""
    assert math.isnan(summary.at["j2", "mean_alignment"]) and summary.at["j2", "n_undefined"] == 1
    assert "undefined for all 1 personalities" in summary.at["j2", "reason"]
    assert "undefined for all 1 personalities" in render_html(data)


def test_human_agreement_section_per_judge(stability_run, tmp_path):
    root, _ = stability_run
    csv = _labels(root, tmp_path / "human.csv")
    data = build_report(root, human_labels_csv=csv)
    keys = [k for k in data.sections]
    assert keys.index("human_agreement") == keys.index("judge_agreement") + 1
    sec = data.section("human_agreement")
    assert sec.status == "ok" and str(csv) in sec.note
    df = sec.tables["human_agreement"]
    cs = pd.read_parquet(root / "content_similarity")
    for judge in JUDGES:
        got = df[(df["judge"] == judge)].set_index("measure")
        assert set(got.index) == {"weighted kappa (linear)", "spearman", "kappa (3-way)",
                                  "kappa (binary contradiction)"}
        assert got.at["weighted kappa (linear)", "n"] == 10  # the unknown question is not matched
        assert got.at["kappa (3-way)", "n"] == 6
        scores = cs[(cs["judge"] == judge) & (cs["status"] == "ok")]["score"]
        if scores.nunique() == 1:
            # A constant judge agrees with humans exactly as much as chance: weighted kappa 0.
            assert got.at["weighted kappa (linear)", "value"] == pytest.approx(0.0)
    # All-Neutral humans against a judge: kappa is undefined, and the cell says why.
    fc_rows = df[(df["metric"] == "fc") & df["value"].isna()]
    assert len(fc_rows) > 0  # the offline judges label these answers all Neutral too
    assert all(fc_rows["note"].str.startswith("undefined: the human labels or the judge's values do not vary"))
    assert (df[df["value"].notna()]["note"] == "").all()
    mcq = df[df["metric"] == "mcq_item_valid"]
    assert len(mcq) == 1 and mcq.iloc[0]["n"] == 4 and mcq.iloc[0]["value"] == pytest.approx(0.75)
    assert mcq.iloc[0]["judge"] == "offline/extractive"
    html = render_html(data)
    page = ReportPage(html)
    assert page.sections["human_agreement"] == "ok" and "human_agreement" in page.tables
    assert "Judge agreement with human labels" in html and "MCQ item validity" in html


def test_human_agreement_absent_says_how_to_enable():
    sec = build_report(tables={}).section("human_agreement")
    assert sec.status == "not_run"
    assert "--human-labels FILE" in sec.note and "human_labels_csv" in sec.note


def test_bad_human_labels_list_every_problem_and_write_nothing(stability_run, tmp_path):
    root, _ = stability_run
    bad = tmp_path / "bad.csv"
    bad.write_text("personality_id,method,qa_id,metric,value\n"
                   "P1,simple,q1,cs,7\n"
                   "P1,simple,q2,nope,1\n"
                   "P1,,q3,fc,Neutral\n")
    with pytest.raises(InputValidationError) as exc:
        build_report(root, human_labels_csv=bad)
    rules = [(p.path, p.rule) for p in exc.value.problems]
    assert rules == [("$[line 2].value", "value"), ("$[line 3].metric", "metric"), ("$[line 4].method", "blank")]
    assert all(p.file == str(bad) for p in exc.value.problems)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["report", "--data-root", str(root), "--out", str(out), "--human-labels", str(bad)])
    assert res.exit_code == 2  # like a bad --categories file: a usage error
    for line in ("[line 2].value: [value]", "[line 3].metric: [metric]", "[line 4].method: [blank]"):
        assert line in res.output
    assert "3 problem(s)" in res.output and not out.exists()


def test_cli_human_labels_flag_and_report_step_config(stability_run, tmp_path):
    from interviewsim_core.pipeline.steps import BY_NAME, Cell, StepEnv

    root, cfg = stability_run
    csv = _labels(root, tmp_path / "human.csv")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["report", "--data-root", str(root), "--out", str(out), "--human-labels", str(csv)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "report.json").read_text())["sections"]["human_agreement"]["status"] == "ok"
    # The pipeline's report step reads human_labels_csv from the config.
    env = StepEnv(cfg.model_copy(update={"human_labels_csv": csv}), lambda pid: None)
    data, paths = BY_NAME["report"].compute(env, Cell(), {})
    assert data.section("human_agreement").status == "ok"
    assert json.loads(paths.json.read_text())["sections"]["human_agreement"]["status"] == "ok"
