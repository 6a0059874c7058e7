"""The paper's human validation protocol in the explorer, in headless Chromium (issue 32): create a
study, two reviewers label every task (one disagreement), the disagreement is adjudicated with a
justification, and the figures page and the report's "Human validation" section show the figures
computed from the stored labels."""

from __future__ import annotations

import re
import shutil

import pytest

from interviewsim_core.validation import load_labels, load_study, validation_figures

from .conftest import browser_page, start_server, stop

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PRIMARY = {"cs_pair": "choice", "fc_label": "correct", "fact_statement": "contradicts", "mcq": "answer"}


def answer(page, scope, kind: str, differ: bool) -> None:
    """First option of every radio group; ``differ``: the second option of the task's primary answer."""
    names = scope.locator("input[type=radio]").evaluate_all("els => [...new Set(els.map(e => e.name))]")
    for name in names:
        scope.locator(f"input[type=radio][name={name}]").nth(1 if differ and name == PRIMARY[kind] else 0).check()
    if kind == "fc_label":
        scope.locator("select[name=right_label]").select_option("Entailment")


def test_study_walkthrough(view_root, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(view_root, root, ignore=shutil.ignore_patterns("studies"))
    proc, base = start_server(str(root), tmp_path / "labels.csv")
    try:
        with browser_page() as (page, errors):
            page.goto(base + "/studies")
            form = page.locator("#new-study")
            form.locator("input[name=study_id]").fill("s1")
            form.locator("input[name=per_kind]").fill("2")
            form.locator("input[name=reviewers]").fill("ann, bob")
            form.locator("button").click()
            page.wait_for_selector("#studies tr[data-study='s1']")
            study = load_study(root, "s1")
            kinds = {t.kind for t in study.tasks}
            assert {"cs_pair", "fc_label", "mcq"} <= kinds, kinds

            disagreed = None
            for reviewer in ("ann", "bob"):
                page.goto(f"{base}/study?id=s1&reviewer={reviewer}")
                while page.locator("#task").count():
                    task = page.locator("#task")
                    tid, kind = task.get_attribute("data-task"), task.get_attribute("data-kind")
                    # Reviewers never see a judge's score, the methods or the gold option.
                    assert "score" not in task.inner_text().lower()
                    differ = reviewer == "bob" and disagreed is None
                    answer(page, task, kind, differ)
                    disagreed = tid if differ else disagreed
                    task.locator("button").click()
                    page.wait_for_url(re.compile(r"saved="))
                assert page.locator("#queue-empty").count() == 1

            page.goto(f"{base}/study/adjudicate?id=s1")
            item = page.locator("section.adjudicate")
            assert item.count() == 1 and item.get_attribute("data-task") == disagreed
            assert item.locator("table.reviews tbody tr").count() == 2  # the adjudicator sees both reviews
            kind = study.task(disagreed).kind
            item.locator("input[name=reviewer]").fill("carol")
            answer(page, item, kind, False)
            item.locator("textarea[name=justification]").fill("the first reading matches the source")
            item.locator("button").click()
            page.wait_for_selector("#adjudication-empty")

            labels = load_labels(root, study)
            assert len(labels) == 2 * len(study.tasks) + 1
            figures = validation_figures(study, labels)
            page.goto(f"{base}/study/report?id=s1")
            shown = page.locator("#figures tbody tr")
            assert shown.count() == len(figures)
            for i, f in enumerate(figures.itertuples()):
                row = shown.nth(i)
                assert row.get_attribute("data-figure") == f.figure
                assert int(row.locator(".count").inner_text()) == f.count
                assert int(row.locator(".n").inner_text()) == f.n
            dis = figures[(figures["figure"] == "disagreement_rate") & (figures["kind"] == kind)].iloc[0]
            adj = figures[(figures["figure"] == "adjudicated") & (figures["kind"] == kind)].iloc[0]
            assert dis["count"] == 1 and (adj["count"], adj["n"]) == (1, 1)
            csv_text = page.request.get(f"{base}/study/labels.csv?id=s1").text()
            assert len(csv_text.strip().splitlines()) == len(labels) + 1 and ",adjudication," in csv_text

            from interviewsim_core.report import build_report, write_report

            data = build_report(root)
            sec = data.sections["human_validation"]
            assert sec.status == "ok"
            table = sec.tables["validation_figures"]
            assert table[["figure", "kind", "count", "n"]].values.tolist() == \
                figures[["figure", "kind", "count", "n"]].values.tolist()
            out = write_report(root, tmp_path / "report", report_data=data)
            page.goto(out.html.as_uri())
            assert page.locator("section#human_validation").get_attribute("data-status") == "ok"
    finally:
        stop(proc)
    assert not errors, errors
