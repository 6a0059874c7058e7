"""The explorer as a researcher uses it, in headless Chromium (Debian's package, driven by
Playwright for Python; no browser is downloaded): leaderboard -> a cell -> the question view (the
person's answer, every method's answer, every judge's explanation) -> the Contradictions filter ->
a human label saved -> the report's "Judge agreement with human labels" section built from it.

Fails when CI=true and Chromium is missing; skips locally only without it. Screenshots go to
``tmp_path`` (and to ``$EXPLORER_SCREENSHOTS`` when set: that is how docs/explorer_*.png are made).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from urllib.parse import unquote, urlsplit

import pandas as pd
import pytest

from interviewsim_view import urls

from .conftest import browser_page
from .corpus import HOSTILE, JUDGES, METHODS, PEOPLE

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _shot(page, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"explorer_{name}.png"
    page.screenshot(path=str(path), full_page=False)
    assert path.stat().st_size > 5_000
    if os.environ.get("EXPLORER_SCREENSHOTS"):
        shutil.copy(path, Path(os.environ["EXPLORER_SCREENSHOTS"]) / path.name)


def test_explorer_walkthrough(server, view_root, tmp_path):
    base, labels = server
    requests: list[str] = []
    with browser_page(width=1400, console=True) as (page, errors):
        page.on("request", lambda r: requests.append(r.url))

        # Leaderboard: one row per method, each cell a link to its rows.
        page.goto(base + "/")
        assert page.locator("#leaderboard tbody tr").count() == len(METHODS)
        _shot(page, tmp_path, "leaderboard")
        cell = page.locator("#leaderboard a[data-cell='simple']").first
        href = cell.get_attribute("href")
        assert href.startswith("/rows?table=cs") and "method=simple" in href
        cell.click()
        page.wait_for_url(re.compile(r"/rows\?"))
        rows = page.locator("#rows tbody tr.row")
        assert rows.count() > 0
        assert {t.strip() for t in page.locator("#rows tbody tr.row td:nth-child(2)").all_inner_texts()} == {"simple"}
        scores = [int(t) for t in page.locator("#rows tbody tr.row td:nth-child(6)").all_inner_texts()]
        assert scores == sorted(scores), "the CS cell lists the lowest scores first"

        # Question view of the hostile question: the markup is text, nothing ran.
        pid, qa = PEOPLE[0], f"{PEOPLE[0]}_Q5_0"
        page.goto(base + urls.question(pid, qa))
        assert page.locator("#question-text").inner_text().startswith(HOSTILE[:40])
        assert page.evaluate("window.__pwned === undefined")
        heldout = pd.read_parquet(next((view_root / "heldout_split").glob("*.parquet")))
        person = heldout.loc[heldout["qa_id"] == qa, "response"].iloc[0]
        assert page.locator("#person-answer").inner_text().strip() == person.strip()
        gens = pd.concat(pd.read_parquet(f) for f in (view_root / "generations" / pid).glob("*.parquet"))
        for method in METHODS:
            box = page.locator(f"section.method[data-method='{method}']")
            expected = gens[(gens["method"] == method) & (gens["qa_id"] == qa)]["generated"].iloc[0]
            assert box.locator(".generated").inner_text().strip() == expected.strip()
            for kind in ("cs", "fc"):
                judged = box.locator(f".judgment.{kind}")
                assert sorted(judged.evaluate_all("els => els.map(e => e.dataset.judge)")) == sorted(JUDGES)
                assert all(t.strip() for t in judged.locator(".explanation").all_inner_texts())
            assert box.locator("a.prompt-link").count() == 1
        _shot(page, tmp_path, "question")

        # The exact prompt, rebuilt from the cache by its key.
        page.locator("section.method[data-method='simple'] a.prompt-link").click()
        page.wait_for_url(re.compile(r"/prompt/"))
        assert page.locator("section.message").count() >= 1
        assert page.evaluate("window.__pwned === undefined")

        # Every Contradiction, from the quick filter.
        page.goto(base + "/rows")
        page.locator("#filter-contradictions").click()
        page.wait_for_url(re.compile(r"table=fc"))
        values = {t.strip() for t in page.locator("#rows tbody tr.row td:nth-child(6)").all_inner_texts()}
        assert values == {"Contradiction"}
        # Issue 33: each Contradiction shows the answer it judged beside the judge's justification.
        assert all(t.strip() for t in page.locator("#rows tbody tr.row td.generated").all_inner_texts())
        _shot(page, tmp_path, "contradictions")
        target = page.locator("#rows tbody tr.row a.qlink").first
        row = target.locator("xpath=ancestor::tr")
        method = row.locator("td:nth-child(2)").inner_text().strip()
        target.click()
        page.wait_for_url(re.compile(r"/q/"))
        label_pid, label_qa = (unquote(s) for s in urlsplit(page.url).path.split("/")[2:4])

        # A human label: CS 2 for that method, saved with the reviewer's name.
        form = page.locator(f"section.method[data-method='{method}'] form[data-metric='cs']")
        form.locator("select[name=value]").select_option("2")
        form.locator("input[name=reviewer]").fill("Ada <b>Reviewer</b>")
        form.locator("button").click()
        page.wait_for_selector("#saved")
        assert page.locator(f"section.method[data-method='{method}'] form[data-metric='cs'] .pill").inner_text() \
            == "saved: 2"
        page.goto(base + "/labels")
        assert page.locator("#saved-labels tbody tr").count() == 1
        _shot(page, tmp_path, "labels")

        # The report's agreement section reads the file the explorer wrote.
        from interviewsim_core.report import build_report, write_report

        data = build_report(view_root, human_labels_csv=labels)
        out = write_report(view_root, tmp_path / "report", report_data=data)
        page.goto(Path(out.html).as_uri())
        section = page.locator("section#human_agreement")
        assert section.get_attribute("data-status") == "ok"
        table = data.sections["human_agreement"].tables["human_agreement"]
        cs = table[table["metric"] == "cs"]
        assert sorted(cs["judge"].unique()) == sorted(JUDGES) and set(cs["n"]) == {1}
        assert "interviewsim view --data-root" in page.locator("#explorer").inner_text()
    assert not errors, errors
    assert all(u.startswith(base) or u.startswith("file://") or u.startswith("data:") for u in requests), requests
    saved = labels.read_text(encoding="utf-8").splitlines()
    assert saved == ["personality_id,method,qa_id,metric,value", f"{label_pid},{method},{label_qa},cs,2"]
    log = labels.with_name("human_labels.reviewers.csv").read_text(encoding="utf-8")
    assert "Ada <b>Reviewer</b>" in log


def test_the_generator_selector_filters_the_question_page(two_generator_server):
    """Issue 44: on a two-generator study, choosing ``warm`` in the question page's generator selector leaves the
    warm answers and the shared calibration method; choosing "all" brings the first generator's back."""
    base = two_generator_server
    pid, qa = PEOPLE[0], f"{PEOPLE[0]}_Q4_1"

    def shown(page) -> list[tuple[str, str]]:
        return page.locator("section.method").evaluate_all(
            "els => els.map(e => [e.dataset.method, e.dataset.generator])")

    with browser_page(console=True) as (page, errors):
        page.goto(base + urls.question(pid, qa))
        assert [tuple(x) for x in shown(page)] == [("simple", "extractive"), ("warm/simple", "warm"),
                                                   ("chrono-100", "extractive"), ("warm/chrono-100", "warm"),
                                                   ("reference", "")]
        form = page.locator("#generator-filter")
        form.locator("select[name=generator]").select_option("warm")
        form.locator("button").click()
        page.wait_for_url(re.compile(r"generator=warm"))
        assert [tuple(x) for x in shown(page)] == [("warm/simple", "warm"), ("warm/chrono-100", "warm"),
                                                   ("reference", "")]
        assert page.locator("section.method[data-method='warm/simple'] .generated").inner_text().strip()
        page.locator("#generator-filter select[name=generator]").select_option("")
        page.locator("#generator-filter button").click()
        page.wait_for_url(lambda url: "generator=warm" not in url)  # the form sends generator= (all)
        assert len(shown(page)) == 5
    assert not errors, errors
