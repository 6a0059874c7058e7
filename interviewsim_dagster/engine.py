"""The body of every stage multi-asset: the budget gate, core's streaming scheduler, the events.

What a run does, in order (every launch route: ``interviewsim run``, a UI launch or backfill, the
automation sensor):

1. **refuse what cannot be done truthfully**, before any call: a personality of the run that is
   registered but has no valid document (the CLI skips such personalities with a warning; a UI run
   cannot skip part of the range it will report), a run whose tags disagree with its range and whose
   selection cannot be recovered (``run_keys``; the job page's backfill is recovered from its backfill);
2. **the budget gate**: the plan of the run's own steps and partitions is computed, logged and put
   on the run's tags; above ``max_cost_usd`` the run fails before its first call, unless it carries
   an approval (``APPROVE_TAG``, which ``interviewsim run`` sets after the user accepted its plan);
   the stage that reads the files then records each of its personalities' source version that changed
   (``defs/corpus/sources.py``), so what it makes shows the version it was made from;
3. **the scheduler** (``runner.run_steps``) makes every selected partition, streaming all their calls
   through one gateway, writing each partition as soon as it is done and logging progress at INFO;
   in a run of ``interviewsim run`` the action's worker process (``action_worker``) is that scheduler
   for every run of the action at once, and the run records each partition as the worker reports it;
4. the cache's write errors fail the run (answers kept in the tables but not cached would be paid
   again), and one ``MaterializeResult`` per selected asset reports every partition with its own
   metadata; partitions the run wrote beyond Dagster's own keys (the job page's backfill, ``run_keys``)
   get one ``AssetMaterialization`` each, with the same metadata and data version.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from typing import Any

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.steps import BY_NAME, Cell, Partitioning, Step
from interviewsim_core.pipeline.table_summary import summary_of

from . import action_worker
from .assets_support import CORPUS, LLM
from .defs.corpus.partitions import PERSONALITY, dims_of
from .defs.corpus.sources import changed
from .recording import partition_metadata
from .resources import step_env
from .run_keys import PARTITION_TAG_PREFIX, run_partitions_def
from .versioning import lineage_version, reread_inputs

APPROVE_TAG = "interviewsim/approve_cost_usd"
"""Run tag: the cost in USD the user accepted for this run (``interviewsim run`` sets it after its own
plan was accepted; in the UI add it to the launch or backfill tags)."""
PLAN_TAG_PREFIX = "interviewsim/plan_"


def run_stage(context: dg.AssetExecutionContext, cfg: EvalConfig, stage, selected: Sequence[Step],
              keys: Sequence[str | None], parts) -> Iterator[dg.MaterializeResult | dg.AssetObservation]:
    if not selected:
        return
    cells = [parts.cell(selected[0], k) for k in keys]
    key_of = dict(zip(cells, keys))
    corpus = getattr(context.resources, CORPUS)
    curating = any(s.curation for s in selected)  # the run writes the documents: none is required yet
    files = _valid_files(corpus, cells) if not curating else {}
    people = sorted({c.personality for c in cells if c.personality is not None})
    registered = list(context.instance.get_dynamic_partitions(PERSONALITY))
    worker, token = action_worker.find(context.run.tags.get(action_worker.WORKER_TAG))
    if worker is None:
        yield from _run_stage(context, cfg, stage, selected, cells, key_of, files, people, registered, None, "")
        return
    try:
        if worker.interrupted.is_set():  # Ctrl-C while this run waited for its pool slot
            raise KeyboardInterrupt("interrupted before this run's first step")
        worker.started(token)  # the launcher starts the next run of the action now
        yield from _run_stage(context, cfg, stage, selected, cells, key_of, files, people, registered, worker, token)
    finally:
        worker.recorded(token)  # the runs recording after this one's may store theirs now


def _run_stage(context: dg.AssetExecutionContext, cfg: EvalConfig, stage, selected: Sequence[Step], cells, key_of,
               files, people, registered, worker, token: str) -> Iterator[dg.MaterializeResult | dg.AssetObservation]:
    """The stage's partitions made here by core's scheduler (``run_steps``), or, in a run of
    ``interviewsim run`` (``worker``), recorded as the action's worker process reports them."""
    from interviewsim_core.pipeline.runner import PROGRESS_EVERY_S, load_split, run_steps

    _gate(context, cfg, selected, cells, people)
    if reads_sources(stage, cfg):
        observed = changed(context.instance, cfg, people, files)
        yield from observed  # stored when yielded, before the inputs are re-read below
        if observed:
            context.log.info(f"source version recorded for {len(observed)} personalit"
                             f"{'y' if len(observed) == 1 else 'ies'} whose files changed (personality_sources)")
            reread_inputs(context)  # what this run makes records the version it is made from

    model_steps = [s for s in selected if s.calls_models]
    gateway = getattr(context.resources, LLM).get() if model_steps and worker is None else None
    env = step_env(cfg, getattr(context.resources, CORPUS).split)
    started = time.monotonic()

    own = {str(k) for k in context.partition_keys} if stage.partitioning is not Partitioning.NONE else set()
    beyond: dict[str, dict[str, dict[str, Any]]] = {}  # step -> key -> metadata, keys Dagster does not record

    def record(step: Step, cell: Cell, meta: dict[str, Any]) -> None:
        if step.partitioning is Partitioning.NONE:
            context.add_asset_metadata(meta, asset_key=step.name)
        elif key_of[cell] in own:
            context.add_asset_metadata(meta, asset_key=step.name, partition_key=key_of[cell])
        else:
            beyond.setdefault(step.name, {})[key_of[cell]] = meta

    metadata = partition_metadata(cfg, env.split)

    def done(step: Step, cell: Cell, out: Any, inputs, written) -> None:
        record(step, cell, metadata(step, cell, lambda: out, inputs, summary_of(out, written, step.means)))

    counts: dict[str, dict[str, float]] = {}
    context.log.info(f"{stage.name}: making {', '.join(s.name for s in selected)} for {len(cells)} partition(s)"
                     + (f" (written by this action's worker process, {worker.name})" if worker is not None else ""))
    if worker is not None:
        from interviewsim_core.pipeline.runner import PROGRESS_FIELDS, read_partition, stored_inputs

        space = registered or people, list(cfg.methods)

        def reported(node, report) -> None:
            step, cell = BY_NAME[node[0]], node[1]
            out = (lambda: read_partition(cfg, step.name, cell)) if report.in_file else (lambda: report.out)
            record(step, cell, metadata(step, cell, out, lambda: stored_inputs(cfg, step, cell, *space), report.summary))
            if report.counts is not None:  # this run's step totals: the sum over its own partitions
                total = counts.setdefault(step.name, dict.fromkeys(PROGRESS_FIELDS, 0))
                for field in PROGRESS_FIELDS:
                    total[field] += report.counts.get(field, 0)

        interrupted = worker.interrupted.is_set
        action_worker.wait_for(worker, [(s.name, c) for s in selected for c in cells], reported, context.log.info,
                               PROGRESS_EVERY_S, interrupted)
        worker.wait_turn(token, interrupted)  # the runs it reads from store their materialisations first
        reread_inputs(context)  # provenance as of now, not of the step's start (issue 33)
    else:
        run_steps(cfg, {s.name: cells for s in selected}, lambda pid: load_split(files.get(pid) or _curated(cfg, pid)),
                  registered or people,
                  list(cfg.methods),
                  gateway=gateway, write=True, progress=context.log.info, keep=(), on_partition=done, env=env,
                  progress_every_s=PROGRESS_EVERY_S if model_steps else None, counts=counts)
    if gateway is not None and hasattr(gateway, "raise_for_cache_errors"):
        try:
            gateway.raise_for_cache_errors()
        except Exception as exc:  # noqa: BLE001 - CacheWriteError names the file; keep its text, fail the run
            kept = ("every answer paid for is stored" if getattr(exc, "stored", False)
                    else "the tables hold those answers, but a re-run would pay for them again")
            raise dg.Failure(f"{exc}; {kept}: fix the cache path (disk space, permissions) and re-run") from None
    seconds = time.monotonic() - started
    for step in selected:
        meta: dict[str, Any] = {"partitions_written": len(cells), "stage_seconds": round(seconds, 2)}
        c = counts.get(step.name)
        if c is not None:  # the step's calls over every partition of this run (the rows say per partition)
            meta.update({"step_calls_planned": int(c["planned"]), "step_calls_made": int(c["answered"] - c["cached"]),
                         "step_cache_hits": int(c["cached"]), "step_invalid": int(c["invalid"]),
                         "step_failed": int(c["failed"]), "step_cost_usd": float(c["cost_usd"])})
        yield dg.MaterializeResult(asset_key=step.name, metadata=meta,
                                   data_version=dg.DataVersion(lineage_version(step, cfg)))
        if step.name in beyond:
            _record_beyond(context, step.name, meta, beyond[step.name])


def reads_sources(stage, cfg: EvalConfig) -> bool:
    """True for the partitioned stage that reads the files (it holds a step without inputs: the curation's first,
    or the split when nothing is curated): its runs record each personality's source version first (``sources``)."""
    return stage.partitioning is not Partitioning.NONE and any(
        not any(BY_NAME[i.step].enabled(cfg) for i in s.inputs) for s in stage.steps)


def _record_beyond(context: dg.AssetExecutionContext, asset: str, run_meta: dict[str, Any],
                   by_key: dict[str, dict[str, Any]]) -> None:
    """One materialisation per partition the run wrote beyond ``context.partition_keys`` (``run_keys``).

    Each carries what Dagster recorded for the run's own partition of the same asset a moment ago (its
    data version, code version and input provenance tags, so staleness reads the same) with the
    partition's own metadata and dimension tags. Dagster stores an event as it is yielded, so that
    record exists by the time the body resumes after its ``MaterializeResult``.
    """
    key = dg.AssetKey(asset)
    own = [str(k) for k in context.partition_keys]
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=own), limit=1).records
    if not records or records[0].run_id != context.run_id:
        raise dg.Failure(f"{asset}: wrote {len(by_key)} partition(s) beyond {own} but found no materialisation of "
                         f"{own} by this run to copy their data version from; they are written but not recorded, "
                         "so re-launch them from the Catalog")
    tags = {k: v for k, v in (records[0].asset_materialization.tags or {}).items()
            if not k.startswith(PARTITION_TAG_PREFIX + "/")}
    pdef = run_partitions_def(context)
    for partition, meta in by_key.items():
        dims = {f"{PARTITION_TAG_PREFIX}/{d}": v for d, v in dims_of(pdef, partition).items()} \
            if isinstance(pdef, dg.MultiPartitionsDefinition) else {}
        context.log_event(dg.AssetMaterialization(asset_key=key, partition=partition,
                                                  metadata={**run_meta, **meta}, tags={**tags, **dims}))


def _curated(cfg: EvalConfig, pid: str) -> str:
    """The document the run's curation wrote for ``pid``; refused personalities have none (its table says why)."""
    from pathlib import Path

    from interviewsim_core.loader import DOCUMENT_NAME

    path = Path(cfg.corpus) / pid / DOCUMENT_NAME
    if not path.is_file():
        raise dg.Failure(f"the curation wrote no document for {pid!r} ({path}): it refused the personality; its "
                         "prepared_input partition lists why (refused, problems)")
    return str(path)


def _valid_files(corpus, cells: Sequence[Cell]) -> dict[str, str]:
    """Personality id -> its document for the run's personalities, refusing registered ones without one."""
    wanted = sorted({c.personality for c in cells if c.personality is not None})
    if not wanted:
        return {}
    valid = corpus.scan().valid
    stale = [p for p in wanted if p not in valid]
    if stale:
        raise dg.Failure(
            f"personalit{'y' if len(stale) == 1 else 'ies'} {', '.join(map(repr, stale))} registered but without a valid "
            f"document in {corpus.path}: nothing was run. Restore the file(s), or remove the partition(s) with "
            f"`interviewsim unregister {' '.join(stale)}` (the sensor log lists invalid files); when the config "
            "curates, materialise their prepared_input first (its table says why a personality was refused).")
    return {p: valid[p] for p in wanted}


def _gate(context: dg.AssetExecutionContext, cfg: EvalConfig, selected: Sequence[Step], cells: Sequence[Cell],
          people: list[str]) -> None:
    """Plan this run's own calls, put the totals on the run's log and tags, refuse it over budget.

    Raises:
        dg.Failure: the plan costs more than ``max_cost_usd`` and the run carries no approval of it.
    """
    model_steps = [s for s in selected if s.calls_models]
    if not model_steps:
        return
    from interviewsim_core.plan import RunPlan, has_price, plan_run

    models = [m for s in model_steps for m in s.models(cfg)]
    if not any(has_price(m) for m in models):
        context.log.info("plan: no model of this run has a price (offline, or a server litellm has no rate for): "
                         "it costs $0 and cannot exceed max_cost_usd, so it is not planned "
                         "(`interviewsim plan` counts its calls)")
        return

    methods = sorted({c.method for c in cells if c.method is not None}) or None
    t0 = time.monotonic()
    curation = [s for s in model_steps if s.curation]
    plan = _plan_curation(context, cfg, curation, people)
    evaluated = [s.name for s in model_steps if not s.curation]
    curated = people
    if evaluated and curation:  # the evaluation of a personality not curated yet is planned once its document exists
        from interviewsim_core.loader import DOCUMENT_NAME

        curated = [p for p in people if (cfg.corpus / p / DOCUMENT_NAME).is_file()]
    if evaluated and (curated or not curation):
        plan = RunPlan(lines=plan.lines + plan_run(cfg, curated or None, methods, steps=evaluated).lines)
    totals = plan.totals()
    context.log.info(f"plan of this run ({time.monotonic() - t0:.1f} s to compute):\n{plan.table()}")
    context.instance.add_run_tags(context.run_id, {PLAN_TAG_PREFIX + k: str(v) for k, v in totals.items()})
    limit = cfg.max_cost_usd
    if limit is None or plan.cost_usd <= limit:
        return
    from interviewsim_core.plan import over_budget

    approved = _float(context.run.tags.get(APPROVE_TAG))
    if approved is not None and plan.cost_usd <= approved + 1e-9:
        context.log.info(f"{over_budget(plan, limit)}, approved up to ${approved:g}")
        return
    need = math.ceil(plan.cost_usd * 100) / 100
    several = cfg.generator_of if len(cfg.effective_generators) > 1 else None
    # A refusal is an expected outcome, not a bug: one message saying what to do, the plan as the failure's
    # metadata, and no retry (a retry policy would only refuse again). Dagster still attaches the stack of
    # the raise to every step failure and copies it onto the run's failure event (docs/DESIGN.md).
    raise dg.Failure(
        f"Refused by the budget gate: {over_budget(plan, limit, several)} ({totals['to_send']:,} calls to send). "
        f"Not started, no model was called. To approve it, launch again with the run "
        f"tag {APPROVE_TAG}={need:.2f} (Launchpad or backfill dialog: tags), or raise max_cost_usd in the "
        "configuration and reload the code location.",
        metadata={"plan_cost_usd": plan.cost_usd, "max_cost_usd": limit, "plan": dg.MetadataValue.md(plan.markdown())},
        allow_retries=False)


def _plan_curation(context, cfg: EvalConfig, steps: Sequence[Step], people: list[str]):
    """The curation's calls for the run's personalities (``curation/plan.py``), when the run curates."""
    from interviewsim_core.plan import RunPlan, plan_curation_of

    if not steps:
        return RunPlan(lines=())
    context.log.info("plan: the evaluation steps of this run are planned for the personalities already curated; "
                     "the others' depend on the pairs their curation finds")
    return plan_curation_of(cfg, people, [s.name for s in steps])


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
