"""``plan`` before ``run``: the planned calls are the calls made, the planned tokens those reported."""

from __future__ import annotations

import json

import pytest
from fakes import offline_reply

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.transport import litellm_module
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.plan import plan_run

PIDS = ["SYN_AUERLUND", "SYN_KAVANEK"]


def _tokens(text: str) -> int:
    return int(litellm_module().token_counter(model="openai/gpt-4.1", text=text))


@pytest.fixture()
def server():
    # Valid answers for every contract (the offline model's), token counts by the model's tokenizer.
    cfg = FakeServerConfig(reply=offline_reply, count_tokens=_tokens)
    with FakeOpenAIServer(cfg) as srv:
        yield srv


def test_plan_matches_the_run_it_plans(tmp_path, server, monkeypatch):
    from interviewsim_core.factories import make_gateway
    from interviewsim_core.pipeline.runner import run_evaluation

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    cfg = EvalConfig(data_root=tmp_path, methods=("simple", "chrono-5"), api_base=server.base_url,
                     generator={"model": "openai/gpt-4.1"}, judges=({"model": "openai/gpt-4o"},),
                     builder={"model": "openai/gpt-4.1"}, premise_judge={"model": "openai/gpt-4.1"})
    plan = plan_run(cfg, personalities=PIDS)
    assert server.requests == 0  # planning calls no model
    tables = run_evaluation(cfg, gateway=make_gateway(cfg), personalities=PIDS)
    sent = [json.loads(e["body"]) for e in server.log if e["path"].endswith("/chat/completions")]
    # Every output valid: the plan's calls to send bound the calls made. The run sends fewer only where two
    # *answers* coincide (the offline model gives two methods the same generation, so their judge prompts
    # are one request); the plan cannot know answers before they exist, and counts each judge call.
    assert len(sent) <= plan.to_send <= 1.2 * len(sent)
    invalid = sum(int((df["status"] != "ok").sum()) for df in tables.values() if "status" in df)
    assert invalid == 0
    # Every call's usage, premise passes (pass1_/pass2_ columns) included; scores only re-sum them.
    reported = sum(int(df[c].sum()) for n, df in tables.items() if n not in ("method_scores", "leaderboard",
                   "personality_scores") for c in df.columns if c.endswith("prompt_tokens"))
    assert plan.prompt_tokens == pytest.approx(reported, rel=0.10)
    # Per step too: one line per (step, method, model), and the steps are the run's tables.
    steps = {ln.step for ln in plan.lines}
    assert {"generations", "content_similarity", "mcq_answers", "fact_summary"} <= steps
    assert {ln.method for ln in plan.lines if ln.step == "generations"} == {"simple", "chrono-5"}
    # Priced from litellm's local map: gpt-4.1 and gpt-4o have prices, so the plan costs something.
    assert plan.cost_usd > 0


def test_a_second_plan_expects_cache_hits_for_everything_run(tmp_path, server, monkeypatch):
    from interviewsim_core.factories import make_gateway
    from interviewsim_core.pipeline.runner import run_evaluation

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    cfg = EvalConfig(data_root=tmp_path, methods=("simple",), api_base=server.base_url,
                     generator={"model": "openai/gpt-4.1"}, judges=({"model": "openai/gpt-4o"},),
                     builder={"model": "openai/gpt-4.1"}, premise_judge={"model": "openai/gpt-4.1"})
    run_evaluation(cfg, gateway=make_gateway(cfg), personalities=PIDS[:1])
    again = plan_run(cfg, personalities=PIDS[:1])
    assert again.calls > 0 and again.to_send == 0 and again.cost_usd == 0
    more = plan_run(cfg.model_copy(update={"methods": ("simple", "chrono-5")}), personalities=PIDS[:1])
    assert 0 < more.to_send < more.calls  # only the new method's calls are to be paid
    assert {ln.method for ln in more.lines if ln.to_send} <= {"chrono-5", ""}


def test_plan_matches_the_run_on_a_scale_corpus_personality(tmp_path, server, monkeypatch):
    """The paper-shaped generator's text (long answers, many interviews), with a retrieval method."""
    import sys
    from pathlib import Path

    from interviewsim_core.factories import make_gateway
    from interviewsim_core.pipeline.runner import run_evaluation

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # benchmarks/ is not installed
    from benchmarks.scale_corpus import personality_document

    corpus = tmp_path / "corpus" / "SCALE_0000"
    corpus.mkdir(parents=True)
    (corpus / "prepared_input.json").write_text(json.dumps(personality_document(0, 90, seed=3)), encoding="utf-8")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    model = {"model": "openai/gpt-4.1"}
    cfg = EvalConfig(corpus=tmp_path / "corpus", data_root=tmp_path / "out", api_base=server.base_url,
                     methods=("simple", "chrono-40", "memory-5"), embedding_model="offline/hashing",
                     generator=model, judges=({"model": "openai/gpt-4o"},), builder=model, premise_judge=model)
    plan = plan_run(cfg)
    tables = run_evaluation(cfg, gateway=make_gateway(cfg))
    sent = [e for e in server.log if e["path"].endswith("/chat/completions")]
    assert len(sent) <= plan.to_send <= 1.2 * len(sent)  # as above: coinciding offline answers merge prompts
    reported = sum(int(df[c].sum()) for n, df in tables.items() if n not in ("method_scores", "leaderboard",
                   "personality_scores") for c in df.columns if c.endswith("prompt_tokens"))
    assert plan.prompt_tokens == pytest.approx(reported, rel=0.10)


def test_usd_pair_shows_the_digits_that_tell_a_plan_from_its_budget():
    """Issue 33: cents alone printed a $0.006071 plan over a $0.0001 budget as "$0.01 ... more than $0.00"."""
    from interviewsim_core.plan import usd_pair

    assert usd_pair(0.006071, 0.0001) == ("$0.00607", "$0.00010")
    assert usd_pair(12.5, 10.0) == ("$12.50", "$10.00")
    assert usd_pair(10.001, 10.0) == ("$10.001", "$10.000")
    assert usd_pair(3.0, 0.0) == ("$3.00", "$0.00")


def test_over_budget_names_the_generator_whose_calls_push_the_plan_over():
    """Issue 44: with several generators the refusal lists each one's share and names the one to leave out."""
    from interviewsim_core.plan import PlanLine, RunPlan, over_budget

    def line(method: str, cost: float, calls: int) -> PlanLine:
        return PlanLine(step="generations", method=method, model="m", calls=calls, cached=0, prompt_tokens=1,
                        completion_tokens=1, cost_usd=cost, tokenizer="estimate")

    plan = RunPlan(lines=(line("simple", 1.0, 10), line("big/simple", 3.0, 30), line("", 0.5, 5)))
    generator_of = {"simple": "small", "big/simple": "big"}.get
    assert over_budget(plan, 4.0) == "the plan costs $4.50, more than max_cost_usd $4.00"
    text = over_budget(plan, 4.0, generator_of)
    assert text.startswith("the plan costs $4.50, more than max_cost_usd $4.00 (big $3.00 (30 calls); small $1.00 "
                           "(10 calls); shared $0.50 (5 calls))")
    # Leaving out small ($1.00) gives $3.50 <= $4.00, leaving out big gives $1.50: the dearest such one is named.
    assert text.endswith("generator big's calls push it over (without them it is within the budget)")
    assert "push it over" in over_budget(plan, 3.6, generator_of) and "big" in over_budget(plan, 3.6, generator_of)
    assert over_budget(plan, 1.0, generator_of).endswith("no single generator's calls push it over (leaving out "
                                                         "any one still exceeds the budget)")
