"""One factory from core's step table (``interviewsim_core.pipeline.steps``) to Dagster assets.

Each step becomes one asset (an ``AssetSpec``: partitions, deps with their partition mappings, code
version, automation condition, group, kinds), and the steps of one *stage* share one subsettable
multi-asset whose body is core's streaming scheduler (``runner.run_steps``). A stage is a maximal
run of steps with one partitioning that Dagster can execute in one run (``stages``): per
personality (split, references, premise), per personality x method (generations, judgments,
scores), per-personality summaries of those, and the global tables (leaderboard, report).

Why stages and not one op per step: Dagster runs the ops of a run one after the other, so with an
op per step a run's judges waited for every generation of every partition, and the run ran at a
fifth of the scheduler's speed (issue 21). Inside a stage the scheduler overlaps every step,
personality and method through one gateway, exactly as ``run_evaluation`` does; each partition is
written as soon as it is done (a killed run keeps it, the cache keeps its calls), and the stage
reports one materialisation per selected asset partition when it ends. What a step means lives in
core; this module only knows how Dagster spells it.

The configuration is one source: the assets are built from the ``EvalConfig`` of the code location
(partitions, code versions and pools depend on it), and the bodies use that same object. The
``eval_config`` resource shows it in the launchpad; a run whose resource config was edited there is
refused (``checked_config``) instead of silently producing rows that do not match their code version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.calls import PlannedCall
from interviewsim_core.pipeline.config import EvalConfig
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
    steps_for,
)

from .assets_support import CONFIG, CORPUS, LLM, SINGLE_RUN, pool_for
from .defs.corpus.partitions import dims_of, personality_partitions, personality_x_method, to_personality
from .defs.corpus.sources import SOURCE_KEY
from .defs.evaluate.automation import (
    AFTER_COMPLETE_UPSTREAM_UPDATE,
    AFTER_UPSTREAM_UPDATE,
    catch_up_at,
    fill_new,
    rescore_on_judge_change,
)
from .run_keys import run_keys
from .versioning import code_version, judged_aggregate, lineage_version

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


def automation(step: Step, cfg: EvalConfig) -> dg.AutomationCondition | None:
    """The step's automation condition (``defs/evaluate/automation.py`` says what each launches and why).

    A model step gets one only to re-score materialised partitions on a judge change (and, opted in,
    to fill new partitions); a step that calls no model refreshes after its upstream changed. ``None``:
    the sensor never launches it (it runs when a person asks). Never on a personality's new source version
    (``defs/corpus/sources.py``): that means new calls, which nobody asked for; its assets show stale instead."""
    condition = _automation(step, cfg)
    return condition.ignore(dg.AssetSelection.assets(SOURCE_KEY)) if condition is not None else None


def _automation(step: Step, cfg: EvalConfig) -> dg.AutomationCondition | None:
    cron = cfg.rescore_cron
    fill = fill_new(cfg.automation_fill_new)
    if step.curation:  # when a person asks (or, opted in, for a new partition): never after an upstream update
        return fill
    if step.calls_models:
        return rescore_on_judge_change(cron, fill) if step.trigger is Trigger.JUDGE_CHANGE else fill
    if not any(BY_NAME[i.step].enabled(cfg) for i in step.inputs):  # the split, uncurated: a root; free, but
        return fill                                                  # nobody asked for it
    base = AFTER_UPSTREAM_UPDATE if step.trigger is Trigger.ANY_UPSTREAM else AFTER_COMPLETE_UPSTREAM_UPDATE
    if judged_aggregate(step):
        if any(BY_NAME[i.step].trigger is Trigger.JUDGE_CHANGE for i in step.inputs):
            return rescore_on_judge_change(cron, base)  # method_scores: in the judgments' own re-score run
        return catch_up_at(cron, base)  # personality_scores, leaderboard: after the re-scored scores land
    return base


STAGE_JOBS = {("P", 0): "personality_assets", ("PxM", 0): "personality_method_assets",
              ("P", 1): "personality_summary_assets", ("none", 0): "global_assets"}
"""Stage -> the asset job that holds it (``launch.JOB_ORDER``): the names docs/USER_GUIDE.md and the UI use."""


@dataclass(frozen=True)
class Stage:
    """Steps with one partitioning that one Dagster run executes together, in step order."""

    name: str
    partitioning: Partitioning
    steps: tuple[Step, ...]

    @property
    def job(self) -> str:
        return self.name

    @property
    def op(self) -> str:
        """The multi-asset's op name (a job and an op may not share a name)."""
        return self.name.replace("_assets", "_stage")

    def models(self, cfg: EvalConfig) -> list:
        return [m for s in self.steps if s.calls_models for m in s.models(cfg)]


def stages(cfg: EvalConfig) -> list[Stage]:
    """The configuration's steps cut into stages, in execution order.

    A step joins the stage of its inputs when they share its partitioning; reading a step of another
    partitioning puts it one stage later (``personality_scores`` reads P x M scores, so it cannot run
    with the per-personality references those scores need). Unpartitioned steps form one stage:
    nothing partitioned reads them.
    """
    steps = steps_for(cfg)
    level: dict[str, int] = {}
    for s in steps:
        lv = 0
        for i in s.inputs:
            if i.step in level:
                up = BY_NAME[i.step]
                lv = max(lv, level[i.step] + (up.partitioning is not s.partitioning))
        level[s.name] = lv
    groups: dict[tuple[str, int], list[Step]] = {}
    for s in steps:
        if s.partitioning is Partitioning.NONE:
            key = ("none", 0)
        else:
            same = sorted({level[t.name] for t in steps if t.partitioning is s.partitioning})
            key = (s.partitioning.value, same.index(level[s.name]))
        groups.setdefault(key, []).append(s)
    for s in steps:
        for i in s.inputs:
            if i.step in level and BY_NAME[i.step].partitioning is Partitioning.NONE and \
                    s.partitioning is not Partitioning.NONE:
                raise TypeError(f"step {s.name} reads unpartitioned {i.step}: no stage order can run it")
    unknown = set(groups) - set(STAGE_JOBS)
    if unknown:
        raise TypeError(f"the step table needs stages {sorted(unknown)} that have no job name (STAGE_JOBS)")
    order = [k for k in STAGE_JOBS if k in groups]
    return [Stage(STAGE_JOBS[k], groups[k][0].partitioning, tuple(groups[k])) for k in order]


def run_cells(context, step: Step, parts: Partitions) -> dict[str | None, Cell]:
    """The run's partition keys of ``step`` and their cells (``{None: Cell()}`` when unpartitioned)."""
    if step.partitioning is Partitioning.NONE:
        return {None: Cell()}
    return {k: parts.cell(step, k) for k in run_keys(context)}


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


def stage_keys(context, stage: Stage) -> list[str | None]:
    """The run's partition keys (``run_keys``: the selection, also on the job page's backfill route)."""
    if stage.partitioning is Partitioning.NONE:
        return [None]
    return run_keys(context)


def _stage_body(stage: Stage, cfg: EvalConfig, parts: Partitions) -> Callable[..., Any]:
    from .engine import run_stage

    def body(context):  # no annotation: annotations are strings here, Dagster reads it
        run_cfg = checked_config(context, cfg)
        selected = [s for s in stage.steps if dg.AssetKey(s.name) in context.selected_asset_keys]
        keys = stage_keys(context, stage)
        yield from run_stage(context, run_cfg, stage, selected, keys, parts)

    body.__name__ = stage.name
    return body


def reads_personalities(step: Step, cfg: EvalConfig) -> bool:
    """A partitioned step, or one reading such a step (the leaderboard, the report), is made from the personalities'
    files; a table of its own input (the premise judge on a user's conclusions) is not."""
    return step.partitioning is not Partitioning.NONE or any(
        reads_personalities(BY_NAME[i.step], cfg) for i in step.inputs if BY_NAME[i.step].enabled(cfg))


def source_deps(step: Step, cfg: EvalConfig) -> list[dg.AssetDep]:
    """``step``'s dependency on its personalities' sources (``defs/corpus/sources.py``), when it has one: each
    partition on its personality's, an unpartitioned table on every personality's."""
    if not reads_personalities(step, cfg):
        return []
    mapping = {Partitioning.NONE: dg.AllPartitionMapping(), Partitioning.PERSONALITY: None,
               Partitioning.PERSONALITY_METHOD: to_personality}[step.partitioning]
    return [dg.AssetDep(SOURCE_KEY, partition_mapping=mapping)]


def spec_for(step: Step, cfg: EvalConfig, parts: Partitions) -> dg.AssetSpec:
    deps = [dg.AssetDep(i.step, partition_mapping=partition_mapping(i, step))
            for i in step.inputs if BY_NAME[i.step].enabled(cfg)] + source_deps(step, cfg)
    return dg.AssetSpec(
        key=step.name, deps=deps, description=step.description, group_name=step.group,
        code_version=code_version(step, cfg), automation_condition=automation(step, cfg),
        partitions_def=parts.of(step), kinds=set(step.kinds), skippable=True,
    )


def stage_asset(stage: Stage, cfg: EvalConfig, parts: Partitions, pools: bool = True) -> dg.AssetsDefinition:
    """``pools=False``: no pool on the op, for the runs that only record what ``interviewsim run``'s worker
    process made (``launch``): they make no call, so a pool slot would only make them wait."""
    models = stage.models(cfg)
    partitioned = stage.partitioning is not Partitioning.NONE
    needs_llm = any(s.calls_models for s in stage.steps)
    return dg.multi_asset(
        name=stage.op,
        specs=[spec_for(s, cfg, parts) for s in stage.steps],
        can_subset=True,
        backfill_policy=SINGLE_RUN if partitioned else None,
        pool=pool_for(models) if models and pools else None,
        required_resource_keys={CONFIG, CORPUS, LLM} if needs_llm else {CONFIG, CORPUS},
        description=f"The {stage.name.replace('_', ' ')}: " + ", ".join(s.name for s in stage.steps)
        + ", made together by one streaming scheduler (see the assets' own descriptions).",
    )(_stage_body(stage, cfg, parts))


def build_step_assets(cfg: EvalConfig, only: tuple[str, ...] | None = None,
                      pools: bool = True) -> list[dg.AssetsDefinition]:
    """Every stage of ``cfg``'s graph as one multi-asset (one asset spec per step), in stage order.

    ``only``: the stages holding these steps (tests build a part of the graph)."""
    parts = Partitions(cfg)
    return [stage_asset(st, cfg, parts, pools) for st in stages(cfg)
            if only is None or any(s.name in only for s in st.steps)]
