"""The direct transport's HTTP pools (issue 13): one small pool per group of concurrency slots.

httpcore's pool walks all its connections (quadratically in the idle ones) twice per request;
with one pool of 64+ connections that walk was half of the client's CPU per call. Each pool of an
endpoint now serves at most ``POOL_CONNECTIONS`` slots, so it never holds more connections.
"""

from __future__ import annotations

import asyncio

import pytest
from gateway_support import fake_model
from scripted_model import scripted_reply, toy_request

from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.transport import POOL_CONNECTIONS, Slots, loop_state, shared_runner


def _pools(model) -> dict[int, int]:
    """Pool index -> connections it holds, for ``model``'s endpoint on the shared loop. Reads
    httpx/httpcore internals (``_transport._pool.connections``): this test is about them."""
    async def read() -> dict[int, int]:
        clients = loop_state().clients
        return {k[2]: len(c._transport._pool.connections) for k, c in clients.items()
                if k[:2] == (model.model, model.api_base)}
    return shared_runner().run(read())


@pytest.mark.server(latency_s=0.15, reply=scripted_reply)
def test_no_pool_holds_more_than_its_share_of_connections(fake_server, planted_key):
    c = 3 * POOL_CONNECTIONS
    model = fake_model(fake_server, name="pool-model", max_concurrency=c)
    res = Gateway().run(model, [toy_request(f"q{i}") for i in range(2 * c)])
    assert all(r.status == "ok" for r in res)
    assert fake_server.max_in_flight > POOL_CONNECTIONS  # the bound, not a pool, limited concurrency
    pools = _pools(model)
    assert sorted(pools) == [0, 1, 2]
    assert all(1 <= n <= POOL_CONNECTIONS for n in pools.values()), pools


def test_slots_hand_out_distinct_ids_and_reuse_the_last_released():
    async def main() -> None:
        slots = Slots(3)
        held = [await slots.acquire() for _ in range(3)]
        assert sorted(held) == [0, 1, 2]
        waiter = asyncio.ensure_future(slots.acquire())
        await asyncio.sleep(0)
        assert not waiter.done()  # the bound holds
        slots.release(held[1])
        assert await waiter == held[1]
        slots.release(held[0])
        slots.release(held[2])
        assert await slots.acquire() == held[2]  # the warmest slot (last released) first

    asyncio.run(main())


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
