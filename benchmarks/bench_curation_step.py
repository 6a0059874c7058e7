"""The curation as the graph's steps (``transcript_turns`` .. ``prepared_input``, ``curation/step.py``) against
the batched ``curate``.

Each step rebuilds a personality's state from the tables of the steps before it and writes its own table
(Parquet), so the graph's scheduler sends every call; this measures what that costs. On the synthetic sample's raw
transcripts (``interviewsim sample-transcripts``: 60 interviews in four formats), offline model through
the gateway, each way with its own fresh cache: a first run and a re-run (every call from the cache),
wall and CPU seconds (after one untimed warm-up curation), and whether both wrote the same documents (they
must).

Usage: ``python -m benchmarks.bench_curation_step``.
"""

from __future__ import annotations

import filecmp
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    import litellm  # noqa: F401 - imported once before timing: its import is not the curation's cost

    from interviewsim_core.curation.ingest import _ingest_cached
    from interviewsim_core.curation.run import curate
    from interviewsim_core.curation.sample_transcripts import write_sample_transcripts
    from interviewsim_core.curation.stage import curation_model
    from interviewsim_core.curation.step import curation_personalities
    from interviewsim_core.factories import make_gateway
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import cells_of, run_steps
    from interviewsim_core.pipeline.steps import BY_NAME, CURATION_STEPS

    def no_split(pid):
        raise RuntimeError(pid)

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        manifest = write_sample_transcripts(t / "raw")
        pids: list[str] = []
        warm = EvalConfig(corpus=t / "warm", transcripts=t / "raw", manifest=manifest, cache_path=t / "warm.sqlite")
        with make_gateway(warm) as gw:  # untimed: the first calls' lazy imports are neither way's cost
            curate(warm.transcripts, warm.manifest, gw, curation_model(warm), out=warm.corpus)
        for way in ("graph", "batched"):
            cfg = EvalConfig(corpus=t / way, data_root=t / f"data_{way}", transcripts=t / "raw", manifest=manifest,
                             cache_path=t / f"{way}.sqlite")
            pids = curation_personalities(cfg)
            _ingest_cached.cache_clear()  # each way parses the files itself (the warm-up parsed them too)
            for attempt in ("first run", "re-run"):
                wall, cpu = time.perf_counter(), time.process_time()
                with make_gateway(cfg) as gw:
                    if way == "batched":
                        curate(cfg.transcripts, cfg.manifest, gw, curation_model(cfg), out=cfg.corpus)
                    else:
                        run_steps(cfg, {n: cells_of(BY_NAME[n], pids, []) for n in CURATION_STEPS}, no_split,
                                  pids, [], gateway=gw, keep=())
                print(f"{way:8s} {attempt:9s}: {time.perf_counter() - wall:5.1f} s wall, "
                      f"{time.process_time() - cpu:5.1f} s CPU ({len(pids)} personalities)")
        same = all(filecmp.cmp(t / "graph" / p / "prepared_input.json", t / "batched" / p / "prepared_input.json",
                               shallow=False) for p in pids)
        print(f"documents identical: {same}")
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
