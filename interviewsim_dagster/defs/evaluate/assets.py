"""Judgments per personality and method, the per-personality scores, and the leaderboard.
Judgment assets are versioned by the judges' identities only (``model_version``), so a judge change
marks them, and only them, as changed; the automation re-runs them through the gateway cache, which
re-asks only the changed judge. Generations are read from Parquet, never regenerated.
"""


import dagster as dg

from interviewsim_core.pipeline import judges
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.scoring import build_leaderboard, combine_personality_scores, score_method
from interviewsim_core.pipeline.tables import conform, empty_frame
from interviewsim_core.report import build_report, leaderboard_markdown

from ...assets_support import SINGLE_RUN, cells, frame_for, model_version, personality_keys, pool_for
from ...batching import concat, describe, run_partitioned
from ...versioning import versioned
from ...io_managers import ALLOW_MISSING
from ...resources import CorpusResource, EvalConfigResource, GatewayResource
from ..corpus.partitions import dims_of, personality_partitions, personality_x_method, to_personality
from .automation import AFTER_ANY_UPSTREAM_CONTENT_CHANGE, catch_up_at, rescore_on_judge_change

GROUP = "evaluate"

SCORE_COLUMNS = ("cs_mean", "contradiction_ratio", "ps_alignment", "mcq3_accuracy", "mcq4_accuracy")


def build_assets(cfg: EvalConfig) -> list[dg.AssetsDefinition]:
    pxm = personality_x_method(cfg.methods)
    judge_models = cfg.effective_judges
    rescore = rescore_on_judge_change(cfg.rescore_cron)
    # The aggregates hold one row (or column) per judge: a judge change changes what they mean, so
    # their code version follows the judges too, and the UI shows them stale with the judgments.
    aggregate_version = model_version(judge_models, ["content_similarity", "factual_consistency", "personality"])
    aggregate_condition = catch_up_at(cfg.rescore_cron, AFTER_ANY_UPSTREAM_CONTENT_CHANGE)
    judged = dict(
        partitions_def=pxm, group_name=GROUP, backfill_policy=SINGLE_RUN, kinds={"parquet"},
        pool=pool_for(judge_models), automation_condition=rescore,
    )

    @dg.asset(
        **judged,
        code_version=model_version(judge_models, ["content_similarity"]),
        description="Each judge scores each generation against the held-out answer (1-5).",
    )
    @versioned
    def content_similarity(context: dg.AssetExecutionContext, generations: dict, eval_config: EvalConfigResource,
                           corpus: CorpusResource, llm: GatewayResource):
        models = eval_config.get().effective_judges
        plans = {
            key: judges.plan_content_similarity(corpus.split(pid), frame_for(generations, key, "generations"), models)
            for key, pid, _ in cells(context, pxm)
        }
        return run_partitioned(context, llm.get(), plans, judges.assemble_content_similarity, means=("score",))

    @dg.asset(
        **judged,
        ins={"fact_summary": dg.AssetIn(partition_mapping=to_personality)},
        code_version=model_version(judge_models, ["factual_consistency"]),
        description="Each judge labels each generation against the fact summary (Entailment/Neutral/Contradiction).",
    )
    @versioned
    def factual_consistency(context: dg.AssetExecutionContext, fact_summary: dict, generations: dict,
                            eval_config: EvalConfigResource, llm: GatewayResource):
        models = eval_config.get().effective_judges
        plans = {
            key: judges.plan_factual_consistency(frame_for(fact_summary, pid, "fact_summary"),
                                                 frame_for(generations, key, "generations"), models)
            for key, pid, _ in cells(context, pxm)
        }
        return run_partitioned(context, llm.get(), plans, judges.assemble_factual_consistency)

    @dg.asset(
        **judged,
        code_version=model_version(judge_models, ["personality"]),
        description="Big Five levels of the generated answers: 5 traits x 3 votes per judge.",
    )
    @versioned
    def generated_personality(context: dg.AssetExecutionContext, generations: dict, eval_config: EvalConfigResource,
                              llm: GatewayResource):
        models = eval_config.get().effective_judges
        plans = {
            key: judges.plan_generated_personality(frame_for(generations, key, "generations"), models)
            for key, _, _ in cells(context, pxm)
        }
        return run_partitioned(context, llm.get(), plans, judges.assemble_generated_personality)

    @dg.asset(
        partitions_def=pxm,
        group_name=GROUP,
        backfill_policy=SINGLE_RUN,
        kinds={"parquet"},
        ins={"reference_personality": dg.AssetIn(partition_mapping=to_personality)},
        code_version=aggregate_version,
        automation_condition=rescore,
        description="Per-personality aggregates, one row per judge (CS mean, contradiction ratio, PS alignment, MCQ).",
    )
    @versioned
    def method_scores(context: dg.AssetExecutionContext, generations: dict, content_similarity: dict,
                      factual_consistency: dict, reference_personality: dict, generated_personality: dict,
                      mcq_answers: dict, eval_config: EvalConfigResource, corpus: CorpusResource):
        models = eval_config.get().effective_judges
        frames = {
            key: score_method(
                corpus.split(pid), method, frame_for(generations, key, "generations"),
                frame_for(content_similarity, key, "content_similarity"),
                frame_for(factual_consistency, key, "factual_consistency"),
                frame_for(reference_personality, pid, "reference_personality"),
                frame_for(generated_personality, key, "generated_personality"),
                frame_for(mcq_answers, key, "mcq_answers"), models,
            )
            for key, pid, method in cells(context, pxm)
        }
        describe(context, frames, means=SCORE_COLUMNS)
        return frames

    @dg.asset(
        partitions_def=personality_partitions,
        group_name=GROUP,
        backfill_policy=SINGLE_RUN,
        kinds={"parquet"},
        ins={"method_scores": dg.AssetIn(partition_mapping=to_personality, metadata={ALLOW_MISSING: True})},
        code_version=aggregate_version,
        automation_condition=aggregate_condition,
        description="One personality's method_scores rows across every method run so far, to compare methods "
        "for one person. A method not run yet is listed as missing in the metadata, not an error.",
    )
    @versioned
    def personality_scores(context: dg.AssetExecutionContext, method_scores: dict,
                           eval_config: EvalConfigResource):
        methods = list(eval_config.get().methods)
        by_pid: dict[str, dict[str, object]] = {pid: {} for pid in personality_keys(context)}
        for key, df in method_scores.items():
            dims = dims_of(pxm, key)
            by_pid.setdefault(dims["personality"], {})[dims["method"]] = df
        frames = {pid: combine_personality_scores(list(got.values()), methods) for pid, got in by_pid.items()}
        for pid, got in by_pid.items():
            context.add_asset_metadata({"methods_present": [m for m in methods if m in got],
                                        "methods_missing": [m for m in methods if m not in got]}, partition_key=pid)
        describe(context, frames, means=SCORE_COLUMNS)
        return frames

    @dg.asset(
        group_name=GROUP,
        kinds={"parquet"},
        ins={"method_scores": dg.AssetIn(
            partition_mapping=dg.AllPartitionMapping(), metadata={ALLOW_MISSING: True},
        )},
        code_version=aggregate_version,
        automation_condition=aggregate_condition,
        description="Macro averages over personalities per method and judge, with bootstrap CIs. "
        "Reads the method_scores partitions that exist: a method not run yet is absent, not an error.",
    )
    @versioned
    def leaderboard(context: dg.AssetExecutionContext, method_scores: dict, eval_config: EvalConfigResource):
        scores = concat(method_scores.values())
        scores = conform(scores, "method_scores") if len(scores) else empty_frame("method_scores")
        seed = eval_config.get().seed
        df = build_leaderboard(scores, seed=seed)
        # The report's own tables (best per judge marked, CIs, significant paired tests), built from the
        # scores already in memory: the other report sections need tables this asset does not load.
        tables_md = leaderboard_markdown(build_report(tables={"method_scores": scores}, seed=seed))
        describe(context, {None: df}, extra={"partitions_read": len(method_scores),
                                             "report_tables": dg.MetadataValue.md(tables_md)})
        return df

    return [content_similarity, factual_consistency, generated_personality, method_scores, personality_scores,
            leaderboard]
