"""Paper scale on one machine (issue 13): throughput, idle time, CPU, storage and memory per call.

On a seeded corpus of the paper's shape (``scale_corpus.py``), against a local OpenAI-compatible
server in its own process (``scale_server.py``: latency L, offline-model replies), each figure with
its target and a pass/fail word:

1. End to end: ``run_evaluation`` (the runner without Dagster; one run for all methods) on N personalities,
   methods simple, chrono-100, memory-10, one judge, concurrency C: calls/s, the ratio to raw
   ``httpx`` replaying *the same request bodies* against the same server (so the server's work per
   reply is equal and the ratio is the client side's), the share of wall time with no call in
   flight (measured by the server), the client's CPU ms per call. Target ratio >= 0.8.
2. Storage on the same run: bytes on disk (cache + Parquet) per call; target <= 1/10 of the
   pre-issue-13 figure.
3. One Chrono-1000 question (~700 KB prompt) of the personality with ~1,044 training pairs:
   client CPU per call for prompt building, cache key, send (through the gateway, SQLite cache),
   parse and write; target < 10 ms.
4. Projection to the paper's run (1,000 personalities, ~140k questions, 8 methods, 3 judges,
   ~10M calls) from the measured per-call figures at a given provider concurrency and latency.
5. Memory: peak RSS of the run at the large vs the small corpus (default 80 vs 20 personalities,
   the issue's; each in its own process; offline model
   in-process, so it measures the pipeline, not sockets); target <= 1.3x. With the RSS as
   personalities finish, to show it stays flat while the runner works through the corpus.

The defaults are the issue's sizes (20 personalities end to end, 20 vs 80 for memory): about 17
minutes on an idle 2-core machine; ``--quick`` (2 personalities, 2 vs 8) is a smoke run whose figures
are dominated by start-up and the final report, not the reference ones.

Run: ``python -m benchmarks.bench_scale [--quick] [--personalities 20] [--memory-sizes 20,80]
[--c 64 --latency 0.2] [--skip-e2e] [--skip-memory] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
KEY_ENV = "BENCH_FAKE_KEY"
METHODS = "simple,chrono-100,memory-10"

BEFORE_BYTES_PER_CALL = 19_400
"""Cache bytes per call of the code before issue 13 (the issue: 307 MB for ~15.8k calls)."""
PAPER = {"personalities": 1000, "questions": 140_799, "methods": 8, "judges": 3, "calls": 10_000_000}
TARGETS = {"ratio": 0.8, "storage": BEFORE_BYTES_PER_CALL / 10, "question_ms": 10.0, "memory": 1.3}


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


# ---- the server ----------------------------------------------------------------------------------

class Server:
    """``scale_server`` in a child process, driven by one-line commands."""

    def __init__(self, latency: float, port: int = 0):
        self.proc = subprocess.Popen([sys.executable, "-m", "benchmarks.scale_server", "--latency", str(latency),
                                      "--port", str(port)],
                                     cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "PORT":
            self.proc.kill()
            raise RuntimeError(f"benchmark server did not start: {line}")
        self.base = f"http://127.0.0.1:{line[1]}/v1"

    def cmd(self, text: str) -> dict[str, Any]:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=15)
        except Exception:  # noqa: BLE001 - whatever happened, do not leave it running
            self.proc.kill()
            self.proc.wait()


# ---- children --------------------------------------------------------------------------------------

def _model(base: str | None, c: int, label: str | None = None):
    from interviewsim_core.llm.types import ModelConfig

    if base is None:
        return None
    return ModelConfig(model="openai/fake-model", api_base=base, api_key_env=KEY_ENV, max_concurrency=c, label=label)


def _config(corpus: Path, data_root: Path, base: str | None, c: int, methods: str, builder_reasks: int | None = None):
    from interviewsim_core.pipeline.config import EvalConfig

    # Retrieval embeds offline on purpose (the same for every run of the benchmark, no embedding calls).
    kw: dict[str, Any] = {"corpus": corpus, "data_root": data_root, "methods": tuple(methods.split(",")),
                          "embedding_model": "offline/hashing"}
    if base is not None:
        m = _model(base, c)
        builder = m if builder_reasks is None else m.model_copy(update={"max_reasks": builder_reasks})
        kw.update(generator=m, builder=builder, premise_judge=m, judges=(_model(base, c, "judge"),))
    return EvalConfig(**kw).resolved()


def _run(cfg, progress=None) -> dict[str, int]:
    """The whole evaluation of ``cfg`` in one call (one run for all methods); table -> rows written.

    As a researcher would at scale: keep only the leaderboard in memory, read the rest from the
    Parquet files (here only their row counts, from the footers).
    """
    import pyarrow.parquet as pq

    from interviewsim_core.pipeline import run_evaluation

    run_evaluation(cfg, keep=("leaderboard",), progress=progress)
    rows: dict[str, int] = {}
    for f in Path(cfg.data_root).rglob("*.parquet"):
        table = f.relative_to(cfg.data_root).parts[0]
        rows[table] = rows.get(table, 0) + pq.ParquetFile(f).metadata.num_rows
    return rows


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


def child_run(corpus: Path, data_root: Path, base: str | None, c: int, methods: str,
              builder_reasks: int | None = None) -> dict[str, Any]:
    os.environ[KEY_ENV] = "bench"
    cfg = _config(corpus, data_root, base, c, methods, builder_reasks)
    timeline: list[tuple[int, float, float]] = []  # (personalities done, RSS MB, peak RSS MB so far)

    def progress(line: str) -> None:
        if line.endswith("personalities)"):  # "<id>: done (k/n personalities)"
            timeline.append((int(line.rsplit("(", 1)[1].split("/")[0]), _rss_mb(), _peak_rss_mb()))

    t0, c0, w0 = time.time(), time.process_time(), time.perf_counter()
    rows = _run(cfg, progress)
    return {"t0": t0, "t1": time.time(), "wall": time.perf_counter() - w0, "cpu": time.process_time() - c0,
            "peak_rss_mb": _peak_rss_mb(), "rows": rows, "timeline": timeline}


def child_httpx(bodies: Path, base: str, c: int) -> dict[str, Any]:
    """Replay recorded request bodies with a bare ``httpx.AsyncClient`` at concurrency ``c``."""
    import asyncio

    import httpx

    from benchmarks.scale_server import read_bodies

    async def main() -> int:
        limits = httpx.Limits(max_connections=c, max_keepalive_connections=c)
        async with httpx.AsyncClient(limits=limits, timeout=600) as client:
            queue: asyncio.Queue = asyncio.Queue(maxsize=4 * c)
            ok = 0

            async def worker() -> None:
                nonlocal ok
                while (body := await queue.get()) is not None:
                    r = await client.post(f"{base}/chat/completions", content=body,
                                          headers={"Authorization": "Bearer bench", "Content-Type": "application/json"})
                    ok += bool(r.json()["choices"][0]["message"]["content"])

            tasks = [asyncio.create_task(worker()) for _ in range(c)]
            for body in read_bodies(str(bodies)):
                await queue.put(body)
            for _ in tasks:
                await queue.put(None)
            await asyncio.gather(*tasks)
            return ok

    t0, c0, w0 = time.time(), time.process_time(), time.perf_counter()
    ok = asyncio.run(main())
    return {"t0": t0, "t1": time.time(), "wall": time.perf_counter() - w0, "cpu": time.process_time() - c0, "ok": ok}


def child_question(corpus: Path, work: Path, base: str, n: int) -> dict[str, Any]:
    """Client-side cost of Chrono-1000 questions, step by step (CPU time of this process)."""
    from interviewsim_core.llm.cache import SqliteCache, request_key
    from interviewsim_core.llm.gateway import Gateway
    from interviewsim_core.loader import load_corpus
    from interviewsim_core.pipeline import generation
    from interviewsim_core.pipeline.calls import run_calls
    from interviewsim_core.pipeline.storage import partition_path, write_frame
    from interviewsim_core.split import split_personality

    os.environ[KEY_ENV] = "bench"
    splits = [split_personality(d) for d in load_corpus(corpus)]
    split = min(splits, key=lambda s: abs(len(s.train_pairs) - 1044))
    model = _model(base, 64)
    cpu = time.process_time
    t = cpu()
    everything = generation.plan_generations(split, "chrono-1000", model)
    t_plan = (cpu() - t) / len(split.test_pairs)  # plan_generations builds every question's prompt
    planned, warm = everything[:n], everything[n:n + 2]
    size = sum(len(m["content"]) for m in planned[0].request.messages)
    t = cpu()
    for p in planned:
        # The key the gateway looks up; it is remembered on the request, so "send" does not pay it again.
        request_key(model, p.request)
    t_key = (cpu() - t) / len(planned)
    gw = Gateway(cache=SqliteCache(work / "question.sqlite"))
    run_calls(gw, warm)  # first calls pay one-off imports (litellm's response types, pydantic schemas)
    t = cpu()
    results = run_calls(gw, planned)
    t_send = (cpu() - t) / len(planned)
    t = cpu()
    df = generation.assemble_generations(planned, results)
    t_parse = (cpu() - t) / len(planned)
    t = cpu()
    write_frame(df, "generations", partition_path(work / "question_out", "generations", split.personality_id,
                                                  "chrono-1000"))
    t_write = (cpu() - t) / len(planned)
    ok = sum(r.status == "ok" for r in results.values())
    return {"personality": split.personality_id, "train_pairs": len(split.train_pairs), "prompt_chars": size,
            "n": len(planned), "ok": ok, "ms": {"prompt building": 1000 * t_plan, "cache key": 1000 * t_key,
                                                 "send (gateway + SQLite cache)": 1000 * t_send,
                                                 "parse (assemble rows)": 1000 * t_parse, "write Parquet": 1000 * t_write}}


def _spawn(mode: str, **kw: Any) -> dict[str, Any]:
    args = [sys.executable, "-m", "benchmarks.bench_scale", "--child", mode]
    for k, v in kw.items():
        if v is not None:
            args += [f"--{k.replace('_', '-')}", str(v)]
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONWARNINGS": "ignore", KEY_ENV: "bench"})
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} child failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- measurements ------------------------------------------------------------------------------------

def disk_bytes(root: Path) -> dict[str, int]:
    """Bytes on disk (allocated blocks) under ``root``: the model-call cache and the Parquet tables."""
    out = {"cache": 0, "parquet": 0, "other": 0}
    for p in root.rglob("*"):
        if not p.is_file():
            continue
        size = p.stat().st_blocks * 512
        if ".cache" in p.relative_to(root).parts:
            out["cache"] += size
        elif p.suffix == ".parquet":
            out["parquet"] += size
        else:
            out["other"] += size
    return out


def cache_breakdown(root: Path) -> str:
    """Where the model-call cache's bytes go (SQLite pages per table), to show what a call costs."""
    from interviewsim_core.llm.cache import SqliteCache

    path = root / ".cache" / "llm.sqlite"
    if not path.is_file():
        return "no SQLite cache"
    cache = SqliteCache(path)
    try:
        st = cache.storage()
    finally:
        cache.close()
    mb = lambda *names: sum(st.get(f"bytes:{n}", 0) for n in names) / 1e6  # noqa: E731
    rows = "calls", "sqlite_autoindex_calls_1"
    prompts = "packs", "packed", "loose", "blobs"
    other = sum(v for k, v in st.items() if k.startswith("bytes:")) / 1e6 - mb(*rows) - mb(*prompts)
    return (f"cache file: {st['calls']} call rows (answers, tokens, cost, prompt recipes, keys) {mb(*rows):.2f} MB, "
            f"prompt chunks {mb(*prompts):.2f} MB (zstd packs: {st['packs']}, chunks not yet packed: {st['loose']}), "
            f"other tables {other:.2f} MB; other files under .cache "
            f"{(disk_bytes(root)['cache'] - path.stat().st_blocks * 512) / 1e6:.2f} MB")


def end_to_end(corpus: Path, work: Path, n_people: int, c: int, latency: float) -> dict[str, Any]:
    from benchmarks.scale_server import idle_seconds

    srv = Server(latency)
    bodies = work / "bodies.bin"
    try:
        print(f"server {srv.base} (own process, offline-model replies), L={latency * 1000:.0f} ms, C={c}, "
              f"ideal C/L = {c / latency:.0f} calls/s", flush=True)
        # Untimed pass at L=0: the server computes (and remembers) every offline-model reply.
        srv.cmd("latency 0")
        t = time.perf_counter()
        _spawn("run", corpus=corpus, data_root=work / "e2e_warm", base=srv.base, c=c, methods=METHODS)
        shutil.rmtree(work / "e2e_warm", ignore_errors=True)
        print(f"  (untimed pass filling the server's reply memory: {time.perf_counter() - t:.0f} s)", flush=True)
        srv.cmd(f"latency {latency}")
        srv.cmd("reset")
        cpu0 = srv.cmd("stats")["cpu"]
        srv.cmd(f"record {bodies}")
        run = _spawn("run", corpus=corpus, data_root=work / "e2e", base=srv.base, c=c, methods=METHODS)
        st = srv.cmd("stats")
        srv.cmd("record -")
        if st["memo_hits"] < st["chat"]:
            print(f"  note: {st['chat'] - st['memo_hits']} of {st['chat']} replies were not remembered from the "
                  f"untimed pass (prompts differ between runs?): the server computed them in the timed pass")
        calls = st["chat"]
        idle, long_gaps = idle_seconds(st, run["t0"], run["t1"])
        srv.cmd("reset")
        raw = _spawn("httpx", bodies=bodies, base=srv.base, c=c)
        raw_st = srv.cmd("stats")
        raw_idle, _ = idle_seconds(raw_st, raw["t0"], raw["t1"])
        server_ms = (1000 * (st["cpu"] - cpu0) / calls, 1000 * (raw_st["cpu"] - st["cpu"]) / max(1, raw_st["chat"]))
    finally:
        srv.close()
        bodies.unlink(missing_ok=True)
    disk = disk_bytes(work / "e2e")
    rate, raw_rate = calls / run["wall"], raw["ok"] / raw["wall"]
    ratio = rate / raw_rate
    per_call = (disk["cache"] + disk["parquet"]) / calls
    print(f"end to end, {n_people} personalities, methods {METHODS}, 1 judge, one run:")
    print(f"  pipeline   {calls:7d} calls in {run['wall']:7.1f} s = {rate:7.1f} calls/s   "
          f"CPU {1000 * run['cpu'] / calls:6.2f} ms/call   no call in flight {idle:6.1f} s "
          f"({100 * idle / run['wall']:4.1f}% of wall)   peak RSS {run['peak_rss_mb']:.0f} MB")
    print(f"  raw httpx  {raw['ok']:7d} calls in {raw['wall']:7.1f} s = {raw_rate:7.1f} calls/s   "
          f"CPU {1000 * raw['cpu'] / max(1, raw['ok']):6.2f} ms/call   no call in flight {raw_idle:6.1f} s "
          f"(same bodies, same server)")
    print(f"  server CPU per call (own process): pipeline pass {server_ms[0]:.2f} ms, raw pass {server_ms[1]:.2f} ms; "
          f"mean request body {st['bytes_in'] / calls / 1000:.1f} KB")
    if long_gaps:
        shown = ", ".join(f"{d:.1f} s at +{a:.0f} s" for a, d in sorted(long_gaps, key=lambda g: -g[1])[:5])
        print(f"  longest gaps with no call in flight: {shown}")
    print(f"  throughput ratio pipeline / raw httpx = {ratio:5.2f}   target >= {TARGETS['ratio']:.2f}   "
          f"{verdict(ratio >= TARGETS['ratio'])}")
    print(f"  storage: cache {disk['cache'] / 1e6:8.1f} MB + Parquet {disk['parquet'] / 1e6:6.1f} MB "
          f"(+ {disk['other'] / 1e6:.1f} MB other) = {per_call / 1000:6.2f} KB/call   target <= "
          f"{TARGETS['storage'] / 1000:.2f} KB/call (1/10 of {BEFORE_BYTES_PER_CALL / 1000:.1f})   ratio "
          f"{per_call / BEFORE_BYTES_PER_CALL:5.3f} of before   {verdict(per_call <= TARGETS['storage'])}")
    print(f"  {cache_breakdown(work / 'e2e')}")
    questions = run["rows"].get("generations", 0) // max(1, len(METHODS.split(",")))
    return {"calls": calls, "wall": run["wall"], "cpu_ms": 1000 * run["cpu"] / calls, "rate": rate,
            "raw_rate": raw_rate, "ratio": ratio, "idle_share": idle / run["wall"], "bytes_per_call": per_call,
            "questions": questions, "peak_rss_mb": run["peak_rss_mb"]}


def question_cost(corpus: Path, work: Path, n: int) -> dict[str, Any]:
    srv = Server(0.0)
    try:
        q = _spawn("question", corpus=corpus, work=work, base=srv.base, n=n)
    finally:
        srv.close()
    total = sum(q["ms"].values())
    print(f"one Chrono-1000 question ({q['personality']}, {q['train_pairs']} training pairs, prompt "
          f"{q['prompt_chars'] / 1000:.0f} KB, {q['ok']}/{q['n']} ok), client CPU ms per call:")
    for k, v in q["ms"].items():
        print(f"  {k:<32} {v:8.2f}")
    print(f"  {'total client-side overhead':<32} {total:8.2f}   target < {TARGETS['question_ms']:.0f}   "
          f"{verdict(total < TARGETS['question_ms'])}")
    return {"total_ms": total, **q}


def projection(e2e: dict[str, Any], c: int, latency: float) -> None:
    calls = PAPER["calls"]
    cpu_h = calls * e2e["cpu_ms"] / 1000 / 3600
    ideal = c / latency
    cpu_cap = 1000 / e2e["cpu_ms"]  # one client process is one core of Python
    rate = min(ideal * e2e["rate"] / (e2e["raw_rate"] or ideal), cpu_cap)
    per_qm = e2e["calls"] / max(1, e2e["questions"] * len(METHODS.split(",")))
    print(f"projection to the paper's run ({PAPER['personalities']} personalities, {PAPER['questions']:,} questions, "
          f"{PAPER['methods']} methods, {PAPER['judges']} judges, ~{calls / 1e6:.0f}M calls; this run made "
          f"{per_qm:.2f} calls per question x method with 1 judge) at C={c}, L={latency * 1000:.0f} ms:")
    print(f"  calls {calls:,}   client CPU {cpu_h:6.1f} h ({e2e['cpu_ms']:.2f} ms/call)   "
          f"disk {calls * e2e['bytes_per_call'] / 1e9:7.1f} GB ({e2e['bytes_per_call'] / 1000:.2f} KB/call)")
    print(f"  wall {calls / rate / 3600:6.1f} h at {rate:.0f} calls/s (measured ratio to raw httpx x C/L, capped at "
          f"{cpu_cap:.0f} calls/s by client CPU); ideal C/L: {calls / ideal / 3600:.1f} h")


def memory(sizes: tuple[int, int], work: Path, methods: str, seed: int) -> None:
    from benchmarks.scale_corpus import generate_corpus

    peaks = []
    for n in sizes:
        corpus = work / f"corpus_mem_{n}"
        generate_corpus(corpus, n, seed)
        r = _spawn("run", corpus=corpus, data_root=work / f"mem_{n}", c=64, methods=methods)
        peaks.append(r["peak_rss_mb"])
        print(f"  {n:4d} personalities: peak RSS {r['peak_rss_mb']:7.0f} MB   run {r['wall']:6.1f} s   "
              f"{r['rows'].get('generations', 0)} generations", flush=True)
        tl = r["timeline"]
        if tl:
            marks = ", ".join(f"{k}: {rss:.0f}" for k, rss, _ in (tl[0], tl[len(tl) // 2], tl[-1]))
            print(f"        RSS as personalities finish ({marks} MB); peak until the last one {tl[-1][2]:.0f} MB, "
                  f"the rest is the leaderboard and the report (which reads the tables back)", flush=True)
        shutil.rmtree(work / f"mem_{n}", ignore_errors=True)
    ratio = peaks[1] / peaks[0]
    growth = (peaks[1] - peaks[0]) / (sizes[1] - sizes[0])
    print(f"  peak RSS {sizes[1]} / {sizes[0]} personalities = {ratio:5.2f}x   target <= {TARGETS['memory']:.1f}x   "
          f"{verdict(ratio <= TARGETS['memory'])}   ({growth:.1f} MB more per personality; at the paper's "
          f"{PAPER['personalities']} personalities ~{(peaks[0] + growth * (PAPER['personalities'] - sizes[0])) / 1000:.1f} GB)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes: 2 personalities end to end, memory 2 vs 8")
    ap.add_argument("--personalities", type=int, default=None,
                    help="end-to-end corpus size (default 20, the issue's)")
    ap.add_argument("--memory-sizes", default=None, help="small,large (default 20,80, the issue's)")
    ap.add_argument("--memory-methods", default="simple", help="methods of the memory runs (default simple)")
    ap.add_argument("--c", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--questions", type=int, default=20, help="Chrono-1000 questions timed")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-e2e", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    ap.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    ap.add_argument("--child", choices=("run", "httpx", "question"), help=argparse.SUPPRESS)
    for hidden in ("corpus", "data-root", "base", "methods", "bodies", "work"):
        ap.add_argument(f"--{hidden}", help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--builder-reasks", type=int, help=argparse.SUPPRESS)
    a = ap.parse_args(argv if argv is not None else [])
    if a.child == "run":
        print(json.dumps(child_run(Path(a.corpus), Path(a.data_root), a.base, a.c, a.methods, a.builder_reasks)))
        return
    if a.child == "httpx":
        print(json.dumps(child_httpx(Path(a.bodies), a.base, a.c)))
        return
    if a.child == "question":
        print(json.dumps(child_question(Path(a.corpus), Path(a.work), a.base, a.n)))
        return

    from benchmarks.scale_corpus import generate_corpus

    n_people = a.personalities or (2 if a.quick else 20)
    sizes = tuple(int(x) for x in (a.memory_sizes or ("2,8" if a.quick else "20,80")).split(","))
    work = a.keep or Path(tempfile.mkdtemp(prefix="bench_scale_"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        corpus = work / f"corpus_{n_people}"
        if not a.skip_e2e:
            st = generate_corpus(corpus, n_people, a.seed)
            print(f"scale corpus: {st.personalities} personalities, {st.interviews} interviews, {st.pairs} QA pairs "
                  f"({sum(st.test_pairs.values())} held out), seed {a.seed}", flush=True)
            e2e = end_to_end(corpus, work, n_people, a.c, a.latency)
            # The Chrono-1000 question needs a personality of ~1,044 training pairs: the 20-corpus has one.
            qcorpus = corpus if n_people >= 20 else work / "corpus_20"
            if qcorpus != corpus:
                generate_corpus(qcorpus, 20, a.seed)
            question_cost(qcorpus, work, a.questions)
            projection(e2e, a.c, a.latency)
        if not a.skip_memory:
            print(f"memory, methods {a.memory_methods}, offline model, each size in its own process:", flush=True)
            memory((sizes[0], sizes[1]), work, a.memory_methods, a.seed)
    finally:
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
