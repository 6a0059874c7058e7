"""The report built from a real small run: every section present, numbers recomputed here from
the Parquet files with plain pandas, and report.json equal to what report.html shows."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from interviewsim_core.report import build_report, leaderboard_markdown, write_report
from interviewsim_core.report.catalog import fmt

from .conftest import JUDGES, METHODS, PERSONALITIES, read_all
from .htmlscan import ReportPage

SECTIONS = ("leaderboard", "calibration", "human_validation", "paired_tests", "generators", "judge_agreement",
            "human_agreement",
            "ps_stability", "tag_breakdown", "category_breakdown", "mcq", "memory_ablation", "cost", "validity",
            "overlap", "premise")
# No ablation methods, labels file, ps_stability, study or second generator.
NOT_RUN = ("memory_ablation", "human_agreement", "ps_stability", "human_validation", "generators")


@pytest.fixture(scope="module")
def written(small_run, tmp_path_factory):
    cats = tmp_path_factory.mktemp("cats") / "categories.csv"
    cats.write_text("personality_id,category\nSYN_AUERLUND,Sports\nSYN_FENWRIGHT,Music\n")
    data = build_report(small_run, categories_csv=cats)
    paths = write_report(small_run, small_run / "report", report_data=data)
    doc = json.loads(paths.json.read_text())
    page = ReportPage(paths.html.read_text())
    return data, doc, page, paths


def paths_html(written) -> str:
    return written[3].html.read_text()


def _macro(df: pd.DataFrame, value: str) -> pd.Series:
    per = df.groupby(["method", "judge", "personality_id"])[value].mean()
    return per.groupby(["method", "judge"]).mean()


def _lb(doc: dict, method: str, judge: str | None, metric: str, view: str = "common") -> dict:
    rows = [r for r in doc["sections"]["leaderboard"]["tables"]["leaderboard"]
            if r["method"] == method and r["judge"] == judge and r["metric"] == metric and r["view"] == view]
    assert len(rows) == 1, (method, judge, metric)
    return rows[0]


def test_files_are_self_contained(written):
    _, doc, page, paths = written
    assert paths.html.name == "report.html" and paths.json.name == "report.json"
    assert not page.links, "no external CSS/JS"
    assert page.images and all(src.startswith("data:image/png;base64,") for src in page.images)
    html = paths.html.read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
    assert "impersonation" in html and "controlled research evaluation" in html


def test_every_section_present_with_its_status(written):
    _, doc, page, _ = written
    assert tuple(doc["sections"]) == SECTIONS
    for key in SECTIONS:
        assert page.sections[key] == doc["sections"][key]["status"]
    assert all(doc["sections"][k]["status"] == "ok" for k in SECTIONS if k not in NOT_RUN)
    assert all(doc["sections"][k]["status"] == "not_run" for k in NOT_RUN)
    meta = doc["meta"]
    assert meta["personalities"] == list(PERSONALITIES) and meta["judges"] == list(JUDGES)
    assert meta["methods"] == list(METHODS)
    # How the PS votes were sampled is read from the vote rows and shown in the header.
    assert meta["ps_vote_sampling"] == "3 votes per trait and side, temperature 0.7"
    assert 'data-fact="ps_vote_sampling">3 votes per trait and side, temperature 0.7<' in paths_html(written)


def test_leaderboard_judged_metrics_recomputed(written, small_run):
    _, doc, page, _ = written
    cs = read_all(small_run, "content_similarity")
    cs = cs[cs["status"] == "ok"]
    fc = read_all(small_run, "factual_consistency")
    fc = fc[fc["status"] == "ok"].assign(c=lambda d: (d["label"] == "Contradiction").astype(float))
    expected = {"cs_mean": _macro(cs, "score"), "contradiction_ratio": _macro(fc, "c")}
    for metric, series in expected.items():
        for (method, judge), value in series.items():
            row = _lb(doc, method, judge, metric)
            assert row["value"] == pytest.approx(value, abs=1e-12)
            text, dv = page.cells[("leaderboard", f"{method}|{judge}|{metric}")]
            assert float(dv) == pytest.approx(row["value"], abs=1e-15)
            assert text == fmt(row["value"], metric)


def _alignment(ref: dict, gen: dict) -> float:
    m = {"Low": 1, "Neutral": 2, "High": 3}
    return 1 - sum(abs(m[ref[t]] - m[gen[t]]) for t in ref) / 10


def _modal(rates: list[str]) -> str:
    level, n = Counter(rates).most_common(1)[0]
    return level if n > 1 else "Neutral"


def test_leaderboard_personality_similarity_recomputed(written, small_run):
    _, doc, _, _ = written
    ref = read_all(small_run, "reference_personality")
    gen = read_all(small_run, "generated_personality")
    assert (ref["status"] == "ok").all() and (gen["status"] == "ok").all()
    for method, judge in itertools.product(METHODS, JUDGES):
        vals = []
        for pid in PERSONALITIES:
            r = ref[(ref.personality_id == pid) & (ref.judge == judge)]
            g = gen[(gen.personality_id == pid) & (gen.judge == judge) & (gen.method == method)]
            rl = {t: _modal(list(x.sort_values("vote_index")["rate"])) for t, x in r.groupby("trait")}
            gl = {t: _modal(list(x.sort_values("vote_index")["rate"])) for t, x in g.groupby("trait")}
            vals.append(_alignment(rl, gl))
        assert _lb(doc, method, judge, "ps_alignment")["value"] == pytest.approx(np.mean(vals), abs=1e-12)


def test_leaderboard_mcq_recomputed_and_best_marked(written, small_run):
    _, doc, page, _ = written
    ans = read_all(small_run, "mcq_answers")
    for n in (3, 4):
        sub = ans[ans["n_options"] == n]
        acc = sub.groupby(["method", "personality_id"])["correct"].mean().groupby("method").mean()
        rew = sub.groupby(["method", "personality_id"])["reward"].mean().groupby("method").mean()
        for method in METHODS:
            assert _lb(doc, method, None, f"mcq{n}_accuracy")["value"] == pytest.approx(acc[method], abs=1e-12)
            assert _lb(doc, method, None, f"mcq{n}_reward")["value"] == pytest.approx(rew[method], abs=1e-12)
        best = rew.idxmax()
        assert _lb(doc, best, None, f"mcq{n}_reward")["best"] is True
        assert "best" in page_cell_class(page, best, f"mcq{n}_reward")
    # Lower is better for the contradiction ratio: the best mark goes to the minimum.
    for judge in JUDGES:
        rows = [_lb(doc, m, judge, "contradiction_ratio") for m in METHODS]
        low = min(r["value"] for r in rows)
        assert all(r["best"] == (r["value"] == low) for r in rows)


def page_cell_class(page: ReportPage, method: str, metric: str) -> str:
    return page.classes[("leaderboard", f"{method}||{metric}")]


def test_paired_tests_match_exact_sign_flip(written, small_run):
    _, doc, _, _ = written
    rows = doc["sections"]["paired_tests"]["tables"]["paired_tests"]
    assert {(r["method_a"], r["method_b"]) for r in rows} == {("chrono-100", "simple")}
    cs = read_all(small_run, "content_similarity")
    per = cs[cs["status"] == "ok"].groupby(["judge", "method", "personality_id"])["score"].mean()
    for judge in JUDGES:
        d = (per[judge]["chrono-100"] - per[judge]["simple"]).reindex(list(PERSONALITIES)).to_numpy()
        obs = abs(d.mean())
        flips = [abs(np.mean(d * np.array(s))) for s in itertools.product((1, -1), repeat=len(d))]
        p = np.mean([f >= obs - 1e-12 for f in flips]) if obs > 0 else 1.0
        row = next(r for r in rows if r["judge"] == judge and r["metric"] == "cs_mean")
        assert row["mean_difference"] == pytest.approx(d.mean(), abs=1e-12)
        assert row["p_value"] == pytest.approx(p, abs=1e-9)


def test_judge_agreement_counts_items(written, small_run):
    _, doc, _, _ = written
    rows = doc["sections"]["judge_agreement"]["tables"]["judge_agreement"]
    fc = read_all(small_run, "factual_consistency")
    a = fc[fc.judge == JUDGES[0]].set_index(["personality_id", "method", "qa_id"])["label"]
    b = fc[fc.judge == JUDGES[1]].set_index(["personality_id", "method", "qa_id"])["label"]
    both = pd.concat([a, b], axis=1, join="inner")
    row = next(r for r in rows if r["measure"] == "FC label (3-way)")
    assert row["n"] == len(both)
    assert row["agreement"] == pytest.approx(float((both.iloc[:, 0] == both.iloc[:, 1]).mean()))


def test_tag_breakdown_recomputed(written, small_run):
    _, doc, page, _ = written
    split = read_all(small_run, "heldout_split")
    tags = split[split.partition == "test"].explode("tags")[["personality_id", "qa_id", "tags"]]
    fc = read_all(small_run, "factual_consistency")
    fc = fc[fc["status"] == "ok"].merge(tags, on=["personality_id", "qa_id"])
    ratio = fc.assign(c=fc.label == "Contradiction").groupby(["method", "judge", "tags"])["c"].mean()
    rows = doc["sections"]["tag_breakdown"]["tables"]["by_tag"]
    assert {(r["method"], r["judge"], r["group"]) for r in rows} >= set(ratio.index)
    for r in rows:
        if (r["method"], r["judge"], r["group"]) in ratio.index:
            assert r["contradiction_ratio"] == pytest.approx(ratio[(r["method"], r["judge"], r["group"])])
            text, dv = page.cells[("by_tag", f"{r['judge']}|{r['group']}|{r['method']}")]
            assert float(dv) == pytest.approx(r["contradiction_ratio"], abs=1e-15)
    cats = doc["sections"]["category_breakdown"]["tables"]["by_category"]
    assert {r["group"] for r in cats} == {"Sports", "Music"}


def test_mcq_sections_recomputed(written, small_run):
    _, doc, _, _ = written
    ans = read_all(small_run, "mcq_answers")
    mcq = doc["sections"]["mcq"]["tables"]
    dist = {(r["method"], r["n_options"], r["kind"]): r["share"] for r in mcq["prediction_distribution"]}
    for (method, n), grp in ans.groupby(["method", "n_options"]):
        shares = grp["chosen_kind"].fillna("invalid").value_counts(normalize=True)
        for kind, share in shares.items():
            assert dist[(method, n, kind)] == pytest.approx(share)
        assert sum(v for (m, k, _), v in dist.items() if (m, k) == (method, n)) == pytest.approx(1.0)
    pos = {(r["method"], r["n_options"], r["position"]): r["accuracy"] for r in mcq["accuracy_by_position"]}
    expect = ans.groupby(["method", "n_options", "correct_label"])["correct"].mean()
    assert pos == pytest.approx({k: float(v) for k, v in expect.items()})
    groups = mcq["training_groups"]
    assert {r["group"] for r in groups} == {"1", "2", "All"}  # two personalities: min(10, 2) groups
    n_train = read_all(small_run, "heldout_split").query("partition == 'train'").groupby("personality_id").size()
    all_rows = [r for r in groups if r["group"] == "All"]
    assert all(r["avg_train_pairs"] == pytest.approx(n_train.mean()) for r in all_rows)
    length = mcq["length_bias"]
    assert all(r["n_longest"] + r["n_not_longest"] == len(ans[(ans.method == r["method"]) &
                                                               (ans.n_options == r["n_options"])]) for r in length)


def test_cost_and_overlap_recomputed(written, small_run):
    _, doc, _, _ = written
    gens = read_all(small_run, "generations")
    cost = {r["method"]: r for r in doc["sections"]["cost"]["tables"]["cost"]}
    for method, grp in gens.groupby("method"):
        assert cost[method]["prompt_tokens_per_question"] == pytest.approx(grp["prompt_tokens"].mean())
        assert cost[method]["n_questions"] == len(grp)
    assert cost["chrono-100"]["prompt_tokens_per_question"] > cost["simple"]["prompt_tokens_per_question"]
    q = doc["sections"]["overlap"]["tables"]["questions"]
    split = read_all(small_run, "heldout_split")
    assert len(q) == int((split.partition == "test").sum())
    counts = Counter(r["tercile"] for r in q)
    assert set(counts) == {"low", "mid", "high"} and max(counts.values()) - min(counts.values()) <= 1
    sims = {t: [r["best_similarity"] for r in q if r["tercile"] == t] for t in counts}
    assert max(sims["low"]) <= min(sims["mid"]) and max(sims["mid"]) <= min(sims["high"])


def test_premise_section_from_verdicts(written, small_run):
    _, doc, page, _ = written
    v = read_all(small_run, "premise_verdicts")
    sec = doc["sections"]["premise"]
    judged = v[v.verdict.isin(["PASS", "FAIL"])]
    assert sec["tables"]["overall"][0]["n"] == len(v)
    if len(judged):
        assert sec["tables"]["overall"][0]["pass_rate"] == pytest.approx((judged.verdict == "PASS").mean())
    assert [r["attribution"] for r in sec["tables"]["attribution_split"]] == [
        "PRESENT_IN_WINDOW", "ABSENT_FROM_WINDOW", "ABSENT_EVERYWHERE"]
    assert "attribution_split" in page.tables and "cross_check" in sec


def test_premise_attribution_and_cross_check_recomputed(written, small_run):
    """Seed 002's split (over all attributions of FAILed conclusions, plus each one's dominant
    attribution) and the fact-summary FAIL share, counted here straight from the Parquet rows."""
    _, doc, _, _ = written
    v = read_all(small_run, "premise_verdicts")
    order = ["PRESENT_IN_WINDOW", "ABSENT_FROM_WINDOW", "ABSENT_EVERYWHERE"]
    failed = v[v.verdict == "FAIL"]
    lists = [[a for a in (x if x is not None else []) if a in order] for x in failed["attributions"]]
    counts = Counter(a for lst in lists for a in lst)
    assert sum(counts.values()) > 0, "the offline run should produce FAILs with attributions"
    dominant = Counter(max(order, key=lambda a: (Counter(lst)[a], -order.index(a))) for lst in lists if lst)
    rows = {r["attribution"]: r for r in doc["sections"]["premise"]["tables"]["attribution_split"]}
    for a in order:
        assert rows[a]["count"] == counts[a]
        assert rows[a]["share"] == pytest.approx(counts[a] / sum(counts.values()), abs=1e-12)
        assert rows[a]["dominant"] == dominant[a]
        assert rows[a]["dominant_share"] == pytest.approx(dominant[a] / sum(dominant.values()), abs=1e-12)
    assert sum(r["share"] for r in rows.values()) == pytest.approx(1.0)

    cc = doc["sections"]["premise"]["cross_check"]
    fs = v[(v.artifact_kind == "fact_summary") & v.verdict.isin(["PASS", "FAIL"])]
    assert len(fs) > 0
    assert cc["n_statements"] == len(fs) and cc["n_fail"] == int((fs.verdict == "FAIL").sum())
    assert cc["fail_share"] == pytest.approx((fs.verdict == "FAIL").mean(), abs=1e-12)
    assert cc["paper_contradicted_share"] == pytest.approx(10 / 300)
    fails = (fs.verdict == "FAIL").astype(float).to_numpy()
    if 0 < fails.sum() < len(fails):
        low, high = _percentile_by_hand(fails, seed=0, n_resamples=2000)
        assert (cc["fail_share_ci_low"], cc["fail_share_ci_high"]) == pytest.approx((low, high), abs=1e-12)


def _percentile_by_hand(values, seed: int, n_resamples: int) -> tuple[float, float]:
    """Percentile bootstrap of the mean written out with numpy: sorted values, seeded index draws."""
    x = np.sort(np.asarray(values, dtype=float))
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_resamples, len(x)))
    return tuple(np.percentile(x[idx].mean(axis=1), [2.5, 97.5]))


def test_leaderboard_ci_recomputed(written, small_run):
    _, doc, _, _ = written
    cs = read_all(small_run, "content_similarity")
    per = cs[cs["status"] == "ok"].groupby(["method", "judge", "personality_id"])["score"].mean()
    for method, judge in itertools.product(METHODS, JUDGES):
        values = per[method][judge].to_numpy()
        row = _lb(doc, method, judge, "cs_mean")
        if len(set(values)) == 1:
            assert row["ci_low"] == row["ci_high"] == pytest.approx(values[0])
            continue
        low, high = _percentile_by_hand(values, seed=0, n_resamples=2000)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx((low, high), abs=1e-12)


def test_leaderboard_parquet_and_report_show_the_same_intervals(written, small_run):
    """The pipeline's leaderboard.parquet and report.json: one computation, one value and CI per number."""
    _, doc, _, _ = written
    parquet = pd.read_parquet(small_run / "leaderboard.parquet")
    index = {(r["method"], r["judge"] if isinstance(r["judge"], str) else None, r["metric"], r["view"]): r
             for r in parquet.to_dict("records")}
    rows = doc["sections"]["leaderboard"]["tables"]["leaderboard"]
    assert len(rows) == len(parquet)
    checked = 0
    for r in rows:
        p = index[(r["method"], r["judge"], r["metric"], r["view"])]
        for key in ("value", "ci_low", "ci_high", "coverage"):
            if r[key] is None:
                assert np.isnan(p[key]), (r, key)
            else:
                assert p[key] == pytest.approx(r[key], abs=1e-12), (r, key)
                checked += key in ("ci_low", "ci_high")
        assert bool(p["best"]) == r["best"] and p["embedding_model"] == r["embedding_model"] == "offline/hashing"
    assert checked >= len(METHODS) * len(JUDGES) * 3 * 2  # every judged metric's bounds at least


class _Recording:
    """An embedder that remembers what it was asked to embed (delegating to the offline one)."""

    def __init__(self):
        from interviewsim_core.embeddings import HashingEmbedder

        self._inner = HashingEmbedder(dim=256)
        self.name = "recording-" + self._inner.name
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return self._inner.embed(texts)


def test_given_embedder_is_used_for_overlap_and_label_clusters(small_run):
    emb = _Recording()
    data = build_report(small_run, embedder=emb)
    overlap = data.section("overlap")
    assert overlap.tables["summary"]["embedder"].iloc[0] == emb.name
    split = read_all(small_run, "heldout_split")
    assert set(split["question"]) <= set(emb.seen)
    from interviewsim_core.premise.clustering import normalise_label

    v = read_all(small_run, "premise_verdicts")
    forms = {normalise_label(str(lab)) for x in v[v.verdict == "FAIL"]["labels"] if x is not None for lab in x}
    forms.discard("")
    assert len(forms) >= 2  # clustering embeds only when there are at least two distinct labels
    assert {f.replace("-", " ") for f in forms} <= set(emb.seen)


def test_methods_filter_and_requested_pairs(small_run):
    data = build_report(small_run, methods=["simple"])
    assert data.meta["methods"] == ["simple"]
    board = data.section("leaderboard").tables["leaderboard"]
    assert set(board["method"]) == {"simple"}
    assert data.section("paired_tests").status == "not_run"
    assert set(data.section("cost").tables["cost"]["method"]) == {"simple"}
    pairs = build_report(small_run, pairs=[("simple", "chrono-100")]).section("paired_tests").tables["paired_tests"]
    assert set(zip(pairs["method_a"], pairs["method_b"])) == {("simple", "chrono-100")}


def test_json_numbers_equal_html_cells(written):
    _, doc, page, _ = written
    for r in doc["sections"]["leaderboard"]["tables"]["leaderboard"]:
        text, dv = page.cells[("leaderboard", f"{r['method']}|{r['judge'] or ''}|{r['metric']}")]
        if r["value"] is None:
            assert dv is None and text == "–"
        else:
            assert float(dv) == r["value"] and text == fmt(r["value"], r["metric"])


def test_leaderboard_markdown_for_dagster(written):
    data = written[0]
    md = leaderboard_markdown(data)
    lines = md.splitlines()
    assert lines[0].startswith("| Method | CS (judge-a) | CS (judge-b)")
    assert any(line.startswith("| simple |") for line in lines) and any(line.startswith("| chrono-100 |") for line in lines)
    assert "**" in md


def test_header_records_the_embedder_and_the_coverage_threshold(written):
    data, doc, _, paths = written
    assert doc["meta"]["embedding_models"] == ["offline/hashing"] and doc["meta"]["coverage_threshold"] == 0.95
    html = paths.html.read_text()
    assert 'data-fact="embedding_models">offline/hashing<' in html
    assert 'data-fact="coverage_threshold">95%<' in html
    assert 'data-table="coverage"' in html and 'data-table="leaderboard_all_valid"' in html


@pytest.mark.parametrize("broken", [False, True])
def test_report_reads_no_answer_text_and_is_the_same_for_it(small_run, tmp_path, broken):
    """The report loads tables without the answers' text (``UNREAD_COLUMNS``, to bound its memory at
    scale); built from every column instead, every section must come out the same, failures included."""
    from interviewsim_core.pipeline.storage import write_frame
    from interviewsim_core.report.loading import REPORT_TABLES, UNREAD_COLUMNS, load_tables

    full = {name: read_all(small_run, name) for name in REPORT_TABLES if (small_run / name).is_dir()}
    root = small_run
    if broken:  # some invalid and failed outputs, with their raw text and errors, in every judged table
        root = tmp_path / "broken"
        for name, df in full.items():
            if "status" in df.columns:
                df = df.copy()
                df.loc[df.index % 5 == 1, ["status", "parse_error"]] = ["invalid", "no <rate> tag"]
                df.loc[df.index % 7 == 2, ["status", "error"]] = ["failed", "HTTP 500 from offline"]
                full[name] = df
            write_frame(df, name, root / name / "all.parquet")
    loaded = load_tables(root)
    assert not any(set(df.columns) & UNREAD_COLUMNS for df in loaded.values())
    assert any(set(df.columns) & UNREAD_COLUMNS for df in full.values())
    projected = build_report(root).to_dict()
    whole = build_report(tables=full).to_dict()
    for meta in (projected["meta"], whole["meta"]):  # where and when it was built, not what it says
        for key in ("data_root", "title", "generated_at"):
            meta.pop(key, None)
    assert json.dumps(projected, sort_keys=True, default=str) == json.dumps(whole, sort_keys=True, default=str)

