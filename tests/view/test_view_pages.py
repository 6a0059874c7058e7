"""The explorer's pages over a real (tiny, offline) run, through Starlette's test client: filters,
paging, escaping, bound parameters, blind mode, labels in the agreement CSV's format, URL roots."""

from __future__ import annotations

import re
import shutil

import pytest
from starlette.testclient import TestClient

from interviewsim_core.metrics.human_agreement import load_human_labels
from interviewsim_view import pages, urls
from interviewsim_view.app import ViewConfig, create_app
from interviewsim_view.store import PAGE_SIZE, Store

from .corpus import HOSTILE, JUDGES, METHODS, PEOPLE


def client(root, tmp_path, **kw) -> TestClient:
    return TestClient(create_app(ViewConfig(data_root=str(root), labels=tmp_path / "labels.csv", **kw)))


def test_every_page_answers_and_escapes(view_root, tmp_path):
    c = client(view_root, tmp_path)
    qa = f"{PEOPLE[0]}_Q5_0"
    for url in ("/", urls.rows(), urls.rows(table="fc", label="Contradiction"), urls.rows(table="gen", status="bad"),
                urls.rows(table="heldout", q="script"), urls.rows(table="mcq"), urls.rows(table="cs", tag="Motivations and Values"),
                urls.disagree(), urls.personality_index(), urls.personality(PEOPLE[0]), urls.premise(),
                urls.premise(verdict="FAIL"), urls.labels(), urls.question(PEOPLE[0], qa)):
        r = c.get(url)
        assert r.status_code == 200, (url, r.text[-500:])
        assert "<script>" not in r.text and "onerror=\"window" not in r.text, url
    page = c.get(urls.rows(table="heldout", q="script")).text
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in page
    assert c.get(urls.question(PEOPLE[0], "no-such-question")).status_code == 404


def test_filters_are_bound_parameters_and_pages_are_stable(view_root):
    store = Store(view_root)
    hostile = pages.browse(store, pages.Filters.parse({"table": "cs", "method": "simple' OR 1=1 --"}))
    assert hostile["page"].rows == []
    search = pages.browse(store, pages.Filters.parse({"table": "heldout", "q": "100%_"}))
    assert search["page"].rows == []  # % and _ are literal characters in a search, not wildcards
    both = pages.browse(store, pages.Filters.parse({"table": "cs"}))
    total = len(METHODS) * len(JUDGES) * sum(1 for _ in store.query(
        f"SELECT 1 FROM {store.scan('f')} WHERE partition = 'test'", {"f": store.files("heldout_split")}))
    seen, page = [], 0
    while True:
        got = pages.browse(store, pages.Filters.parse({"table": "cs", "page": str(page)}))["page"]
        seen += [(r["personality_id"], r["method"], r["judge"], r["qa_id"]) for r in got.rows]
        if not got.has_next:
            break
        page += 1
    assert len(seen) == len(set(seen)) == total and both["page"].rows[0] == pages.browse(
        store, pages.Filters.parse({"table": "cs"}))["page"].rows[0]
    low = pages.browse(store, pages.Filters.parse({"table": "cs", "sort": "asc", "min": "2"}))["page"].rows
    assert [r["value"] for r in low] == sorted(r["value"] for r in low) and all(r["value"] >= 2 for r in low)
    fc = pages.browse(store, pages.Filters.parse({"table": "fc", "label": "Contradiction", "judge": JUDGES[1]}))
    assert fc["page"].rows and {(r["value"], r["judge"]) for r in fc["page"].rows} == {("Contradiction", JUDGES[1])}
    assert len(fc["page"].rows) <= PAGE_SIZE


def test_labels_in_the_agreement_csv_format(view_root, tmp_path):
    c = client(view_root, tmp_path)
    qa = f"{PEOPLE[1]}_Q4_1"
    form = {"personality_id": PEOPLE[1], "qa_id": qa, "method": "simple", "metric": "fc", "value": "Neutral",
            "reviewer": "Ann"}
    saved = c.post("/labels", data=form, follow_redirects=False)
    assert saved.status_code == 303 and saved.headers["location"] == urls.question(PEOPLE[1], qa) + "?saved=fc"
    back = c.get(saved.headers["location"])
    assert 'id="saved"' in back.text and "saved: Neutral" in back.text
    assert c.post("/labels", data={**form, "value": "Contradiction", "reviewer": "Bo"},
                  follow_redirects=False).status_code == 303
    item = {"personality_id": PEOPLE[1], "qa_id": f"{qa}#0", "method": "simple", "metric": "mcq_item_valid",
            "value": "0", "reviewer": "Ann"}
    assert c.post("/labels", data=item, follow_redirects=False).status_code == 303
    labels = load_human_labels(tmp_path / "labels.csv")
    assert sorted(map(tuple, labels.astype(str).values.tolist())) == [
        (PEOPLE[1], "", f"{qa}#0", "mcq_item_valid", "False"), (PEOPLE[1], "simple", qa, "fc", "Contradiction")]
    log = (tmp_path / "labels.reviewers.csv").read_text(encoding="utf-8").splitlines()
    assert len(log) == 4 and log[1].endswith(",Ann," + log[1].split(",")[-1]) and ",Bo," in log[2]
    before = (tmp_path / "labels.csv").read_bytes()
    bad = c.post("/labels", data={**form, "value": "Maybe"}, follow_redirects=False)
    assert bad.status_code == 400 and "fc value must be one of" in bad.text
    foreign = c.post("/labels", data=form, headers={"origin": "http://evil.example"}, follow_redirects=False)
    assert foreign.status_code == 403
    assert (tmp_path / "labels.csv").read_bytes() == before
    assert not list(tmp_path.glob(".*.tmp"))


def test_blind_mode_hides_the_judges(view_root, tmp_path):
    c = client(view_root, tmp_path, blind=True)
    qa = f"{PEOPLE[0]}_Q5_1"
    page = c.get(urls.question(PEOPLE[0], qa)).text
    assert "judgment cs" not in page and "Blind mode" in page and "form" in page
    assert c.get(urls.disagree()).status_code == 403


def test_a_url_data_root_reads_like_the_folder(view_root, tmp_path):
    """``file://`` directly; any other scheme through fsspec registered with DuckDB (here fsspec's
    in-memory filesystem, which needs no network: s3:// goes the same way with s3fs installed)."""
    import fsspec

    folder = Store(view_root)
    want = pages.question(folder, PEOPLE[0], f"{PEOPLE[0]}_Q5_0")
    as_file = Store(view_root.as_uri())
    assert as_file.local and pages.question(as_file, PEOPLE[0], f"{PEOPLE[0]}_Q5_0") == want
    mem = fsspec.filesystem("memory")
    for path in view_root.rglob("*.parquet"):
        mem.pipe(f"/viewtest/{path.relative_to(view_root).as_posix()}", path.read_bytes())
    remote = Store("memory://viewtest")
    assert not remote.local
    got = pages.question(remote, PEOPLE[0], f"{PEOPLE[0]}_Q5_0")
    assert got["split"] == want["split"] and [m for m, _ in got["methods"]] == [m for m, _ in want["methods"]]
    board = pages.leaderboard(remote)
    assert [r["method"] for r in board["rows"]] == [r["method"] for r in pages.leaderboard(folder)["rows"]]
    c = TestClient(create_app(ViewConfig(data_root="memory://viewtest")))
    assert c.get("/").status_code == 200
    assert c.post("/labels", data={}, follow_redirects=False).status_code == 409  # no labels file for a URL root


def test_the_open_command_and_permalinks():
    assert urls.explorer_command("/data/my run") == "interviewsim view --data-root '/data/my run'"
    assert urls.explorer_url("127.0.0.1", 9000, urls.question("A/B", "q 1#x")) == \
        "http://127.0.0.1:9000/q/A%2FB/q%201%23x"
    assert urls.personality("A/B") == "/personality/A%2FB"
    assert urls.rows(table="fc", label="Contradiction", page=0) == "/rows?table=fc&label=Contradiction"


def test_path_permalinks_and_their_query_aliases_open_the_same_page(view_root, tmp_path):
    """Issue 33: the documented ``/q/<personality>/<qa_id>`` and ``/personality/<id>`` answered 404; the
    query forms printed before stay as aliases. An id holding ``/`` survives as one encoded segment."""
    c = client(view_root, tmp_path)
    qa = f"{PEOPLE[0]}_Q4_1"
    path = c.get(f"/q/{PEOPLE[0]}/{qa}")
    alias = c.get(f"/q?personality={PEOPLE[0]}&qa={qa}")
    assert path.status_code == alias.status_code == 200 and qa in path.text
    assert c.get(f"/personality/{PEOPLE[1]}").status_code == c.get(f"/personality?id={PEOPLE[1]}").status_code == 200
    assert c.get(f"/q/{PEOPLE[0]}").status_code == 404
    missing = c.get("/q/A%2FB/q1")
    assert missing.status_code == 404 and "&#39;A/B&#39;" in missing.text  # one id, decoded after the split


def test_contradictions_show_the_answer_and_the_justification(view_root, tmp_path):
    """Issue 33: the Contradictions list showed neither the generated answer nor what it contradicts."""
    import duckdb

    c = client(view_root, tmp_path)
    page = c.get(urls.rows(table="fc", label="Contradiction")).text
    gen = duckdb.sql(f"SELECT generated FROM read_parquet('{view_root}/generations/**/*.parquet') "
                     f"WHERE personality_id = '{PEOPLE[0]}' LIMIT 200").fetchall()
    assert "judge&#39;s justification from the fact summary" in page
    shown = re.findall(r'<td class="text generated">([^<]+)</td>', page)
    assert shown and all(s.strip() for s in shown), page[:2000]
    assert any(s[:80] in (g[0] or "") for s in shown for g in gen)


def test_cards_show_the_real_context_size_and_the_nav_links_out(view_root, tmp_path):
    """Issue 33: retrieval and chronological cards said "context 0 chars" beside "pairs used 31 of 100";
    the explorer had no link to the report or to Dagster."""
    c = client(view_root, tmp_path)
    page = c.get(urls.question(PEOPLE[0], f"{PEOPLE[0]}_Q4_1")).text
    cards = page.split('<section class="method" data-method="')[1:]
    sizes = {card.split('"', 1)[0]: re.search(r"context (\d+) chars", card).group(1) for card in cards}
    assert set(sizes) == set(METHODS), sizes
    assert int(sizes["chrono-100"]) > 0 and int(sizes["memory-10"]) > 0 and int(sizes["simple"]) == 0
    assert f'href="{urls.report()}"' in page and f'href="{urls.DAGSTER_UI}"' in page
    report = c.get(urls.report())
    assert report.status_code == 200 and "<html" in report.text.lower()


def test_a_broken_labels_file_is_reported_not_overwritten(view_root, tmp_path):
    (tmp_path / "labels.csv").write_text("personality_id,method,qa_id,metric,value,extra\n", encoding="utf-8")
    c = client(view_root, tmp_path)
    page = c.get(urls.question(PEOPLE[0], f"{PEOPLE[0]}_Q5_0"))
    assert page.status_code == 200 and "the labels file cannot be read" in page.text
    form = {"personality_id": PEOPLE[0], "qa_id": f"{PEOPLE[0]}_Q5_0", "method": "simple", "metric": "cs",
            "value": "3", "reviewer": "Ann"}
    assert c.post("/labels", data=form, follow_redirects=False).status_code == 400
    assert (tmp_path / "labels.csv").read_text(encoding="utf-8").endswith("value,extra\n")


def test_the_leaderboard_shows_normalised_scores_or_why_not(view_root, tmp_path):
    """Issue 32: the normalised score beside the raw one, with its interval and what it lies between, or
    the reason it is undefined (this run has no calibration method, so every cell says "not run")."""
    import pandas as pd

    page = client(view_root, tmp_path).get(urls.leaderboard("all_valid")).text
    assert "normalised: not run: calibration method(s)" in page

    root = tmp_path / "root"
    shutil.copytree(view_root, root)
    board = pd.read_parquet(root / "leaderboard.parquet")
    row = board.index[(board["view"] == "all_valid") & (board["metric"] == "cs_mean") & (board["method"] == "simple")][0]
    board.loc[row, ["normalised", "norm_ci_low", "norm_ci_high", "floor_value", "ceiling_value"]] = \
        [0.25, 0.125, 0.375, 1.5, 3.5]
    board.loc[row, ["norm_floor", "norm_ceiling"]] = ["copy-nearest", "reference"]
    board.to_parquet(root / "leaderboard.parquet")
    page = client(root, tmp_path).get(urls.leaderboard("all_valid")).text
    assert 'title="between copy-nearest 1.500 .. reference 3.500">normalised 0.25 [0.12, 0.38]' in page


def test_the_leaderboard_notes_edges_and_says_once_why_the_common_view_has_no_normalised_score(view_root, tmp_path):
    """Issue 45: an interval with its estimate on an edge carries a note (raw and normalised); the common
    view says in one line, above the table, why it shows no normalised score (not "normalised: ..." per cell)."""
    import pandas as pd

    from interviewsim_core.metrics.normalised import COMMON_VIEW_NOTE

    root = tmp_path / "root"
    shutil.copytree(view_root, root)
    board = pd.read_parquet(root / "leaderboard.parquet")
    row = board.index[(board["view"] == "all_valid") & (board["metric"] == "cs_mean") & (board["method"] == "simple")][0]
    board.loc[row, ["value", "ci_low", "ci_high", "normalised", "norm_ci_low", "norm_ci_high", "floor_value",
                    "ceiling_value"]] = [2.5, 2.5, 2.5, 37.82, -8.71, 37.82, 1.5, 3.5]
    board.loc[row, ["norm_floor", "norm_ceiling"]] = ["copy-nearest", "reference"]
    board.to_parquet(root / "leaderboard.parquet")
    c = client(root, tmp_path)
    page = c.get(urls.leaderboard("all_valid")).text
    assert "[2.50, 2.50] (no spread: every resample gives the same value)" in page
    assert "normalised 37.82 [-8.71, 37.82] (the estimate is at the interval&#39;s edge" in page
    common = c.get(urls.leaderboard("common")).text
    assert common.count(COMMON_VIEW_NOTE) == 1 and "normalised: " not in common
