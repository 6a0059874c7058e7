"""The evaluation graph, defined once: every step with its partitioning, inputs, models and functions.

``STEPS`` is the only place the graph is wired. The direct runner (``runner.py``) runs it in
dependency order in one process; the Dagster factory (``interviewsim_dagster/factory.py``) turns
each step into an asset (partitions, inputs with partition mappings, pool, code version, automation,
description). A test checks the two hold the same steps and edges.

A step is one of two kinds:

* a **model step** (``plan`` + ``assemble``, optionally ``replan``): ``plan`` returns the calls one
  partition (a ``Cell``) needs, no model called; the runner sends them (streamed as soon as the
  partition is ready, or batched with every other ready partition: ``runner.py``), then
  ``assemble`` turns the results into the partition's table. ``replan`` gives a further round
  that needs the previous round's results (the premise judge's pass 2 reads pass 1).
* a **compute step** (``compute``): a pure function of its inputs and the split (the held-out split
  table, the scores, the leaderboard, the report).

Inputs name an upstream step and how a partition maps onto it (``Mapping``). What a step receives
for an input, per mapping (``Step.inputs`` order):

* ``SAME``: the upstream table of the same partition;
* ``PERSONALITY``: a P x M step reading a P step gets its personality's table; a P step reading a
  P x M step gets ``{method: table}`` of the methods present;
* ``ALL``: one table, every upstream partition present joined in partition order (thousands of
  partitions held apart cost far more than their rows: ``storage.read_joined``).

An input with ``load=False`` is an ordering edge only (the step reads the split or the data root).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import TYPE_CHECKING, Any, NamedTuple

import pandas as pd

from .calls import PlannedCall, Results
from .config import EvalConfig, generator_label, judge_identity
from .tables import concat_table

if TYPE_CHECKING:
    from ..split import HeldOutSplit


class Partitioning(str, Enum):
    """What one partition of a step's table covers: everything, one personality, or one (personality, method)."""

    NONE = "none"
    PERSONALITY = "P"
    PERSONALITY_METHOD = "PxM"


class InputMapping(str, Enum):
    """How a partition of a step maps onto the partitions of one of its inputs (see the module doc)."""

    SAME = "same"
    PERSONALITY = "personality"
    ALL = "all"


class Trigger(str, Enum):
    """When an orchestrator should re-run a step on its own (Dagster: the automation condition)."""

    UPSTREAM = "upstream"
    """A partition is newly missing or an upstream partition was updated."""
    JUDGE_CHANGE = "judge_change"
    """As ``UPSTREAM``, and also when the identity of the models it calls changes (re-score)."""
    ANY_UPSTREAM = "any_upstream"
    """After any upstream update, reading whatever upstream partitions exist (missing ones allowed)."""


class Role(str, Enum):
    """Which configured model(s) a step calls; ``models_for`` resolves them from an ``EvalConfig``."""

    GENERATOR = "generator"
    JUDGES = "judges"
    BUILDER = "builder"
    PREMISE_JUDGE = "premise_judge"


class Cell(NamedTuple):
    """One partition of a step: (personality, method), either ``None`` when the step is not split by it."""

    personality: str | None = None
    method: str | None = None


@dataclass(frozen=True)
class Input:
    """One upstream step a step depends on, and how its partitions map (``InputMapping``)."""

    step: str
    mapping: InputMapping = InputMapping.SAME
    load: bool = True
    """False: an ordering edge only (the step reads the split or the data root, not this table)."""
    allow_missing: bool = False
    """Read the upstream partitions that exist; a method not run yet is absent, not an error."""


class StepEnv:
    """What a step reads besides its upstream tables: the config, the splits, the retrieval inputs.

    Built once per run by the runner (from a loaded corpus) or per Dagster step (from resources);
    ``split`` and ``embedder`` are supplied by the caller so each keeps its own caching.
    """

    def __init__(self, config: EvalConfig, split: Callable[[str], HeldOutSplit],
                 embedder: Callable[[], Any] | None = None, embedding_cache: Any = None):
        self.config = config
        self._split = split
        self._embedder = embedder
        self.embedding_cache = embedding_cache
        self._train: dict[str, Any] = {}

    def split(self, personality_id: str) -> HeldOutSplit:
        return self._split(personality_id)

    @cached_property
    def embedder(self):
        from ..factories import make_embedder, with_run_policy

        if self._embedder is None:
            return make_embedder(self.config)
        return with_run_policy(self._embedder(), self.config)

    def peer(self, personality_id: str) -> HeldOutSplit | None:
        """The other person of the ``other-person`` calibration method (``calibration.peer_of`` over the
        corpus's ids), loaded from the corpus itself: a runner's split window holds only the
        personalities in progress. None when the corpus has no other personality."""
        from ..loader import index_corpus, load_document
        from ..split import split_personality
        from ..strategies.calibration import peer_of

        if "_corpus_index" not in self.__dict__:
            self.__dict__["_corpus_index"] = index_corpus(self.config.corpus)
        index = self.__dict__["_corpus_index"]
        other = peer_of(personality_id, list(index))
        return None if other is None else split_personality(load_document(index[other]))

    def forget(self, personality_id: str) -> None:
        """Drop what this env holds for a personality (its retrieval matrix): a runner calls it when
        the personality is done, so memory follows the personalities in progress, not the corpus."""
        self._train.pop(personality_id, None)

    def retrieval(self, personality_id: str, method: str) -> dict[str, Any]:
        """Embedder, training-question matrix and embedding cache when ``method`` retrieves, else nothing."""
        from ..strategies import resolve_method, train_question_matrix

        if not resolve_method(method).needs_embedder:
            return {"embedder": None, "train_embeddings": None, "embedding_cache": None}
        if personality_id not in self._train:
            self._train[personality_id] = train_question_matrix(self.split(personality_id), self.embedder,
                                                                self.embedding_cache)
        return {"embedder": self.embedder, "train_embeddings": self._train[personality_id],
                "embedding_cache": self.embedding_cache}


PlanFn = Callable[[StepEnv, Cell, dict[str, Any]], list[PlannedCall]]
ReplanFn = Callable[[StepEnv, Cell, list[PlannedCall], Results], list[PlannedCall]]
AssembleFn = Callable[[StepEnv, Cell, list[PlannedCall], Results, dict[str, Any]], pd.DataFrame]
"""``(env, cell, planned, results, inputs)``: ``inputs`` as ``plan`` got them (a curation step rebuilds its
personality's state from them)."""
ComputeFn = Callable[[StepEnv, Cell, dict[str, Any]], Any]


@dataclass(frozen=True)
class Step:
    """One asset of the evaluation graph: its table, where it sits, what it calls, how it is computed."""

    name: str
    partitioning: Partitioning
    group: str
    description: str
    inputs: tuple[Input, ...] = ()
    roles: tuple[Role, ...] = ()
    """The configured models the step calls (or, for a compute step, whose identity its rows depend on)."""
    contracts: tuple[str, ...] = ()
    """Prompt contracts the step's calls use: with the models' identities, they make its code version."""
    plan: PlanFn | None = None
    replan: ReplanFn | None = None
    assemble: AssembleFn | None = None
    compute: ComputeFn | None = None
    version_settings: Callable[[EvalConfig], dict[str, Any]] = field(default=lambda cfg: {})
    """Settings that change the rows besides the models (seed, options, embedding model)."""
    trigger: Trigger = Trigger.UPSTREAM
    means: tuple[str, ...] = ()
    """Numeric columns whose mean an orchestrator shows per partition."""
    writes_files: bool = False
    """True: the step writes files of its own under the data root (the report), not a table."""
    kinds: tuple[str, ...] = ("parquet",)
    """The formats it writes (the Dagster UI shows them as asset kinds)."""
    enabled: Callable[[EvalConfig], bool] = field(default=lambda cfg: True)
    makes_document: bool = False
    """True for the curation's last step (``prepared_input``): it writes the personality's corpus document,
    the split every later step reads."""

    @property
    def curation(self) -> bool:
        """A step of the curation (group ``curation``): it runs before the personality's document exists, so
        no split is read for it, its partitions are the manifest's personalities, and ``curation/plan.py``
        plans its calls (the evaluation's planner walks the corpus, which the curation writes)."""
        return self.group == CURATION

    @property
    def calls_models(self) -> bool:
        return self.plan is not None

    def models(self, cfg: EvalConfig) -> list:
        """Every model the step may call: pools, prices and the plan count each generator of the study."""
        return [m for role in self.roles
                for m in (cfg.effective_generators if role is Role.GENERATOR else models_for(cfg, role))]

    def code_version(self, cfg: EvalConfig) -> str | None:
        """The models' identities (output-affecting config, prompt and parser versions) + row settings.

        ``None`` for a step with no ``roles``: its code is its version. A judge change changes exactly
        the versions of the steps whose roles include the judges, which is what re-scoring keys on. (A
        compute step may name roles and contracts too, when its rows mean something per model.) Of the
        generators it names the first only: the others' answers have partitions of their own (``<label>/<method>``),
        so adding one leaves every existing partition current (each is an aspect of the study, ``study``).
        """
        if not self.roles:
            return None
        return model_version([m for role in self.roles for m in models_for(cfg, role)], self.contracts,
                             **self.version_settings(cfg))


def models_for(cfg: EvalConfig, role: Role) -> list:
    return {
        Role.GENERATOR: lambda: [cfg.effective_generator],
        Role.JUDGES: lambda: list(cfg.effective_judges),
        Role.BUILDER: lambda: [cfg.effective_builder],
        Role.PREMISE_JUDGE: lambda: [cfg.effective_premise_judge],
    }[role]()


def model_version(models: Iterable, contracts: Sequence[str], **settings: object) -> str:
    """Code version of a step asking ``models`` under ``contracts``; ``settings`` that change rows join it."""
    blob = json.dumps(
        {"models": sorted(judge_identity(m, tuple(contracts)) for m in models), "settings": settings},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


# ---- the step functions ------------------------------------------------------------------------
# Thin adapters from (env, cell, inputs) to the core functions of each step module.

def _transcript_turns(env, cell, inputs):
    from ..curation.step import ingest_step

    return ingest_step(env.config, cell.personality)


def _curation_step(name: str) -> tuple[PlanFn, AssembleFn]:
    """``plan`` and ``assemble`` of curation model step ``name`` (``curation/step.py``)."""
    def plan(env, cell, inputs):
        from ..curation.step import plan_step

        return plan_step(name, env.config, cell.personality, inputs)

    def assemble(env, cell, planned, results, inputs):
        from ..curation.step import assemble_step

        return assemble_step(name, env.config, cell.personality, planned, results, inputs)

    plan.__name__, assemble.__name__ = f"plan_{name}", f"assemble_{name}"
    return plan, assemble


def _prepared_input(env, cell, inputs):
    from ..curation.step import corpus_step

    return corpus_step(env.config, cell.personality, inputs)


def _curates(cfg: EvalConfig) -> bool:
    from ..curation.stage import curates

    return curates(cfg)


def _split_table(env: StepEnv, cell: Cell, inputs: dict) -> pd.DataFrame:
    from .split_tables import split_table

    return split_table(env.split(cell.personality))


def _plan_fact_summary(env, cell, inputs):
    from . import references

    return references.plan_fact_summary(env.split(cell.personality), env.config.effective_builder)


def _plan_atomic_items(env, cell, inputs):
    from . import references

    return references.plan_atomic_items(env.split(cell.personality), env.config.effective_builder)


def _plan_mcq_items(env, cell, inputs):
    from . import references

    return references.plan_mcq_items(env.split(cell.personality), inputs["atomic_items"],
                                     env.config.effective_builder, env.config.mcq_options)


def _assemble_mcq_items(env, cell, planned, results, inputs):
    from . import references

    return references.assemble_mcq_items(planned, results, env.config.seed)


def _plan_reference_personality(env, cell, inputs):
    from . import judges

    return judges.plan_reference_personality(env.split(cell.personality), env.config.effective_judges,
                                             env.config.ps_vote_sampling)


def _plan_training_personality(env, cell, inputs):
    from . import judges

    return judges.plan_training_personality(env.split(cell.personality), env.config.effective_judges,
                                            env.config.ps_stability_responses, env.config.ps_vote_sampling)


def _ps_stability(env, cell, inputs):
    from ..metrics.ps_stability import ps_stability

    return ps_stability(inputs["reference_personality"], inputs["training_personality"])


def _sft_examples(env, cell, inputs):
    from ..finetune import sft_records

    return pd.DataFrame([{"personality_id": r.personality_id, "qa_id": r.qa_id, "interview_id": r.interview_id,
                          "system": r.system, "user": r.user, "assistant": r.assistant}
                         for r in sft_records(env.split(cell.personality))],
                        columns=["personality_id", "qa_id", "interview_id", "system", "user", "assistant"])


FINETUNE_DIR = "finetune"


def _sft_dataset(env, cell, inputs):
    """Chat JSONL per personality and for all of them, from the ``sft_examples`` partitions present."""
    from pathlib import Path

    from ..finetune import SftRecord, write_sft_records

    by_person: dict[str, list[SftRecord]] = {}
    for row in inputs["sft_examples"].sort_values("personality_id", kind="stable").to_dict("records"):
        by_person.setdefault(row["personality_id"], []).append(SftRecord(**row))
    return write_sft_records(by_person, Path(env.config.data_root) / FINETUNE_DIR)


def _retrieval(env, pid: str, method: str) -> dict[str, Any]:
    """``env.retrieval``, or the embedder's error: a failing embedder fails that method's rows (typed,
    nothing sent), never the other methods' partitions of the same run (issue 20)."""
    from ..errors import GatewayError

    try:
        return env.retrieval(pid, method)
    except GatewayError as exc:
        return {"retrieval_error": str(exc)}


def _plan_generations(env, cell, inputs):
    from . import generation

    pid, method = cell
    return generation.plan_generations(env.split(pid), method, env.config.generator_for(method),
                                       seed=env.config.seed, **_retrieval(env, pid, method), **_peer(env, pid, method))


def _plan_mcq_answers(env, cell, inputs):
    from . import mcq

    pid, method = cell
    return mcq.plan_mcq_answers(env.split(pid), inputs["mcq_items"], method, env.config.generator_for(method),
                                seed=env.config.seed, **_retrieval(env, pid, method), **_peer(env, pid, method))


def _peer(env, pid: str, method: str) -> dict[str, Any]:
    """The other person's split for the ``other-person`` calibration method; nothing for any other."""
    from ..strategies import resolve_method
    from ..strategies.calibration import OTHER_PERSON

    return {"peer": env.peer(pid)} if resolve_method(method).strategy == OTHER_PERSON else {}


def _plan_content_similarity(env, cell, inputs):
    from . import judges

    return judges.plan_content_similarity(env.split(cell.personality), inputs["generations"],
                                          env.config.effective_judges)


def _plan_factual_consistency(env, cell, inputs):
    from . import judges

    return judges.plan_factual_consistency(inputs["fact_summary"], inputs["generations"],
                                           env.config.effective_judges)


def _plan_generated_personality(env, cell, inputs):
    from . import judges

    return judges.plan_generated_personality(inputs["generations"], env.config.effective_judges,
                                             env.config.ps_vote_sampling)


def _method_scores(env, cell, inputs):
    from .scoring import score_method

    pid, method = cell
    cfg = env.config
    return score_method(env.split(pid), method, inputs["generations"], inputs["content_similarity"],
                        inputs["factual_consistency"], inputs["reference_personality"],
                        inputs["generated_personality"], inputs["mcq_answers"], cfg.effective_judges,
                        mcq_items=inputs["mcq_items"], atomic_items=inputs["atomic_items"],
                        mcq_options=cfg.mcq_options, embedding_model=cfg.effective_embedding_model)


def _personality_scores(env, cell, inputs):
    from .scoring import combine_personality_scores

    by_method = inputs["method_scores"]
    methods = list(env.config.methods)
    ordered = [by_method[m] for m in methods if m in by_method] + [
        df for m, df in by_method.items() if m not in methods]
    return combine_personality_scores(ordered, methods)


def _leaderboard(env, cell, inputs):
    from .scoring import build_leaderboard

    cfg = env.config
    return build_leaderboard(inputs["method_scores"], seed=cfg.seed, coverage_threshold=cfg.coverage_threshold,
                             methods_order=cfg.methods)


def _plan_premise(env, cell, inputs):
    from ..premise.conclusions import atomic_item_conclusions, fact_summary_conclusions
    from ..premise.steps import TABLE, plan_pass1

    split = env.split(cell.personality)
    conclusions = [*fact_summary_conclusions(split, inputs["fact_summary"]),
                   *atomic_item_conclusions(split, inputs["atomic_items"])]
    return plan_pass1(conclusions, env.config.effective_premise_judge, key_prefix=(TABLE, cell.personality))


def _plan_user_premise(env, cell, inputs):
    from ..premise.conclusions import load_user_conclusions
    from ..premise.steps import plan_pass1

    conclusions = load_user_conclusions(env.config.premise_conclusions)  # lists every bad line
    return plan_pass1(conclusions, env.config.effective_premise_judge, key_prefix=("user_premise_verdicts",))


def _replan_premise(env, cell, planned, results):
    """Pass 2 after pass 1; nothing after pass 2."""
    from ..premise.steps import plan_pass2

    return [] if any(p.key[-1] == 2 for p in planned) else plan_pass2(planned, results)


def _assemble_premise(env, cell, planned, results, inputs):
    from ..premise.steps import assemble_verdicts

    return assemble_verdicts(planned, results)


def _report(env, cell, inputs):
    from ..report import build_report, write_report

    cfg = env.config
    # The configured embedder and methods: the report measures overlap with the model the run retrieves
    # with and leaves out tables of methods dropped from the config since.
    data = build_report(cfg.data_root, categories_csv=cfg.categories_csv, human_labels_csv=cfg.human_labels_csv,
                        embedder=env.embedder,
                        methods=cfg.methods, seed=cfg.seed, coverage_threshold=cfg.coverage_threshold,
                        first_generator=generator_label(cfg.generator))
    paths = write_report(cfg.data_root, report_dir(cfg.data_root), report_data=data)
    return data, paths


REPORT_DIR = "report"


def report_dir(data_root) -> Any:
    """Where the report step writes report.html and report.json: ``<data_root>/report/`` (a folder or a URL)."""
    from ..dataroot import as_root

    return as_root(data_root) / REPORT_DIR


def report_paths(data_root) -> Any:
    """The report step's two files (a ``report.ReportPaths``), so the CLI can point at them."""
    from ..report import ReportPaths
    from ..report.build import HTML_NAME, JSON_NAME

    out = report_dir(data_root)
    return ReportPaths(html=out / HTML_NAME, json=out / JSON_NAME)


def _ps_version(cfg: EvalConfig) -> dict[str, Any]:
    """How PS votes are sampled (votes, temperature) changes the PS rows: part of the steps' version."""
    return {"ps_votes": cfg.ps_vote_sampling.model_dump()}


def _premise_version(cfg: EvalConfig) -> dict[str, Any]:
    from ..premise.conclusions import CONCLUSIONS_VERSION

    return {"conclusions_version": CONCLUSIONS_VERSION}


def _user_premise_version(cfg: EvalConfig) -> dict[str, Any]:
    from ..premise.conclusions import CONCLUSIONS_VERSION

    return {"conclusions": str(cfg.premise_conclusions), "conclusions_version": CONCLUSIONS_VERSION}


def _assemble(table_fn: str, module: str) -> AssembleFn:
    """``assemble`` of a step whose core assembler takes (planned, results) only."""
    def run(env, cell, planned, results, inputs):
        from importlib import import_module

        return getattr(import_module(f".{module}", __package__), table_fn)(planned, results)

    run.__name__ = table_fn
    return run


def _score_means() -> tuple[str, ...]:
    from .tables import LEADERBOARD_METRICS

    return tuple(LEADERBOARD_METRICS)


P, PXM, NONE = Partitioning.PERSONALITY, Partitioning.PERSONALITY_METHOD, Partitioning.NONE
PREMISE_PASSES = ("premise_pass1", "premise_pass2")

CURATION_CONTRACTS = ("speaker_attribution", "transcript_quality", "qa_structuring", "thematic_tagging",
                      "personality_category")

CURATION = "curation"
"""The group of the curation's steps (``Step.curation``): transcripts in, the corpus documents out."""
_ATTRIBUTION, _QUALITY = _curation_step("speaker_turns"), _curation_step("transcript_quality")
_STRUCTURING, _TAGGING = _curation_step("qa_pairs"), _curation_step("qa_tags")

STEPS: tuple[Step, ...] = (
    Step("transcript_turns", P, CURATION,
         "Ingest (no model): the personality's manifest rows, each file as ordered turns (speaker label or "
         "diarisation id, text) with what was removed (headings, item numbers, footnote marks, stage directions); "
         "a personality with an input problem is refused here with every problem. Only when the config names "
         "transcripts and a manifest (docs/CURATION.md).",
         compute=_transcript_turns, enabled=_curates),
    Step("speaker_turns", P, CURATION,
         "Speaker attribution: each label is the person, an interviewer or someone else (the rule, then the model "
         "for the labels it cannot place); a transcript in which the person never speaks refuses the personality.",
         inputs=(Input("transcript_turns"),), roles=(Role.BUILDER,), contracts=("speaker_attribution",),
         plan=_ATTRIBUTION[0], assemble=_ATTRIBUTION[1], enabled=_curates),
    Step("transcript_quality", P, CURATION,
         "Quality control: is each transcript an interview in which the person answers questions? The model's "
         "verdict and reason, then the reviewer's decision (interviewsim view), which wins; excluded ones stay here.",
         inputs=(Input("transcript_turns"), Input("speaker_turns")), roles=(Role.BUILDER,),
         contracts=("transcript_quality",), plan=_QUALITY[0], assemble=_QUALITY[1], enabled=_curates),
    Step("qa_pairs", P, CURATION,
         "QA structuring: the question-answer pairs of each kept transcript, normalised, with the raw spans.",
         inputs=(Input("transcript_turns"), Input("speaker_turns"), Input("transcript_quality")), roles=(Role.BUILDER,),
         contracts=("qa_structuring",), plan=_STRUCTURING[0], assemble=_STRUCTURING[1], enabled=_curates),
    Step("qa_tags", P, CURATION,
         "Thematic tagging: each pair's category (Social Identity, Motivations and Values, Identity Narrative, "
         "Psychological Traits) and the personality's category (one of the paper's eight).",
         inputs=(Input("transcript_turns"), Input("speaker_turns"), Input("transcript_quality"), Input("qa_pairs")),
         roles=(Role.BUILDER,), contracts=("thematic_tagging", "personality_category"), plan=_TAGGING[0],
         assemble=_TAGGING[1], enabled=_curates),
    Step("prepared_input", P, CURATION,
         "The corpus: the personality's curated transcripts as <corpus>/<id>/prepared_input.json with provenance, "
         "and its rows of categories.csv and curation_report.json: one row per transcript, kept or excluded with "
         "why, and whether the document was written (else why not).",
         inputs=(Input("transcript_turns"), Input("speaker_turns"), Input("transcript_quality"), Input("qa_pairs"),
                 Input("qa_tags")),
         roles=(Role.BUILDER,), contracts=CURATION_CONTRACTS, compute=_prepared_input, enabled=_curates,
         makes_document=True),
    Step("heldout_split", P, "corpus",
         "Every QA pair of the personality, marked train or test (latest ceil(0.2 N) interviews held out).",
         inputs=(Input("prepared_input", load=False),),  # ordering only: the split reads the document it wrote
         compute=_split_table),
    Step("fact_summary", P, "references",
         "Evaluation-only summary of the held-out responses (never shown to a generator).",
         inputs=(Input("heldout_split", load=False),), roles=(Role.BUILDER,), contracts=("fact_summary",),
         plan=_plan_fact_summary, assemble=_assemble("assemble_fact_summary", "references")),
    Step("atomic_items", P, "references", "One atomic question/answer per held-out QA pair.",
         inputs=(Input("heldout_split", load=False),), roles=(Role.BUILDER,), contracts=("atomic_item",),
         plan=_plan_atomic_items, assemble=_assemble("assemble_atomic_items", "references")),
    Step("mcq_items", P, "references",
         "3- and 4-option MCQ items from the atomic items, shuffled reproducibly with roles kept.",
         inputs=(Input("atomic_items"),), roles=(Role.BUILDER,), contracts=("mcq_generation",),
         plan=_plan_mcq_items, assemble=_assemble_mcq_items,
         version_settings=lambda cfg: {"seed": cfg.seed, "options": cfg.mcq_options}),
    Step("reference_personality", P, "references",
         "Big Five levels of the held-out responses: 5 traits x 3 votes per judge.",
         inputs=(Input("heldout_split", load=False),), roles=(Role.JUDGES,), contracts=("personality",),
         plan=_plan_reference_personality, assemble=_assemble("assemble_reference_personality", "judges"),
         version_settings=_ps_version, trigger=Trigger.JUDGE_CHANGE),
    Step("training_personality", P, "validation",
         "PS judge stability (paper 3.3): Big Five levels of the latest training responses, 5 traits x 3 votes "
         "per judge, to compare with reference_personality. Only with ps_stability: true.",
         inputs=(Input("heldout_split", load=False),), roles=(Role.JUDGES,), contracts=("personality",),
         plan=_plan_training_personality, assemble=_assemble("assemble_training_personality", "judges"),
         version_settings=lambda cfg: {**_ps_version(cfg), "responses": cfg.ps_stability_responses},
         trigger=Trigger.JUDGE_CHANGE, enabled=lambda cfg: cfg.ps_stability),
    Step("ps_stability", NONE, "validation",
         "Per personality and judge: alignment of the train-inferred and test-inferred Big Five profiles "
         "(paper: 89.4% over 100 personalities). Tells whether the PS judge is stable on this corpus.",
         inputs=(Input("reference_personality", InputMapping.ALL, allow_missing=True),
                 Input("training_personality", InputMapping.ALL, allow_missing=True)),
         compute=_ps_stability, trigger=Trigger.ANY_UPSTREAM, means=("alignment",),
         enabled=lambda cfg: cfg.ps_stability),
    Step("sft_examples", P, "finetune",
         "The personality's training pairs in chat form (system = the Simple prompt's instructions, user = "
         "question, assistant = response) for supervised fine-tuning. Never a held-out pair.",
         inputs=(Input("heldout_split", load=False),), compute=_sft_examples,
         enabled=lambda cfg: cfg.finetune_export),
    Step("sft_dataset", NONE, "finetune",
         "Chat-format JSONL under <data_root>/finetune/: one file per personality and all_personalities.jsonl, "
         "ready for your own fine-tuning tools (paper 4.3).",
         inputs=(Input("sft_examples", InputMapping.ALL, allow_missing=True),), compute=_sft_dataset,
         trigger=Trigger.ANY_UPSTREAM, writes_files=True, kinds=("jsonl",),
         enabled=lambda cfg: cfg.finetune_export),
    Step("generations", PXM, "simulate",
         "The generator's answer to every held-out question, given only the method's training context.",
         inputs=(Input("heldout_split", InputMapping.PERSONALITY, load=False),), roles=(Role.GENERATOR,),
         contracts=("generation",), plan=_plan_generations, assemble=_assemble("assemble_generations", "generation"),
         version_settings=lambda cfg: {"seed": cfg.seed, "embedding": cfg.effective_embedding_model}),
    Step("mcq_answers", PXM, "simulate",
         "The generator answers each held-out interview's MCQ items in one grouped call.",
         inputs=(Input("mcq_items", InputMapping.PERSONALITY),), roles=(Role.GENERATOR,), contracts=("mcq_answering",),
         plan=_plan_mcq_answers, assemble=_assemble("assemble_mcq_answers", "mcq"),
         version_settings=lambda cfg: {"seed": cfg.seed, "embedding": cfg.effective_embedding_model}, means=("reward",)),
    Step("content_similarity", PXM, "evaluate",
         "Each judge scores each generation against the held-out answer (1-5).",
         inputs=(Input("generations"),), roles=(Role.JUDGES,), contracts=("content_similarity",),
         plan=_plan_content_similarity, assemble=_assemble("assemble_content_similarity", "judges"),
         trigger=Trigger.JUDGE_CHANGE, means=("score",)),
    Step("factual_consistency", PXM, "evaluate",
         "Each judge labels each generation against the fact summary (Entailment/Neutral/Contradiction).",
         inputs=(Input("fact_summary", InputMapping.PERSONALITY), Input("generations")), roles=(Role.JUDGES,),
         contracts=("factual_consistency",), plan=_plan_factual_consistency,
         assemble=_assemble("assemble_factual_consistency", "judges"), trigger=Trigger.JUDGE_CHANGE),
    Step("generated_personality", PXM, "evaluate",
         "Big Five levels of the generated answers: 5 traits x 3 votes per judge.",
         inputs=(Input("generations"),), roles=(Role.JUDGES,), contracts=("personality",),
         plan=_plan_generated_personality, assemble=_assemble("assemble_generated_personality", "judges"),
         version_settings=_ps_version, trigger=Trigger.JUDGE_CHANGE),
    Step("method_scores", PXM, "evaluate",
         "Per-personality aggregates, one row per judge (CS mean, contradiction ratio, PS alignment, MCQ).",
         inputs=(Input("generations"), Input("content_similarity"), Input("factual_consistency"),
                 Input("reference_personality", InputMapping.PERSONALITY), Input("generated_personality"),
                 Input("mcq_answers"), Input("mcq_items", InputMapping.PERSONALITY),
                 Input("atomic_items", InputMapping.PERSONALITY)),
         compute=_method_scores, means=_score_means()),
    Step("personality_scores", P, "evaluate",
         "One personality's method_scores rows across every method run so far, to compare methods for one "
         "person. A method not run yet is listed as missing in the metadata, not an error.",
         inputs=(Input("method_scores", InputMapping.PERSONALITY, allow_missing=True),),
         compute=_personality_scores, trigger=Trigger.ANY_UPSTREAM, means=_score_means()),
    Step("leaderboard", NONE, "evaluate",
         "Macro averages over personalities per method, judge and metric, with bootstrap CIs, on the cells every "
         "compared method has (plus an all-valid view), coverage and a reason for every empty value. Reads the "
         "method_scores partitions that exist: a method not run yet is absent, not an error.",
         inputs=(Input("method_scores", InputMapping.ALL, allow_missing=True),),
         compute=_leaderboard, trigger=Trigger.ANY_UPSTREAM),
    Step("premise_verdicts", P, "premise",
         "PASS/FAIL per conclusion: can a reader who never saw the source use it as a premise?",
         inputs=(Input("fact_summary"), Input("atomic_items")), roles=(Role.PREMISE_JUDGE,),
         contracts=PREMISE_PASSES, plan=_plan_premise, replan=_replan_premise, assemble=_assemble_premise,
         version_settings=_premise_version, trigger=Trigger.JUDGE_CHANGE, means=("decontextuality_score",)),
    Step("user_premise_verdicts", NONE, "premise",
         "Your own conclusions (EvalConfig.premise_conclusions) through the two-pass premise judge: PASS/FAIL "
         "each, with the failure-attribution split and label clusters.",
         roles=(Role.PREMISE_JUDGE,), contracts=PREMISE_PASSES, plan=_plan_user_premise, replan=_replan_premise,
         assemble=_assemble_premise, version_settings=_user_premise_version, trigger=Trigger.JUDGE_CHANGE,
         means=("decontextuality_score",), enabled=lambda cfg: cfg.premise_conclusions is not None),
    Step("report", NONE, "report",
         "One self-contained HTML report and a JSON of the same numbers: the leaderboard, the paper's analyses "
         "and the premise audit, from every table under the data root (absent ones: not run).",
         inputs=(Input("leaderboard", load=False), Input("premise_verdicts", InputMapping.ALL, load=False),
                 Input("ps_stability", load=False)),  # ordering only, and only when ps_stability is enabled
         compute=_report, trigger=Trigger.ANY_UPSTREAM, writes_files=True, kinds=("html", "json")),
)
"""The evaluation graph, in an order where every step comes after its inputs."""

BY_NAME: dict[str, Step] = {s.name: s for s in STEPS}

CURATION_STEPS: tuple[str, ...] = tuple(s.name for s in STEPS if s.curation)
"""The curation's steps in graph order: ``transcript_turns`` .. ``prepared_input`` (``curation/step.py``)."""


def steps_for(cfg: EvalConfig) -> tuple[Step, ...]:
    """The steps this configuration runs (``user_premise_verdicts`` only when its file is configured)."""
    return tuple(s for s in STEPS if s.enabled(cfg))


def edges(steps: Iterable[Step]) -> set[tuple[str, str, str]]:
    """``(upstream, downstream, mapping)`` of every input edge among ``steps``."""
    names = {s.name for s in steps}
    return {(i.step, s.name, i.mapping.value) for s in steps if s.name in names for i in s.inputs if i.step in names}


def _check(steps: Sequence[Step]) -> None:
    seen: set[str] = set()
    for s in steps:
        if (s.plan is None) == (s.compute is None):
            raise TypeError(f"step {s.name}: give plan+assemble or compute, not both or neither")
        if s.plan is not None and s.assemble is None:
            raise TypeError(f"step {s.name}: plan without assemble")
        for i in s.inputs:
            if i.step not in seen:
                raise TypeError(f"step {s.name}: input {i.step} is not an earlier step")
        seen.add(s.name)


_check(STEPS)


def inputs_for(step: Step, cell: Cell, done: Mapping[str, Mapping[Cell, Any]]) -> dict[str, Any]:
    """The loaded inputs of one partition of ``step`` from the finished upstream partitions (see module doc)."""
    out: dict[str, Any] = {}
    for i in step.inputs:
        if not i.load:
            continue
        up = BY_NAME[i.step]
        frames = done[i.step]
        if i.mapping is InputMapping.SAME:
            out[i.step] = frames[cell]
        elif i.mapping is InputMapping.ALL:
            out[i.step] = concat_table(i.step, frames.values())
        elif up.partitioning is Partitioning.PERSONALITY:
            out[i.step] = frames[Cell(cell.personality)]
        else:
            out[i.step] = {c.method: f for c, f in frames.items() if c.personality == cell.personality}
    return out
