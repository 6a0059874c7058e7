"""Batch mode against a local server that implements OpenAI's Files and Batches endpoints."""

from __future__ import annotations

import json

import pytest

from interviewsim_core.errors import ContractParseError
from interviewsim_core.llm.batch import batch_cost, check_batch_support
from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.testing_batch import BatchBehaviour, FakeBatchServer
from interviewsim_core.llm.types import CallRequest, ModelConfig

N = 12


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")


def _model(srv, **kw) -> ModelConfig:
    return ModelConfig(model="openai/gpt-4.1", api_base=srv.base_url, batch=True, batch_poll_s=0.02,
                       max_retries=1, max_total_wait_s=2.0, **kw)


def _requests(n: int = N, parser=None) -> list[CallRequest]:
    return [CallRequest(messages=({"role": "user", "content": f"question {i}"},), contract="generation",
                        contract_version="1+1", item_id=f"q{i}", parser=parser) for i in range(n)]


def _chat_calls(srv) -> int:
    return sum(1 for e in srv.log if e["path"].endswith("/chat/completions"))


def test_all_calls_answered_by_one_batch_at_the_batch_price(tmp_path):
    with FakeBatchServer() as srv, Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw:
        results = gw.run(_model(srv), _requests())
        assert [r.status for r in results] == ["ok"] * N
        assert srv.batch_creates == 1 and _chat_calls(srv) == 0
        r = results[0]
        assert r.raw == "echo: question 0"
        assert r.cost_usd == pytest.approx(r.prompt_tokens * 1e-6 + r.completion_tokens * 4e-6)  # gpt-4.1 batch rates
        assert r.cost_usd == pytest.approx(batch_cost("openai/gpt-4.1", r.prompt_tokens, r.completion_tokens))
        assert gw.last_batch.answered == N and gw.stats.cost_usd == pytest.approx(sum(x.cost_usd for x in results))
        # A second run pays nothing: every key is cached, so nothing is batched or sent.
        before = srv.requests
        with Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw2:
            again = gw2.run(_model(srv), _requests())
        assert [r.raw for r in again] == [r.raw for r in results]
        assert srv.requests == before and all(r.cache_hits == 1 for r in again)


def test_expired_half_and_failed_lines_go_online(tmp_path):
    behaviour = BatchBehaviour(polls_to_finish=2, expire_fraction=0.5, failed_line_every=3)
    with FakeBatchServer(behaviour=behaviour) as srv, Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw:
        results = gw.run(_model(srv), _requests())
        assert [r.status for r in results] == ["ok"] * N
        answered_in_batch = gw.last_batch.answered
        # 6 of 12 expire; of the 6 answered lines, lines 3 and 6 failed with a 500: 4 answered.
        assert answered_in_batch == 4 and gw.last_batch.left_online == 8
        assert _chat_calls(srv) == 8
        # Online answers are priced at the online rate, batch answers at the batch rate.
        online = [r for r in results if r.cost_usd > batch_cost("openai/gpt-4.1", r.prompt_tokens, r.completion_tokens) * 1.5]
        assert len(online) == 8


def test_contract_breaking_batch_answers_are_re_asked_online(tmp_path):
    def parser(raw: str) -> str:
        if "Your answer broke" not in raw:  # only the re-ask's reply is acceptable
            raise ContractParseError("generation", "not the re-ask", raw)
        return raw

    with FakeBatchServer() as srv, Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw:
        results = gw.run(_model(srv, max_reasks=1), _requests(4, parser))
        assert [r.status for r in results] == ["ok"] * 4
        assert [len(r.attempts) for r in results] == [2] * 4
        assert srv.batch_creates == 1 and _chat_calls(srv) == 4  # first attempts by batch, re-asks online


def test_a_killed_run_resumes_its_batch_instead_of_resubmitting(tmp_path):
    behaviour = BatchBehaviour(polls_to_finish=10_000)
    with FakeBatchServer(behaviour=behaviour) as srv:
        with Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw:
            with pytest.raises(TimeoutError, match="not resubmitted"):
                gw.run(_model(srv, batch_max_wait_s=0.1), _requests())
        assert srv.batch_creates == 1
        behaviour.polls_to_finish = 0  # the provider finishes while nobody is waiting
        with Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw:
            results = gw.run(_model(srv), _requests())
            assert [r.status for r in results] == ["ok"] * N
            assert gw.last_batch.resumed and not gw.last_batch.submitted
        assert srv.batch_creates == 1 and _chat_calls(srv) == 0


def test_identical_requests_are_batched_once(tmp_path):
    with FakeBatchServer() as srv, Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw:
        results = gw.run(_model(srv), _requests(3) * 2)
        assert [r.status for r in results] == ["ok"] * 6
        uploaded = next(e for e in srv.log if e["path"].endswith("/files"))
        assert uploaded["body"].count('"custom_id"') == 3


def test_batch_needs_an_openai_batch_api():
    with pytest.raises(ValueError, match="batch mode needs"):
        check_batch_support(ModelConfig(model="anthropic/claude-sonnet-4-6", batch=True))
    check_batch_support(ModelConfig(model="anthropic/claude-sonnet-4-6"))  # online is fine


def test_batch_lines_record_cached_prompt_tokens(tmp_path):
    from interviewsim_core.llm.testing import FakeServerConfig

    system = {"role": "system", "content": "static context " * 50}
    reqs = [CallRequest(messages=(system, {"role": "user", "content": f"question {i}"}), contract="generation",
                        contract_version="1+1", item_id=f"q{i}") for i in range(3)]
    with FakeBatchServer(FakeServerConfig(cache_system_prompt=True)) as srv, \
            Gateway(cache=SqliteCache(tmp_path / "c.sqlite")) as gw:
        results = gw.run(_model(srv), reqs)
    assert [r.status for r in results] == ["ok"] * 3
    assert sorted(r.cached_prompt_tokens for r in results) == [0, 100, 100]  # the first line wrote the prefix
    warm = next(r for r in results if r.cached_prompt_tokens)
    # gpt-4.1 has no batch cached rate in litellm's map: cached tokens at the batch input rate, never less.
    assert warm.cost_usd == pytest.approx(batch_cost("openai/gpt-4.1", warm.prompt_tokens, warm.completion_tokens, 100))
