"""Checks on generations and MCQ answers, run with the asset's partitions (never over every partition at once).
The leak checks (generations and MCQ answering) re-plan the prompts through core's request builder instead of reading
them from the gateway cache: planning is deterministic and calls no model, it checks exactly what
the current code sends, and it works whatever cache backend (or none) produced the rows. The cache
keeps the prompts actually sent, for audits of older runs.
"""


import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.leaks import LeakDetector
from interviewsim_core.pipeline.scoring import mcq_output_gaps
from interviewsim_core.pipeline.steps import BY_NAME
from interviewsim_core.pipeline.tables import empty_frame

from ...assets_support import CORPUS, AssetTarget, cells
from ...check_results import per_partition, run_frames
from ...factory import Partitions, cell_inputs, checked_config, plan_cells, run_cells
from ...io_managers import ALLOW_MISSING
from ...resources import CorpusResource, step_env
from ...run_keys import run_keys
from ..corpus.partitions import personality_partitions, to_personality


def replan(context, cfg: EvalConfig, step_name: str, loaded: dict) -> dict:
    """The planned calls of ``step_name`` for the check's partitions, through the step's own ``plan``."""
    step = BY_NAME[step_name]
    parts = Partitions(cfg)
    run_cfg = checked_config(context, cfg)
    keyed = run_cells(context, step, parts)
    return plan_cells(step, step_env(run_cfg, getattr(context.resources, CORPUS).split), keyed, cell_inputs(step, keyed, loaded, parts))

NO_HELDOUT_IN_PROMPTS = "no_heldout_text_in_generation_prompts"
ONE_PER_QUESTION = "one_generation_per_heldout_question"
PROFILE_CONTEXT = "profile_context_present"


def build_checks(generations: AssetTarget, cfg: EvalConfig) -> list[dg.AssetChecksDefinition]:
    pxm = generations.partitions_def

    @dg.asset_check(
        asset=generations.key,
        name=NO_HELDOUT_IN_PROMPTS,
        partitions_def=pxm,
        blocking=True,
        additional_ins={"fact_summary": dg.AssetIn(partition_mapping=to_personality,
                                                   metadata={ALLOW_MISSING: True})},
        description="No held-out response and no fact-summary sentence appears verbatim in any generation prompt.",
        required_resource_keys={"eval_config", "corpus"},
    )
    def no_heldout_in_prompts(context: dg.AssetCheckExecutionContext, fact_summary: dict):
        fact_summary = run_frames(context, fact_summary, "fact_summary", personality_partitions, cfg.data_root,
                                  allow_missing=True)
        plans = replan(context, cfg, "generations", {})
        yield from per_partition(context, *_leak_result(cells(context, pxm), plans, fact_summary,
                                                        context.resources.corpus), blocking=True)

    @dg.asset_check(
        asset=generations.key,
        name=ONE_PER_QUESTION,
        partitions_def=pxm,
        description="Exactly one generation row per held-out question, no extra and none missing.",
    )
    def one_per_question(context: dg.AssetCheckExecutionContext, corpus: CorpusResource):
        generations = run_frames(context, {}, "generations", pxm, cfg.data_root, columns=["qa_id"])
        problems: list[dict] = []
        failing: list[str] = []
        for key, pid, method in cells(context, pxm):
            expected = [p.qa_id for p in corpus.split(pid).test_pairs]
            got = list(generations[key]["qa_id"]) if key in generations else []
            missing = sorted(set(expected) - set(got))
            extra = sorted(set(got) - set(expected))
            dupes = sorted({q for q in got if got.count(q) > 1})
            if missing or extra or dupes:
                failing.append(key)
                problems.append({"personality": pid, "method": method, "missing": missing[:10],
                                 "unexpected": extra[:10], "duplicated": dupes[:10]})
        yield from per_partition(context, dg.AssetCheckResult(
            passed=not problems,
            metadata={"partitions_checked": len(run_keys(context)), "partitions_failing": len(problems),
                      "problems": dg.MetadataValue.json(problems[:20])},
        ), failing)

    @dg.asset_check(
        asset=generations.key,
        name=PROFILE_CONTEXT,
        partitions_def=pxm,
        description="Wiki/Wiki-Long had a profile to send (a blank one is warned about, not passed off as Simple); "
        "counts the rows whose long profile was cut to the paper's 10,000 characters.",
    )
    def profile_context(context: dg.AssetCheckExecutionContext):
        generations = run_frames(context, {}, "generations", pxm, cfg.data_root, columns=["context_state"])
        blank, truncated, failing = [], 0, []
        for key, pid, method in cells(context, pxm):
            df = generations.get(key)
            if df is None or "context_state" not in df.columns:
                continue
            states = df["context_state"]
            truncated += int((states == "truncated").sum())
            if (states == "blank_profile").any():
                failing.append(key)
                blank.append({"personality": pid, "method": method})
        yield from per_partition(context, dg.AssetCheckResult(
            passed=not blank, severity=dg.AssetCheckSeverity.WARN,
            metadata={"blank_profile_partitions": dg.MetadataValue.json(blank[:50]),
                      "rows_with_truncated_profile": truncated},
        ), failing)

    return [no_heldout_in_prompts, one_per_question, profile_context]


NO_HELDOUT_IN_MCQ_PROMPTS = "no_heldout_text_in_mcq_answering_prompts"
MCQ_ANSWERED = "mcq_items_expected_have_answers"


def build_mcq_checks(mcq_answers: AssetTarget, cfg: EvalConfig) -> list[dg.AssetChecksDefinition]:
    """The leak check for MCQ answering: its prompts carry context chosen by the same selectors.

    The items being asked derive from held-out answers by design, so each prompt's own item
    questions and option texts are exempt; anything else held-out in the prompt is a leak.
    """
    pxm = mcq_answers.partitions_def

    @dg.asset_check(
        asset=mcq_answers.key,
        name=NO_HELDOUT_IN_MCQ_PROMPTS,
        partitions_def=pxm,
        blocking=True,
        additional_ins={
            "mcq_items": dg.AssetIn(partition_mapping=to_personality),
            "fact_summary": dg.AssetIn(partition_mapping=to_personality, metadata={ALLOW_MISSING: True}),
        },
        description="Apart from the items asked, no held-out response and no fact-summary sentence appears "
        "verbatim in any MCQ-answering prompt.",
        required_resource_keys={"eval_config", "corpus"},
    )
    def no_heldout_in_mcq_prompts(context: dg.AssetCheckExecutionContext, mcq_items: dict,
                                  fact_summary: dict):
        mcq_items = run_frames(context, mcq_items, "mcq_items", personality_partitions, cfg.data_root)
        fact_summary = run_frames(context, fact_summary, "fact_summary", personality_partitions, cfg.data_root,
                                  allow_missing=True)
        plans = replan(context, cfg, "mcq_answers", {"mcq_items": mcq_items})
        yield from per_partition(context, *_leak_result(cells(context, pxm), plans, fact_summary,
                                                        context.resources.corpus, mcq_exempt), blocking=True)

    @dg.asset_check(
        asset=mcq_answers.key,
        name=MCQ_ANSWERED,
        partitions_def=pxm,
        additional_ins={"mcq_items": dg.AssetIn(partition_mapping=to_personality, metadata={ALLOW_MISSING: True}),
                        "atomic_items": dg.AssetIn(partition_mapping=to_personality, metadata={ALLOW_MISSING: True})},
        description="Every configured option count has scored MCQ answers when the personality has held-out "
        "questions: an empty table (all items invalid, all calls failed) fails and says why.",
        required_resource_keys={"eval_config", "corpus"},
    )
    def mcq_answered(context: dg.AssetCheckExecutionContext, mcq_answers: dict, mcq_items: dict,
                     atomic_items: dict):
        mcq_answers = run_frames(context, mcq_answers, "mcq_answers", pxm, cfg.data_root)
        mcq_items, atomic_items = (run_frames(context, frames, name, personality_partitions, cfg.data_root,
                                              allow_missing=True)
                                   for name, frames in (("mcq_items", mcq_items), ("atomic_items", atomic_items)))
        options = checked_config(context, cfg).mcq_options
        corpus = context.resources.corpus
        problems: list[dict] = []
        failing: list[str] = []
        for key, pid, method in cells(context, pxm):
            items = mcq_items.get(pid)
            answers = mcq_answers.get(key)
            gaps = mcq_output_gaps(len(corpus.split(pid).test_pairs),
                                   items if items is not None else empty_frame("mcq_items"),
                                   answers if answers is not None else empty_frame("mcq_answers"),
                                   options, atomic_items.get(pid))
            if gaps:
                failing.append(key)
                problems.append({"personality": pid, "method": method, "why": gaps})
        yield from per_partition(context, dg.AssetCheckResult(
            passed=not problems,
            metadata={"partitions_checked": len(run_keys(context)), "partitions_failing": len(problems),
                      "problems": dg.MetadataValue.json(problems[:20])},
        ), failing)

    return [no_heldout_in_mcq_prompts, mcq_answered]


def mcq_exempt(call) -> list[str]:
    """The item questions and option texts of one planned answering call: held-out-derived by design."""
    return [t for item in call.row["_items"] for t in (item.question, *item.texts)]


def _leak_result(run_cells, plans, fact_summary: dict, corpus: CorpusResource,
                 exempt=None) -> tuple[dg.AssetCheckResult, set[str]]:
    """Every planned prompt matched against its personality's held-out fragments (and fact summary);
    the run-wide result and the partitions with a leak."""
    leaks: list[dict] = []
    failing: set[str] = set()
    prompts = by_design = 0
    detectors: dict[str, LeakDetector] = {}  # one per personality, not per cell (about a fifth of the check was building them, py-spy)
    for key, pid, method in run_cells:
        detector = detectors.get(pid)
        if detector is None:
            fs = fact_summary.get(pid)
            summaries = [s for s in fs["summary"] if isinstance(s, str)] if fs is not None else []
            detector = detectors[pid] = LeakDetector(corpus.split(pid), summaries)
        for call in plans[key]:
            if call.row.get("_open_book") or call.given is not None:
                # By design, and named: the reference method's open-book MCQ (the ceiling) and a
                # calibration candidate (no prompt at all); every other prompt is checked.
                by_design += 1
                continue
            prompts += 1
            found = detector.find(list(call.request.messages), exempt(call) if exempt else ())
            if found:
                failing.add(key)
                leaks.append({"personality": pid, "method": method, "item": call.request.item_id,
                              "fragment": found[0][:120]})
    return dg.AssetCheckResult(
        passed=not leaks,
        metadata={"prompts_checked": prompts, "calibration_not_checked": by_design, "leaks": len(leaks), "first_leaks": dg.MetadataValue.json(leaks[:20])},
    ), failing
