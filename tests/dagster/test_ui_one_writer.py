"""Two configurations writing one data root never interleave (issue 33, "Results overwritten").

The issue's sequence, on the tiny corpus: a first evaluation with the offline model (``make demo``'s
role: it also makes that config the UI's), ``interviewsim ui`` with automation on, then ``interviewsim
run --methods simple`` with other models (``openai/fake-*`` against the fake server) while the UI's
automation ticks every 5 s. Before the fix the sensor re-made ``method_scores`` with the UI's judge
while the command ran, so the Parquet held the UI's judge while Dagster's latest event was the
command's. Now the command claims the data root (it says so), every run the UI launches while it
writes refuses to start, and afterwards each ``method_scores`` file holds the judge of the run that
Dagster's latest event for that partition names.
"""

from __future__ import annotations

import os
import time

import pandas as pd
import pytest
import yaml
from dg_helpers import PEOPLE, write_person
from ui_harness import REPO, DagsterUI, FakeModelServer, run_cli, wait_for

from interviewsim_core.pipeline.storage import partition_path
from interviewsim_dagster.definitions import AUTOMATION_SENSOR

pytestmark = pytest.mark.slow

UI_JUDGE, CLI_JUDGE = "offline/extractive", "openai/fake-judge"
WAIT_S = 600


def _judges(data, person: str) -> set[str]:
    return set(pd.read_parquet(partition_path(data, "method_scores", person, "simple"))["judge"].astype(str))


@pytest.mark.timeout(2400)
def test_the_ui_s_automation_writes_nothing_while_a_run_of_another_config_writes_the_data_root(tmp_path):
    corpus, data, config = tmp_path / "corpus", tmp_path / "data", tmp_path / "interviewsim.yaml"
    for pid in PEOPLE:
        write_person(corpus, pid)
    offline = "offline/extractive"
    config.write_text(yaml.safe_dump({
        "corpus": str(corpus), "data_root": str(data), "methods": ["simple"], "generator": offline,
        "judges": [offline], "builder": offline, "premise_judge": offline, "automation_interval_s": 5}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(tmp_path / "home"), INTERVIEWSIM_CONFIG=str(config), PYTHONPATH=str(REPO),
               LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_API_KEY="sk-fake-test-key")
    first = run_cli(["run"], env=env, cwd=tmp_path)  # the UI's config, offline: as `make demo` before `make ui`
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    with FakeModelServer(tmp_path) as server, DagsterUI(env, cwd=tmp_path, log=tmp_path / "ui.log") as ui:
        wait_for("the automation sensor's first tick", lambda: ui.finished_ticks_after(AUTOMATION_SENSOR, 0), WAIT_S)
        t0 = time.time()
        cli = run_cli(["run", "--methods", "simple", "--api-base", server.base_url, "--generator", "openai/fake-gen",
                       "--judges", CLI_JUDGE, "--builder", "openai/fake-builder", "--premise-judge",
                       "openai/fake-premise", "--yes"], env=env, cwd=tmp_path)
        t1 = time.time()
        assert cli.returncode == 0, cli.stdout[-3000:] + cli.stderr[-3000:]
        assert f"data root {data} is claimed by this run" in cli.stdout
        wait_for("three automation ticks after the command", lambda: len(
            ui.finished_ticks_after(AUTOMATION_SENSOR, t1)) >= 3, WAIT_S)
        wait_for("runs to finish", ui.idle, WAIT_S)
        runs = {r["runId"]: r for r in ui.runs()}
        by_sensor = {i for i, r in runs.items() if r["tags"].get("dagster/sensor_name") == AUTOMATION_SENSOR}
        mine = [r for i, r in runs.items() if i not in by_sensor and r["creationTime"] >= t0]
        assert mine, "the command's runs are not on the instance"
        # The command holds its claim from before its first run is created until after its last one ended.
        w0, w1 = min(r["creationTime"] for r in mine), max(r["endTime"] for r in mine)
        events = ui.materializations("method_scores")
        during = [m for m in events if w0 <= float(m["timestamp"]) / 1000 <= w1 and m["runId"] in by_sensor]
        assert during == [], f"the UI's automation wrote method_scores while the command ran: {during}"
        started = [runs[i] for i in by_sensor if w0 <= (runs[i]["startTime"] or 0) <= w1]
        assert all(r["status"] == "FAILURE" for r in started), [(r["runId"], r["status"]) for r in started]
        for person in PEOPLE:
            key = f"simple|{person}"
            latest = max((m for m in events if m["partition"] == key), key=lambda m: float(m["timestamp"]))
            by_ui = latest["runId"] in by_sensor
            expected = UI_JUDGE if by_ui else CLI_JUDGE
            assert _judges(data, person) == {expected}, (
                f"{key}: Dagster's latest event is from {'the UI' if by_ui else 'the command'} ({latest['runId']}), "
                f"the Parquet holds judges {_judges(data, person)}")
