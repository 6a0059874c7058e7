"""Run the evaluation graph (``steps.STEPS``) in one process, without Dagster.

Same steps, same tables, same Parquet layout as the Dagster assets, so it serves three uses: a
notebook user who wants results without a Dagster instance, the orchestration-overhead benchmark
(Dagster vs. this), and a reference the Dagster tests compare against.

The runner goes in waves. Compute steps run as soon as their inputs are done. Then every model
step that is ready, in every partition (personality x method), plans its calls, and all of them go
to the gateway as ONE batch (``run_calls``), which is what keeps the gateway busy: the per-model
concurrency limit is filled from every personality and method at once. A step with a further round
(the premise judge's pass 2) puts that round into the next wave's batch. Each finished partition is
written at once (atomically), so a killed run keeps what finished and resumes through the cache.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ConfigError
from ..factories import embedding_cache_dir, make_embedder, make_gateway
from ..loader import load_corpus
from ..split import HeldOutSplit, split_personality
from .calls import CallRunner, PlannedCall, run_calls
from .config import EvalConfig, check_retrieval_embedder
from .steps import Cell, Partitioning, Step, StepEnv, inputs_for, steps_for
from .storage import partition_path, write_frame
from .tables import KEY_COLUMNS, concat_table

TABLE_STEPS: tuple[str, ...] = tuple(s.name for s in steps_for(EvalConfig()) if not s.writes_files)
"""Tables ``run_evaluation`` returns under the default configuration, in dependency order."""


def load_splits(config: EvalConfig, personalities: Iterable[str] | None = None) -> dict[str, HeldOutSplit]:
    """Split every (or every selected) personality of the corpus, sorted by id.

    Raises:
        ConfigError: a selected personality is not in the corpus.
    """
    splits = {d.personality_id: split_personality(d) for d in load_corpus(config.corpus)}
    if personalities is not None:
        wanted = list(dict.fromkeys(personalities))
        unknown = [p for p in wanted if p not in splits]
        if unknown:
            raise ConfigError(f"personalities not in {config.corpus}: {unknown}; known: {sorted(splits)}")
        splits = {p: splits[p] for p in wanted}
    return dict(sorted(splits.items()))


def cells_of(step: Step, personalities: list[str], methods: list[str]) -> list[Cell]:
    if step.partitioning is Partitioning.NONE:
        return [Cell()]
    if step.partitioning is Partitioning.PERSONALITY:
        return [Cell(p) for p in personalities]
    return [Cell(p, m) for p in personalities for m in methods]


def write_partition(step: Step, cell: Cell, df: pd.DataFrame, root: Path) -> Path:
    """Write one partition (empty ones too, so a reader sees it ran); P x M partitions sorted by key."""
    if step.partitioning is Partitioning.PERSONALITY_METHOD:
        df = df.sort_values(list(KEY_COLUMNS[step.name]), kind="stable")
    return write_frame(df, step.name, partition_path(root, step.name, cell.personality, cell.method))


def run_evaluation(
    config: EvalConfig,
    gateway: CallRunner | None = None,
    personalities: Iterable[str] | None = None,
    methods: Iterable[str] | None = None,
    write: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Evaluate every selected personality x method and return each table, concatenated.

    Args:
        config: the run configuration (models, seed, data root, ...).
        gateway: defaults to the configured gateway (``factories.make_gateway``).
        personalities: ids to evaluate (default: the whole corpus).
        methods: method names (default: ``config.methods``).
        write: write each partition to ``<data_root>/<asset>/...parquet`` (atomically) as soon as it
            is done, and run the steps that write files of their own (the report).
        progress: called with one line per wave (e.g. ``print``).

    Returns:
        Step name -> table (every partition concatenated), in step order; file-writing steps excluded.
    """
    say = progress or (lambda _msg: None)
    method_names = [getattr(m, "name", m) for m in (methods if methods is not None else config.methods)]
    check_retrieval_embedder(config, method_names)  # before any corpus read or model call
    splits = load_splits(config, personalities)
    gw = gateway if gateway is not None else make_gateway(config)
    env = StepEnv(config, splits.__getitem__, embedder=lambda: make_embedder(config),
                  embedding_cache=_embedding_cache(config) if write else None)
    steps = [s for s in steps_for(config) if write or not s.writes_files]
    names = {s.name for s in steps}
    pids = list(splits)
    done: dict[str, dict[Cell, Any]] = {}
    inflight: dict[str, tuple[Step, dict[Cell, list[PlannedCall]], dict]] = {}  # calls and results so far
    pending = list(steps)
    wave = 0

    def ready() -> list[Step]:
        return [s for s in pending if all(i.step in done for i in s.inputs if i.step in names)]

    def finish(step: Step, frames: dict[Cell, Any]) -> None:
        done[step.name] = frames
        if write and not step.writes_files:
            for cell, df in frames.items():
                write_partition(step, cell, df, config.data_root)

    def assemble(name: str) -> None:
        step, calls, results = inflight.pop(name)
        finish(step, {c: step.assemble(env, c, planned, results) for c, planned in calls.items()})

    while pending or inflight:
        while computable := [s for s in ready() if s.compute is not None]:
            for step in computable:
                finish(step, {c: step.compute(env, c, inputs_for(step, c, done))
                              for c in cells_of(step, pids, method_names)})
                pending.remove(step)
        new: dict[str, dict[Cell, list[PlannedCall]]] = {}
        for name, (step, calls, results) in list(inflight.items()):  # a further round, or done
            more = {c: step.replan(env, c, planned, results) for c, planned in calls.items()} if step.replan else {}
            if any(more.values()):
                new[name] = more
            else:
                assemble(name)
        for step in [s for s in ready() if s.plan is not None]:
            new[step.name] = {c: step.plan(env, c, inputs_for(step, c, done))
                              for c in cells_of(step, pids, method_names)}
            inflight[step.name] = (step, {c: [] for c in new[step.name]}, {})
            pending.remove(step)
        if not new:
            if pending and not ready() and not inflight:
                raise RuntimeError(f"steps waiting on inputs that never run: {[s.name for s in pending]}")
            continue
        wave += 1
        batch = [p for by_cell in new.values() for planned in by_cell.values() for p in planned]
        say(f"wave {wave}: {len(batch)} model calls for {', '.join(new)}")
        results = run_calls(gw, batch)
        for name, by_cell in new.items():
            step, calls, so_far = inflight[name]
            for c, planned in by_cell.items():
                calls[c].extend(planned)
                so_far.update((p.key, results[p.key]) for p in planned)
            if step.replan is None:
                assemble(name)
    tables = {s.name: concat_table(s.name, done[s.name].values()) for s in steps if not s.writes_files}
    if write:
        say(f"wrote the tables under {config.data_root}")
    return tables


def _embedding_cache(config: EvalConfig):
    from ..embeddings import EmbeddingCache

    return EmbeddingCache(embedding_cache_dir(config))

