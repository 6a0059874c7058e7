"""Run the whole evaluation graph in one process, without Dagster.

Same step functions, same tables, same Parquet layout as the Dagster assets, so it serves three
uses: a notebook user who wants results without a Dagster instance, the orchestration-overhead
benchmark (Dagster vs. this), and a reference the Dagster tests compare against. Calls are
batched per stage across every personality and method, which is what keeps the gateway busy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import pandas as pd

from ..errors import ConfigError
from ..llm.embeddings import Embedder, EmbeddingCache, HashingEmbedder
from ..loader import load_corpus
from ..split import HeldOutSplit, split_personality
from ..strategies import MethodSpec, resolve_method, train_question_matrix
from . import builders, generation, judges, mcq
from .calls import CallRunner, PlannedCall, run_calls
from .config import OFFLINE_EMBEDDING, EvalConfig
from .scoring import build_leaderboard, score_method
from .split_tables import split_table
from .storage import partition_path, write_frame
from .tables import KEY_COLUMNS, PER_METHOD, conform, empty_frame

ASSET_ORDER: tuple[str, ...] = (
    "heldout_split", "fact_summary", "atomic_items", "mcq_items", "reference_personality",
    "generations", "content_similarity", "factual_consistency", "generated_personality", "mcq_answers",
    "method_scores", "leaderboard",
)
"""Tables ``run_evaluation`` returns, in dependency order (premise verdicts are the premise package's)."""


def embedder_from(model: str, api_base: str | None = None) -> Embedder:
    """The embedder for a model string: hashing offline, else litellm (imported only when asked for).

    Callers that hold only the two values (the CLI, Dagster resources) use this rather than building
    a throwaway EvalConfig.
    """
    if model == OFFLINE_EMBEDDING:
        return HashingEmbedder()
    from ..llm.litellm_embedder import LiteLLMEmbedder

    return LiteLLMEmbedder(model, api_base=api_base)


def make_embedder(config: EvalConfig) -> Embedder:
    """The configured embedder (model and effective embedding server of ``config``)."""
    return embedder_from(config.embedding_model, config.effective_embedding_api_base)


def make_gateway(config: EvalConfig) -> CallRunner:
    """A gateway with the persistent SQLite cache at the configured path."""
    from ..llm.cache import SqliteCache
    from ..llm.gateway import Gateway

    path = config.effective_cache_path
    path.parent.mkdir(parents=True, exist_ok=True)
    return Gateway(cache=SqliteCache(path))


def load_splits(config: EvalConfig, personalities: Iterable[str] | None = None) -> dict[str, HeldOutSplit]:
    """Split every (or every selected) personality of the corpus, sorted by id.

    Raises:
        ConfigError: a selected personality is not in the corpus.
    """
    splits = {d.personality_id: split_personality(d) for d in load_corpus(config.corpus)}
    if personalities is not None:
        wanted = list(dict.fromkeys(personalities))
        unknown = [p for p in wanted if p not in splits]
        if unknown:
            raise ConfigError(f"personalities not in {config.corpus}: {unknown}; known: {sorted(splits)}")
        splits = {p: splits[p] for p in wanted}
    return dict(sorted(splits.items()))


def _concat(name: str, frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        return empty_frame(name)
    return conform(pd.concat(frames, ignore_index=True), name)


def write_tables(tables: dict[str, pd.DataFrame], root: Path, personalities: Sequence[str],
                 methods: Sequence[str]) -> list[Path]:
    """Write every partition of every table (empty partitions too, so a reader sees they ran)."""
    written = []
    for name, df in tables.items():
        if name == "leaderboard":
            written.append(write_frame(df, name, partition_path(root, name)))
            continue
        for pid in personalities:
            sub = df[df["personality_id"] == pid]
            if name in PER_METHOD:
                for m in methods:
                    part = sub[sub["method"] == m].sort_values(list(KEY_COLUMNS[name]), kind="stable")
                    written.append(write_frame(part, name, partition_path(root, name, pid, m)))
            else:
                written.append(write_frame(sub, name, partition_path(root, name, pid)))
    return written


def run_evaluation(
    config: EvalConfig,
    gateway: CallRunner | None = None,
    personalities: Iterable[str] | None = None,
    methods: Iterable[str | MethodSpec] | None = None,
    write: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, pd.DataFrame]:
    """Evaluate every selected personality x method and return each table, concatenated.

    Args:
        config: the run configuration (models, seed, data root, ...).
        gateway: defaults to a real ``Gateway`` with the configured cache.
        personalities: ids to evaluate (default: the whole corpus).
        methods: method names or specs (default: ``config.methods``).
        write: write each partition to ``<data_root>/<asset>/...parquet`` (atomically).
        progress: called with one line per stage (e.g. ``print``).

    Returns:
        Table name -> DataFrame, in ``ASSET_ORDER``.
    """
    say = progress or (lambda _msg: None)
    splits = load_splits(config, personalities)
    specs = [resolve_method(m) for m in (methods if methods is not None else config.methods)]
    gw = gateway if gateway is not None else make_gateway(config)
    generator, judge_models, builder = config.effective_generator, config.effective_judges, config.effective_builder
    seed, options = config.seed, config.mcq_options

    embedder: Embedder | None = None
    cache: EmbeddingCache | None = None
    train_emb: dict[str, object] = {}
    if any(s.needs_embedder for s in specs):
        embedder = make_embedder(config)
        cache = EmbeddingCache(config.data_root / ".cache" / "embeddings") if write else None
        train_emb = {pid: train_question_matrix(sp, embedder, cache) for pid, sp in splits.items()}

    def emb(pid: str) -> dict:
        return {"train_embeddings": train_emb.get(pid), "embedding_cache": cache}

    # Stage 1: everything that needs only the split (builders, reference PS, generations).
    say(f"stage 1/3: artefacts, reference personality and generations for {len(splits)} personalities "
        f"x {len(specs)} methods")
    plan_fs = {pid: builders.plan_fact_summary(sp, builder) for pid, sp in splits.items()}
    plan_at = {pid: builders.plan_atomic_items(sp, builder) for pid, sp in splits.items()}
    plan_rp = {pid: judges.plan_reference_personality(sp, judge_models) for pid, sp in splits.items()}
    plan_gen = {(pid, s.name): generation.plan_generations(sp, s, generator, embedder, seed, **emb(pid))
                for pid, sp in splits.items() for s in specs}
    res = run_calls(gw, _flat(plan_fs, plan_at, plan_rp, plan_gen))
    fact = {pid: builders.assemble_fact_summary(p, res) for pid, p in plan_fs.items()}
    atomic = {pid: builders.assemble_atomic_items(p, res) for pid, p in plan_at.items()}
    reference = {pid: judges.assemble_reference_personality(p, res) for pid, p in plan_rp.items()}
    gens = {k: generation.assemble_generations(p, res) for k, p in plan_gen.items()}

    # Stage 2: MCQ items and every judgment of the generations.
    say("stage 2/3: MCQ items and CS / FC / PS judgments")
    plan_mi = {pid: builders.plan_mcq_items(sp, atomic[pid], builder, options) for pid, sp in splits.items()}
    plan_cs = {k: judges.plan_content_similarity(splits[k[0]], g, judge_models) for k, g in gens.items()}
    plan_fc = {k: judges.plan_factual_consistency(fact[k[0]], g, judge_models) for k, g in gens.items()}
    plan_gp = {k: judges.plan_generated_personality(g, judge_models) for k, g in gens.items()}
    res = run_calls(gw, _flat(plan_mi, plan_cs, plan_fc, plan_gp))
    items = {pid: builders.assemble_mcq_items(p, res, seed) for pid, p in plan_mi.items()}
    cs = {k: judges.assemble_content_similarity(p, res) for k, p in plan_cs.items()}
    fc = {k: judges.assemble_factual_consistency(p, res) for k, p in plan_fc.items()}
    gp = {k: judges.assemble_generated_personality(p, res) for k, p in plan_gp.items()}

    # Stage 3: MCQ answering per method (needs the items).
    say("stage 3/3: MCQ answering")
    plan_ma = {(pid, s.name): mcq.plan_mcq_answers(sp, items[pid], s, generator, embedder, seed, **emb(pid))
               for pid, sp in splits.items() for s in specs}
    res = run_calls(gw, _flat(plan_ma))
    answers = {k: mcq.assemble_mcq_answers(p, res) for k, p in plan_ma.items()}

    scores = {
        (pid, s.name): score_method(splits[pid], s.name, gens[(pid, s.name)], cs[(pid, s.name)],
                                    fc[(pid, s.name)], reference[pid], gp[(pid, s.name)],
                                    answers[(pid, s.name)], judge_models, mcq_items=items[pid],
                                    atomic_items=atomic[pid], mcq_options=options,
                                    embedding_model=config.embedding_model)
        for pid in splits for s in specs
    }
    tables = {
        "heldout_split": _concat("heldout_split", [split_table(sp) for sp in splits.values()]),
        "fact_summary": _concat("fact_summary", list(fact.values())),
        "atomic_items": _concat("atomic_items", list(atomic.values())),
        "mcq_items": _concat("mcq_items", list(items.values())),
        "reference_personality": _concat("reference_personality", list(reference.values())),
        "generations": _concat("generations", list(gens.values())),
        "content_similarity": _concat("content_similarity", list(cs.values())),
        "factual_consistency": _concat("factual_consistency", list(fc.values())),
        "generated_personality": _concat("generated_personality", list(gp.values())),
        "mcq_answers": _concat("mcq_answers", list(answers.values())),
        "method_scores": _concat("method_scores", list(scores.values())),
    }
    tables["leaderboard"] = _concat("leaderboard", [build_leaderboard(tables["method_scores"], seed=seed,
                                                                  coverage_threshold=config.coverage_threshold,
                                                                  methods_order=[s.name for s in specs])])
    if write:
        paths = write_tables(tables, config.data_root, list(splits), [s.name for s in specs])
        say(f"wrote {len(paths)} Parquet files under {config.data_root}")
    return tables


def _flat(*plans: dict) -> list[PlannedCall]:
    return [call for plan in plans for calls in plan.values() for call in calls]
