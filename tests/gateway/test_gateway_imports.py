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
