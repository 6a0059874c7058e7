"""Artefacts built from held-out answers, per personality: fact summary, atomic and MCQ items, reference Big Five.
Each body plans every partition of the run, runs one gateway batch and assembles one table per
partition (``batching.run_partitioned``); the rules live in ``interviewsim_core.pipeline``.
"""


from functools import partial

import dagster as dg

from interviewsim_core.pipeline import builders, judges
from interviewsim_core.pipeline.config import EvalConfig

from ...assets_support import SINGLE_RUN, model_version, personality_keys, pool_for
from ...batching import run_partitioned
from ...versioning import versioned
from ...resources import CorpusResource, EvalConfigResource, GatewayResource
from ..corpus.assets import heldout_split
from ..corpus.partitions import personality_partitions
from ..evaluate.automation import FOLLOW_UPSTREAM, rescore_on_judge_change

GROUP = "references"


def build_assets(cfg: EvalConfig) -> list[dg.AssetsDefinition]:
    """The per-personality reference assets, versioned by the builder's and judges' identities."""
    builder = cfg.effective_builder
    judge_models = cfg.effective_judges
    common = dict(
        partitions_def=personality_partitions, group_name=GROUP, backfill_policy=SINGLE_RUN, kinds={"parquet"}
    )

    @dg.asset(
        **common,
        deps=[heldout_split],
        code_version=model_version([builder], ["fact_summary"]),
        pool=pool_for([builder]),
        automation_condition=FOLLOW_UPSTREAM,
        description="Evaluation-only summary of the held-out responses (never shown to a generator).",
    )
    @versioned
    def fact_summary(context: dg.AssetExecutionContext, eval_config: EvalConfigResource, corpus: CorpusResource,
                     llm: GatewayResource):
        model = eval_config.get().effective_builder
        plans = {k: builders.plan_fact_summary(corpus.split(k), model) for k in personality_keys(context)}
        return run_partitioned(context, llm.get(), plans, builders.assemble_fact_summary)

    @dg.asset(
        **common,
        deps=[heldout_split],
        code_version=model_version([builder], ["atomic_item"]),
        pool=pool_for([builder]),
        automation_condition=FOLLOW_UPSTREAM,
        description="One atomic question/answer per held-out QA pair.",
    )
    @versioned
    def atomic_items(context: dg.AssetExecutionContext, eval_config: EvalConfigResource, corpus: CorpusResource,
                     llm: GatewayResource):
        model = eval_config.get().effective_builder
        plans = {k: builders.plan_atomic_items(corpus.split(k), model) for k in personality_keys(context)}
        return run_partitioned(context, llm.get(), plans, builders.assemble_atomic_items)

    @dg.asset(
        **common,
        code_version=model_version([builder], ["mcq_generation"], seed=cfg.seed, options=cfg.mcq_options),
        pool=pool_for([builder]),
        automation_condition=FOLLOW_UPSTREAM,
        description="3- and 4-option MCQ items from the atomic items, shuffled reproducibly with roles kept.",
    )
    @versioned
    def mcq_items(context: dg.AssetExecutionContext, atomic_items: dict, eval_config: EvalConfigResource,
                  corpus: CorpusResource, llm: GatewayResource):
        run_cfg = eval_config.get()
        plans = {
            k: builders.plan_mcq_items(corpus.split(k), atomic_items[k], run_cfg.effective_builder,
                                       run_cfg.mcq_options)
            for k in personality_keys(context)
        }
        return run_partitioned(context, llm.get(), plans, partial(builders.assemble_mcq_items, seed=run_cfg.seed))

    @dg.asset(
        **common,
        deps=[heldout_split],
        code_version=model_version(judge_models, ["personality"]),
        pool=pool_for(judge_models),
        automation_condition=rescore_on_judge_change(cfg.rescore_cron),
        description="Big Five levels of the held-out responses: 5 traits x 3 votes per judge.",
    )
    @versioned
    def reference_personality(context: dg.AssetExecutionContext, eval_config: EvalConfigResource,
                              corpus: CorpusResource, llm: GatewayResource):
        models = eval_config.get().effective_judges
        plans = {k: judges.plan_reference_personality(corpus.split(k), models) for k in personality_keys(context)}
        return run_partitioned(context, llm.get(), plans, judges.assemble_reference_personality)

    return [fact_summary, atomic_items, mcq_items, reference_personality]
