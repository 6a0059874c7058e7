"""Headless materialisation on a real Dagster instance: what ``interviewsim run`` and ``demo`` call.

Runs go through the definitions' four asset jobs (per personality, per personality x method,
per-personality summaries of the P x M tables, global) with ``execute_in_process`` on the given
instance, so they are recorded like UI runs and show up in ``dagster dev``. A selection of partitions becomes as few runs as possible: each job
gets one run per rectangular block of contiguous keys (a multi-partition range is the product of
its dimension ranges), which the single-run backfill policy lets one run cover. The usual cases,
"everything", "one personality, all methods" and "one method, all personalities", are one run
per job. ``interviewsim run`` makes the calls of all its runs in one worker process
(``action_worker``), its runs side by side recording what the worker writes (``_execute_with_worker``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import dagster as dg

from interviewsim_core.errors import ConfigError
from interviewsim_core.id_lists import summarise_ids
from interviewsim_core.pipeline.steps import Cell

from .defs.corpus.partitions import METHOD, PERSONALITY, personality_partitions, pxm_key
from .freshness import contiguous_blocks
from .run_keys import ASSET_PARTITION_RANGE_END_TAG, ASSET_PARTITION_RANGE_START_TAG
from .slots import owner_tags


PERSONALITY_JOB = "personality_assets"
PERSONALITY_METHOD_JOB = "personality_method_assets"
PERSONALITY_SUMMARY_JOB = "personality_summary_assets"
"""Per-personality assets that read P x M tables (``personality_scores``): their own job, run after the
P x M job, because a job holds one partitioning and the per-personality job runs before the methods."""
GLOBAL_JOB = "global_assets"
JOB_ORDER = (PERSONALITY_JOB, PERSONALITY_METHOD_JOB, PERSONALITY_SUMMARY_JOB, GLOBAL_JOB)
REGISTERED_WHERE = "the personality partitions of any per-personality asset in `interviewsim ui`"
"""Where the instance's registered personalities are all listed, for a message that names only a few of them."""


@dataclass(frozen=True)
class RunSpec:
    """One in-process run: a job, the assets of it to materialise, and its partition range (if any)."""

    job: str
    assets: tuple[dg.AssetKey, ...]
    start: str | None = None
    end: str | None = None

    def describe(self) -> str:
        names = ", ".join(k.to_user_string() for k in self.assets)
        if self.start is None:
            return f"{self.job}: {names}"
        span = self.start if self.start == self.end else f"{self.start} .. {self.end}"
        return f"{self.job} [{span}]: {names}"


@dataclass
class RunOutcome:
    spec: RunSpec
    run_id: str
    success: bool
    seconds: float
    materializations: int
    checks_passed: int
    checks_failed: list[str] = field(default_factory=list)
    step_failures: list[str] = field(default_factory=list)
    """``step KEY failed: message`` of each failed step, the step's own exception (Dagster's wrapper peeled off)."""


JOB_DESCRIPTIONS = {
    PERSONALITY_JOB: "Per-personality assets (split, references, PS reference, premise verdicts); one run over any "
                     "personality range, every call streamed through one gateway.",
    PERSONALITY_METHOD_JOB: "Per personality x method assets (generations, judgments, MCQ answers, scores); one run "
                            "over any range, every step, personality and method streamed together.",
    PERSONALITY_SUMMARY_JOB: "Per-personality summaries of the P x M tables (every method of a person).",
    GLOBAL_JOB: "Unpartitioned assets: the leaderboard, then the report.",
}
"""Each job is one stage (``factory.stages``): the assets one Dagster run can make together."""


def plan_runs(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    methods_order: Sequence[str],
    personalities: Sequence[str] | None = None,
    methods: Sequence[str] | None = None,
    selection: str | None = None,
) -> list[RunSpec]:
    """The runs that materialise ``selection`` (default: everything) for the chosen partitions.

    Raises:
        ConfigError: an unknown personality (not registered) or method (not configured), or a
            selection that matches no asset.
    """
    registered = list(instance.get_dynamic_partitions(PERSONALITY))
    chosen_p = list(personalities) if personalities else registered
    unknown = [p for p in chosen_p if p not in registered]
    if unknown:
        raise ConfigError(f"personalities not registered: {summarise_ids(unknown, 'as given with --personalities')}; "
                          f"run `interviewsim register` (known: {summarise_ids(registered, REGISTERED_WHERE)})")
    chosen_m = list(methods) if methods else list(methods_order)
    unknown = [m for m in chosen_m if m not in methods_order]
    if unknown:
        raise ConfigError(f"methods not configured: {unknown}; configured: {list(methods_order)}")
    if not chosen_p:
        raise ConfigError("no personality partitions registered: run `interviewsim register --corpus DIR` first")

    graph = defs.resolve_asset_graph()
    wanted = _select(graph, selection)
    specs: list[RunSpec] = []
    p_blocks = contiguous_blocks(chosen_p, registered)
    m_blocks = contiguous_blocks(chosen_m, methods_order)
    for job_name in JOB_ORDER:
        try:
            job = defs.resolve_job_def(job_name)
        except Exception:  # noqa: BLE001 - a job with no assets is not defined
            continue
        keys = tuple(k for k in _topological(graph) if k in wanted and k in job.asset_layer.executable_asset_keys)
        if not keys:
            continue
        if job_name in (PERSONALITY_JOB, PERSONALITY_SUMMARY_JOB):
            specs += [RunSpec(job_name, keys, a, b) for a, b in p_blocks]
        elif job_name == PERSONALITY_METHOD_JOB:
            specs += [
                RunSpec(job_name, keys, str(pxm_key(pa, ma)), str(pxm_key(pb, mb)))
                for pa, pb in p_blocks for ma, mb in m_blocks
            ]
        else:
            specs.append(RunSpec(job_name, keys))
    return specs


def _select(graph, selection: str | None) -> set[dg.AssetKey]:
    all_keys = set(graph.get_all_asset_keys())
    if not selection:
        return all_keys
    names = [s.strip() for s in selection.split(",") if s.strip()]
    if all(n in {k.to_user_string() for k in all_keys} for n in names):
        return {dg.AssetKey(n) for n in names}
    try:
        keys = set(dg.AssetSelection.from_string(selection).resolve(graph))
    except Exception as exc:  # noqa: BLE001 - Dagster raises several types for a bad expression
        raise ConfigError(f"cannot parse asset selection {selection!r}: {exc}") from exc
    if not keys:
        raise ConfigError(f"asset selection {selection!r} matches no asset; assets: {sorted(map(str, all_keys))}")
    return keys


def _topological(graph) -> list[dg.AssetKey]:
    return [k for level in graph.toposorted_asset_keys_by_level for k in sorted(level, key=str)]


def range_tags(spec: RunSpec) -> dict[str, str]:
    if spec.start is None:
        return {}
    return {ASSET_PARTITION_RANGE_START_TAG: spec.start, ASSET_PARTITION_RANGE_END_TAG: spec.end or spec.start}


def execute(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    specs: Sequence[RunSpec],
    progress: Callable[[str], None] = print,
    dagster_log_level: str = "WARNING",
    skip_up_to_date: bool = False,
    tags: dict[str, str] | None = None,
    split_versions: dict[str, str] | None = None,
    worker_config: Any = None,
    recording_defs: dg.Definitions | None = None,
    data_root: Any = None,
) -> list[RunOutcome]:
    """Run each spec in process on ``instance`` (so the runs are in its history); stop at the first failure.

    Every run executes the stage body every launch route runs (``engine.run_stage``). Two ways:

    - ``worker_config`` (the ``EvalConfig`` the definitions were built from; ``interviewsim run``):
      every call of the action is made in one worker process (``action_worker``) while the runs, side
      by side in this process, record each partition as the worker reports it (``_execute_with_worker``).
      Only when nothing stands in its way (``worker_blocked``). Those runs execute ``recording_defs``'
      jobs when given: the same definitions without pools (``build_definitions(pools=False)``), since
      they make no call and a slot would only make them wait (issue 30);
    - else stage after stage, each run making its own calls with core's scheduler, as a UI launch does.

    ``skip_up_to_date``: leave out asset partitions materialised with the current code on unchanged
    inputs (``freshness``), decided just before each spec runs; ``interviewsim run --force`` turns it off.
    ``tags`` go on every run (``interviewsim run`` puts the plan's totals there). ``split_versions``
    (personality -> ``versioning.split_version``) make an edited corpus file outdate its partitions;
    ``data_root``: a partition whose table this data root does not hold is outdated, whatever the instance
    recorded (one Dagster instance serves several data roots).
    """
    from . import freshness

    outcomes: list[RunOutcome] = []
    run_config = {"loggers": {"console": {"config": {"log_level": dagster_log_level}}}}
    graph = defs.resolve_asset_graph()
    methods = freshness.configured_methods(graph)
    if worker_config is not None:
        busy = worker_blocked(instance)
        if busy is None:
            return _execute_with_worker(recording_defs or defs, instance, specs, progress, run_config,
                                        skip_up_to_date, tags or {}, split_versions, graph, methods, worker_config,
                                        data_root)
        progress(f"{busy}: so this action's runs go stage after stage in this process, each making its calls")
    for i, planned in enumerate(specs, start=1):
        runs = [planned]
        if skip_up_to_date:
            people = list(instance.get_dynamic_partitions(PERSONALITY))
            parts = freshness.spec_partitions(planned, graph, people, methods)
            runs = freshness.narrow(planned, parts, graph, instance, methods, split_versions, data_root=data_root)
            if not runs:
                progress(f"[{i}/{len(specs)}] {planned.describe()}: up to date, skipped (--force re-runs it)")
                continue
        for spec in runs:
            outcomes.append(_run_in_turn(defs, instance, i, len(specs), spec, tags or {}, run_config, progress))
            if not outcomes[-1].success:
                return outcomes
    return outcomes


def _run_in_turn(defs, instance, i: int, n: int, spec: RunSpec, tags: dict[str, str], run_config,
                 progress) -> RunOutcome:
    """One run in this process, said before and after (``[i/n] ...``, then its outcome)."""
    progress(f"[{i}/{n}] {spec.describe()}")
    t0 = time.perf_counter()
    result = defs.resolve_job_def(spec.job).execute_in_process(
        instance=instance, asset_selection=list(spec.assets), tags={**tags, **range_tags(spec), **owner_tags()},
        run_config=run_config, raise_on_error=False)
    if not result.success and _interrupted(result):
        raise KeyboardInterrupt(f"interrupted during {spec.describe()}")
    outcome = _outcome(spec, result, time.perf_counter() - t0)
    _say_outcome(progress, "      ", outcome)
    return outcome


def _interrupted(result) -> bool:
    """The run failed because Ctrl-C reached it: Dagster turns the interrupt of an in-process run into a
    failed step (``DagsterExecutionInterruptedError``), or, when it comes while the run sets up its
    resources (before any step), into the run's own failure, and returns; the command would report a
    failed run (exit 1) instead of an interrupted one (130) and carry on with the next stage."""
    for ev in result.all_events:
        if ev.is_step_failure:
            error = ev.step_failure_data.error
        elif ev.is_run_failure:
            error = ev.job_failure_data.error
        else:
            continue
        while error is not None:
            if error.cls_name in ("DagsterExecutionInterruptedError", "KeyboardInterrupt"):
                return True
            error = error.cause
    return False


def _record_side_by_side(defs, instance, specs, progress, run_config, tags: dict[str, str], graph, methods,
                         runs: list[tuple[int, RunSpec]], worker) -> list[RunOutcome]:
    """The runs of one action side by side in threads of this process, each recording its partitions
    as ``worker`` reports them.

    No run makes a call, so every run's bookkeeping (run creation, metadata, events, checks) happens
    while the worker is still calling, not after its last call. A run starts once the previous one
    has begun its stage body (after its pool slot), so a later run never holds a slot an earlier one
    waits for; runs sharing personalities store their materialisations in stage order
    (``ActionWorker.order``).

    Raises:
        KeyboardInterrupt: Ctrl-C; every run was stopped first (the finished partitions are written).
    """
    import threading

    from . import action_worker

    results: dict[int, RunOutcome | tuple[BaseException, float]] = {}
    threads: list[threading.Thread] = []

    def one(k: int, spec: RunSpec, token: str) -> None:
        """One run, kept as its outcome only: a run's result holds every event of the run, and holding the results
        of an action's hundreds of runs until the last ended grew the command to 2.4 GB at 1,000 personalities."""
        t0 = time.perf_counter()
        try:
            result: Any = defs.resolve_job_def(spec.job).execute_in_process(
                instance=instance, asset_selection=list(spec.assets),
                tags={**tags, **range_tags(spec), **owner_tags(), **action_worker.run_tag(worker, token)},
                run_config=run_config, raise_on_error=False)
            results[k] = _outcome(spec, result, time.perf_counter() - t0)
        except BaseException as exc:  # noqa: BLE001 - reported as this run's failure below
            results[k] = (exc, time.perf_counter() - t0)
        finally:
            worker.started(token)  # a run that ended before its body must not hold back the next one
            worker.recorded(token)

    tokens = [f"{i}/{len(specs)} {spec.job}" + (f" ({k})" if sum(r[0] == i for r in runs) > 1 else "")
              for k, (i, spec) in enumerate(runs)]
    worker.order(_recording_order(runs, tokens, graph, list(instance.get_dynamic_partitions(PERSONALITY)), methods))
    shown = ""

    def show_progress() -> None:
        """The worker's progress line (one every ``PROGRESS_EVERY_S``, and its last), each once: without it the
        terminal said nothing between the runs' start and their end, hours at the paper's scale."""
        nonlocal shown
        if worker.progress != shown:
            shown = worker.progress
            say(shown)

    with _one_logging_setup(), _terminal_kept(progress) as say:
        try:
            for k, (i, spec) in enumerate(runs):
                say(f"[{i}/{len(specs)}] {spec.describe()}")
                th = threading.Thread(target=one, args=(k, spec, tokens[k]), name=f"interviewsim-run-{k}", daemon=True)
                th.start()
                threads.append(th)
                while th.is_alive() and not worker.wait_started(tokens[k], 0.2):
                    show_progress()
            for th in threads:
                while th.is_alive():
                    th.join(0.5)
                    show_progress()
            show_progress()
        except KeyboardInterrupt:
            # Each run stops waiting and ends; their step failures are not the user's news (the command
            # says it was interrupted), and a run ending puts back the descriptors it captured, so they
            # are quieted again until the last has ended (a second Ctrl-C stops waiting). Then
            # ``_terminal_kept`` restores the terminal for the command's last lines.
            worker.interrupted.set()
            # One look per turn: a thread may end between two looks (``next`` over a second look raised
            # StopIteration there, and the command exited 1 instead of 130: CI, issue 45's stop).
            while alive := [th for th in threads if th.is_alive()]:
                _quiet()
                alive[0].join(0.05)
            raise
    outcomes: list[RunOutcome] = []
    for k, (i, spec) in enumerate(runs):
        outcome = results[k]
        if isinstance(outcome, tuple):
            exc, seconds = outcome
            if isinstance(exc, KeyboardInterrupt):
                raise exc
            progress(f"[{i}/{len(specs)}] {spec.job} FAILED before its run could start: {exc}")
            outcomes.append(RunOutcome(spec, "", False, seconds, 0, 0, []))
            continue
        outcomes.append(outcome)
        _say_outcome(progress, f"[{i}/{len(specs)}] {spec.job} ", outcome)
    return outcomes


def _narrow_all(instance, specs: Sequence[RunSpec], progress, skip_up_to_date: bool, split_versions, graph,
                methods, data_root: Any = None) -> list[tuple[int, RunSpec]]:
    """Every run of the action, narrowed to what is outdated before the first starts (``freshness``):
    an asset reading one an earlier run re-makes is outdated too. (index in ``specs``, narrowed spec)."""
    from . import freshness

    runs: list[tuple[int, RunSpec]] = []
    remade: dict[dg.AssetKey, set[str | None]] = {}
    people = list(instance.get_dynamic_partitions(PERSONALITY))
    for i, planned in enumerate(specs, start=1):
        narrowed = [planned]
        if skip_up_to_date:
            parts = freshness.spec_partitions(planned, graph, people, methods)
            narrowed = freshness.narrow(planned, parts, graph, instance, methods, split_versions, rerun=remade,
                                        data_root=data_root)
            for spec in narrowed:
                made = freshness.spec_partitions(spec, graph, people, methods)
                for k in spec.assets:
                    remade.setdefault(k, set()).update(made)
            if not narrowed:
                progress(f"[{i}/{len(specs)}] {planned.describe()}: up to date, skipped (--force re-runs it)")
        runs.extend((i, spec) for spec in narrowed)
    return runs


IN_PROGRESS = (dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED,
               dg.DagsterRunStatus.CANCELING)


def worker_blocked(instance: dg.DagsterInstance) -> str | None:
    """Why the action's calls cannot go to a worker now (``None``: they can).

    The worker makes the calls of every stage at once, before the stage runs claim their pool slots;
    beside another run of the instance (a UI launch, a backfill, automation) that would bypass the
    pools that make runs of one model wait for each other. So the worker is used only when no other
    run is in progress. Its runs go side by side in this process, which Dagster's per-run logging setup
    allows only when ``dagster.yaml`` configures no Python log handlers (``python_logs.
    dagster_handler_config``: Dagster installs those per run with ``dictConfig``, which
    ``_one_logging_setup`` cannot leave out).
    """
    if instance.get_python_log_dagster_handler_config():
        return "dagster.yaml configures Python log handlers (python_logs), which runs side by side cannot share"
    n = instance.get_runs_count(dg.RunsFilter(statuses=list(IN_PROGRESS)))
    return f"{n} other run(s) in progress on this instance" if n else None


RUN_PARTITIONS = 256
"""At most about this many partitions in one stage run of ``interviewsim run``: the personalities per block
(``halving_blocks``'s ``most``) are this over the widest P x M run's methods (``_block_most``). Why: Dagster's SQLite event log stores a run's
planned check evaluation once per planned partition, each copy holding the run's whole partition subset, so a
run's check rows grow with the square of its partitions (the first P x M block at 1,000 personalities, 5,500
partitions, wrote 9.86 GB and slowed the recording tenfold: docs/PERFORMANCE.md, the growth table)."""


def halving_blocks(n: int, most: int | None = None) -> list[int]:
    """The sizes of the blocks of consecutive personalities a worker's per-personality, P x M and summary runs
    are cut into: half of the personalities left each time, at most ``most``, so 6 -> 3, 2, 1, 20 -> 10, 5, 3,
    1, 1 and 20 at most 4 -> 4, 4, 4, 4, 2, 1, 1.

    Why: a run records its partitions (an event per asset partition, then its checks' verdicts) when the
    last of them is written, and what the last block records comes after the worker's last call. One
    P x M run for every personality did all of it there (27 s with no call in flight at 6 personalities);
    two equal halves left half of it there (12.1 s; three equal blocks 12.8 s, each run costs its
    creation and its own events). The worker admits personalities in order, so a block is recorded
    while the worker calls for the blocks after it: halving gives each block the calls of as many
    personalities as it holds to be recorded in, and leaves the last personality's alone after the last
    call, for about log2(n) runs per stage. ``most`` bounds a run's size (``RUN_PARTITIONS``), which keeps
    the halving tail. The per-personality runs are cut the same way because a P x M block stores its
    materialisations only after its personalities' splits are stored (``ActionWorker.order``), and the
    summaries because theirs come after their P x M blocks'."""
    sizes: list[int] = []
    while n > 0:
        sizes.append(min(-(-n // 2), most or n))
        n -= sizes[-1]
    return sizes


BLOCKED_JOBS = (PERSONALITY_JOB, PERSONALITY_METHOD_JOB, PERSONALITY_SUMMARY_JOB)


def _in_blocks(spec: RunSpec, graph, people: Sequence[str], methods: Sequence[str], most: int) -> list[RunSpec]:
    """``spec``, or for a per-personality, P x M or summary run, one run per block of consecutive personalities
    (``halving_blocks``, at most ``most`` personalities in a block: ``_block_most``)."""
    from .defs.corpus.partitions import dims_of

    if spec.job not in BLOCKED_JOBS or spec.start is None:
        return [spec]
    pdef = graph.get(spec.assets[0]).partitions_def
    first, last = dims_of(pdef, spec.start), dims_of(pdef, spec.end or spec.start)
    persons = list(dict.fromkeys(c.personality for c in _spec_cells(spec, graph, people, methods)))
    blocks, at = [], 0
    for size in halving_blocks(len(persons), most):
        blocks.append(persons[at:at + size])
        at += size
    if METHOD not in first:
        return [RunSpec(spec.job, spec.assets, b[0], b[-1]) for b in blocks]
    return [RunSpec(spec.job, spec.assets, str(pxm_key(b[0], first[METHOD])), str(pxm_key(b[-1], last[METHOD])))
            for b in blocks]


def _block_most(runs: Sequence[tuple[int, RunSpec]], graph, people: Sequence[str], methods: Sequence[str]) -> int:
    """The most personalities in one block of the action's runs: ``RUN_PARTITIONS`` over the most methods a P x M
    run covers, the same in every stage, so that a P x M block's personalities are one block of splits."""
    width = max((len({c.method for c in _spec_cells(spec, graph, people, methods)}) for _i, spec in runs
                 if spec.job == PERSONALITY_METHOD_JOB), default=1)
    return max(1, RUN_PARTITIONS // width)


def _spec_cells(spec: RunSpec, graph, people: Sequence[str], methods: Sequence[str]) -> list[Cell]:
    """The cells (personality, method) a spec covers, in run order (``[Cell()]`` when unpartitioned)."""
    from . import freshness
    from .defs.corpus.partitions import dims_of

    pdef = graph.get(spec.assets[0]).partitions_def
    return [Cell() if k is None else Cell(**dims_of(pdef, k))
            for k in freshness.spec_partitions(spec, graph, people, methods)]


def _execute_with_worker(defs, instance, specs, progress, run_config, skip_up_to_date: bool, tags: dict[str, str],
                         split_versions, graph, methods, cfg, data_root: Any = None) -> list[RunOutcome]:
    """The action's calls in one worker process (``action_worker``), its runs here recording them.

    The runs go side by side (``_record_side_by_side``), per-personality and P x M runs in blocks
    (``_in_blocks``), but none of them makes a
    call: each waits for its partitions and records them (metadata, one materialisation per asset
    partition, checks) while the worker, which streams every stage's calls at once like the direct
    runner, is already on the next ones. The worker is stopped when the runs end, whatever their
    outcome (a failed run's partitions are not to be paid for by a worker nobody waits on); Ctrl-C
    stops both.
    """
    from . import action_worker
    from .registration import scan_corpus

    people = list(instance.get_dynamic_partitions(PERSONALITY))
    narrowed = _narrow_all(instance, specs, progress, skip_up_to_date, split_versions, graph, methods, data_root)
    most = _block_most(narrowed, graph, people, methods)
    runs = [(i, part) for i, spec in narrowed for part in _in_blocks(spec, graph, people, methods, most)]
    if not runs:
        return []
    valid = scan_corpus(str(cfg.corpus)).valid
    nodes: dict[str, list] = {}
    for _i, spec in runs:
        cells = [c for c in _spec_cells(spec, graph, people, methods)
                 if c.personality is None or c.personality in valid]  # the run refuses the rest
        for asset in spec.assets:
            nodes.setdefault(asset.to_user_string(), []).extend(cells)
    files = {p: valid[p] for p in {c.personality for cs in nodes.values() for c in cs} if p is not None}
    worker = action_worker.start(cfg, nodes, files, people, list(cfg.methods))
    progress(f"calls: one worker process (pid {worker.process.pid}) makes every stage's partitions; the runs below "
             "record them as they are written, side by side")
    outcomes: list[RunOutcome] = []
    try:
        outcomes = _record_side_by_side(defs, instance, specs, progress, run_config, tags, graph, methods, runs, worker)
    finally:
        worker.stop()
    if worker.ended not in ("ok", "interrupted") and all(o.success for o in outcomes):
        progress(f"the action's worker: {worker.ended}")  # e.g. an answer it could not cache
    return outcomes


def _recording_order(runs: Sequence[tuple[int, RunSpec]], tokens: Sequence[str], graph, people: Sequence[str],
                     methods: Sequence[str]) -> dict[str, list[str]]:
    """Run token -> the tokens of the runs of earlier stages sharing a personality with it (``ActionWorker.order``)."""
    def persons(spec: RunSpec) -> set[str] | None:  # None: unpartitioned, reads every personality
        if spec.start is None:
            return None
        return {c.personality for c in _spec_cells(spec, graph, people, methods)}

    mine = [persons(spec) for _i, spec in runs]
    return {tokens[k]: [tokens[j] for j, (i_j, _s) in enumerate(runs)
                        if i_j < i_k and (mine[j] is None or mine[k] is None or mine[j] & mine[k])]
            for k, (i_k, _spec) in enumerate(runs)}


def _say_outcome(progress: Callable[[str], None], head: str, outcome: RunOutcome) -> None:
    """One run's line (status, time, materialisations, checks), and its failed steps' messages."""
    status = "ok" if outcome.success else "FAILED"
    checks = f", checks {outcome.checks_passed} passed" + (
        f", {len(outcome.checks_failed)} failed: {', '.join(outcome.checks_failed)}" if outcome.checks_failed else "")
    progress(f"{head}{status} in {outcome.seconds:.1f} s: {outcome.materializations} partition "
             f"materialisation(s){checks} (run {outcome.run_id[:8]})")
    for failure in outcome.step_failures:
        progress(f"      {failure}")


def _quiet() -> None:
    """Point file descriptors 1 and 2 at the null device (``_terminal_kept`` puts them back)."""
    import os

    null = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):
        os.dup2(null, fd)
    os.close(null)

_DAGSTER_PROBE_LOGGER = "dagster_dummy_logger"


@contextlib.contextmanager
def _terminal_kept(progress: Callable[[str], None]) -> Iterator[Callable[[str], None]]:
    """The process's standard output and error as they were, after runs side by side; and a
    ``progress`` that reaches the terminal meanwhile.

    Each in-process run captures its steps' output for the UI's compute logs by pointing file
    descriptors 1 and 2 elsewhere and back when it ends. Runs that overlap restore each other's
    targets out of order, and the command's own lines after them were lost (exit 0, no summary).
    So descriptors 1 and 2 are saved before and put back after; in between, the lines go to the
    saved terminal when standard output is the process's own descriptor 1 (not a test's buffer).
    """
    import os
    import sys

    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    try:
        direct = sys.stdout.fileno() == 1
    except (AttributeError, OSError, ValueError):
        direct = False
    terminal = os.fdopen(os.dup(saved[1]), "w", buffering=1, encoding="utf-8") if direct else None

    def say(line: str) -> None:
        if terminal is not None:
            terminal.write(line + "\n")
        else:
            progress(line)

    try:
        yield say
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        for fd, dup in saved.items():
            os.dup2(dup, fd)
            os.close(dup)
        if terminal is not None:
            terminal.close()


@contextlib.contextmanager
def _one_logging_setup() -> Iterator[None]:
    """While the runs of one action run side by side: no global logging reset at each run's start.

    Dagster gathers the ``dagster.yaml`` log handlers of each new run by calling the standard
    library's ``logging.config.dictConfig`` with a probe configuration (one dummy logger), even when
    no handler is configured. ``dictConfig`` takes logging's module lock and then flushes and closes
    every handler of the process, while a running run's event handler holds its own lock and may
    need the module lock (SQLAlchemy's logger check): two runs of one process deadlocked there (seen
    with ``py-spy dump``). With no handler configured (``worker_blocked``) the probe configures
    nothing, so it is skipped here; any other ``dictConfig`` call is passed through.
    """
    import logging.config

    real = logging.config.dictConfig

    def guarded(config: dict) -> None:
        loggers = config.get("loggers") or {}
        probe = (set(config) <= {"version", "disable_existing_loggers", "loggers"} and list(loggers) == [_DAGSTER_PROBE_LOGGER]
                 and not list(loggers[_DAGSTER_PROBE_LOGGER].get("handlers") or []))
        if not probe:
            real(config)

    logging.config.dictConfig = guarded
    try:
        yield
    finally:
        logging.config.dictConfig = real


def _outcome(spec: RunSpec, result, seconds: float) -> RunOutcome:
    n_mat = sum(1 for ev in result.all_events if ev.is_step_materialization)
    passed, failed = 0, []
    for ev in result.all_events:
        if ev.event_type_value == "ASSET_CHECK_EVALUATION":
            data = ev.event_specific_data
            if data.passed:
                passed += 1
            else:
                failed.append(f"{data.asset_key.to_user_string()}:{data.check_name}")
    steps: list[str] = []
    for ev in result.all_events if not result.success else ():
        if ev.is_step_failure:
            error = ev.step_failure_data.error
            while error.cause is not None:  # Dagster's wrapper first, the step's own exception last
                error = error.cause
            steps.append(f"step {ev.step_key} failed: {error.message.strip()}")
    # Checks record one verdict per partition (``check_results``): name each failing check once.
    return RunOutcome(spec, result.run_id, result.success, seconds, n_mat, passed, list(dict.fromkeys(failed)), steps)


def register_personalities(instance: dg.DagsterInstance, corpus: str) -> tuple[list[str], list[str], list[str]]:
    """Add every valid personality of ``corpus`` as a partition: (added, already known, problems)."""
    from .registration import scan_corpus

    scan = scan_corpus(corpus)
    known = set(instance.get_dynamic_partitions(PERSONALITY))
    new = [pid for pid in scan.valid if pid not in known]
    if new:
        instance.add_dynamic_partitions(personality_partitions.name, new)
    return new, [pid for pid in scan.valid if pid in known], list(scan.problems)


def leave_status_current(instance: dg.DagsterInstance, graph) -> float:
    """Bring what the UI's asset pages read up to date with the runs just made; returns the seconds it took.

    Dagster keeps each partitioned asset's status (materialised, failed, in progress) in a cache it updates
    only when something reads it, and this instance's event log keeps its checks' partition states the same
    way (``check_states``). After ``interviewsim run`` both lag by every event of its runs: the UI's first
    read paid for them, 2.9 s for the Catalog's partition counts and 2.5 s on the ``generations`` page at 1,000
    personalities (issue 43). Read here once, they are stored and the UI reads them current. An event log of
    another kind (Dagster's own, PostgreSQL) keeps no check states: only the assets' status is read then.
    """
    from .event_log_storage import EngineKeepingSqliteEventLogStorage

    t0 = time.perf_counter()
    for key in graph.materializable_asset_keys:
        partitions_def = graph.get(key).partitions_def
        if partitions_def is not None:
            instance.get_status_by_partition(key, [], partitions_def)  # updates the status cache on the way
    if isinstance(instance.event_log_storage, EngineKeepingSqliteEventLogStorage):
        checks = [(key, graph.get(key.asset_key).partitions_def) for key in graph.asset_check_keys]
        instance.event_log_storage.get_asset_check_state(checks)  # sets its own partition loading context
    return time.perf_counter() - t0


__all__ = [
    "GLOBAL_JOB", "JOB_DESCRIPTIONS", "METHOD", "PERSONALITY_JOB", "PERSONALITY_METHOD_JOB", "PERSONALITY_SUMMARY_JOB",
    "RunOutcome", "RunSpec",
    "execute", "leave_status_current", "plan_runs", "range_tags", "register_personalities",
]

