"""Issue 45, item 2, through the UI: an edited transcript re-curated with ``interviewsim curate`` while ``interviewsim
ui`` is up shows that personality's results stale (GraphQL ``staleStatus``, what the asset graph and the Catalog
show) and no other's; the automation launches nothing for it; a UI backfill of what is stale re-makes exactly that
personality's partitions, which are then current.

The in-process version of the same sequence is ``test_dg_transcript_freshness.py`` (in ``make test``).
"""

from __future__ import annotations

import os
import time

import dagster as dg
import pytest
import yaml
from dg_helpers import CURATED, write_transcripts
from ui_harness import REPO, DagsterUI, run_cli, wait_for

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_dagster.definitions import AUTOMATION_SENSOR, build_definitions
from interviewsim_dagster.defs.corpus.sensors import SENSOR_NAME
from interviewsim_dagster.defs.corpus.sources import SOURCE

pytestmark = pytest.mark.slow

OFFLINE = "offline/extractive"
WAIT_S = 600


def _keys(cfg: EvalConfig, pid: str) -> dict[str, str]:
    """Every partitioned asset of the graph -> ``pid``'s partition of it."""
    out = {}
    for node in build_definitions(cfg).resolve_asset_graph().asset_nodes:
        name = node.key.to_user_string()
        if node.partitions_def is None or name == SOURCE:
            continue
        out[name] = f"simple|{pid}" if isinstance(node.partitions_def, dg.MultiPartitionsDefinition) else pid
    return out


@pytest.mark.timeout(2400)
def test_an_edited_transcript_shows_its_personality_stale_in_the_ui_until_a_backfill_re_makes_it(tmp_path):
    folder, manifest = write_transcripts(tmp_path)
    corpus, data, config = tmp_path / "corpus", tmp_path / "data", tmp_path / "interviewsim.yaml"
    settings = {"transcripts": str(folder), "manifest": str(manifest), "corpus": str(corpus), "data_root": str(data),
                "methods": ["simple"], "generator": OFFLINE, "judges": [OFFLINE], "builder": OFFLINE,
                "premise_judge": OFFLINE, "automation_interval_s": 5}
    config.write_text(yaml.safe_dump(settings))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(tmp_path / "home"), INTERVIEWSIM_CONFIG=str(config), PYTHONPATH=str(REPO),
               LITELLM_LOCAL_MODEL_COST_MAP="True")
    first = run_cli(["run"], env=env, cwd=tmp_path)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    cfg = EvalConfig.load_resolved(env={}, overrides={k: v for k, v in settings.items() if k != "methods"} | {"methods": "simple"})
    ada, ben = _keys(cfg, "ADA"), _keys(cfg, "BEN")

    with DagsterUI(env, cwd=tmp_path, log=tmp_path / "ui.log") as ui:
        t0 = time.time()
        wait_for("a registration tick", lambda: ui.finished_ticks_after(SENSOR_NAME, t0), WAIT_S)
        assert {ui.stale_status(a, k)["staleStatus"] for a, k in {**ada, **ben}.items()} == {"FRESH"}
        runs_before = {r["runId"] for r in ui.runs()}

        with open(folder / "ada_0.txt", "a", encoding="utf-8") as fh:
            fh.write("\nInterviewer: Which tool in the workshop do you reach for first each morning?\n\n"
                     f"{CURATED['ADA']}: The small brass screwdriver my grandmother gave me when I was nine years old.\n")
        curated = run_cli(["curate", "--transcripts", str(folder), "--manifest", str(manifest), "--out", str(corpus)],
                          env=env, cwd=tmp_path)
        assert curated.returncode == 0, curated.stdout[-3000:] + curated.stderr[-3000:]
        t1 = time.time()
        wait_for("a registration tick after the edit", lambda: ui.finished_ticks_after(SENSOR_NAME, t1), WAIT_S)
        wait_for("three automation ticks after it", lambda: len(ui.finished_ticks_after(AUTOMATION_SENSOR, t1)) >= 3, WAIT_S)

        stale = {a: ui.stale_status(a, k) for a, k in ada.items()}
        assert {a for a, s in stale.items() if s["staleStatus"] != "STALE"} == set(), stale
        assert any(c["key"]["path"] == [SOURCE] for c in stale["heldout_split"]["staleCauses"]), stale["heldout_split"]
        assert {ui.stale_status(a, k)["staleStatus"] for a, k in ben.items()} == {"FRESH"}
        assert {r["runId"] for r in ui.runs()} == runs_before, "the automation launched a run for the edit"

        t2 = time.time()
        backfill = ui.launch_backfill_by_asset(ada)  # what the UI shows stale: ADA's partitions of every asset
        assert ui.wait_backfill(backfill, WAIT_S) == "COMPLETED_SUCCESS"
        made = {(a, m["partition"]) for a in {**ada, **ben} for m in ui.materializations(a, after=t2)}
        assert made == set(ada.items()), "the backfill made other partitions than the stale ones"
        assert {ui.stale_status(a, k)["staleStatus"] for a, k in {**ada, **ben}.items()} == {"FRESH"}
        assert '"qa_id"' in (corpus / "ADA" / "prepared_input.json").read_text()
