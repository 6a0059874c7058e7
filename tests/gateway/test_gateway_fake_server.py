"""The gateway end to end against a local OpenAI-compatible server, through real litellm.

Each scenario runs on both transports where it matters: ``litellm`` (every call through
litellm.acompletion) and ``auto`` (the direct path for OpenAI-compatible endpoints).
"""

from __future__ import annotations

import logging

import pytest
from gateway_support import fake_model
from scripted_model import scripted_reply, toy_request

from interviewsim_core.llm.cache import SqliteCache
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.types import CallRequest

TRANSPORTS = ["litellm", "auto"]


def _bodies(server, model_name: str) -> list[str]:
    return [e["body"] for e in server.log if f'"model":"{model_name}"' in e["body"].replace(" ", "")]


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.server(latency_s=0.01, rate_limit_rate=0.2, retry_after_s=0.05, server_error_rate=0.1,
                    timeout_rate=0.1, timeout_sleep_s=1.5, malformed_rate=0.2, reply=scripted_reply, seed=7)
def test_every_item_ends_valid_or_invalid_and_rerun_makes_no_request(fake_server, planted_key, tmp_path, transport):
    cache = SqliteCache(tmp_path / "cache.sqlite")
    model = fake_model(fake_server, max_retries=8, max_reasks=2, timeout_s=0.5)
    requests = [toy_request(f"question {i}") for i in range(40)]
    requests += [toy_request("always-bad one"), toy_request("fix-on-reask one")]

    gw = Gateway(cache=cache, transport=transport)
    first = gw.run(model, requests)
    assert len(first) == len(requests)
    assert [r.status for r in first].count("failed") == 0
    for req, res in zip(requests, first):
        assert res.status in ("ok", "invalid")
        assert res.attempts and res.attempts[-1].raw == res.raw
        if res.status == "ok":
            assert res.value == 1 + len(req.messages[1]["content"]) % 5  # the reply meant for *this* item
        else:
            assert res.parse_error and res.raw
    by_text = {r.messages[1]["content"]: res for r, res in zip(requests, first)}
    bad, fixed = by_text["always-bad one"], by_text["fix-on-reask one"]
    assert bad.status == "invalid" and len(bad.attempts) == 3 and bad.raw == "I think it is a four."
    assert all(a.parse_error for a in bad.attempts)
    assert fixed.status == "ok" and len(fixed.attempts) >= 2 and fixed.attempts[0].raw == "score: 4"
    assert fixed.attempts[-1].parse_error is None
    stats = gw.stats
    assert stats.invalid == sum(r.status == "invalid" for r in first) and stats.failed == 0
    # Every request the server saw is accounted for. The client may count a few more: an attempt it
    # abandoned at its 0.5 s timeout before the server's loop (a thread of this process, sharing the
    # GIL) had read it never reaches the server's count; each such attempt was retried.
    assert fake_server.requests <= stats.calls_made <= fake_server.requests + stats.retries
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0
    assert 429 in fake_server.by_status and 500 in fake_server.by_status

    seen = fake_server.requests
    second = Gateway(cache=SqliteCache(tmp_path / "cache.sqlite"), transport=transport).run(model, requests)
    assert fake_server.requests == seen  # zero new requests
    assert [(r.status, r.value, r.raw, r.parse_error) for r in second] == \
        [(r.status, r.value, r.raw, r.parse_error) for r in first]
    assert all(r.cache_hits == len(r.attempts) and r.calls_made == 0 for r in second)
    # The recorded cost of a row does not change when it is rebuilt from the cache.
    assert [(r.prompt_tokens, r.completion_tokens) for r in second] == \
        [(r.prompt_tokens, r.completion_tokens) for r in first]


@pytest.mark.server(latency_s=0.005, reply=scripted_reply)
def test_changing_one_judge_reasks_only_that_judge(fake_server, planted_key, tmp_path):
    cache = SqliteCache(tmp_path / "cache.sqlite")
    judge_a = fake_model(fake_server, "judge-a")
    judge_b = fake_model(fake_server, "judge-b")
    requests = [toy_request(f"candidate {i}") for i in range(10)]
    Gateway(cache=cache).run_many([(j, r) for j in (judge_a, judge_b) for r in requests])
    assert len(_bodies(fake_server, "judge-a")) == 10 and len(_bodies(fake_server, "judge-b")) == 10

    fake_server.reset_counters()
    judge_b2 = fake_model(fake_server, "judge-b", temperature=0.3)
    relabelled_a = fake_model(fake_server, "judge-a", label="Judge A", max_concurrency=2, timeout_s=9)
    out = Gateway(cache=cache).run_many([(j, r) for j in (relabelled_a, judge_b2) for r in requests])
    assert all(r.status == "ok" for r in out)
    assert _bodies(fake_server, "judge-a") == []  # label/concurrency/timeout are not identity
    assert len(_bodies(fake_server, "judge-b")) == 10
    assert out[0].model == "Judge A"


@pytest.mark.server(reply=scripted_reply)
def test_three_sample_indices_are_three_keys(fake_server, planted_key, tmp_path):
    cache = SqliteCache(tmp_path / "cache.sqlite")
    model = fake_model(fake_server)
    votes = [toy_request("trait openness", sample_index=i) for i in range(3)]
    res = Gateway(cache=cache).run(model, votes)
    assert len({r.cache_key for r in res}) == 3 and fake_server.requests == 3 and len(cache) == 3
    Gateway(cache=cache).run(model, votes)
    assert fake_server.requests == 3


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.server(latency_s=0.05, reply=scripted_reply)
def test_concurrency_bound_is_respected(fake_server, planted_key, transport):
    model = fake_model(fake_server, max_concurrency=4)
    res = Gateway(transport=transport).run(model, [toy_request(f"q{i}") for i in range(32)])
    assert all(r.status == "ok" for r in res)
    assert 2 <= fake_server.max_in_flight <= 4


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.server(first_n_fault=1, first_n_kind="429", retry_after_s=0.6, reply=scripted_reply)
def test_retry_after_is_honoured(fake_server, planted_key, transport):
    model = fake_model(fake_server)
    (res,) = Gateway(transport=transport).run(model, [toy_request("patience")])
    assert res.status == "ok" and res.calls_made == 2
    t = [e["t"] for e in fake_server.log]
    assert [e["status"] for e in fake_server.log] == [429, 200]
    assert t[1] - t[0] >= 0.6


@pytest.mark.server(first_n_fault=5, first_n_kind="429", retry_after_s=30, reply=scripted_reply)
def test_total_wait_cap_fails_fast_with_the_error(fake_server, planted_key):
    model = fake_model(fake_server, max_total_wait_s=2.0)
    (res,) = Gateway().run(model, [toy_request("impatient")])
    assert res.status == "failed" and "429" in res.error and res.calls_made == 1
    assert fake_server.requests == 1


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.server(first_n_fault=1, first_n_kind="timeout", timeout_sleep_s=2.0, reply=scripted_reply)
def test_timeouts_are_retried(fake_server, planted_key, transport):
    model = fake_model(fake_server, timeout_s=0.5)
    (res,) = Gateway(transport=transport).run(model, [toy_request("slow one")])
    assert res.status == "ok" and res.calls_made == 2


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.server(server_error_rate=1.0, reply=scripted_reply)
def test_failures_are_recorded_and_the_batch_goes_on(fake_server, planted_key, tmp_path, caplog, transport):
    cache = SqliteCache(tmp_path / "cache.sqlite")
    broken = fake_model(fake_server, "broken", max_retries=2)
    from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig

    with FakeOpenAIServer(FakeServerConfig(reply=scripted_reply)) as healthy_srv:
        healthy = fake_model(healthy_srv, "healthy")
        unreachable = fake_model(fake_server, "nowhere", api_base="http://127.0.0.1:9/v1", max_retries=1)
        bad_request = CallRequest(messages=({"role": "user", "content": "x"},), contract="toy", contract_version="1")
        with caplog.at_level(logging.INFO):
            gw = Gateway(cache=cache, transport=transport)
            out = gw.run_many([(broken, toy_request("a")), (healthy, toy_request("b")),
                               (unreachable, toy_request("c")), (healthy, bad_request)])
    assert [r.status for r in out] == ["failed", "ok", "failed", "ok"]
    assert "500" in out[0].error and out[0].calls_made == 3 and fake_server.requests == 3
    assert out[2].error and out[2].calls_made == 2
    assert gw.stats.failed == 2
    assert len(cache) == 2  # errors are never cached
    assert "retrying" in caplog.text


@pytest.mark.server(reply=lambda messages: "   ")
def test_blank_output_without_parser_is_invalid(fake_server, planted_key):
    model = fake_model(fake_server, max_reasks=1)
    req = CallRequest(messages=({"role": "user", "content": "say something"},), contract="free", contract_version="1")
    (res,) = Gateway().run(model, [req])
    assert res.status == "invalid" and res.parse_error == "empty output" and len(res.attempts) == 2
    reask = fake_server.log[1]["body"]
    assert "broke the required format: empty output" in reask


@pytest.mark.server(reply=scripted_reply)
async def test_acall_from_a_running_loop(fake_server, planted_key):
    model = fake_model(fake_server)
    res = await Gateway().acall(model, toy_request("async caller"))
    assert res.status == "ok"


@pytest.mark.server(reply=scripted_reply)
def test_run_from_threads_like_dagster_asset_bodies(fake_server, planted_key):
    from concurrent.futures import ThreadPoolExecutor

    gw = Gateway()
    model = fake_model(fake_server)
    with ThreadPoolExecutor(3) as pool:
        outs = list(pool.map(lambda i: gw.run(model, [toy_request(f"t{i}-{j}") for j in range(5)]), range(3)))
    assert all(r.status == "ok" for out in outs for r in out)
    assert gw.stats.calls_made == 15
    gw.reset_stats()
    assert gw.stats.calls_made == 0
    gw.close()


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.server(reply=scripted_reply)
def test_tokens_and_cost_are_counted_offline(fake_server, planted_key, transport):
    from interviewsim_core.llm.transport import cost_of

    assert cost_of("openai/gpt-4o-mini", 1000, 1000) > 0  # from litellm's local price table
    assert cost_of("openai/no-such-model-anywhere", 1000, 1000) == 0.0
    priced = fake_model(fake_server, "gpt-4o-mini")
    gw = Gateway(transport=transport)
    out = gw.run(priced, [toy_request(f"priced question {i}") for i in range(4)])
    assert all(r.status == "ok" and r.prompt_tokens > 0 and r.cost_usd > 0 for r in out)
    stats = gw.stats
    assert stats.prompt_tokens == sum(r.prompt_tokens for r in out)
    assert stats.completion_tokens == sum(r.completion_tokens for r in out)
    assert stats.cost_usd == pytest.approx(sum(r.cost_usd for r in out))
    expected = sum(cost_of("openai/gpt-4o-mini", r.prompt_tokens, r.completion_tokens) for r in out)
    assert stats.cost_usd == pytest.approx(expected, rel=1e-6)


def _ps_reply(messages) -> str:
    """A misspelled closing tag first; after a re-ask, the fixed reply."""
    reasked = any(m["role"] == "assistant" for m in messages)
    return ("<rate>High</rate> <justification>curious</justification>" if reasked
            else "<rate>High</rate> <justification>curious</justifcation>")


@pytest.mark.server(reply=_ps_reply)
def test_a_reask_names_the_specific_breach(fake_server, planted_key):
    """Issue 22: the follow-up message carries the parse error itself (here the misspelled tag), so the
    model can fix that; the reply to the re-ask is then valid, on its second attempt."""
    from interviewsim_core.contracts import personality
    from interviewsim_core.pipeline.calls import contract_request

    model = fake_model(fake_server, max_reasks=1)
    req = contract_request(personality, personality.build_messages("openness", ["I love new things."]), item_id="x")
    (res,) = Gateway().run(model, [req])
    assert res.status == "ok" and len(res.attempts) == 2
    assert "unknown tag(s) ['</justifcation>']" in res.attempts[0].parse_error
    assert "</justifcation>" in fake_server.log[1]["body"] and "unknown tag(s)" in fake_server.log[1]["body"]
