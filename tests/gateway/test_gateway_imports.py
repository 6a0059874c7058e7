"""Importing the LLM layer stays light: no litellm, no dagster until a call is made."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_import_does_not_pull_litellm_or_dagster():
    code = ("import sys, interviewsim_core.llm, interviewsim_core.llm.gateway, interviewsim_core.llm.litellm_embedder, "
            "interviewsim_core.llm.offline_provider, interviewsim_core.llm.testing; "
            "print(sorted(m for m in ('litellm', 'dagster', 'openai') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
