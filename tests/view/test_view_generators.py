"""Issue 44, explorer: a study with two generators (the offline model, and a ``warm`` variant at another temperature)
shows each method's answers per generator on the question page, the leaderboard names each row's generator, and
``?generator=<label>`` keeps one generator and the shared calibration methods; a one-generator data root looks as
before."""

from __future__ import annotations

import re

import pandas as pd
from starlette.testclient import TestClient

from interviewsim_core.strategies import generator_and_method
from interviewsim_view import urls
from interviewsim_view.app import ViewConfig, create_app

from .corpus import PEOPLE

PID, QA = PEOPLE[0], f"{PEOPLE[0]}_Q4_1"
FIRST = "extractive"  # generator_label of offline/extractive: the first generator's plain keys


def client(root, tmp_path) -> TestClient:
    return TestClient(create_app(ViewConfig(data_root=str(root), labels=tmp_path / "labels.csv")))


def cards(page: str) -> list[tuple[str, str]]:
    """(method key, generator) of each answer card, in page order."""
    return re.findall(r'<section class="method" data-method="([^"]+)" data-generator="([^"]*)">', page)


def card(page: str, key: str) -> str:
    return page.split(f'<section class="method" data-method="{key}"', 1)[1].split("</section>", 1)[0]


def test_generator_and_method_reads_a_key_given_the_first_label():
    assert generator_and_method("simple", "gpt") == ("gpt", "simple")
    assert generator_and_method("warm/chrono-100", "gpt") == ("warm", "chrono-100")
    assert generator_and_method("reference", "gpt") == ("", "reference")  # shared: no generator
    assert generator_and_method("other-person", "gpt") == ("", "other-person")


def test_the_question_page_shows_each_generator_under_each_method(two_generator_root, tmp_path):
    page = client(two_generator_root, tmp_path).get(urls.question(PID, QA)).text
    assert cards(page) == [("simple", FIRST), ("warm/simple", "warm"), ("chrono-100", FIRST),
                           ("warm/chrono-100", "warm"), ("reference", "")]
    groups = re.findall(r'<div class="method-group" data-base="([^"]+)">', page)
    assert groups == ["simple", "chrono-100", "reference"]
    simple = page.split('data-base="simple"', 1)[1].split('data-base="chrono-100"', 1)[0]
    assert 'data-method="simple"' in simple and 'data-method="warm/simple"' in simple
    assert f"{FIRST} (offline/extractive)" in simple  # the first generator named by its model
    gens = pd.concat(pd.read_parquet(f) for f in (two_generator_root / "generations" / PID).glob("*.parquet"))
    for key in ("simple", "warm/simple"):
        box = card(page, key)
        expected = gens[(gens["method"] == key) & (gens["qa_id"] == QA)]["generated"].iloc[0]
        assert expected.strip() and expected.strip() in box.replace("&#39;", "'").replace("&quot;", '"')
        assert box.count('class="judgment cs"') == 2 and box.count('class="judgment fc"') == 2
        assert 'class="text explanation"></div>' not in box  # every judge's explanation is there
    shared = page.split('data-base="reference"', 1)[1]
    assert "shared by all generators" in shared.split("</h2>", 1)[0]
    # MCQ choices: one column per generator under each method, the calibration column once.
    heads = re.findall(r'<th>([a-z0-9-]+)<br><span class="muted">([^<]+)</span></th>', page)
    assert heads[:5] == [("simple", FIRST), ("simple", "warm"), ("chrono-100", FIRST), ("chrono-100", "warm"),
                         ("reference", "shared")]


def test_the_generator_filter_keeps_one_generator_and_the_calibration(two_generator_root, tmp_path):
    c = client(two_generator_root, tmp_path)
    page = c.get(urls.question(PID, QA, "warm")).text
    assert cards(page) == [("warm/simple", "warm"), ("warm/chrono-100", "warm"), ("reference", "")]
    assert 'id="generator-problem"' not in page
    assert '<option value="warm" selected>' in page
    first = c.get(urls.question(PID, QA, FIRST)).text
    assert cards(first) == [("simple", FIRST), ("chrono-100", FIRST), ("reference", "")]
    # every generator is one link away
    for label in (FIRST, "warm"):
        assert f'href="{urls.question(PID, QA, label)}"' in page


def test_an_unknown_generator_says_which_exist(two_generator_root, tmp_path):
    c = client(two_generator_root, tmp_path)
    for url in (urls.question(PID, QA, "cold<b>"), urls.leaderboard(generator="cold<b>")):
        r = c.get(url)
        assert r.status_code == 200, url
        problem = re.search(r'id="generator-problem">([^<]*)</p>', r.text).group(1)
        assert "cold&lt;b&gt;" in problem and f"The generators are: {FIRST}, warm" in problem
    assert len(cards(c.get(urls.question(PID, QA, "cold"))
                     .text)) == 5  # every generator still shown


def test_the_leaderboard_names_each_rows_generator(two_generator_root, tmp_path):
    c = client(two_generator_root, tmp_path)
    page = c.get(urls.leaderboard()).text
    assert "<th>Generator</th>" in page
    rows = re.findall(r'<tr data-method="([^"]+)"><td><b>([^<]+)</b></td><td class="generator">([^<]+)</td>', page)
    assert rows == [("simple", "simple", FIRST), ("warm/simple", "simple", "warm"),
                    ("chrono-100", "chrono-100", FIRST), ("warm/chrono-100", "chrono-100", "warm"),
                    ("reference", "reference", "shared")]
    warm = c.get(urls.leaderboard(generator="warm")).text
    assert re.findall(r'<tr data-method="([^"]+)"', warm) == ["warm/simple", "warm/chrono-100", "reference"]
    assert f'href="{urls.leaderboard("all_valid", "warm").replace("&", "&amp;")}"' in warm  # a view keeps the filter


def test_one_generator_looks_as_before(view_root, tmp_path):
    c = client(view_root, tmp_path)
    page = c.get(urls.question(PID, QA)).text
    assert "data-generator" not in page and 'id="generator-filter"' not in page and "method-group" not in page
    assert re.findall(r'<section class="method" data-method="([^"]+)">\s*<h3>([^<]+)</h3>', page) == [
        ("simple", "simple"), ("chrono-100", "chrono-100"), ("memory-10", "memory-10")]
    board = c.get(urls.leaderboard()).text
    assert "<th>Generator</th>" not in board and 'id="generator-filter"' not in board
    assert 'id="generator-problem"' in c.get(urls.question(PID, QA, "warm")).text


def test_the_rows_page_filters_by_generator(two_generator_root, tmp_path):
    c = client(two_generator_root, tmp_path)

    def methods(url: str) -> set[str]:
        page = c.get(url).text
        return set(re.findall(r'<tr class="row status-[a-z]+">\s*<td>[^<]*</td><td>([^<]*)</td>', page))

    assert methods(urls.rows(table="gen")) >= {"simple", "warm/simple", "reference"}
    everything = set()
    for page in range(20):  # every generation row of the first generator, the shared reference, no warm/...
        got = c.get(urls.rows(table="cs", generator=FIRST, page=page)).text
        everything |= set(re.findall(r'<tr class="row status-[a-z]+">\s*<td>[^<]*</td><td>([^<]*)</td>', got))
        if 'id="next-page"' not in got:
            break
    assert everything == {"simple", "chrono-100", "reference"}
    assert methods(urls.rows(table="gen", generator="warm", personality=PID)) == {"warm/simple", "warm/chrono-100",
                                                                                  "reference"}
    page = c.get(urls.rows(table="cs", generator="nope")).text
    assert "no generator &#39;nope&#39; here" in page and '<option value="warm">warm</option>' in page


def test_the_personality_page_heads_each_column_with_its_generator(two_generator_root, tmp_path):
    c = client(two_generator_root, tmp_path)
    heads = re.findall(r'<th data-method="([^"]+)">', c.get(urls.personality(PID)).text)
    assert heads == ["reference", "simple", "warm/simple", "chrono-100", "warm/chrono-100"]
    warm = re.findall(r'<th data-method="([^"]+)">', c.get(urls.personality(PID, "warm")).text)
    assert warm == ["reference", "warm/simple", "warm/chrono-100"]
