"""The results explorer at scale (issue 23): every page under 1 s, the server under 500 MB.

Two data roots, each served by a real ``interviewsim view`` process on 127.0.0.1 and asked for each
page ``--repeat`` times over HTTP (p50 / p95 per page, target < 1 s, PASS/FAIL), then the server's
peak RSS (``VmHWM``; target < 500 MB):

(a) ``scale``: the seeded corpus of the paper's shape (``scale_corpus.py``, default 20
    personalities, about 13k pairs) run through ``run_evaluation`` with the offline model
    in-process (methods simple, chrono-100, memory-10, one judge; no server, no network). That is
    the costly part (minutes); ``--keep DIR`` reuses a data root built before.
(b) ``synthetic``: 1,000,000 judgment rows (``--rows``) written directly as Parquet in the real
    layout and schemas (``pipeline.tables.SCHEMAS``, one file per partition): P personalities x M
    methods x Q held-out questions x J judges, half Content Similarity, half Factual Consistency,
    with the generations, split, MCQ, personality votes and premise verdicts that the pages read.
    Text is drawn from a pool of pseudo-word sentences (answers ~500 characters).

Run: ``python -m benchmarks.bench_view [--quick] [--personalities 20] [--rows 1000000] [--repeat 7]
[--skip-scale] [--skip-synthetic] [--keep DIR]``. ``--quick``: 2 personalities, 100,000 rows, 3 repeats.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

TARGET_S = 1.0
TARGET_RSS_MB = 500.0
METHODS = ("simple", "chrono-100", "memory-10", "memory-50", "random-100")
JUDGES = ("judge-a", "judge-b")
TRAITS = ("Openness", "Conscientiousness", "Extraversion", "Agreeableness", "Neuroticism")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# ---- (b) the synthetic data root -------------------------------------------------------------

def _sentences(rng: random.Random, n: int = 4000) -> list[str]:
    syl = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]
    words = ["".join(rng.choice(syl) for _ in range(rng.randint(1, 3))) for _ in range(3000)]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(8, 18))).capitalize() + "." for _ in range(n)]


def _table(asset: str, n: int, cols: dict):
    """A table of ``n`` rows with ``asset``'s exact schema: the given columns, nulls elsewhere."""
    import pyarrow as pa

    from interviewsim_core.pipeline.tables import SCHEMAS

    schema = SCHEMAS[asset]
    arrays = []
    for f in schema:
        v = cols.get(f.name)
        arrays.append(pa.nulls(n, f.type) if v is None else pa.array(v if isinstance(v, list) else [v] * n, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


def write_synthetic(root: Path, rows: int, seed: int = 0) -> dict[str, int]:
    """``rows`` judgment rows (CS + FC) in the real layout; returns counts per table."""
    from interviewsim_core.pipeline.storage import parquet_write, partition_path

    rng = random.Random(seed)
    pool = _sentences(rng)
    q_per = 500
    per_pm = q_per * len(JUDGES) * 2
    people = max(1, rows // (per_pm * len(METHODS)))
    counts: dict[str, int] = {}

    def put(asset: str, table, pid: str | None = None, method: str | None = None) -> None:
        path = partition_path(root, asset, pid, method)
        path.parent.mkdir(parents=True, exist_ok=True)
        parquet_write(table, str(path))
        counts[asset] = counts.get(asset, 0) + table.num_rows

    def text(k: int) -> list[str]:
        return [" ".join(rng.choice(pool) for _ in range(k)) for _ in range(q_per)]

    call = {"model": "offline/extractive", "contract_version": "1+1", "status": "ok", "attempts": 1,
            "cache_hit": False, "prompt_tokens": 900, "completion_tokens": 120, "cost_usd": 0.0,
            "cached_prompt_tokens": 0}
    for p in range(people):
        pid = f"SYNTH_{p:04d}"
        qa = [f"{pid}_Q{i:04d}" for i in range(q_per)]
        questions = text(2)
        tags = [[rng.choice(("Identity Narrative", "Motivations and Values", "Psychological Traits"))] for _ in qa]
        put("heldout_split", _table("heldout_split", q_per, {
            "personality_id": pid, "qa_id": qa, "partition": "test", "interview_id": [f"{pid}_I{i // 28}" for i in range(q_per)],
            "sequence": [i // 28 for i in range(q_per)], "position": [i % 28 for i in range(q_per)],
            "order": list(range(q_per)), "question": questions, "response": text(6), "tags": tags}), pid)
        put("fact_summary", _table("fact_summary", 1, {"personality_id": pid, "summary": " ".join(rng.choice(pool) for _ in range(60)),
                                                       "explanation": "synthetic", **call, "contract": "fact_summary"}), pid)
        items = [f"{q}#0" for q in qa[:100]]
        put("mcq_items", _table("mcq_items", len(items), {
            "personality_id": pid, "item_id": items, "qa_id": qa[:100], "n_options": 3, "question": questions[:100],
            "labels": [["A", "B", "C"]] * len(items), "texts": [[rng.choice(pool) for _ in range(3)] for _ in items],
            "kinds": [["correct", "distractor", "distractor"]] * len(items), "correct_label": "A", "shuffle_seed": "0",
            **call, "contract": "mcq_generation"}), pid)
        votes = [(j, t, v) for j in JUDGES for t in TRAITS for v in range(3)]
        put("reference_personality", _table("reference_personality", len(votes), {
            "personality_id": pid, "judge": [v[0] for v in votes], "trait": [v[1] for v in votes],
            "vote_index": [v[2] for v in votes], "vote_temperature": 0.7, "rate": [rng.choice(("Low", "Neutral", "High")) for _ in votes],
            "justification": [rng.choice(pool) for _ in votes], **call, "contract": "personality"}), pid)
        put("premise_verdicts", _table("premise_verdicts", 40, {
            "personality_id": pid, "artifact_kind": "fact_summary", "conclusion_id": [f"c{i}" for i in range(40)],
            "conclusion": [rng.choice(pool) for _ in range(40)], "verdict": [rng.choice(("PASS", "FAIL")) for _ in range(40)],
            "primary_cause": "missing-time-anchor", "reasons": [["pass1_no_licensed_inference"]] * 40,
            "labels": [[rng.choice(("vague-referent", "missing-time-anchor", "unresolved-subject"))] for _ in range(40)],
            "attributions": [["PRESENT_IN_WINDOW"]] * 40}), pid)
        for m in METHODS:
            status = ["invalid" if rng.random() < 0.01 else "ok" for _ in qa]
            put("generations", _table("generations", q_per, {
                "personality_id": pid, "method": m, "qa_id": qa, "interview_id": f"{pid}_I0", "question": questions,
                "generated": text(5), "strategy": m.split("-")[0], "n_context_requested": 100, "n_context_used": 100,
                "context_qa_ids": [[]] * q_per, "context_chars": 70_000, "context_state": "ok", **call,
                "contract": "generation", "status": status,
                "raw_output": [None if s == "ok" else "not json" for s in status],
                "parse_error": [None if s == "ok" else "expected a JSON object" for s in status]}), pid, m)
            for asset, value in (("content_similarity", "score"), ("factual_consistency", "label")):
                n = q_per * len(JUDGES)
                vals = [rng.randint(1, 5) for _ in range(n)] if value == "score" else \
                    [rng.choice(("Entailment", "Neutral", "Neutral", "Contradiction")) for _ in range(n)]
                put(asset, _table(asset, n, {
                    "personality_id": pid, "method": m, "judge": [j for j in JUDGES for _ in qa], "qa_id": qa * len(JUDGES),
                    value: vals, "explanation": [rng.choice(pool) + " " + rng.choice(pool) for _ in range(n)],
                    **call, "contract": asset}), pid, m)
            chosen = [rng.choice("ABC") for _ in items]
            put("mcq_answers", _table("mcq_answers", len(items), {
                "personality_id": pid, "method": m, "n_options": 3, "item_id": items, "interview_id": f"{pid}_I0",
                "qa_id": qa[:100], "position": list(range(len(items))), "chosen_label": chosen,
                "correct_label": "A", "correct": [c == "A" for c in chosen], **call, "contract": "mcq_answering"}), pid, m)
            put("generated_personality", _table("generated_personality", len(votes), {
                "personality_id": pid, "method": m, "judge": [v[0] for v in votes], "trait": [v[1] for v in votes],
                "vote_index": [v[2] for v in votes], "vote_temperature": 0.7,
                "rate": [rng.choice(("Low", "Neutral", "High")) for _ in votes],
                "justification": [rng.choice(pool) for _ in votes], **call, "contract": "personality"}), pid, m)
    board = [(m, j, metric, view) for m in METHODS for j in JUDGES for metric in ("cs_mean", "contradiction_ratio")
             for view in ("common", "all_valid")]
    put("leaderboard", _table("leaderboard", len(board), {
        "method": [b[0] for b in board], "judge": [b[1] for b in board], "metric": [b[2] for b in board],
        "view": [b[3] for b in board], "value": [rng.random() for _ in board], "ci_low": 0.1, "ci_high": 0.9,
        "n_personalities": people, "personalities_expected": people, "coverage": 1.0, "below_coverage": False,
        "best": False, "n_invalid": 0, "n_failed": 0, "n_not_run": 0, "n_malformed": 0, "empty_reason": ""}))
    return counts


# ---- (a) the scale corpus ----------------------------------------------------------------------

def build_scale(work: Path, personalities: int) -> Path:
    from benchmarks.scale_corpus import generate_corpus
    from interviewsim_core.pipeline import run_evaluation
    from interviewsim_core.pipeline.config import EvalConfig

    corpus, root = work / "corpus", work / "data"
    if (root / "leaderboard.parquet").is_file():
        print(f"  reusing {root}", flush=True)
        return root
    stats = generate_corpus(corpus, personalities=personalities)
    print(f"  corpus: {stats.personalities} personalities, {stats.pairs} pairs; running the offline model...", flush=True)
    t0 = time.perf_counter()
    cfg = EvalConfig.load_resolved(env={}, overrides={
        "corpus": str(corpus), "data_root": str(root), "methods": "simple,chrono-100,memory-10",
        "embedding_model": "offline/hashing", "cache_path": str(work / "llm.sqlite")})
    run_evaluation(cfg, keep=())
    print(f"  built in {time.perf_counter() - t0:.0f} s", flush=True)
    return root


# ---- measuring ---------------------------------------------------------------------------------

def _pages(root: Path) -> dict[str, str]:
    """One URL per kind of page, on real ids of this data root."""
    import duckdb

    from interviewsim_view import urls

    con = duckdb.connect()

    def first(sql: str) -> tuple:
        return con.execute(sql).fetchall()[0]

    pid, qa = first(f"SELECT personality_id, qa_id FROM read_parquet('{root}/heldout_split/*.parquet') "
                    "WHERE partition = 'test' LIMIT 1")
    last_pid = first(f"SELECT max(personality_id) FROM read_parquet('{root}/heldout_split/*.parquet')")[0]
    method = first(f"SELECT method FROM read_parquet('{root}/generations/*/*.parquet') LIMIT 1")[0]
    word = first(f"SELECT split_part(generated, ' ', 3) FROM read_parquet('{root}/generations/*/*.parquet') "
                 "WHERE status = 'ok' LIMIT 1 OFFSET 1234")[0].strip(".,").lower()
    return {
        "leaderboard": "/",
        "question": urls.question(pid, qa),
        "question (last personality)": urls.question(last_pid, first(
            f"SELECT qa_id FROM read_parquet('{root}/heldout_split/*.parquet') "
            f"WHERE personality_id = '{last_pid}' AND partition = 'test' LIMIT 1")[0]),
        "lowest CS first": "/rows?table=cs&sort=asc",
        "lowest CS, one method, page 3": urls.rows(table="cs", sort="asc", method=method, page=3),
        "every Contradiction": "/rows?table=fc&label=Contradiction",
        "invalid or failed generations": "/rows?table=gen&status=bad",
        "full-text search": urls.rows(table="gen", q=word),
        "search the person's answers": urls.rows(table="heldout", q=word),
        "tag filter": "/rows?table=cs&tag=Psychological%20Traits",
        "methods disagree most": "/disagree",
        "personality view": urls.personality(pid),
        "personalities": "/personality",
        "premise audit": "/premise",
        "MCQ answers": "/rows?table=mcq",
    }


def measure(name: str, root: Path, repeat: int) -> bool:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from view.conftest import start_server, stop  # the tests' own start/stop-by-pid

    labels = Path(tempfile.mkdtemp(prefix="bench_view_labels_")) / "labels.csv"
    proc, base = start_server(str(root), labels)
    ok_all = True
    try:
        pages = _pages(root)
        print(f"\n{name}: {root}  (server pid {proc.pid}, {base})")
        print(f"  {'page':34s} {'p50 s':>7s} {'p95 s':>7s}  target < {TARGET_S:.0f} s")
        for label, url in pages.items():
            times = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                with urllib.request.urlopen(base + url, timeout=120) as r:
                    r.read()
                    assert r.status == 200, (url, r.status)
                times.append(time.perf_counter() - t0)
            times.sort()
            p50 = statistics.median(times)
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            ok = p95 < TARGET_S
            ok_all &= ok
            print(f"  {label:34s} {p50:7.3f} {p95:7.3f}  {verdict(ok)}", flush=True)
        status = Path(f"/proc/{proc.pid}/status").read_text()
        hwm = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM"))) / 1024
        ok = hwm < TARGET_RSS_MB
        ok_all &= ok
        print(f"  server peak RSS {hwm:.0f} MB  target < {TARGET_RSS_MB:.0f} MB  {verdict(ok)}")
    finally:
        stop(proc)
    return ok_all


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--personalities", type=int, default=20)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--skip-scale", action="store_true")
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--keep", type=Path, default=None, help="Build (or reuse) the data roots here, and keep them.")
    a = ap.parse_args(argv)
    if a.quick:
        a.personalities, a.rows, a.repeat = 2, 100_000, 3
    work = a.keep or Path(tempfile.mkdtemp(prefix="bench_view_"))
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}; {os.cpu_count()} cores", flush=True)
    results = {}
    try:
        if not a.skip_scale:
            print(f"(a) scale corpus, {a.personalities} personalities", flush=True)
            results["scale"] = measure("(a) scale corpus", build_scale(work / f"scale-{a.personalities}", a.personalities),
                                       a.repeat)
        if not a.skip_synthetic:
            root = work / f"synthetic-{a.rows}"
            if not (root / "leaderboard.parquet").is_file():
                t0 = time.perf_counter()
                counts = write_synthetic(root, a.rows)
                print(f"\n(b) synthetic data root written in {time.perf_counter() - t0:.0f} s: "
                      + ", ".join(f"{k} {v:,}" for k, v in counts.items()), flush=True)
            results["synthetic"] = measure(f"(b) synthetic, {a.rows:,} judgment rows", root, a.repeat)
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print("\nexplorer: " + ", ".join(f"{k} {verdict(v)}" for k, v in results.items()))


if __name__ == "__main__":
    main()
