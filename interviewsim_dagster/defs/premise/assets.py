"""Premise verdicts: the two-pass premise judge over each personality's fact-summary statements and atomic items.
All personalities of a run go to the judge as one batch per pass (core ``judge_conclusions``), then
the verdict table is cut back into one partition per personality.
"""


import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.tables import conform, empty_frame
from interviewsim_core.premise.conclusions import atomic_item_conclusions, fact_summary_conclusions
from interviewsim_core.premise.pipeline import judge_conclusions

from ...assets_support import SINGLE_RUN, frame_for, model_version, personality_keys, pool_for
from ...batching import describe, gateway_delta
from ...resources import CorpusResource, EvalConfigResource, GatewayResource
from ..corpus.partitions import personality_partitions
from ..evaluate.automation import rescore_on_judge_change

GROUP = "premise"
TABLE = "premise_verdicts"


def build_assets(cfg: EvalConfig) -> list[dg.AssetsDefinition]:
    judge = cfg.effective_premise_judge

    @dg.asset(
        partitions_def=personality_partitions,
        group_name=GROUP,
        backfill_policy=SINGLE_RUN,
        kinds={"parquet"},
        code_version=model_version([judge], ["premise_pass1", "premise_pass2"]),
        pool=pool_for([judge]),
        automation_condition=rescore_on_judge_change(cfg.rescore_cron),
        description="PASS/FAIL per conclusion: can a reader who never saw the source use it as a premise?",
    )
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
        describe(context, frames, means=("decontextuality_score",), extra=step)
        return frames

    return [premise_verdicts]
