"""One factory from core's step table (``interviewsim_core.pipeline.steps``) to Dagster assets.

Each step becomes one asset: its partitioning becomes the partitions definition, each input an
``AssetIn`` (loaded) or ``AssetDep`` (ordering only) with the matching partition mapping, its models
the pool and code version, its trigger the automation condition. The body is the same for every
step: turn the run's partition keys into core ``Cell``s, map the loaded upstream partitions with
core's ``inputs_for``, then either plan every partition, run ONE gateway batch per round and
assemble (model steps) or compute (the others). What a step means lives in core; this module only
knows how Dagster spells it.

The configuration is one source: the assets are built from the ``EvalConfig`` of the code location
(partitions, code versions and pools depend on it), and the bodies use that same object. The
``eval_config`` resource shows it in the launchpad; a run whose resource config was edited there is
refused (``checked_config``) instead of silently producing rows that do not match their code version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.calls import PlannedCall, run_calls
from interviewsim_core.pipeline.config import JUDGE_CONTRACTS, EvalConfig
from interviewsim_core.pipeline.steps import (
    BY_NAME,
    Cell,
    Input,
    InputMapping,
    Partitioning,
    Step,
    StepEnv,
    Trigger,
    inputs_for,
    model_version,
    steps_for,
)

from .assets_support import CONFIG, CORPUS, LLM, SINGLE_RUN, pool_for
from .batching import describe, gateway_delta
from .defs.corpus.partitions import dims_of, personality_partitions, personality_x_method, to_personality
from .defs.evaluate.automation import (
    AFTER_ANY_UPSTREAM_CONTENT_CHANGE,
    FOLLOW_UPSTREAM,
    catch_up_at,
    rescore_on_judge_change,
)
from .io_managers import ALLOW_MISSING
from .presenters import PRESENTERS
from .versioning import versioned_output

def config_hash(cfg: EvalConfig) -> str:
    return hashlib.sha256(cfg.model_dump_json().encode("utf-8")).hexdigest()[:16]


def checked_config(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext, cfg: EvalConfig) -> EvalConfig:
    """``cfg``, after checking the run's ``eval_config`` resource still says the same.

    Raises:
        dg.Failure: the resource was edited for this run (launchpad); the graph's partitions and code
            versions were built from ``cfg``, so such a run could not be trusted.
    """
    resource = getattr(context.resources, CONFIG)
    if resource.config_json != cfg.model_dump_json():
        raise dg.Failure(
            "the eval_config resource of this run differs from the configuration this code location was "
            f"built from (config {config_hash(cfg)}); partitions, code versions and pools come from that "
            "configuration, so it cannot be changed per run. Change the config file or INTERVIEWSIM_* "
            "variables (or `interviewsim run` flags) and reload the code location instead."
        )
    return cfg


class Partitions:
    """The partitions definitions of one configuration, by core partitioning."""

    def __init__(self, cfg: EvalConfig):
        self.pxm = personality_x_method(cfg.methods)
        self.by_kind: dict[Partitioning, dg.PartitionsDefinition | None] = {
            Partitioning.NONE: None, Partitioning.PERSONALITY: personality_partitions,
            Partitioning.PERSONALITY_METHOD: self.pxm,
        }

    def of(self, step: Step) -> dg.PartitionsDefinition | None:
        return self.by_kind[step.partitioning]

    def cell(self, step: Step, key: str | None) -> Cell:
        if key is None or step.partitioning is Partitioning.NONE:
            return Cell()
        dims = dims_of(self.of(step), key)
        return Cell(dims["personality"], dims.get("method"))


def partition_mapping(inp: Input, step: Step) -> dg.PartitionMapping | None:
    """Dagster's spelling of a core input mapping between ``step`` and its upstream step."""
    up = BY_NAME[inp.step]
    if inp.mapping is InputMapping.ALL:
        return dg.AllPartitionMapping() if up.partitioning is not Partitioning.NONE else None
    if inp.mapping is InputMapping.PERSONALITY and up.partitioning is not step.partitioning:
        return to_personality
    return None


def judged_aggregate(step: Step) -> bool:
    """A table computed (no model call) from judgments: one row or column per judge, so it changes meaning
    with the judges. ``method_scores``, ``personality_scores``, ``leaderboard``; not the report's files."""
    if step.calls_models or step.writes_files:
        return False
    return any(BY_NAME[i.step].trigger is Trigger.JUDGE_CHANGE or judged_aggregate(BY_NAME[i.step])
               for i in step.inputs)


def code_version(step: Step, cfg: EvalConfig) -> str | None:
    """Core's code version; judged aggregates take the judges' identities, so the UI shows them stale
    after a judge change together with the judgments (a compute step's version is otherwise ``None``)."""
    if judged_aggregate(step):
        return model_version(cfg.effective_judges, JUDGE_CONTRACTS)
    return step.code_version(cfg)


def automation(step: Step, cfg: EvalConfig) -> dg.AutomationCondition:
    cron = cfg.rescore_cron
    if step.trigger is Trigger.JUDGE_CHANGE or (step.trigger is Trigger.UPSTREAM and judged_aggregate(step)):
        # method_scores: re-run on the judge-change tick too, so it lands in the judgments' runs.
        return rescore_on_judge_change(cron)
    if step.trigger is Trigger.ANY_UPSTREAM:
        if judged_aggregate(step):
            return catch_up_at(cron, AFTER_ANY_UPSTREAM_CONTENT_CHANGE)
        return AFTER_ANY_UPSTREAM_CONTENT_CHANGE
    return FOLLOW_UPSTREAM


def step_env(context, cfg: EvalConfig) -> StepEnv:
    from .resources import configured_embedder, embedding_cache

    corpus = getattr(context.resources, CORPUS)
    return StepEnv(cfg, corpus.split,
                   embedder=lambda: configured_embedder(cfg.effective_embedding_model, cfg.effective_embedding_api_base),
                   embedding_cache=embedding_cache(cfg))


def run_cells(context, step: Step, parts: Partitions) -> dict[str | None, Cell]:
    """The run's partition keys of ``step`` and their cells (``{None: Cell()}`` when unpartitioned)."""
    if step.partitioning is Partitioning.NONE:
        return {None: Cell()}
    return {str(k): parts.cell(step, str(k)) for k in context.partition_keys}


def cell_inputs(step: Step, cells: Mapping[str | None, Cell], loaded: Mapping[str, Any],
                parts: Partitions) -> dict[Cell, dict[str, Any]]:
    """Core's inputs per cell from what the IO manager loaded (partition key -> frame, or one frame)."""
    done: dict[str, dict[Cell, Any]] = {}
    for name, value in loaded.items():
        up = BY_NAME[name]
        if up.partitioning is Partitioning.NONE or not isinstance(value, Mapping):
            done[name] = {Cell(): value}
        else:
            done[name] = {parts.cell(up, str(k)): v for k, v in value.items()}
    out = {}
    for key, cell in cells.items():
        try:
            out[cell] = inputs_for(step, cell, done)
        except KeyError as exc:
            raise KeyError(f"{step.name}: upstream partition {exc} for {key!r} is not materialised; "
                           "materialise it first") from None
    return out


def plan_cells(step: Step, env: StepEnv, cells: Mapping[str | None, Cell],
               inputs: Mapping[Cell, dict[str, Any]]) -> dict[str | None, list[PlannedCall]]:
    """The first round of calls of every partition of the run (no model called); checks re-plan through this."""
    return {key: step.plan(env, cell, inputs[cell]) for key, cell in cells.items()}


def _run_model_step(step: Step, env: StepEnv, gw, cells, inputs) -> tuple[dict[str | None, pd.DataFrame], dict]:
    planned = plan_cells(step, env, cells, inputs)
    with gateway_delta(gw) as stats:
        results = run_calls(gw, [p for calls in planned.values() for p in calls])
        while step.replan is not None:
            more = {k: step.replan(env, cells[k], planned[k], results) for k in planned}
            if not any(more.values()):
                break
            results.update(run_calls(gw, [p for calls in more.values() for p in calls]))
            for k, calls in more.items():
                planned[k] = [*planned[k], *calls]
    return {k: step.assemble(env, cells[k], planned[k], results) for k in planned}, stats


def _body(step: Step, cfg: EvalConfig, parts: Partitions) -> Callable[..., Any]:
    present = PRESENTERS.get(step.name)

    def body(context, **loaded):  # no annotation: Dagster reads it, and annotations are strings here
        result = compute(context, **loaded)
        if isinstance(result, dg.MaterializeResult):
            yield result
        else:  # content data versions, one per partition (``versioning``)
            yield from versioned_output(context, result)

    def compute(context, **loaded):
        run_cfg = checked_config(context, cfg)
        env = step_env(context, run_cfg)
        cells = run_cells(context, step, parts)
        inputs = cell_inputs(step, cells, loaded, parts)
        stats: dict = {}
        if step.plan is not None:
            frames, stats = _run_model_step(step, env, getattr(context.resources, LLM).get(), cells, inputs)
        else:
            frames = {k: step.compute(env, c, inputs[c]) for k, c in cells.items()}
            if step.writes_files:
                (out,) = frames.values()
                return dg.MaterializeResult(metadata=present(run_cfg, Cell(), inputs[Cell()], out) if present else {})
        if present is not None:  # the step's own headline first, then the generic table metadata
            for k, df in frames.items():
                meta = present(run_cfg, cells[k], inputs[cells[k]], df)
                if k is None:
                    context.add_asset_metadata(meta)
                else:
                    context.add_asset_metadata(meta, partition_key=k)
        describe(context, frames, means=step.means, extra=stats)
        return frames[None] if step.partitioning is Partitioning.NONE else frames

    body.__name__ = step.name
    return body


def asset_for(step: Step, cfg: EvalConfig, parts: Partitions) -> dg.AssetsDefinition:
    ins: dict[str, dg.AssetIn] = {}
    deps: list[dg.AssetDep] = []
    for inp in step.inputs:
        if not BY_NAME[inp.step].enabled(cfg):
            continue  # an input on an optional step this config leaves out (report after ps_stability)
        mapping = partition_mapping(inp, step)
        if inp.load:
            ins[inp.step] = dg.AssetIn(partition_mapping=mapping,
                                       metadata={ALLOW_MISSING: True} if inp.allow_missing else None)
        else:
            deps.append(dg.AssetDep(inp.step, partition_mapping=mapping))
    models = step.models(cfg)
    pdef = parts.of(step)
    return dg.asset(
        name=step.name,
        partitions_def=pdef,
        group_name=step.group,
        backfill_policy=SINGLE_RUN if pdef is not None else None,
        kinds=set(step.kinds),
        ins=ins,
        deps=deps or None,
        code_version=code_version(step, cfg),
        pool=pool_for(models) if step.calls_models else None,
        automation_condition=automation(step, cfg),
        description=step.description,
        required_resource_keys={CONFIG, CORPUS, LLM} if step.plan is not None else {CONFIG, CORPUS},
    )(_body(step, cfg, parts))


def build_step_assets(cfg: EvalConfig, only: tuple[str, ...] | None = None) -> list[dg.AssetsDefinition]:
    """Every step of ``cfg``'s graph as an asset, in step order (or just the steps named in ``only``)."""
    parts = Partitions(cfg)
    return [asset_for(step, cfg, parts) for step in steps_for(cfg) if only is None or step.name in only]
