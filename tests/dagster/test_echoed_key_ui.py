"""A key the provider echoes in its errors reaches no artefact of a run launched from the UI (issue 20).

``test_echoed_key_cli.py`` covers ``interviewsim run``; a run launched in the UI goes another way
(the webserver takes a GraphQL backfill, the daemon launches run workers in their own processes,
each writes run storage and compute logs). One real ``interviewsim ui`` (``dagster dev``), one
personality, one method, one fake provider that answers the first chat request of each model 401
repeating the bearer key: the generator, judge, builder and premise judge each meet the echo. Then
the key is grepped in the data root (tables and the model-call cache), ``DAGSTER_HOME`` (run
storage ``history/``, compute logs ``storage/*/compute_logs``) and the output of the UI processes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from dg_helpers import PEOPLE, write_person
from ui_harness import KEY_VAR, DagsterUI, ui_env, wait_for

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.offline.stand_in import offline_reply

pytestmark = pytest.mark.slow

KEY = "sk-GREPME-ui-echoed-8e2a61d0c4"
ROLES = {"generator": "openai/gen", "judge": "openai/judge", "builder": "openai/builder",
         "premise judge": "openai/premise"}
PERSON, METHOD = PEOPLE[0], "simple"
PER_PERSON = ("heldout_split", "fact_summary", "atomic_items", "mcq_items", "reference_personality", "premise_verdicts")
PER_CELL = ("generations", "mcq_answers", "content_similarity", "factual_consistency", "generated_personality")


def _files_with(root: Path, needle: bytes) -> list[str]:
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _model_of(entry: dict) -> str:
    try:
        return str(json.loads(entry.get("body") or "{}").get("model", ""))
    except ValueError:
        return ""


def test_echoed_key_is_in_no_artefact_of_a_ui_launched_run(tmp_path):
    corpus, data, home = tmp_path / "corpus", tmp_path / "data", tmp_path / "dagster_home"
    write_person(corpus, PERSON)
    env = ui_env(tmp_path, KEY)
    cfg = FakeServerConfig(reply=offline_reply, reject_key_first=True)
    with FakeOpenAIServer(cfg) as srv:
        def model(name: str, **kw) -> dict:
            return {"model": name, "api_base": srv.base_url, "api_key_env": KEY_VAR, "timeout_s": 10,
                    "max_retries": 1, "max_total_wait_s": 2, **kw}

        (tmp_path / "interviewsim.yaml").write_text(yaml.safe_dump({
            "corpus": str(corpus), "data_root": str(data), "methods": [METHOD], "max_cost_usd": None,
            "generator": model(ROLES["generator"]), "judges": [model(ROLES["judge"], label="J")],
            "builder": model(ROLES["builder"]), "premise_judge": model(ROLES["premise judge"])}))
        with DagsterUI(env, cwd=tmp_path, log=tmp_path / "ui.log") as ui:
            backfill = ui.launch_backfill_by_asset({**{a: PERSON for a in PER_PERSON},
                                                    **{a: f"{METHOD}|{PERSON}" for a in PER_CELL}})
            wait_for("the backfill to finish", lambda: ui.backfill_status(backfill).startswith(
                ("COMPLETED", "FAILED", "CANCELED")), 600)
            runs = ui.runs_of_backfill(backfill)
            wait_for("its runs to end", lambda: all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED")
                                                     for r in ui.runs_of_backfill(backfill)), 300)
        log = srv.log
    out = (tmp_path / "ui.log").read_text(errors="replace")
    assert runs, out[-3000:]
    # The key really went out, and came back in a 401 to every role.
    assert any(KEY in e["headers"].get("authorization", "") for e in log)
    echoed = {_model_of(e) for e in log if e.get("status") == 401}
    for role, name in ROLES.items():
        assert name.split("/", 1)[1] in echoed, f"{role}: no 401 echoed ({sorted(echoed)})"
    assert any(e.get("status") == 200 for e in log)  # ... and the run went on past them
    # ... and it is in none of our artefacts.
    assert any((home / "storage").glob("*/compute_logs/*")), "no compute logs to grep"
    assert any((home / "history").rglob("*.db"))
    assert list(data.rglob("*.parquet")) and (data / ".cache" / "llm.sqlite").exists()
    assert _files_with(data, KEY.encode()) + _files_with(home, KEY.encode()) == []
    assert KEY not in out
