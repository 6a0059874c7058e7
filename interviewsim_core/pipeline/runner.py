"""Run the evaluation graph (``steps.STEPS``) in one process, without Dagster.

Same steps, same tables, same Parquet layout as the Dagster assets, so it serves three uses: a
notebook user who wants results without a Dagster instance, the scale and orchestration benchmarks
(Dagster vs. this), and a reference the Dagster tests compare against.

The unit of work is a **node**: one partition (``Cell``) of one step. A node is ready when the
partitions it reads are done (per input mapping: the same partition, its personality's, or all),
so nothing waits for a whole step to finish everywhere: a personality's judges start as soon as
*its* generations are in, while other personalities are still generating.

Two ways to run the model calls, chosen from what the gateway can do:

* **streaming** (a gateway with ``submit_many``, i.e. ``llm.gateway.Gateway`` without batch-mode
  models): each ready model node's calls are submitted at once, as their own batch, and the runner
  goes on planning the next ready nodes while they are in flight; when a batch completes, its node
  is assembled, written and its dependents become ready. All batches share the gateway's
  per-endpoint concurrency bound, so the provider is kept at its limit across steps and
  personalities (measured in ``benchmarks/bench_scale.py``). Personalities are admitted in id
  order, a few at a time: a new one starts only when the calls queued for the active ones would no
  longer keep the provider busy, or when one finishes. What a personality holds (its split,
  retrieval embeddings, planned prompts, tables no later node reads) is released when it is done,
  so memory follows the window, not the corpus.
* **waves** (any other ``CallRunner``: the cost planner's costing gateway, batch mode, test
  doubles): every ready model node of every personality plans its calls and they go to
  ``run_many`` as ONE batch; the results make the next nodes ready. Batch mode needs this: one
  provider batch for everything rather than one per partition.

Either way each finished partition is written at once (atomically), so a killed run keeps what
finished and resumes through the cache.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from ..errors import ConfigError
from ..factories import embedding_cache_dir, make_embedder, make_gateway
from ..id_lists import summarise_ids
from ..loader import index_corpus, load_corpus, load_document
from ..split import HeldOutSplit, split_personality
from ..llm.cache import in_batches
from .calls import CallRunner, PlannedCall, check_unique_keys, failed_result, run_calls
from .config import EvalConfig, check_retrieval_embedder
from .progress import progress_line as _progress_line
from .steps import BY_NAME, Cell, Input, InputMapping, Partitioning, Step, StepEnv, inputs_for, steps_for
from .storage import partition_path, read_frame, read_joined, write_table
from ..dataroot import exists
from .tables import KEY_COLUMNS, concat_table

TABLE_STEPS: tuple[str, ...] = tuple(s.name for s in steps_for(EvalConfig()) if not s.writes_files)
"""Tables ``run_evaluation`` returns under the default configuration, in dependency order."""

BACKLOG_PER_SLOT = 2
"""Streaming: admit another personality while fewer than this many calls per concurrency slot are
queued. Two per slot keeps every slot refilled while the runner plans the next node (one
personality's generation step alone queues hundreds of calls), without holding more personalities
in memory than that needs."""


def load_split(path: str | Path) -> HeldOutSplit:
    """One personality's held-out split, from its document: what the schedulers' ``load_split`` reads."""
    return split_personality(load_document(path))


def load_splits(config: EvalConfig, personalities: Iterable[str] | None = None) -> dict[str, HeldOutSplit]:
    """Split every (or every selected) personality of the corpus, sorted by id.

    Raises:
        ConfigError: a selected personality is not in the corpus.
    """
    splits = {d.personality_id: split_personality(d) for d in load_corpus(config.corpus)}
    return {p: splits[p] for p in _select(config, splits, personalities)}


def _select(config: EvalConfig, known: Iterable[str], personalities: Iterable[str] | None) -> list[str]:
    known = set(known)
    if personalities is None:
        return sorted(known)
    wanted = list(dict.fromkeys(personalities))
    unknown = [p for p in wanted if p not in known]
    if unknown:
        raise ConfigError(f"personalities not in {config.corpus}: {unknown}; known: {sorted(known)}")
    return sorted(wanted)


def cells_of(step: Step, personalities: list[str], methods: list[str]) -> list[Cell]:
    if step.partitioning is Partitioning.NONE:
        return [Cell()]
    if step.partitioning is Partitioning.PERSONALITY:
        return [Cell(p) for p in personalities]
    return [Cell(p, m) for p in personalities for m in methods]


def write_partition(step: Step, cell: Cell, df: pd.DataFrame, root: Path) -> pa.Table:
    """Write one partition (empty ones too, so a reader sees it ran); P x M partitions sorted by key. Returns the
    table as written (``storage.write_table``)."""
    keys = KEY_COLUMNS[step.name] if step.partitioning is Partitioning.PERSONALITY_METHOD else ()
    return write_table(df, step.name, partition_path(root, step.name, cell.personality, cell.method), sort_by=keys)


def upstream_cells(step: Step, cell: Cell, up: Step, mapping: InputMapping, personalities: list[str],
                   methods: list[str]) -> list[Cell]:
    """The partitions of ``up`` that partition ``cell`` of ``step`` reads (``steps`` module doc)."""
    if mapping is InputMapping.ALL or up.partitioning is Partitioning.NONE:
        return cells_of(up, personalities, methods)
    if mapping is InputMapping.SAME:
        return [cell]
    if up.partitioning is Partitioning.PERSONALITY:
        return [Cell(cell.personality)]
    return [Cell(cell.personality, m) for m in methods]


def stored_inputs(config: EvalConfig, step: Step, cell: Cell, personalities: list[str],
                  methods: list[str]) -> dict[str, Any]:
    """The inputs of ``cell`` of ``step`` as written under the data root, for a reader that did not make them
    (the recording of a partition another process made: ``interviewsim_dagster.engine``).

    Raises:
        FileNotFoundError: an input the step requires is not written (an optional one is left out).
    """
    frames: dict[str, dict[Cell, Any]] = {}
    for inp in step.inputs:
        if not inp.load:
            continue
        got = frames.setdefault(inp.step, {})
        ups = upstream_cells(step, cell, BY_NAME[inp.step], inp.mapping, personalities, methods)
        if inp.mapping is InputMapping.ALL:  # thousands of files: read joined (``read_joined``)
            paths = {up: partition_path(config.data_root, inp.step, up.personality, up.method) for up in ups}
            present = [up for up in ups if exists(paths[up])]
            if len(present) < len(ups) and not inp.allow_missing:
                raise not_materialised(step, inp.step, next(up for up in ups if up not in present))
            if present:
                got[present[0]] = read_joined([paths[up] for up in present])
            continue
        for up in ups:
            value = read_partition(config, inp.step, up)
            if value is not MISSING:
                got[up] = value
            elif not inp.allow_missing:
                raise not_materialised(step, inp.step, up)
    return inputs_for(step, cell, frames)


MISSING = object()
"""A partition read but not on disk (a method not run yet): ``read_partition``."""
ON_DISK = object()
"""A partition this run wrote and only unpartitioned steps still read: not held in memory, its file is read
back as an Arrow table when they run. Holding the pandas frames of every ``method_scores`` partition until the
leaderboard (about 30 KB each) grew the runner by about 330 MB at 1,000 personalities (issue 43)."""


def read_partition(config: EvalConfig, name: str, cell: Cell) -> Any:
    """Partition ``cell`` of step ``name`` as written under the data root, or ``MISSING``."""
    path = partition_path(config.data_root, name, cell.personality, cell.method)
    return read_frame(path) if exists(path) else MISSING


def not_materialised(step: Step, name: str, cell: Cell) -> FileNotFoundError:
    """The error of ``step`` reading partition ``cell`` of ``name``, which is required and not written."""
    where = "/".join(v for v in cell if v) or "(unpartitioned)"
    return FileNotFoundError(f"{step.name} reads {name} {where}, which is not materialised: materialise {name} "
                             "for it first")


Node = tuple[str, Cell]


@dataclass
class _Graph:
    """Every node of the run, its unfinished inputs, who reads it, and how many readers are left."""

    steps: dict[str, Step]
    order: list[Node] = field(default_factory=list)
    waiting: dict[Node, int] = field(default_factory=dict)
    readers: dict[Node, list[Node]] = field(default_factory=lambda: defaultdict(list))
    reads: dict[Node, list[Node]] = field(default_factory=dict)
    left: dict[Node, int] = field(default_factory=dict)
    """Readers not finished yet (+1 while the table is kept for the caller): 0 frees the table."""
    external: set[Node] = field(default_factory=set)
    """Partitions read but not made by this run: loaded from the data root (absent: ``MISSING``)."""
    global_readers: dict[Node, int] = field(default_factory=lambda: defaultdict(int))
    """Readers of a node that are unpartitioned steps (the leaderboard reads every ``method_scores``): once only
    they are left, a written table is dropped from memory and read back from its file (``ON_DISK``), which such a
    step reads through an ALL input (``_Run._join_read``), the only way it reads a partitioned step."""

    @classmethod
    def build(cls, steps: list[Step], run: dict[str, list[Cell]], personalities: list[str], methods: list[str],
              keep: set[str]) -> "_Graph":
        """Nodes for the ``run`` cells of each step; partitions they read that the run does not make
        are *external*: read from the data root when first needed (a Dagster run over one stage)."""
        g = cls({s.name: s for s in steps})
        running = {(name, c) for name, cs in run.items() for c in cs}
        for s in steps:
            for c in run.get(s.name, ()):
                node = (s.name, c)
                ups = [(i.step, u) for i in s.inputs if i.step in g.steps
                       for u in upstream_cells(s, c, g.steps[i.step], i.mapping, personalities, methods)]
                ups = list(dict.fromkeys(ups))
                g.order.append(node)
                g.reads[node] = ups
                g.waiting[node] = 0
                g.left[node] = int(s.name in keep)
                for u in ups:
                    if u not in running:
                        g.external.add(u)
                    else:
                        g.readers[u].append(node)
                        g.waiting[node] += 1
                        g.global_readers[u] += s.partitioning is Partitioning.NONE
                    g.left[u] = g.left.get(u, 0) + 1
        return g


def run_evaluation(
    config: EvalConfig,
    gateway: CallRunner | None = None,
    personalities: Iterable[str] | None = None,
    methods: Iterable[str] | None = None,
    write: bool = True,
    progress: Callable[[str], None] | None = None,
    keep: Iterable[str] | None = None,
) -> dict[str, pd.DataFrame]:
    """Evaluate every selected personality x method and return the kept tables, concatenated.

    Args:
        config: the run configuration (models, seed, data root, ...).
        gateway: defaults to the configured gateway (``factories.make_gateway``).
        personalities: ids to evaluate (default: the whole corpus).
        methods: method names (default: ``config.methods``).
        write: write each partition to ``<data_root>/<asset>/...parquet`` (atomically) as soon as it
            is done, and run the steps that write files of their own (the report).
        progress: called with one line per wave, or per finished personality when streaming.
        keep: the tables to hold in memory and return (default: every table). At scale pass only
            what you need (e.g. ``("leaderboard",)``, or ``()`` and read the Parquet files): every
            other table is freed as soon as no later step reads it, so memory does not grow with
            the corpus.

    Returns:
        Step name -> table (every partition concatenated in personality, method order), in step
        order; file-writing steps and tables not in ``keep`` excluded.
    """
    method_names = [getattr(m, "name", m) for m in (methods if methods is not None else config.methods)]
    check_retrieval_embedder(config, method_names)  # before any corpus read or model call
    steps = [s for s in steps_for(config) if write or not s.writes_files]
    curated: dict[str, pd.DataFrame] = {}
    curation = [s for s in steps if s.curation]
    if curation:  # the curation first: the evaluation reads the corpus it writes, for the personalities it wrote
        from ..curation.step import curation_personalities

        named = _select(config, curation_personalities(config), personalities)
        curated = run_steps(config, {s.name: cells_of(s, named, method_names) for s in curation},
                            _no_split, named, method_names, gateway=gateway, write=write, progress=progress,
                            keep=None if keep is None else [s.name for s in curation if s.name in set(keep)])
        steps = [s for s in steps if not s.curation]
    files = index_corpus(config.corpus)  # checks every file (every problem listed); keeps only id -> file
    if curation:
        refused = [p for p in named if p not in files]
        if refused:
            say = progress or (lambda _msg: None)
            say(f"not evaluated, refused by the curation: "
                f"{summarise_ids(refused, f'the prepared_input tables under {config.data_root} say why')}")
        pids = [p for p in named if p in files]
    else:
        pids = _select(config, files, personalities)
    run = {s.name: cells_of(s, pids, method_names) for s in steps}
    kept = None if keep is None else [k for k in keep if k not in curated]
    return {**curated, **run_steps(config, run, lambda pid: load_split(files[pid]), pids,
                                   method_names, gateway=gateway, write=write, progress=progress, keep=kept)}


def _no_split(pid: str) -> HeldOutSplit:
    raise RuntimeError(f"the curation of {pid} read a split: it writes the document the split is made from")


PartitionDone = Callable[[Step, Cell, Any, Callable[[], dict[str, Any]], "pa.Table | None"], None]
"""``(step, cell, output, inputs, written)`` after a partition is made (and written): ``inputs()`` gives what it
read, ``written`` the Arrow table its file holds (``None`` when the run writes no table for it)."""


def run_steps(
    config: EvalConfig,
    run: dict[str, list[Cell]],
    load_split: Callable[[str], HeldOutSplit],
    personalities: list[str],
    methods: list[str],
    gateway: CallRunner | None = None,
    write: bool = True,
    progress: Callable[[str], None] | None = None,
    keep: Iterable[str] | None = None,
    on_partition: PartitionDone | None = None,
    env: StepEnv | None = None,
    progress_every_s: float | None = None,
    counts: dict[str, dict[str, float]] | None = None,
    node_counts: dict[tuple[str, Cell], dict[str, float]] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Make the partitions ``run`` names (step name -> cells), streaming their calls like ``run_evaluation``.

    The one scheduler of the project: ``run_evaluation`` gives it every step of the corpus, a Dagster
    run gives it the assets and partitions the run selected (``interviewsim_dagster/factory.py``).
    A partition the run reads but does not make is read from the data root; when absent it is left
    out of inputs that allow missing partitions and is an error otherwise.

    Args:
        run: the partitions to make; steps missing from it are not run.
        load_split: personality id -> its split, called when the personality is admitted.
        personalities, methods: the partition space the inputs map over (every registered person and
            configured method in Dagster; the selection in ``run_evaluation``).
        on_partition: called for every partition made, in the scheduler's thread.
        env: the steps' environment (default: one built from ``config`` and ``load_split``).
        progress_every_s: also say, at most this often and once at the end, the run's progress line
            (``progress.progress_line``: partitions written of the run's total, calls/s, time left).
        counts: filled with those figures per step (``PROGRESS_FIELDS``) as the run goes; a step's are
            final when its last partition is made (``on_partition`` may read them then).
        node_counts: the same per (step, cell), final when ``on_partition`` is called for it (the action
            worker sends them, so each Dagster run sums its own partitions' calls).
        on_progress: where the progress lines and the waves' lines go (default ``progress``): the action
            worker sends only these to the command, not a line per personality done.

    Returns:
        Step name -> the kept tables (``keep``, default every table the run makes), concatenated.
    """
    say = progress or (lambda _msg: None)
    calls_models = any(BY_NAME[name].calls_models for name, cs in run.items() if cs)
    gw = gateway if gateway is not None or not calls_models else make_gateway(config)
    splits: dict[str, HeldOutSplit] = {}

    def split_of(pid: str) -> HeldOutSplit:
        if pid not in splits:  # loaded when the personality is admitted, dropped when it is done
            splits[pid] = load_split(pid)
        return splits[pid]

    if env is None:
        env = StepEnv(config, split_of, embedder=lambda: make_embedder(config),
                      embedding_cache=_embedding_cache(config) if write else None)
    else:
        env._split = split_of  # the caller's environment, this run's split window
    steps = list(steps_for(config))
    made = [s.name for s in steps if s.name in run and not s.writes_files]
    kept = set(made if keep is None else keep)
    if kept - set(made):
        raise ConfigError(f"keep names tables this run does not make: {sorted(kept - set(made))}; it makes {made}")
    graph = _Graph.build(steps, {k: list(v) for k, v in run.items()}, personalities, methods, kept)
    streaming = callable(getattr(gw, "submit_many", None)) and not any(m.batch for m in config.effective_models)
    active = {n[1].personality for n in graph.order if n[1].personality is not None}
    pids = [p for p in personalities if p in active]
    extra = sorted(active - set(pids))
    r = _Run(config, env, graph, gw, write, say, [*pids, *extra], streaming, splits, on_partition)
    r.tell = on_progress or say
    r.progress_every_s = progress_every_s
    if counts is not None:  # filled as the run goes: a step's figures are final once its last partition is made
        r.counts = counts
    r.node_counts = node_counts
    try:
        r.go()
    finally:
        r.cancel()
        if progress_every_s is not None and r.counts:
            r.tell(r.progress_line(final=True))
    if write:
        say(f"wrote the tables under {config.data_root}")
    return {name: concat_table(name, [r.done[(name, c)] for c in run[name]]) for name in made if name in kept}


PROGRESS_FIELDS = ("planned", "answered", "cached", "invalid", "failed", "cost_usd")

PROGRESS_EVERY_S = 15.0
"""How often a Dagster stage run, or ``interviewsim run``'s worker, says its progress line (``progress_every_s``)."""


class _Run:
    """One run of the graph: the ready nodes, the calls in flight, the personality window."""

    def __init__(self, config: EvalConfig, env: StepEnv, graph: _Graph, gateway: CallRunner, write: bool,
                 say: Callable[[str], None], personalities: list[str], streaming: bool,
                 splits: dict[str, HeldOutSplit], on_partition: PartitionDone | None = None):
        self.config, self.env, self.g, self.gw, self.write, self.say = config, env, graph, gateway, write, say
        self.streaming, self.splits, self.on_partition = streaming, splits, on_partition
        self.done: dict[Node, Any] = {}
        self.unfinished = len(graph.order)
        self.total = len(personalities)
        self.queue: deque[str] = deque(personalities)  # not admitted yet
        self.active: set[str] = set()
        self.nodes_of: dict[str | None, list[Node]] = defaultdict(list)
        for node in graph.order:
            self.nodes_of[node[1].personality].append(node)
        self.remaining = {p: len(nodes) for p, nodes in self.nodes_of.items()}  # unfinished nodes (None: unpartitioned)
        self.ready: deque[Node] = deque(n for n in self.nodes_of[None] if graph.waiting[n] == 0)
        self.calls: dict[Node, list[PlannedCall]] = {}  # every round's calls of a model node so far
        self.results: dict[Node, dict] = {}
        self.chunks: dict[Node, int] = {}  # streaming: batches of the node's current round still out
        self.round: dict[Node, list[PlannedCall]] = {}
        self.flight: dict[concurrent.futures.Future, tuple[Node, list[PlannedCall]]] = {}
        self.backlog = 0  # streaming: calls submitted whose batch is not back yet
        self.slots = max(1, sum({(m.model, m.api_base): m.max_concurrency for m in config.effective_models}.values()))
        self.next_wave: dict[Node, list[PlannedCall]] = {}  # waves mode
        self.wave = 0
        self.counts: dict[str, dict[str, float]] = {}  # per step: planned, answered, cached, invalid, failed, cost
        self.node_counts: dict[Node, dict[str, float]] | None = None  # the same per partition, when asked for
        self.progress_every_s: float | None = None
        self.tell = say  # the progress lines' destination (``run_steps``' ``on_progress``)
        self.started = time.monotonic()
        self.last_progress = self.started

    # -- the loop ----------------------------------------------------------------------------
    def go(self) -> None:
        while self.unfinished:
            if self.progress_every_s is not None and time.monotonic() - self.last_progress >= self.progress_every_s:
                self.last_progress = time.monotonic()
                self.tell(self.progress_line())
            self._admit()
            worked = self._work_ready()
            if self.flight:
                self._collect()
            elif not worked and not self.ready:
                if self.queue:  # nothing left to do for the active personalities: next one
                    self._admit(force=True)
                    continue
                stuck = [f"{s}{'' if c == Cell() else [v for v in c if v]}" for s, c in self.g.order
                         if (s, c) not in self.done][:10]
                raise RuntimeError(f"steps waiting on inputs that never run: {stuck}")

    def _admit(self, force: bool = False) -> None:
        """Start personalities: in waves mode all at once (batch mode wants one provider batch for
        the whole run); streaming, the next one only when the calls queued for the active ones
        would no longer keep every concurrency slot busy (``BACKLOG_PER_SLOT``)."""
        while self.queue and (not self.streaming or force or not self.active
                              or self.backlog < BACKLOG_PER_SLOT * self.slots):
            pid = self.queue.popleft()
            self.active.add(pid)
            if not any(self.g.steps[n[0]].curation for n in self.nodes_of[pid]):  # else it is not written yet
                self.env.split(pid)
            self.ready.extend(n for n in self.nodes_of[pid] if self.g.waiting[n] == 0)
            if self.streaming:
                return  # its calls enter the backlog before the next one is considered

    def _work_ready(self) -> bool:
        """Run the ready compute nodes, plan the ready model nodes and send their calls; in waves
        mode, then run the wave (with the further rounds of the previous one)."""
        worked = bool(self.ready)
        while self.ready:
            node = self.ready.popleft()
            step = self.g.steps[node[0]]
            if step.compute is not None:
                self._finish(node, step.compute(self.env, node[1], self._inputs(node)))
                continue
            self.calls[node], self.results[node] = [], {}
            self._send(node, step.plan(self.env, node[1], self._inputs(node)))
        if self.next_wave:
            wave, self.next_wave = self.next_wave, {}
            self._run_wave(wave)
            worked = True
        return worked

    def _count(self, node: Node, planned: int = 0, results: Iterable = ()) -> None:
        c = self.counts.setdefault(node[0], dict.fromkeys(PROGRESS_FIELDS, 0))
        mine = self.node_counts.setdefault(node, dict.fromkeys(PROGRESS_FIELDS, 0)) \
            if self.node_counts is not None else None
        add = dict.fromkeys(PROGRESS_FIELDS, 0)
        add["planned"] = planned
        for res in results:
            add["answered"] += 1
            add["cached"] += bool(getattr(res, "cache_hits", 0)) and not getattr(res, "calls_made", 0)
            add["invalid"] += getattr(res, "status", "ok") == "invalid"
            add["failed"] += getattr(res, "status", "ok") == "failed"
            add["cost_usd"] += float(getattr(res, "cost_usd", 0.0) or 0.0)
        for field in PROGRESS_FIELDS:
            c[field] += add[field]
            if mine is not None:
                mine[field] += add[field]

    def progress_line(self, final: bool = False) -> str:
        """What the run did so far (``progress_every_s``): its partitions written of all it makes, its calls."""
        total = len(self.g.order)
        return _progress_line(self.counts, total - self.unfinished, total, time.monotonic() - self.started, final)

    def _send(self, node: Node, planned: list[PlannedCall]) -> None:
        known = [p for p in planned if p.unsent]  # known at planning (failed, or a calibration value): not sent
        if known:
            answers = [failed_result(p) for p in known]
            self._count(node, planned=len(known), results=answers)
            self.calls[node].extend(known)
            self.results[node].update(zip((p.key for p in known), answers, strict=True))
            planned = [p for p in planned if not p.unsent]
        if planned:
            self._count(node, planned=len(planned))
        if not planned:
            self._assemble(node)
        elif not self.streaming:
            self.next_wave[node] = planned
        else:
            # Batches of at most half the slots: the backlog is then known to within that, and a
            # node's calls interleave with other nodes' in the gateway's FIFO.
            check_unique_keys(planned)  # waves mode: run_calls checks the whole wave
            parts = list(in_batches(planned, max(1, self.slots // 2)))
            self.chunks[node] = len(parts)
            self.round[node] = planned  # the round's calls in planned order, whatever order its batches end in
            for part in parts:
                fut = self.gw.submit_many([(p.model, p.request) for p in part])  # type: ignore[attr-defined]
                self.flight[fut] = (node, part)
                self.backlog += len(part)

    def _run_wave(self, wave: dict[Node, list[PlannedCall]]) -> None:
        self.wave += 1
        batch = [p for planned in wave.values() for p in planned]
        self.tell(f"wave {self.wave}: {len(batch):,} model calls for {', '.join(dict.fromkeys(s for s, _ in wave))}")
        results = run_calls(self.gw, batch)
        for node, planned in wave.items():
            self._count(node, results=(results[p.key] for p in planned))
            self.calls[node].extend(planned)
            self.results[node].update((p.key, results[p.key]) for p in planned)
            self._round_done(node)

    def _collect(self) -> None:
        finished, _ = concurrent.futures.wait(self.flight, return_when=concurrent.futures.FIRST_COMPLETED)
        for fut in finished:
            node, part = self.flight.pop(fut)
            self.backlog -= len(part)
            answers = fut.result()
            self._count(node, results=answers)
            self.results[node].update(zip((p.key for p in part), answers, strict=True))
            self.chunks[node] -= 1
            if self.chunks[node] == 0:
                del self.chunks[node]
                self.calls[node].extend(self.round.pop(node))
                self._round_done(node)

    def _round_done(self, node: Node) -> None:
        """A round of a model node is answered: send its further round (premise pass 2), or assemble it."""
        step = self.g.steps[node[0]]
        more = step.replan(self.env, node[1], self.calls[node], self.results[node]) if step.replan else []
        if more:
            self._send(node, more)
        else:
            self._assemble(node)

    def _assemble(self, node: Node) -> None:
        step = self.g.steps[node[0]]
        calls, results = self.calls.pop(node, []), self.results.pop(node, {})
        self._finish(node, step.assemble(self.env, node[1], calls, results, self._inputs(node)))

    # -- finishing a node ---------------------------------------------------------------------
    def _inputs(self, node: Node) -> dict[str, Any]:
        step = self.g.steps[node[0]]
        loads = {i.step: i for i in step.inputs if i.load}
        frames: dict[str, dict[Cell, Any]] = defaultdict(dict)
        on_disk: dict[str, list[Node]] = defaultdict(list)  # an ALL input's run of partitions in files
        for up in self.g.reads[node]:
            inp = loads.get(up[0])
            if inp is None:
                continue  # an ordering edge: the step reads the split or the data root itself
            if inp.mapping is InputMapping.ALL:
                if self._stored(up, inp, step):
                    on_disk[up[0]].append(up)
                    continue
                self._join_read(frames, on_disk[up[0]])  # keep the partition order
            value = self._external(up) if up in self.g.external else self.done[up]
            if value is MISSING:
                if not inp.allow_missing:
                    raise not_materialised(step, *up)
                continue
            frames[up[0]][up[1]] = value
        for ups in on_disk.values():
            self._join_read(frames, ups)
        for name, inp in loads.items():
            frames.setdefault(name, {})
        return inputs_for(step, node[1], frames)

    def _stored(self, up: Node, inp: Input, step: Step) -> bool:
        """True when partition ``up`` of an ALL input is to be read from its file (read apart otherwise); an
        absent one that ``inp`` requires is an error."""
        if up not in self.g.external:
            return self.done[up] is ON_DISK
        if up in self.done:  # read already, for a partitioned reader
            return False
        if exists(partition_path(self.config.data_root, up[0], up[1].personality, up[1].method)):
            return True
        if not inp.allow_missing:
            raise not_materialised(step, *up)
        return False

    def _join_read(self, frames: dict[str, dict[Cell, Any]], ups: list[Node]) -> None:
        """Read the files of ``ups`` (consecutive partitions of one ALL input) as one table (``read_joined``)
        under the first's cell: ``inputs_for`` joins an ALL input's tables in order."""
        if ups:
            paths = [partition_path(self.config.data_root, n, c.personality, c.method) for n, c in ups]
            frames[ups[0][0]][ups[0][1]] = read_joined(paths)
            ups.clear()

    def _external(self, up: Node) -> Any:
        """A partition this run reads but does not make: from the data root, once, kept while read."""
        if up not in self.done:
            self.done[up] = read_partition(self.config, *up)
        return self.done[up]

    def _on_disk_from_now(self, node: Node) -> bool:
        """True when only unpartitioned steps still read ``node`` and its table is in its file (``ON_DISK``)."""
        writes_partition = self.write and not self.g.steps[node[0]].writes_files
        return writes_partition and 0 < self.g.left[node] == self.g.global_readers[node]

    def _release(self, node: Node) -> None:
        for reader in self.g.readers[node]:
            self.g.waiting[reader] -= 1
            if self.g.waiting[reader] == 0 and (reader[1].personality is None or reader[1].personality in self.active):
                self.ready.append(reader)

    def _finish(self, node: Node, frame: Any) -> None:
        name, cell = node
        step = self.g.steps[name]
        written = None
        if self.write and not step.writes_files:
            written = write_partition(step, cell, frame, self.config.data_root)
        if self.on_partition is not None:
            self.on_partition(step, cell, frame, lambda: self._inputs(node), written)
        self.done[node] = frame if self.g.left[node] else None
        if self._on_disk_from_now(node):
            self.done[node] = ON_DISK
        self.unfinished -= 1
        for up in self.g.reads[node]:
            self.g.left[up] -= 1
            self.g.global_readers[up] -= step.partitioning is Partitioning.NONE and up not in self.g.external
            if self.g.left[up] == 0:
                self.done[up] = None  # no later node reads it and the caller did not ask for it
            elif self._on_disk_from_now(up):
                self.done[up] = ON_DISK
        self._release(node)
        pid = cell.personality
        self.remaining[pid] -= 1
        if pid is not None and self.remaining[pid] == 0:
            self.active.discard(pid)
            self.splits.pop(pid, None)
            self.env.forget(pid)
            if self.streaming:
                self.say(f"{pid}: done ({self.total - len(self.queue) - len(self.active)}/{self.total} personalities)")

    def cancel(self) -> None:
        """Stop the calls still in flight (an error or an interrupt in this thread): none is paid for nothing."""
        for fut in self.flight:
            fut.cancel()
        self.flight.clear()


def _embedding_cache(config: EvalConfig):
    from ..embeddings import EmbeddingCache

    return EmbeddingCache(embedding_cache_dir(config))
