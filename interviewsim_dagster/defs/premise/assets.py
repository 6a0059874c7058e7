"""Premise verdicts: the two-pass premise judge over each personality's fact-summary statements and atomic items.
All personalities of a run go to the judge as one batch per pass (core ``judge_conclusions``), then
the verdict table is cut back into one partition per personality.

``user_premise_verdicts`` runs the same judge over a team's own conclusions (a JSONL file named by
``EvalConfig.premise_conclusions``) so a memory deriver can be benched inside the graph. It exists only
when that file is configured: an asset that could only ever fail or write nothing would be noise.
Both show the seed's headline numbers as metadata, the failure-attribution split first.

Their code versions join the judge's identity (model, prompts, parsers) with ``CONCLUSIONS_VERSION``:
the statement splitter, atomic-claim wording and window building decide what the judge reads, so
changing them must mark the verdicts stale just as a prompt change does.
"""


import math

import dagster as dg
import pandas as pd

from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.tables import conform, empty_frame
from interviewsim_core.premise import headline, label_cluster_table, load_user_conclusions
from interviewsim_core.premise.conclusions import (
    CONCLUSIONS_VERSION,
    atomic_item_conclusions,
    fact_summary_conclusions,
)
from interviewsim_core.premise.pipeline import judge_conclusions

from ...assets_support import SINGLE_RUN, frame_for, model_version, personality_keys, pool_for
from ...batching import describe, gateway_delta, preview_markdown
from ...versioning import versioned
from ...resources import CorpusResource, EvalConfigResource, GatewayResource
from ..corpus.partitions import personality_partitions
from ..evaluate.automation import rescore_on_judge_change

GROUP = "premise"
TABLE = "premise_verdicts"
USER_TABLE = "user_premise_verdicts"
PASSES = ("premise_pass1", "premise_pass2")
_CLUSTER_ROWS = 15


def _md(frame: pd.DataFrame, rows: int = 20) -> str:
    """A small table as markdown with floats at three decimals (the preview's ``str`` shows 16 digits)."""
    floats = frame.select_dtypes("float").columns
    return preview_markdown(frame.assign(**{c: frame[c].round(3) for c in floats}), rows=rows)


def _num(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def premise_metadata(df: pd.DataFrame) -> dict[str, object]:
    """Seed 002's headline numbers of a verdict table, attribution split first, for the UI."""
    if df.empty:
        return {}
    head = headline(df)
    overall = head.overall.iloc[0]
    clusters = label_cluster_table(df).head(_CLUSTER_ROWS)
    return {
        "attribution_split": dg.MetadataValue.md(_md(head.attribution)),
        "pass_rate": _num(overall.pass_rate),
        "pass_rate_ci": [_num(overall.pass_rate_ci_low), _num(overall.pass_rate_ci_high)],
        "mean_decontextuality": _num(overall.mean_decontextuality),
        "judged": int(overall.n_pass + overall.n_fail),
        "by_artifact_kind": dg.MetadataValue.md(_md(head.by_kind)),
        "label_clusters": dg.MetadataValue.md(_md(clusters, rows=_CLUSTER_ROWS)),
    }


def build_assets(cfg: EvalConfig) -> list[dg.AssetsDefinition]:
    judge = cfg.effective_premise_judge

    @dg.asset(
        partitions_def=personality_partitions,
        group_name=GROUP,
        backfill_policy=SINGLE_RUN,
        kinds={"parquet"},
        code_version=model_version([judge], PASSES, conclusions_version=CONCLUSIONS_VERSION),
        pool=pool_for([judge]),
        automation_condition=rescore_on_judge_change(cfg.rescore_cron),
        description="PASS/FAIL per conclusion: can a reader who never saw the source use it as a premise?",
    )
    @versioned
    def premise_verdicts(context: dg.AssetExecutionContext, fact_summary: dict, atomic_items: dict,
                         eval_config: EvalConfigResource, corpus: CorpusResource, llm: GatewayResource):
        keys = personality_keys(context)
        conclusions = []
        for pid in keys:
            split = corpus.split(pid)
            conclusions += fact_summary_conclusions(split, frame_for(fact_summary, pid, "fact_summary"))
            conclusions += atomic_item_conclusions(split, frame_for(atomic_items, pid, "atomic_items"))
        gw = llm.get()
        with gateway_delta(gw) as step:
            df = judge_conclusions(conclusions, eval_config.get().effective_premise_judge, gw)
        frames = {
            pid: conform(df[df["personality_id"] == pid].reset_index(drop=True), TABLE) if len(df)
            else empty_frame(TABLE)
            for pid in keys
        }
        for pid, frame in frames.items():
            context.add_asset_metadata(premise_metadata(frame), partition_key=pid)
        describe(context, frames, means=("decontextuality_score",), extra=step)
        return frames

    if cfg.premise_conclusions is None:
        return [premise_verdicts]
    return [premise_verdicts, build_user_premise_asset(cfg)]


def build_user_premise_asset(cfg: EvalConfig) -> dg.AssetsDefinition:
    """``user_premise_verdicts``: the premise judge over ``cfg.premise_conclusions`` (which must be set).

    Its code version covers the judge, the file's path and ``CONCLUSIONS_VERSION`` (its loader and
    window rendering live there), so pointing the config at another file or
    changing the premise judge marks it changed and the automation re-runs it (through the gateway
    cache: unchanged conclusions cost nothing). Editing the file in place is not a code change:
    re-materialise it by hand.
    """
    judge = cfg.effective_premise_judge
    source = cfg.premise_conclusions
    if source is None:
        raise ConfigError("user_premise_verdicts needs EvalConfig.premise_conclusions (a JSONL file)")

    @dg.asset(
        name=USER_TABLE,
        group_name=GROUP,
        kinds={"parquet"},
        code_version=model_version([judge], PASSES, conclusions=str(source), conclusions_version=CONCLUSIONS_VERSION),
        pool=pool_for([judge]),
        automation_condition=rescore_on_judge_change(cfg.rescore_cron),
        description=f"Your own conclusions ({source.name}) through the two-pass premise judge: PASS/FAIL each, "
        "with the failure-attribution split and label clusters.",
    )
    @versioned
    def user_premise_verdicts(context: dg.AssetExecutionContext, eval_config: EvalConfigResource,
                              llm: GatewayResource) -> pd.DataFrame:
        run_cfg = eval_config.get()
        path = run_cfg.premise_conclusions or source
        conclusions = load_user_conclusions(path)  # InputValidationError lists every bad line
        gw = llm.get()
        with gateway_delta(gw) as step:
            df = judge_conclusions(conclusions, run_cfg.effective_premise_judge, gw)
        context.add_asset_metadata({**premise_metadata(df), "source": dg.MetadataValue.path(str(path))})
        describe(context, {None: df}, means=("decontextuality_score",), extra=step)
        return df

    return user_premise_verdicts
