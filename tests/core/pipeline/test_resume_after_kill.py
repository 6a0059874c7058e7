"""A run killed mid-way (SIGKILL, no clean-up) resumes without repeating its completed model calls.

The model is a local OpenAI-compatible server answering with the offline model, so the child
processes run the real gateway, cache and pipeline over HTTP. Counting requests at the server:

- reference: a full run on a fresh data root needs ``total`` requests;
- killed: a second fresh run is SIGKILLed once the server has seen about half of them;
- resumed: the same data root again; together with the killed run it may exceed ``total`` only by
  the calls that were in flight at the kill (at most the concurrency limit), and it must produce
  the same tables as the reference;
- a last run makes zero requests.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from fakes import offline_reply

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

CONCURRENCY = 4
PERSONALITY = "SYN_AUERLUND"
KEY = "sk-test-not-a-real-key-7f3a"

CHILD = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    model = ModelConfig(model="openai/fake-model", api_base=os.environ["FAKE_BASE"],
                        api_key_env="FAKE_PROVIDER_KEY", max_concurrency=int(os.environ["FAKE_C"]))
    cfg = EvalConfig(corpus=Path(sys.argv[1]), data_root=Path(sys.argv[2]), methods=("simple", "chrono-100"),
                     generator=model, judges=(model,), builder=model, premise_judge=model)
    run_evaluation(cfg)
    """
)


def _run_child(corpus: Path, root: Path, server: FakeOpenAIServer, kill_after: int | None = None) -> int:
    """Run one evaluation in a child process; returns the requests the server saw during it."""
    env = {**os.environ, "FAKE_BASE": server.base_url, "FAKE_C": str(CONCURRENCY),
           "FAKE_PROVIDER_KEY": KEY, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    before = server.requests
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(corpus), str(root)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if kill_after is None:
        out, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, out.decode(errors="replace")[-3000:]
    else:
        deadline = time.monotonic() + 600
        while server.requests - before < kill_after:
            assert proc.poll() is None, "the run finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        time.sleep(0.2)  # let the server finish answering what was in flight
    return server.requests - before


def _tables(root: Path) -> dict[str, pd.DataFrame]:
    out = {}
    for asset in ("generations", "content_similarity", "factual_consistency", "mcq_answers", "method_scores"):
        files = sorted((root / asset).rglob("*.parquet"))
        df = pd.concat([pd.read_parquet(f) for f in files], ignore_index=True)
        # How a call went, which a resumed run answers from the cache: a hit knows no provider finish_reason.
        drop = [c for c in ("cache_hit", "finish_reason") if c in df.columns]
        df = df.drop(columns=drop)
        scalar = [c for c in df.columns if not df[c].map(lambda v: hasattr(v, "__len__") and not isinstance(v, str)).any()]
        out[asset] = df.sort_values(scalar).reset_index(drop=True)
    return out


@pytest.mark.slow
def test_killed_run_resumes_without_repeating_completed_calls(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / PERSONALITY).symlink_to(SAMPLE_CORPUS_DIR / PERSONALITY, target_is_directory=True)
    config = FakeServerConfig(latency_s=0.01, reply=offline_reply)
    with FakeOpenAIServer(config) as server:
        total = _run_child(corpus, tmp_path / "reference", server)
        assert total > 100  # enough calls for a mid-run kill to mean something

        killed = _run_child(corpus, tmp_path / "resumed", server, kill_after=total // 2)
        assert not (tmp_path / "resumed" / "method_scores").exists(), "the kill came too late"
        resumed = _run_child(corpus, tmp_path / "resumed", server)
        again = _run_child(corpus, tmp_path / "resumed", server)

    assert resumed < total, "the resumed run started over"
    # Only calls in flight at the kill (never more than the concurrency limit) may be asked twice.
    assert total <= killed + resumed <= total + CONCURRENCY
    assert again == 0
    reference, result = _tables(tmp_path / "reference"), _tables(tmp_path / "resumed")
    for asset, df in reference.items():
        pd.testing.assert_frame_equal(result[asset], df, check_like=True, obj=asset)
    # The key was in the children's environment only: no Parquet file, cache row or log carries it.
    written = [f for f in tmp_path.rglob("*") if f.is_file() and not f.is_symlink()]
    assert len(written) > 20
    assert not [f for f in written if KEY.encode() in f.read_bytes()]
