"""The simulated person, per personality and method: generations and grouped MCQ answers.
Both are versioned by the generator's identity, the generation contract, the seed and the embedding model,
and deliberately not by any judge: re-scoring never regenerates responses.
"""


import dagster as dg

from interviewsim_core.pipeline import generation, mcq
from interviewsim_core.pipeline.config import EvalConfig

from ...assets_support import SINGLE_RUN, cells, frame_for, model_version, pool_for
from ...batching import run_partitioned
from ...versioning import versioned
from ...resources import CorpusResource, EvalConfigResource, GatewayResource, retrieval_inputs
from ..corpus.assets import heldout_split
from ..corpus.partitions import personality_x_method, to_personality
from ..evaluate.automation import FOLLOW_UPSTREAM

GROUP = "simulate"


def generator_version(cfg: EvalConfig, contract: str) -> str:
    return model_version([cfg.effective_generator], [contract], seed=cfg.seed, embedding=cfg.embedding_model)


def plan_generation_cells(cfg: EvalConfig, corpus: CorpusResource, run_cells: list[tuple[str, str, str]]) -> dict:
    """Planned generation calls per P x M key (no model is called); the leak check re-plans through this too."""
    plans = {}
    for key, pid, method in run_cells:
        split = corpus.split(pid)
        r = retrieval_inputs(cfg, split, [method])
        plans[key] = generation.plan_generations(
            split, method, cfg.effective_generator, r["embedder"], cfg.seed,
            train_embeddings=r["train_embeddings"], embedding_cache=r["embedding_cache"],
        )
    return plans


def plan_mcq_cells(cfg: EvalConfig, corpus: CorpusResource, mcq_items: dict,
                   run_cells: list[tuple[str, str, str]]) -> dict:
    """Planned MCQ-answering calls per P x M key (no model is called); the leak check re-plans through this too."""
    plans = {}
    for key, pid, method in run_cells:
        split = corpus.split(pid)
        r = retrieval_inputs(cfg, split, [method])
        plans[key] = mcq.plan_mcq_answers(
            split, frame_for(mcq_items, pid, "mcq_items"), method, cfg.effective_generator,
            r["embedder"], cfg.seed, train_embeddings=r["train_embeddings"], embedding_cache=r["embedding_cache"],
        )
    return plans


def build_assets(cfg: EvalConfig) -> list[dg.AssetsDefinition]:
    pxm = personality_x_method(cfg.methods)

    @dg.asset(
        partitions_def=pxm,
        group_name=GROUP,
        backfill_policy=SINGLE_RUN,
        kinds={"parquet"},
        deps=[dg.AssetDep(heldout_split, partition_mapping=to_personality)],
        code_version=generator_version(cfg, "generation"),
        pool=pool_for([cfg.effective_generator]),
        automation_condition=FOLLOW_UPSTREAM,
        description="The generator's answer to every held-out question, given only the method's training context.",
    )
    @versioned
    def generations(context: dg.AssetExecutionContext, eval_config: EvalConfigResource, corpus: CorpusResource,
                    llm: GatewayResource):
        plans = plan_generation_cells(eval_config.get(), corpus, cells(context, pxm))
        return run_partitioned(context, llm.get(), plans, generation.assemble_generations)

    @dg.asset(
        partitions_def=pxm,
        group_name=GROUP,
        backfill_policy=SINGLE_RUN,
        kinds={"parquet"},
        ins={"mcq_items": dg.AssetIn(partition_mapping=to_personality)},
        code_version=generator_version(cfg, "mcq_answering"),
        pool=pool_for([cfg.effective_generator]),
        automation_condition=FOLLOW_UPSTREAM,
        description="The generator answers each held-out interview's MCQ items in one grouped call.",
    )
    @versioned
    def mcq_answers(context: dg.AssetExecutionContext, mcq_items: dict, eval_config: EvalConfigResource,
                    corpus: CorpusResource, llm: GatewayResource):
        plans = plan_mcq_cells(eval_config.get(), corpus, mcq_items, cells(context, pxm))
        return run_partitioned(context, llm.get(), plans, mcq.assemble_mcq_answers, means=("reward",))

    return [generations, mcq_answers]
