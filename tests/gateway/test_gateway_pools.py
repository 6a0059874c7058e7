"""The direct transport's HTTP pools (issue 13): small pools per server.

httpcore's pool walks all its connections (quadratically in the idle ones) twice per request;
with one pool of 64+ connections that walk was half of the client's CPU per call. Each pool of an
server carries at most ``POOL_CONNECTIONS`` requests at once, so it never holds more connections.
"""

from __future__ import annotations

import pytest
from gateway_support import fake_model
from scripted_model import scripted_reply, toy_request

from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.transport import POOL_CONNECTIONS, loop_state, shared_runner


def _pools(server: str) -> dict[int, int]:
    """Pool index -> connections it holds, for ``server`` on the shared loop. Reads httpx/httpcore
    internals (``_transport._pool.connections``): this test is about them."""
    async def read() -> dict[int, int]:
        return {k[1]: len(c._transport._pool.connections) for k, c in loop_state().clients.items() if k[0] == server}
    return shared_runner().run(read())


@pytest.mark.server(latency_s=0.15, reply=scripted_reply)
def test_no_pool_holds_more_than_its_share_of_connections(fake_server, planted_key):
    c = 3 * POOL_CONNECTIONS
    model = fake_model(fake_server, name="pool-model", max_concurrency=c)
    res = Gateway().run(model, [toy_request(f"q{i}") for i in range(2 * c)])
    assert all(r.status == "ok" for r in res)
    assert fake_server.max_in_flight > POOL_CONNECTIONS  # the bound, not a pool, limited concurrency
    pools = _pools(model.api_base)
    assert sorted(pools) == [0, 1, 2]
    assert all(1 <= n <= POOL_CONNECTIONS for n in pools.values()), pools


@pytest.mark.server(latency_s=0.15, reply=scripted_reply)
def test_models_on_one_server_share_its_pools(fake_server, planted_key):
    """One adapter per personality on one server: the models share the server's pools (a set of
    pools per model would keep idle sockets open for every personality ever asked)."""
    models = [fake_model(fake_server, name=f"lora-P{i}", max_concurrency=POOL_CONNECTIONS // 2) for i in range(4)]
    pairs = [(m, toy_request(f"{m.model} q{i}")) for m in models for i in range(POOL_CONNECTIONS)]
    res = Gateway().run_many(pairs)
    assert all(r.status == "ok" for r in res)
    pools = _pools(models[0].api_base)
    assert len(pools) == 2 and all(n <= POOL_CONNECTIONS for n in pools.values()), pools


def test_an_unpriced_direct_model_is_priced_without_importing_litellm(tmp_path):
    """``import litellm`` costs ~3 s of CPU per process; a custom server's model has no price anyway."""
    import subprocess
    import sys

    code = ("import sys; from interviewsim_core.llm.transport import cost_of\n"
            "assert cost_of('openai/served-model-x', 1000, 1000) == 0.0\n"
            "assert cost_of('hosted_vllm/lora-P1', 1000, 1000, 500) == 0.0\n"
            "assert 'litellm' not in sys.modules, 'litellm was imported'\n"
            "assert cost_of('openai/gpt-4o-mini', 1000, 1000) > 0\n"  # a priced model still asks litellm
            "assert 'litellm' in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("model", ["openai/served-model-x", "hosted_vllm/lora-P1", "openai/Fake-Model"])
def test_litellm_agrees_those_models_have_no_price(model):
    """The shortcut above gives 0 for these without litellm; litellm itself says the same."""
    from interviewsim_core.llm.transport import litellm_module

    try:
        prompt, completion = litellm_module().cost_per_token(model=model, prompt_tokens=1000, completion_tokens=1000)
    except Exception:  # noqa: BLE001 - litellm's way of saying "no price"
        prompt = completion = 0.0
    assert prompt == completion == 0.0
