"""The evaluation as framework-free steps: one function per asset, explicit tables, one config.

Each step comes as ``plan_*`` (model calls to make, no model called) + ``assemble_*`` (results ->
table) + a convenience verb doing both through a gateway. The Dagster assets wrap these; so does
``runner.run_evaluation`` (the step table of ``steps.py`` run in dependency order) for runs without Dagster. Modules are imported lazily so that importing
the config (the CLI does first) does not pull in every contract.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "EvalConfig": "config", "judge_identity": "config", "JUDGE_CONTRACTS": "config",
    "SCHEMAS": "tables", "CALL_COLUMNS": "tables", "KEY_COLUMNS": "tables", "to_table": "tables",
    "empty_frame": "tables", "schema_of": "tables", "conform": "tables",
    "partition_path": "storage", "write_frame": "storage", "read_frame": "storage",
    "PlannedCall": "calls", "run_calls": "calls",
    "split_table": "split_tables",
    "build_fact_summary": "references", "build_atomic_items": "references", "build_mcq_items": "references",
    "plan_fact_summary": "references", "plan_atomic_items": "references", "plan_mcq_items": "references",
    "assemble_fact_summary": "references", "assemble_atomic_items": "references", "assemble_mcq_items": "references",
    "generate_responses": "generation", "plan_generations": "generation", "assemble_generations": "generation",
    "judge_reference_personality": "judges", "judge_generated_personality": "judges",
    "judge_content_similarity": "judges", "judge_factual_consistency": "judges",
    "plan_reference_personality": "judges", "plan_generated_personality": "judges",
    "plan_content_similarity": "judges", "plan_factual_consistency": "judges",
    "assemble_reference_personality": "judges", "assemble_generated_personality": "judges",
    "assemble_content_similarity": "judges", "assemble_factual_consistency": "judges",
    "answer_mcqs": "mcq", "plan_mcq_answers": "mcq", "assemble_mcq_answers": "mcq",
    "score_method": "scoring", "build_leaderboard": "scoring",
    "heldout_leaks": "leaks", "LeakDetector": "leaks",
    "run_evaluation": "runner", "STEPS": "steps", "Step": "steps",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    return getattr(import_module(f".{module}", __name__), name)
