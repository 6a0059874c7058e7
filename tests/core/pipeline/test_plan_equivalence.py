"""The planner plans exactly the requests the old dry-run saw, and says what it repeats, caches and estimates.

``reference_plan.py`` is the planner before issue 19/22 (the whole graph dry-run through the
runner with the offline model answering every call). Both see the same requests per (step, method,
model); the old one then dropped every repeated key without a word, and the offline model's
answers made judges' prompts of different requests collide (a real model answers them
differently), so its distinct counts are at most the new ones, equal where no model answer
enters the prompts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import reference_plan

from interviewsim_core.pipeline.config import OFFLINE_MODEL, EvalConfig
from interviewsim_core.plan import plan_run
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "press_conferences_1960_1980"
PROMPTS_WITHOUT_ANSWERS = {"generations", "mcq_answers", "fact_summary", "atomic_items", "mcq_items",
                           "reference_personality", "premise_verdicts"}
"""Steps whose prompts hold no generated answer: the old distinct counts are the new ones exactly."""


def _compare(cfg: EvalConfig, personalities=None) -> None:
    new = plan_run(cfg, personalities)
    old = reference_plan.plan_run(cfg, personalities)
    requests = old.requests()
    distinct = {(ln.step, ln.method, ln.model): ln.calls for ln in old.plan().lines}
    lines = {(ln.step, ln.method, ln.model): ln for ln in new.lines}
    assert {k for k, n in requests.items() if n} == set(lines)
    for key, ln in lines.items():
        assert ln.calls == requests[key], key
        assert ln.cached == 0
        if key[0] in PROMPTS_WITHOUT_ANSWERS:
            assert ln.calls - ln.deduplicated == distinct.get(key, 0), key
        else:
            assert ln.calls - ln.deduplicated >= distinct.get(key, 0), key


@pytest.mark.slow
@pytest.mark.parametrize("methods", [
    ("simple", "chrono-5"),
    ("chrono-100", "chrono-1000", "memory-10", "hybrid-2-2"),
    ("wiki", "wiki-long", "random-3", "memory-3"),
])
def test_same_requests_as_the_old_dry_run_on_the_sample(tmp_path, methods):
    _compare(EvalConfig(corpus=SAMPLE_CORPUS_DIR, data_root=tmp_path, methods=methods),
             ["SYN_AUERLUND", "SYN_KAVANEK"] if len(methods) > 2 else None)


@pytest.mark.slow
@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared corpus is not here (CI has it)")
def test_same_requests_as_the_old_dry_run_on_the_shared_corpus(tmp_path):
    cfg = EvalConfig(corpus=SHARED, data_root=tmp_path, methods=("simple", "chrono-100", "memory-10", "wiki"))
    _compare(cfg, ["NEWSCONF_CARTER", "NEWSCONF_FORD"])


def test_repeated_prompts_are_counted_and_named(tmp_path):
    # The sample's personalities have fewer than 100 training pairs: Chrono-1000 prompts are Chrono-100's.
    cfg = EvalConfig(corpus=SAMPLE_CORPUS_DIR, data_root=tmp_path, methods=("chrono-100", "chrono-1000"))
    plan = plan_run(cfg, ["SYN_AUERLUND"])
    first, again = (next(ln for ln in plan.lines if ln.step == "generations" and ln.method == m)
                    for m in ("chrono-100", "chrono-1000"))
    assert first.deduplicated == 0 and first.calls > 0
    assert again.calls == again.deduplicated == first.calls and again.to_send == 0
    assert "same prompts as chrono-100" in again.note
    assert again.prompt_tokens == 0  # not sent, not counted twice
    assert plan.to_json()["totals"]["deduplicated"] == plan.deduplicated > 0
    assert "same prompts as chrono-100" in plan.table()


def test_a_finished_offline_run_plans_nothing_to_send(tmp_path):
    from interviewsim_core.pipeline.runner import run_evaluation

    cfg = EvalConfig(corpus=SAMPLE_CORPUS_DIR, data_root=tmp_path, methods=("simple", "memory-3"))
    run_evaluation(cfg, personalities=["SYN_KAVANEK"], keep=())
    plan = plan_run(cfg, ["SYN_KAVANEK"])
    assert plan.calls > 0 and plan.to_send == 0
    # Another personality is not cached: all of its calls are to send.
    other = plan_run(cfg, ["SYN_AUERLUND"])
    assert other.to_send == other.calls - other.deduplicated > 0


def test_estimated_tokenizers_and_missing_prices_are_said(tmp_path):
    local = {"model": "openai/gemma", "api_base": "http://127.0.0.1:9/v1"}
    cfg = EvalConfig(corpus=SAMPLE_CORPUS_DIR, data_root=tmp_path, methods=("simple",), generator=local,
                     judges=({"model": "openai/gpt-4.1"},), builder={"model": "openai/gpt-4.1"},
                     premise_judge={"model": "openai/gpt-4.1"})
    plan = plan_run(cfg, ["SYN_KAVANEK"])
    gen = next(ln for ln in plan.lines if ln.step == "generations")
    assert gen.tokenizer == "estimate" and gen.priced is False and gen.cost_usd == 0
    assert "no price for openai/gemma: $0 shown" in gen.note
    judge = next(ln for ln in plan.lines if ln.step == "content_similarity")
    assert judge.tokenizer == "model" and judge.priced and judge.cost_usd > 0
    assert "no price" in plan.table()
    line = next(x for x in plan.to_json()["lines"] if x["step"] == "generations")
    assert line["priced"] is False and line["tokenizer"] == "estimate"


def test_steps_and_cells_restrict_what_is_counted(tmp_path):
    cfg = EvalConfig(corpus=SAMPLE_CORPUS_DIR, data_root=tmp_path, methods=("simple", "chrono-5"))
    pids = ["SYN_AUERLUND", "SYN_KAVANEK"]
    full = {(ln.step, ln.method): ln.calls for ln in plan_run(cfg, pids).lines}
    judged = plan_run(cfg, pids, steps=["content_similarity"])
    assert {(ln.step, ln.method): ln.calls for ln in judged.lines} == {
        k: n for k, n in full.items() if k[0] == "content_similarity"}
    one = plan_run(cfg, pids, cells=[("SYN_KAVANEK", "chrono-5")])
    alone = plan_run(cfg, ["SYN_KAVANEK"], methods=["chrono-5"])
    pxm = {(ln.step, ln.method): ln.calls for ln in alone.lines if ln.method}
    assert {(ln.step, ln.method): ln.calls for ln in one.lines} == pxm
    both = plan_run(cfg, cells=[("SYN_KAVANEK", None), ("SYN_KAVANEK", "chrono-5")])
    assert {(ln.step, ln.method): ln.calls for ln in both.lines if ln.step != "user_premise_verdicts"} == {
        (ln.step, ln.method): ln.calls for ln in alone.lines}
    with pytest.raises(Exception, match="NOBODY"):
        plan_run(cfg, cells=[("NOBODY", "simple")])
    with pytest.raises(Exception, match="make no model call"):
        plan_run(cfg, steps=["leaderboard"])


def test_offline_models_need_no_price(tmp_path):
    cfg = EvalConfig(corpus=SAMPLE_CORPUS_DIR, data_root=tmp_path, methods=("simple",))  # every role offline
    plan = plan_run(cfg, ["SYN_KAVANEK"])
    assert {ln.model for ln in plan.lines} == {OFFLINE_MODEL}
    assert all(ln.priced and ln.tokenizer == "model" and "no price" not in ln.note for ln in plan.lines)
