"""A run where nothing is valid still gets its whole report, and every empty part says why."""

from __future__ import annotations

import pandas as pd

from interviewsim_core.metrics.scores import personality_scores
from interviewsim_core.report import build_report, write_report

from .htmlscan import ReportPage

PEOPLE = {"pa": 19, "pb": 19}  # 38 held-out questions
METHODS = ("simple", "chrono-100")


def _call(status):
    return {"status": status, "model": "m", "prompt_tokens": 3, "completion_tokens": 1, "cost_usd": 0.0,
            "cache_hit": False}


def _dead_tables() -> dict[str, pd.DataFrame]:
    """Generations fine; every CS judgment invalid, every FC call failed, every PS vote invalid, every
    MCQ item invalid (20 of them), so no MCQ answer exists."""
    split, gens, cs, fc, votes, gvotes, items = [], [], [], [], [], [], []
    for pid, n in PEOPLE.items():
        for k in range(n):
            qa = f"{pid}-q{k}"
            split.append({"personality_id": pid, "qa_id": qa, "partition": "test", "order": 10 + k,
                          "question": f"held-out question {k}", "tags": ["Identity Narrative"]})
            split.append({"personality_id": pid, "qa_id": f"{pid}-t{k}", "partition": "train", "order": k,
                          "question": f"training question {k}", "tags": []})
            for m in METHODS:
                gens.append({"personality_id": pid, "method": m, "qa_id": qa, "n_context_used": 0, **_call("ok")})
                cs.append({"personality_id": pid, "method": m, "judge": "J", "qa_id": qa, "score": None,
                           **_call("invalid")})
                fc.append({"personality_id": pid, "method": m, "judge": "J", "qa_id": qa, "label": None,
                           **_call("failed")})
        for k in range(10):
            items.append({"personality_id": pid, "item_id": f"{pid}-q{k}#3", "qa_id": f"{pid}-q{k}", "n_options": 3,
                          **_call("invalid")})
        for t in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism"):
            for v in range(3):
                votes.append({"personality_id": pid, "judge": "J", "trait": t, "vote_index": v, "rate": None,
                              **_call("invalid")})
                for m in METHODS:
                    gvotes.append({"personality_id": pid, "method": m, "judge": "J", "trait": t, "vote_index": v,
                                   "rate": None, **_call("invalid")})
    t = {"heldout_split": pd.DataFrame(split), "generations": pd.DataFrame(gens),
         "content_similarity": pd.DataFrame(cs), "factual_consistency": pd.DataFrame(fc),
         "reference_personality": pd.DataFrame(votes), "generated_personality": pd.DataFrame(gvotes),
         "mcq_items": pd.DataFrame(items)}
    t["method_scores"] = pd.concat([
        personality_scores(pid, m, generations=t["generations"], content_similarity=t["content_similarity"],
                           factual_consistency=t["factual_consistency"],
                           generated_personality=t["generated_personality"],
                           reference_personality=t["reference_personality"], mcq_items=t["mcq_items"],
                           judges=["J"], embedding_model="offline/hashing")
        for pid in PEOPLE for m in METHODS], ignore_index=True)
    return t


def test_report_with_no_valid_value_is_written_and_says_why(tmp_path):
    data = build_report(tables=_dead_tables(), title="Nothing valid")
    paths = write_report(tmp_path, tmp_path / "report", report_data=data)  # ZeroDivisionError before the fix
    page = ReportPage(paths.html.read_text())
    assert "leaderboard" in page.tables and "coverage" in page.tables
    text, value = page.cells[("leaderboard", "simple|J|cs_mean")]
    assert value is None and text == "0 valid CS judgments (38 of 38 invalid)"
    assert page.cells[("leaderboard", "chrono-100|J|contradiction_ratio")][0] == \
        "0 valid FC judgments (38 of 38 failed)"
    assert page.cells[("leaderboard", "simple||mcq3_accuracy")][0] == "0 valid 3-option MCQ items (20 of 20 invalid)"
    assert data.section("mcq").note == "0 valid 3-option MCQ items (20 of 20 invalid)."
    assert data.section("tag_breakdown").note == "0 valid FC judgments (76 of 76 failed)."
    html = paths.html.read_text()
    assert "0 valid 3-option MCQ items (20 of 20 invalid)" in html
    assert "has not run" not in data.section("mcq").note


def test_leaderboard_markdown_says_why_cells_are_empty():
    from interviewsim_core.report import leaderboard_markdown

    md = leaderboard_markdown(build_report(tables=_dead_tables()))
    assert "0 valid CS judgments (38 of 38 invalid)" in md and "0 valid 3-option MCQ items (20 of 20 invalid)" in md


def test_report_is_written_when_most_model_calls_failed_or_came_back_invalid(tmp_path):
    """Issue 20: with most calls failing, MCQ items have ``labels = None``; every analysis must skip
    such rows (the length-bias table raised ``TypeError`` before the fix) and the report be written."""
    from interviewsim_core.llm.faults import FaultSpec
    from interviewsim_core.llm.gateway import Gateway
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    cfg = EvalConfig(data_root=tmp_path / "data", methods=METHODS,
                     judges=(ModelConfig(model="offline/extractive", label="J", max_retries=0, max_reasks=0),))
    faults = FaultSpec(malformed_rate=0.5, server_error_rate=0.3, seed=11)
    tables = run_evaluation(cfg, gateway=Gateway(cache=None, faults=faults), personalities=["SYN_AUERLUND"])
    for name in ("mcq_items", "mcq_answers", "content_similarity", "factual_consistency"):
        statuses = set(tables[name]["status"])
        assert statuses - {"ok"}, f"{name}: the faults did not reach this table ({statuses})"
    assert tables["mcq_items"]["labels"].isna().any()
    data = build_report(tables=tables, title="Mostly failed")
    paths = write_report(tmp_path, tmp_path / "report", report_data=data)
    assert paths.html.is_file() and paths.json.is_file()
    lb = data.section("mcq").tables["length_bias"]
    usable = tables["mcq_items"]["labels"].notna().sum()
    assert 0 < (lb["n_longest"] + lb["n_not_longest"]).sum() <= tables["mcq_answers"]["reward"].notna().sum()
    assert usable < len(tables["mcq_items"])
