"""The curation's human verification in headless Chromium (issue 31, step 6): a real
``interviewsim view --corpus DIR`` over a small corpus curated offline; open the list, open a
transcript (verdict beside the attributed turns and pairs), reject it with a check and a reason,
and see the retention fall on the list; review.csv holds the decision."""

from __future__ import annotations

import re

import pytest

from interviewsim_core.curation.review import read_decisions

from .conftest import browser_page, start_server, stop
from .curated import PEOPLE, build_curated

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_reject_a_transcript_in_the_browser(tmp_path):
    _raw, _manifest, corpus = build_curated(tmp_path)
    proc, base = start_server(None, None, "--corpus", str(corpus), probe="/curation")
    file = f"{PEOPLE[0]}/AUL-2006-title-norms-column.vtt"
    try:
        with browser_page() as (page, errors):
            page.goto(base + "/")
            page.wait_for_selector("#transcripts")
            ret = page.locator("#retention")
            kept, total = int(ret.get_attribute("data-kept")), int(ret.get_attribute("data-total"))
            assert (kept, total) == (8, 10) and "80.0%" in ret.inner_text() and "73.5%" in ret.inner_text()
            page.locator(f"#transcripts tr[data-file='{file}'] a.open").click()
            page.wait_for_selector("#turns")
            assert page.locator("#quality-kind").inner_text() == "interview"
            assert page.locator("#turns tbody tr").count() > 0 and page.locator("#pairs .pair").count() > 0
            # side by side: the turns and the pairs share the page's width
            turns_box = page.locator("#turns").bounding_box()
            pairs_box = page.locator("#pairs").bounding_box()
            assert pairs_box["x"] > turns_box["x"] + turns_box["width"] - 1
            form = page.locator("#decision-form")
            form.locator("input[value=reject]").check()
            form.locator("select[name=check]").select_option("conversational format")
            form.locator("input[name=reason]").fill("a written column, not an interview")
            form.locator("button").click()
            page.wait_for_url(re.compile(r"saved=reject"))
            assert page.locator("#decision").inner_text() == "reject" and page.locator("#status").inner_text() == "excluded"
            page.get_by_text("every transcript").click()
            page.wait_for_selector("#transcripts")
            ret = page.locator("#retention")
            assert int(ret.get_attribute("data-kept")) == kept - 1 and "70.0%" in ret.inner_text()
            row = page.locator(f"#transcripts tr[data-file='{file}']")
            assert row.get_attribute("data-kept") == "no" and "pending" in row.locator(".decision").inner_text()
    finally:
        stop(proc)
    assert not errors, errors
    assert read_decisions(corpus)[0] == {file: ("reject", "conversational format: a written column, not an interview")}
