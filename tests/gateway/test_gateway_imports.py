"""Importing the LLM layer stays light: no litellm, no dagster until a call is made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_import_does_not_pull_litellm_or_dagster():
    code = ("import sys, interviewsim_core.llm, interviewsim_core.llm.gateway, interviewsim_core.embeddings.litellm_embedder, "
            "interviewsim_core.offline, interviewsim_core.llm.testing; "
            "print(sorted(m for m in ('litellm', 'dagster', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_model_layer_knows_no_prompt():
    """The gateway imports no contract and no offline responder; the offline package plugs in."""
    code = ("import sys, interviewsim_core.llm, interviewsim_core.llm.gateway, interviewsim_core.llm.transport; "
            "print(sorted(m for m in sys.modules if m.startswith(('interviewsim_core.contracts', "
            "'interviewsim_core.offline'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
    for name in ("gateway.py", "transport.py", "cache.py", "types.py"):
        assert '"offline' not in (REPO / "interviewsim_core" / "llm" / name).read_text(), name


def test_offline_call_as_a_library_never_asks_for_the_remote_cost_map():
    """Without LITELLM_LOCAL_MODEL_COST_MAP in the environment (a notebook user), the first offline
    call must still import litellm in local-cost-map mode: no fetch attempt, no network."""
    import os

    code = (
        "import os\n"
        "from interviewsim_core.llm.gateway import Gateway\n"
        "from interviewsim_core.llm.types import CallRequest, ModelConfig\n"
        "from interviewsim_core.contracts import content_similarity as cs\n"
        "req = CallRequest(messages=tuple(cs.build_messages('I grew up by the sea.', 'I grew up near the sea.')),\n"
        "                  contract=cs.NAME, contract_version='1+1', parser=cs.parse)\n"
        "res = Gateway().run(ModelConfig(model='offline/extractive'), [req])[0]\n"
        "print(res.status, os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["ok", "True"]
    assert "cost map" not in out.stderr.lower(), out.stderr[-3000:]


def test_after_warm_up_the_first_direct_call_imports_nothing(tmp_path):
    """``transport.warm_up`` (the action worker runs it while its command plans) leaves the first call no
    import to make: on the gateway's thread, beside a scheduler thread holding the interpreter, the
    first call's imports held its request back 1.3-1.9 s (issue 30). Measured in a fresh interpreter,
    where nothing else has imported the HTTP client yet."""
    code = (
        "import os, sys\n"
        "os.environ['WARM_KEY'] = 'k'\n"
        "from interviewsim_core.factories import gateway_at\n"
        "from interviewsim_core.llm.testing import FakeOpenAIServer\n"
        "from interviewsim_core.llm.transport import warm_up\n"
        "from interviewsim_core.llm.types import CallRequest, ModelConfig\n"
        "with FakeOpenAIServer() as srv:\n"
        f"    gw = gateway_at({str(tmp_path / 'cache.sqlite')!r}, None)\n"
        "    model = ModelConfig(model='openai/fake-model', api_base=srv.base_url, api_key_env='WARM_KEY')\n"
        "    req = CallRequest(messages=({'role': 'user', 'content': 'hello'},), contract='x', contract_version='1')\n"
        "    if sys.argv[1] == 'warm':\n"
        "        warm_up()\n"
        "    before = set(sys.modules)\n"
        "    status = gw.submit_many([(model, req)]).result()[0].status\n"
        "    print(status, len(set(sys.modules) - before))\n"
    )
    runs = {how: subprocess.run([sys.executable, "-c", code, how], cwd=REPO, capture_output=True, text=True,
                                timeout=120) for how in ("cold", "warm")}
    for how, out in runs.items():
        assert out.returncode == 0, (how, out.stderr[-3000:])
    cold, warm = (runs[h].stdout.split() for h in ("cold", "warm"))
    assert cold[0] == warm[0] == "ok"
    assert int(cold[1]) > 0  # the check can fail: without the warm-up, the first call imports
    assert int(warm[1]) == 0
