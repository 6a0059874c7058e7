"""Headless materialisation on a real Dagster instance: what ``interviewsim run`` and ``demo`` call.

Runs go through the definitions' four asset jobs (per personality, per personality x method,
per-personality summaries of the P x M tables, global) with ``execute_in_process`` on the given
instance, so they are recorded like UI runs and show up in ``dagster dev``. A selection of partitions becomes as few runs as possible: each job
gets one run per rectangular block of contiguous keys (a multi-partition range is the product of
its dimension ranges), which the single-run backfill policy lets one run cover. The usual cases,
"everything", "one personality, all methods" and "one method, all personalities", are one run
per job.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import dagster as dg

from interviewsim_core.errors import ConfigError

from .defs.corpus.partitions import METHOD, PERSONALITY, personality_partitions, pxm_key
from .slots import owner_tags

# Dagster's documented run tags for a partition range (what a single-run backfill puts on its run;
# Dagster 1.13.x). ``JobDefinition.execute_in_process`` takes no range argument in 1.13, and the
# constants' home module is private (``dagster._core``), so the public tag strings are spelled here;
# ``tests/dagster/test_dg_backfill.py`` fails if a run stops covering its range.
ASSET_PARTITION_RANGE_START_TAG = "dagster/asset_partition_range_start"
ASSET_PARTITION_RANGE_END_TAG = "dagster/asset_partition_range_end"

PERSONALITY_JOB = "personality_assets"
PERSONALITY_METHOD_JOB = "personality_method_assets"
PERSONALITY_SUMMARY_JOB = "personality_summary_assets"
"""Per-personality assets that read P x M tables (``personality_scores``): their own job, run after the
P x M job, because a job holds one partitioning and the per-personality job runs before the methods."""
GLOBAL_JOB = "global_assets"
JOB_ORDER = (PERSONALITY_JOB, PERSONALITY_METHOD_JOB, PERSONALITY_SUMMARY_JOB, GLOBAL_JOB)


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


JOB_DESCRIPTIONS = {
    PERSONALITY_JOB: "Per-personality assets (split, references, PS reference, premise verdicts); one run over any "
                     "personality range, every call streamed through one gateway.",
    PERSONALITY_METHOD_JOB: "Per personality x method assets (generations, judgments, MCQ answers, scores); one run "
                            "over any range, every step, personality and method streamed together.",
    PERSONALITY_SUMMARY_JOB: "Per-personality summaries of the P x M tables (every method of a person).",
    GLOBAL_JOB: "Unpartitioned assets: the leaderboard, then the report.",
}
"""Each job is one stage (``factory.stages``): the assets one Dagster run can make together."""


def _contiguous_blocks(selected: Sequence[str], order: Sequence[str]) -> list[tuple[str, str]]:
    """Runs of consecutive keys (in ``order``) covering ``selected``, as (first, last) pairs."""
    pos = {k: i for i, k in enumerate(order)}
    idx = sorted(pos[k] for k in set(selected))
    blocks: list[tuple[str, str]] = []
    for i in idx:
        if blocks and pos[blocks[-1][1]] == i - 1:
            blocks[-1] = (blocks[-1][0], order[i])
        else:
            blocks.append((order[i], order[i]))
    return blocks


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
        raise ConfigError(f"personalities not registered: {unknown}; run `interviewsim register` (known: {registered})")
    chosen_m = list(methods) if methods else list(methods_order)
    unknown = [m for m in chosen_m if m not in methods_order]
    if unknown:
        raise ConfigError(f"methods not configured: {unknown}; configured: {list(methods_order)}")
    if not chosen_p:
        raise ConfigError("no personality partitions registered: run `interviewsim register --corpus DIR` first")

    graph = defs.resolve_asset_graph()
    wanted = _select(graph, selection)
    specs: list[RunSpec] = []
    p_blocks = _contiguous_blocks(chosen_p, registered)
    m_blocks = _contiguous_blocks(chosen_m, methods_order)
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
) -> list[RunOutcome]:
    """Run each spec in process on ``instance`` (so the runs are in its history); stop at the first failure.

    ``skip_up_to_date``: leave out asset partitions materialised with the current code on unchanged
    inputs (``freshness``), decided just before each spec runs; ``interviewsim run --force`` turns it off.
    ``tags`` go on every run (``interviewsim run`` puts the plan's totals there). ``split_versions``
    (personality -> ``versioning.split_version``) make an edited corpus file outdate its partitions.
    """
    from . import freshness

    outcomes: list[RunOutcome] = []
    run_config = {"loggers": {"console": {"config": {"log_level": dagster_log_level}}}}
    graph = defs.resolve_asset_graph()
    methods = freshness.configured_methods(graph)
    for i, planned in enumerate(specs, start=1):
        runs = [planned]
        if skip_up_to_date:
            people = list(instance.get_dynamic_partitions(PERSONALITY))
            parts = freshness.spec_partitions(planned, graph, people, methods)
            runs = freshness.narrow(planned, parts, graph, instance, methods, split_versions)
            if not runs:
                progress(f"[{i}/{len(specs)}] {planned.describe()}: up to date, skipped (--force re-runs it)")
                continue
        for spec in runs:
            progress(f"[{i}/{len(specs)}] {spec.describe()}")
            t0 = time.perf_counter()
            job = defs.resolve_job_def(spec.job)
            result = job.execute_in_process(
                instance=instance, asset_selection=list(spec.assets), tags={**(tags or {}), **range_tags(spec), **owner_tags()},
                run_config=run_config, raise_on_error=False,
            )
            outcome = _outcome(spec, result, time.perf_counter() - t0)
            outcomes.append(outcome)
            status = "ok" if outcome.success else "FAILED"
            checks = f", checks {outcome.checks_passed} passed" + (
                f", {len(outcome.checks_failed)} failed: {', '.join(outcome.checks_failed)}" if outcome.checks_failed else ""
            )
            progress(f"      {status} in {outcome.seconds:.1f} s: {outcome.materializations} partition "
                     f"materialisation(s){checks} (run {outcome.run_id[:8]})")
            if not outcome.success:
                for ev in result.all_events:
                    if ev.is_step_failure:
                        progress(f"      step {ev.step_key} failed: {ev.step_failure_data.error.message.strip()}")
                return outcomes
    return outcomes


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
    # Checks record one verdict per partition (``check_results``): name each failing check once.
    return RunOutcome(spec, result.run_id, result.success, seconds, n_mat, passed, list(dict.fromkeys(failed)))


def register_personalities(instance: dg.DagsterInstance, corpus: str) -> tuple[list[str], list[str], list[str]]:
    """Add every valid personality of ``corpus`` as a partition: (added, already known, problems)."""
    from .registration import scan_corpus

    scan = scan_corpus(corpus)
    known = set(instance.get_dynamic_partitions(PERSONALITY))
    new = [pid for pid in scan.valid if pid not in known]
    if new:
        instance.add_dynamic_partitions(personality_partitions.name, new)
    return new, [pid for pid in scan.valid if pid in known], list(scan.problems)


__all__ = [
    "GLOBAL_JOB", "JOB_DESCRIPTIONS", "METHOD", "PERSONALITY_JOB", "PERSONALITY_METHOD_JOB", "PERSONALITY_SUMMARY_JOB",
    "RunOutcome", "RunSpec",
    "execute", "plan_runs", "range_tags", "register_personalities",
]
