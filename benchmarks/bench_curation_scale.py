"""Curation at scale (issue 31): planning CPU per planned call at 1,000 personalities x 23 transcripts, and
offline curation time and memory per transcript at three sizes (linear in the transcripts?).

The transcripts are synthetic and fictional: pseudo-word text from ``scale_corpus`` (the paper's
question and response lengths), one person and one interviewer per transcript, rendered by the
sample's own writers (``curation.sample_transcripts.render``) in the four formats in turn (plain
text with a heading and a stage direction, WebVTT and SRT with voice tags, diarised JSON with
``SPEAKER_00``/``SPEAKER_01``: those go to the model for attribution), with a manifest and profile
texts. ``--pairs`` sets the QA pairs per transcript (default 8; the paper averages 28.5): the CPU per
call and per transcript grow with a transcript's length, so say the pairs with any figure.

Measured, each in its own process (CPU of that process, peak RSS from ``wait4``):

- planning: ``plan.plan_curation_of`` on an ``EvalConfig`` naming the transcripts and
  manifest, exactly what ``interviewsim plan --transcripts ... --manifest ...`` calls (imports done
  before the clock, as ``bench_plan``; the process's whole CPU, start-up included, is printed too).
  Target: at most 1 ms CPU per planned call.
- curation: ``curation.run.curate`` offline (the offline model through the gateway, fresh cache,
  writing the corpus), at three sizes: wall and CPU time, and peak-RSS growth (peak RSS minus the
  peak after imports and a warm-up curation of one personality) per transcript; the per-transcript figure
  at the largest size over the smallest size's (target <= 1.5: linear in the transcripts, or better).
  CPU and memory are judged; wall time is printed (the machine is shared).

Usage: ``python -m benchmarks.bench_curation_scale [--quick] [--personalities 1000] [--sizes 25,50,100]
[--pairs 8] [--keep DIR]``. ``--quick``: 50 personalities planned, curation at 2, 4, 8.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
TRANSCRIPTS_PER_PERSONALITY = 23
PLAN_TARGET_MS = 1.0
LINEAR_TARGET = 1.5


def _name(rng: random.Random, index: int) -> str:
    """A fictional two-word name, unique per index (the surname spells the index in syllables)."""
    syl = ("ba", "de", "ki", "lo", "mu", "ne", "ri", "so", "ta", "vu")
    first = "".join(rng.choice(syl) for _ in range(2)).capitalize()
    last = "".join(syl[int(d)] for d in f"{index:04d}").capitalize()
    return f"{first} {last}"


def write_transcripts(out: Path, personalities: int, pairs: int, seed: int = 0) -> Path:
    """``personalities`` x 23 raw transcripts under ``out`` plus ``manifest.json``; returns the manifest."""
    import datetime as dt

    from benchmarks.scale_corpus import QUESTION_WORDS, RESPONSE_WORDS, _Writer
    from interviewsim_core.curation.sample_transcripts import EXTENSIONS, FORMATS, INTERVIEWER, render

    rows = []
    w = _Writer(random.Random(seed))  # one vocabulary (building it is the slow part), one seeded stream
    rng = w.rng
    for i in range(personalities):
        person, pid = _name(rng, i), f"SCALE_{i:04d}"
        folder = out / pid
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "profile.txt").write_text(f"{person} is {w.text(60)}", encoding="utf-8")
        for j in range(TRANSCRIPTS_PER_PERSONALITY):
            fmt = FORMATS[(i + j) % len(FORMATS)]
            turns = []
            for _ in range(pairs):
                turns += [(INTERVIEWER, w.text(w.words(QUESTION_WORDS, 4, 60), end="?")),
                          (person, w.text(w.words(RESPONSE_WORDS, 8, 300)).replace("?", "."))]  # the person asks nothing
            rel = f"{pid}/interview_{j:02d}.{EXTENSIONS[fmt]}"
            (out / rel).write_text(render(fmt, person, turns, f"interview {j}"), encoding="utf-8")
            rows.append({"file": rel, "personality_id": pid, "person_name": person,
                         "date": (dt.date(2000, 1, 1) + dt.timedelta(days=7 * j)).isoformat(),
                         "profile_file": f"{pid}/profile.txt"})
    manifest = out / "manifest.json"
    manifest.write_text(json.dumps(rows), encoding="utf-8")
    return manifest


def _warm_up() -> None:
    """Imports the measured code needs, before any clock starts (the CLI has them by then too)."""
    from interviewsim_core.llm.transport import litellm_module

    litellm_module()
    import interviewsim_core.curation.plan  # noqa: F401
    import interviewsim_core.offline  # noqa: F401
    import interviewsim_core.planning.tokens  # noqa: F401


def worker(which: str, folder: str, manifest: str, work: str) -> None:
    """One measurement in a child process; prints its figures as JSON on the last line."""
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import OFFLINE_MODEL, EvalConfig

    _warm_up()
    base_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if which == "plan":
        from interviewsim_core.plan import plan_curation_of

        cfg = EvalConfig(transcripts=folder, manifest=manifest, corpus=Path(work) / "corpus", builder=ModelConfig(model=OFFLINE_MODEL),
                         cache_path=Path(work) / "cache.sqlite").resolved()
        t0 = time.process_time()
        planned = plan_curation_of(cfg)
        cpu = time.process_time() - t0
        print(json.dumps({"calls": planned.totals()["calls"], "cpu_s": cpu, "base_rss_mb": base_rss_mb}))
        return
    from interviewsim_core.curation.run import curate
    from interviewsim_core.factories import gateway_at

    # Warm-up: curate the first personality once (first-call costs: the offline model's provider, the
    # tokenizer, lazily built tables), so the memory baseline and the clock see only per-transcript work.
    rows = json.loads(Path(manifest).read_text(encoding="utf-8"))
    warm = Path(work) / "warm_manifest.json"
    warm.write_text(json.dumps([r for r in rows if r["personality_id"] == rows[0]["personality_id"]]), encoding="utf-8")
    with gateway_at(Path(work) / "warm" / ".curation_cache.sqlite") as gw:
        curate(folder, warm, gw, ModelConfig(model=OFFLINE_MODEL), out=Path(work) / "warm")
    base_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = Path(work) / "corpus"
    with gateway_at(out / ".curation_cache.sqlite") as gw:
        t0, c0 = time.perf_counter(), time.process_time()
        outcome = curate(folder, manifest, gw, ModelConfig(model=OFFLINE_MODEL), out=out)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    if outcome.problems or outcome.refused:
        raise SystemExit(f"curation refused input: {outcome.refused} {[str(p) for p in outcome.problems[:5]]}")
    print(json.dumps({"transcripts": len(outcome.table()), "written": len(outcome.written), "calls": outcome.calls,
                      "wall_s": wall, "cpu_s": cpu, "base_rss_mb": base_rss_mb}))


def measure(which: str, folder: Path, manifest: Path) -> dict:
    """Run ``worker`` in a child; add its peak RSS and its whole CPU (start-up included) from ``wait4``."""
    with tempfile.TemporaryDirectory() as work:
        proc = subprocess.Popen([sys.executable, "-m", "benchmarks.bench_curation_scale", "--worker", which,
                                 str(folder), str(manifest), work], cwd=REPO, stdout=subprocess.PIPE, text=True)
        out = proc.stdout.read()  # type: ignore[union-attr]
        _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"bench_curation_scale: {which} on {folder} failed (exit {os.waitstatus_to_exitcode(status)})")
    res = json.loads(out.strip().splitlines()[-1])
    res["rss_mb"] = usage.ru_maxrss / 1024
    res["process_cpu_s"] = usage.ru_utime + usage.ru_stime
    return res


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="50 personalities planned; curation at 2, 4, 8")
    ap.add_argument("--personalities", type=int, default=None, help="personalities planned (default 1000)")
    ap.add_argument("--sizes", default=None, help="personalities curated, comma-separated (default 25,50,100)")
    ap.add_argument("--pairs", type=int, default=8, help="QA pairs per transcript")
    ap.add_argument("--keep", type=Path, default=None, help="reuse/keep the generated transcripts in this folder")
    ap.add_argument("--worker", nargs=4, metavar=("WHICH", "FOLDER", "MANIFEST", "WORK"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(*args.worker)
        return 0
    n_plan = args.personalities or (50 if args.quick else 1000)
    sizes = [int(s) for s in (args.sizes or ("2,4,8" if args.quick else "25,50,100")).split(",")]
    print(f"load average: {os.getloadavg()[0]:.1f} (2 cores shared; planning is measured in CPU time, curation "
          f"in wall time); {TRANSCRIPTS_PER_PERSONALITY} transcripts per personality, {args.pairs} QA pairs each")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp)

        def corpus(n: int) -> tuple[Path, Path]:
            folder = root / f"transcripts_{n}x{TRANSCRIPTS_PER_PERSONALITY}_{args.pairs}"
            if not (folder / "manifest.json").is_file():
                t0 = time.perf_counter()
                write_transcripts(folder, n, args.pairs)
                print(f"generated {n:,} x {TRANSCRIPTS_PER_PERSONALITY} transcripts in {time.perf_counter() - t0:.0f} s")
            return folder, folder / "manifest.json"

        p = measure("plan", *corpus(n_plan))
        per_call = 1000 * p["cpu_s"] / max(1, p["calls"])
        ok &= per_call <= PLAN_TARGET_MS
        print(f"plan, {n_plan:,} x {TRANSCRIPTS_PER_PERSONALITY} transcripts: {p['calls']:,} planned calls, "
              f"{p['cpu_s']:.1f} s CPU, {per_call:.3f} ms CPU per planned call (target <= {PLAN_TARGET_MS} ms, "
              f"ratio {per_call / PLAN_TARGET_MS:.2f}) {_verdict(per_call <= PLAN_TARGET_MS)}; whole process "
              f"{p['process_cpu_s']:.1f} s CPU with start-up ({1000 * p['process_cpu_s'] / max(1, p['calls']):.3f} "
              f"ms/call), peak {p['rss_mb']:.0f} MB")
        rows = []
        for n in sizes:
            r = measure("curate", *corpus(n))
            r["ms_per_t"] = 1000 * r["wall_s"] / r["transcripts"]
            r["cpu_ms_per_t"] = 1000 * r["cpu_s"] / r["transcripts"]
            r["kb_per_t"] = 1024 * max(0.0, r["rss_mb"] - r["base_rss_mb"]) / r["transcripts"]
            rows.append(r)
            print(f"curate offline, {n:>4} x {TRANSCRIPTS_PER_PERSONALITY} = {r['transcripts']:>5,} transcripts: "
                  f"{r['wall_s']:7.1f} s wall ({r['ms_per_t']:.1f} ms/transcript; CPU {r['cpu_ms_per_t']:.1f}), "
                  f"{r['calls']:,} calls, peak {r['rss_mb']:.0f} MB (+{r['rss_mb'] - r['base_rss_mb']:.0f} MB over "
                  f"imports: {r['kb_per_t']:.1f} KB/transcript), {r['written']} personalities written")
        for label, key in (("time (wall)", "ms_per_t"), ("time (CPU)", "cpu_ms_per_t"), ("memory growth", "kb_per_t")):
            figures = [r[key] for r in rows]
            # Linear (or better) in the transcripts: the per-transcript figure of the largest size is at most
            # LINEAR_TARGET times the smallest size's. A figure that falls with size (a fixed cost spread over
            # more transcripts) passes; the spread max/min is printed beside it.
            ratio = figures[-1] / max(figures[0], 1e-9)
            gated = key != "ms_per_t"  # wall time on a shared machine is printed, not judged (CPU is)
            ok &= ratio <= LINEAR_TARGET or not gated
            print(f"linearity of {label} per transcript: {sizes[-1]} vs {sizes[0]} personalities {ratio:.2f} (target <= "
                  f"{LINEAR_TARGET}; spread max/min {max(figures) / max(min(figures), 1e-9):.2f}) "
                  f"{_verdict(ratio <= LINEAR_TARGET) if gated else '(not judged: machine load)'}")
    print(f"bench_curation_scale {_verdict(ok)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
