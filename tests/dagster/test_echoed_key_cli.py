"""A key the provider echoes in its errors reaches no artefact of an ``interviewsim run`` (issue 20).

Two CLI runs (subprocesses, as a user runs them) against a fake provider that answers the first chat
request of each model 401 repeating the bearer key, and every embedding request and every batch-file upload the
same way. Every model path meets the echo: chat (generator, builder, judge), batch (a judge with
``batch: true``), the premise judge and the embedder (the report's overlap and premise clustering). Then the key is
grepped in the data root, the model-call cache, ``DAGSTER_HOME`` (run storage ``history/``, compute
logs ``storage/*/compute_logs``) and the process's stdout and stderr.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from dg_helpers import PEOPLE, write_person
from ui_harness import run_cli

from interviewsim_core.llm.testing import FakeServerConfig
from interviewsim_core.llm.testing_batch import FakeBatchServer
from interviewsim_core.offline.stand_in import offline_reply

KEY = "sk-GREPME-echoed-3f1d0c9b7a5e"
ROLES = {"generator": "openai/gen", "judge": "openai/judge", "batch judge": "openai/batch-judge",
         "builder": "openai/builder", "premise judge": "openai/premise", "embedder": "openai/embed"}


def _files_with(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _run(tmp_path: Path, name: str, config: dict, assets: str | None = None, data: str = "data") -> tuple[str, str]:
    """``interviewsim run`` in a subprocess (its own session, waited for by pid: ``ui_harness.run_cli``)."""
    (tmp_path / f"{name}.yaml").write_text(json.dumps(config))
    env = {**os.environ, "OPENAI_API_KEY": KEY, "DAGSTER_HOME": str(tmp_path / "home")}
    result = run_cli(["run", "--corpus", str(tmp_path / "corpus"), "--data-root", str(tmp_path / data),
                      "--config", str(tmp_path / f"{name}.yaml"), "--personalities", PEOPLE[0], "--yes",
                      *(["--assets", assets] if assets else [])], env=env, cwd=tmp_path, timeout_s=600)
    assert result.left == [], f"processes of the run outlived it: {result.left}"
    return result.stdout, result.stderr


@pytest.mark.slow
def test_echoed_key_is_in_no_artefact_of_a_cli_run(tmp_path):
    write_person(tmp_path / "corpus", PEOPLE[0])
    home, data, cache = tmp_path / "home", tmp_path / "data", tmp_path / "cache" / "llm.sqlite"
    cfg = FakeServerConfig(reply=offline_reply, reject_key=True, fault_paths=("/embeddings", "/files"),
                           reject_key_first=True)
    with FakeBatchServer(cfg) as srv:
        def model(name: str, **kw) -> dict:
            return {"model": name, "api_base": srv.base_url, "timeout_s": 10, "max_retries": 1,
                    "max_total_wait_s": 2, **kw}

        common = {"generator": model(ROLES["generator"]), "builder": model(ROLES["builder"]),
                  "premise_judge": model(ROLES["premise judge"]), "embedding_model": model(ROLES["embedder"]),
                  "max_cost_usd": None, "cache_path": str(cache)}
        # Chat, premise and embeddings in one full run; the batch judge in a second, short one (a failed
        # batch submission fails its step, which would keep the generations of the first from running).
        # Only non-retrieval methods, to keep it short: the embedder meets its 401 in the report (a
        # retrieval method's would fail that method's rows only: test_retrieval_embedder_failure.py).
        outputs = _run(tmp_path, "full", {**common, "methods": ["simple"],
                                          "judges": [model(ROLES["judge"], label="J")]})
        outputs += _run(tmp_path, "batch", {**common, "methods": ["simple"], "judges": [
            model(ROLES["batch judge"], label="B", batch=True, batch_poll_s=0.1)]},
            assets="heldout_split,reference_personality", data="data_batch")  # another judge: another study
        log = srv.log
    out = "\n".join(outputs)
    (tmp_path / "output.txt").write_text(out)
    # The key really went out, and came back in a 401 on every path.
    assert any(KEY in e["headers"].get("authorization", "") for e in log)
    echoed = {_model_of(e) for e in log if e.get("status") == 401}
    for role, name in ROLES.items():
        if role == "batch judge":
            assert any(e["path"].startswith("/v1/files") and e.get("status") == 401 for e in log), role
        else:
            assert name.split("/", 1)[1] in echoed, f"{role}: no 401 echoed ({sorted(echoed)})"
    # ... and it is in none of our artefacts.
    assert any((home / "storage").glob("*/compute_logs/*")), "no compute logs to grep"
    assert any((home / "history").rglob("*.db"))
    roots = (data, tmp_path / "data_batch")
    leaks = [f for d in (*roots, cache.parent, home) for f in _files_with(d, KEY.encode())]
    assert leaks == []
    assert KEY not in out
    assert "***" in out or any(b"***" in p.read_bytes() for d in roots for p in d.rglob("*.parquet"))


def _model_of(entry: dict) -> str:
    try:
        return str(json.loads(entry.get("body") or "{}").get("model", ""))
    except ValueError:
        return ""
