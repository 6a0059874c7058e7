"""The offline model through litellm as a custom provider, with and without injected faults."""

from __future__ import annotations

import pytest
from scripted_model import parse_score, scripted_reply, toy_request

from interviewsim_core.offline import provider as offline_provider
from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.faults import MALFORMED_TEXT, FaultSpec, draw_fault
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.transport import litellm_module
from interviewsim_core.llm.types import CallRequest, ModelConfig

OFFLINE = ModelConfig(model="offline/extractive", max_retries=6, max_total_wait_s=5.0)


@pytest.fixture
def scripted_offline(monkeypatch: pytest.MonkeyPatch):
    """Swap the product's answers for the scripted toy model (the test's contract is not a product one)."""
    handler = offline_provider.get_handler()
    monkeypatch.setattr(handler, "responder", lambda messages, contract, model: scripted_reply(messages))
    return handler


def test_registration_is_idempotent():
    litellm = litellm_module()
    first = offline_provider.register()
    assert offline_provider.register() is first
    assert sum(item["provider"] == "offline" for item in litellm.custom_provider_map) == 1


async def test_offline_model_answers_through_litellm_acompletion(scripted_offline):
    litellm = litellm_module()
    response = await litellm.acompletion(model="offline/extractive",
                                         messages=[{"role": "user", "content": "three plain words"}],
                                         metadata={offline_provider.CONTRACT_KEY: "toy"})
    assert response.choices[0].message.content == scripted_reply([{"role": "user", "content": "three plain words"}])
    assert response.usage.prompt_tokens == 3 and response.usage.completion_tokens == 2


def test_gateway_with_real_offline_answers_a_product_contract(tmp_path):
    from interviewsim_core.contracts import content_similarity as cs

    req = CallRequest(messages=tuple(cs.build_messages(reference="The harvest was poor because of the drought.",
                                                       candidate="A drought made the harvest poor.")),
                      contract=cs.NAME, contract_version=f"{cs.CONTRACT_VERSION}+{cs.PARSER_VERSION}",
                      parser=cs.parse)
    gw = Gateway(cache=SqliteCache(tmp_path / "c.sqlite"))
    (res,) = gw.run(OFFLINE, [req])
    assert res.status == "ok" and 1 <= res.value.score <= 5
    assert res.cost_usd == 0.0 and res.prompt_tokens > 0
    (again,) = Gateway(cache=SqliteCache(tmp_path / "c.sqlite")).run(OFFLINE, [req])
    assert again.cache_hits == 1 and again.value == res.value


def test_unknown_contract_fails_at_once_without_retries():
    (res,) = Gateway().run(OFFLINE, [CallRequest(messages=({"role": "user", "content": "hello"},),
                                                 contract="none", contract_version="1")])
    assert res.status == "failed" and res.calls_made == 1 and "400" in res.error


def test_the_contract_name_reaches_the_responder(monkeypatch: pytest.MonkeyPatch):
    seen = []
    handler = offline_provider.get_handler()
    monkeypatch.setattr(handler, "responder", lambda messages, contract, model: seen.append((contract, model)) or "ok")
    (res,) = Gateway().run(OFFLINE, [CallRequest(messages=({"role": "user", "content": "no marker here"},),
                                                 contract="content_similarity", contract_version="1")])
    assert res.status == "ok" and seen == [("content_similarity", "extractive")]  # and the model, after "offline/"


async def test_a_direct_litellm_call_without_contract_is_refused():
    litellm = litellm_module()
    offline_provider.register()
    with pytest.raises(litellm.BadRequestError):
        await litellm.acompletion(model="offline/extractive", messages=[{"role": "user", "content": "hi"}])


def test_fault_draws_are_deterministic_and_near_their_rates():
    spec = FaultSpec(rate_limit_rate=0.2, malformed_rate=0.3, seed=3)
    msgs = [[{"role": "user", "content": f"m{i}"}] for i in range(2000)]
    draws = [draw_fault(spec, m, 0) for m in msgs]
    assert draws == [draw_fault(spec, m, 0) for m in msgs]
    assert abs(draws.count("rate_limit") / 2000 - 0.2) < 0.04
    assert abs(draws.count("malformed") / 2000 - 0.3 * 0.8) < 0.05
    assert draws != [draw_fault(spec, m, 1) for m in msgs]  # a retry is a new draw
    assert draw_fault(None, msgs[0], 0) is None


def test_fault_mode_through_the_gateway(scripted_offline, tmp_path):
    faults = FaultSpec(rate_limit_rate=0.3, timeout_rate=0.15, server_error_rate=0.15, malformed_rate=0.3,
                       seed=11, retry_after_s=0.01)
    requests = [toy_request(f"offline item {i}") for i in range(60)]
    gw = Gateway(cache=SqliteCache(tmp_path / "c.sqlite"), faults=faults)
    out = gw.run(OFFLINE, requests)
    statuses = [r.status for r in out]
    assert len(out) == 60 and set(statuses) <= {"ok", "invalid", "failed"}
    assert statuses.count("ok") >= 40
    assert gw.stats.retries > 0
    assert any(a.raw == MALFORMED_TEXT for r in out for a in r.attempts)  # re-asked after garbage
    for res in out:
        if res.status == "failed":
            assert res.error
        elif res.status == "invalid":
            assert res.raw and res.parse_error
        else:
            assert res.value == parse_score(res.raw)
    # Same faults, same cache: only the failed items are asked again.
    gw2 = Gateway(cache=SqliteCache(tmp_path / "c.sqlite"), faults=faults)
    again = gw2.run(OFFLINE, requests)
    done = [i for i, r in enumerate(out) if r.status != "failed"]
    assert all(again[i].calls_made == 0 and again[i].status == out[i].status for i in done)
