"""One configuration writes a data root: at once (issue 33) and in turn (issue 45's trial).

Issue 45's sequence, on the tiny corpus: a first evaluation with the offline model (``make demo``'s role: it
also makes that config the UI's, and records the data root's study), ``interviewsim ui`` with automation on,
then ``interviewsim run --methods simple`` with another judge (``openai/fake-judge`` against the fake server)
on the same data root, then three automation ticks. Before, the command re-judged ``simple``, the UI's
automation kept the other method on the UI's judge, ``leaderboard.parquet`` mixed two judges and the
command's partitions stayed STALE for good. Now the command is refused in one line before it writes
anything, the leaderboard's rows all come from one configuration, and nothing is stale.

Then the UI's side of the rule: a UI launch while a writer of another configuration holds the data root
fails with the project's one line as its failure, no stack trace and no second failure from the IO manager.
"""

from __future__ import annotations

import os
import time

import pandas as pd
import pytest
import yaml
from dg_helpers import PEOPLE, write_person
from ui_harness import REPO, DagsterUI, FakeModelServer, run_cli, wait_for

from interviewsim_core.pipeline.data_root_claims import claim
from interviewsim_core.pipeline.storage import partition_path
from interviewsim_dagster.definitions import AUTOMATION_SENSOR

pytestmark = pytest.mark.slow

UI_JUDGE, CLI_JUDGE = "offline/extractive", "openai/fake-judge"
METHODS = ("simple", "chrono-100")
WAIT_S = 600

RUN_EVENTS = """query($id: ID!) { logsForRun(runId: $id) { __typename ... on EventConnection { events {
    __typename ... on MessageEvent { message }
    ... on RunFailureEvent { error { message stack } }
    ... on ExecutionStepFailureEvent { error { message } }
    ... on EngineEvent { error { message } } } } } }"""


def _judges(path) -> set[str]:
    return set(pd.read_parquet(path)["judge"].dropna().astype(str))


@pytest.mark.timeout(2400)
def test_a_run_of_another_judge_is_refused_and_the_data_root_holds_one_study(tmp_path):
    corpus, data, config = tmp_path / "corpus", tmp_path / "data", tmp_path / "interviewsim.yaml"
    for pid in PEOPLE:
        write_person(corpus, pid)
    config.write_text(yaml.safe_dump({
        "corpus": str(corpus), "data_root": str(data), "methods": list(METHODS), "generator": UI_JUDGE,
        "judges": [UI_JUDGE], "builder": UI_JUDGE, "premise_judge": UI_JUDGE, "automation_interval_s": 5}))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(tmp_path / "home"), INTERVIEWSIM_CONFIG=str(config), PYTHONPATH=str(REPO),
               LITELLM_LOCAL_MODEL_COST_MAP="True", OPENAI_API_KEY="sk-fake-test-key")
    first = run_cli(["run"], env=env, cwd=tmp_path)  # the UI's config, offline: as `make demo` before `make ui`
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    with FakeModelServer(tmp_path) as server, DagsterUI(env, cwd=tmp_path, log=tmp_path / "ui.log") as ui:
        wait_for("the automation sensor's first tick", lambda: ui.finished_ticks_after(AUTOMATION_SENSOR, 0), WAIT_S)
        cli = run_cli(["run", "--methods", "simple", "--api-base", server.base_url, "--judges", CLI_JUDGE, "--yes"],
                      env=env, cwd=tmp_path)
        t1 = time.time()
        said = [line for line in cli.stderr.splitlines() if line.strip()]
        assert cli.returncode == 2, cli.stdout[-3000:] + cli.stderr[-3000:]
        assert len(said) == 1 and f"judges {UI_JUDGE} -> {CLI_JUDGE}" in said[0] and "--data-root" in said[0], said
        assert server.requests() == [], "the refused command called the model"
        wait_for("three automation ticks after the command", lambda: len(
            ui.finished_ticks_after(AUTOMATION_SENSOR, t1)) >= 3, WAIT_S)
        wait_for("runs to finish", ui.idle, WAIT_S)

        # The leaderboard's rows, and every table it reads, come from one configuration.
        assert _judges(data / "leaderboard.parquet") == {UI_JUDGE}
        for person in PEOPLE:
            for method in METHODS:
                assert _judges(partition_path(data, "method_scores", person, method)) == {UI_JUDGE}
                assert _judges(partition_path(data, "content_similarity", person, method)) == {UI_JUDGE}
        # Nothing is stale that a launch would not refresh: nothing is stale at all.
        for asset, partition in [("leaderboard", None), *(("personality_scores", p) for p in PEOPLE),
                                 *((a, f"{m}|{p}") for a in ("content_similarity", "method_scores")
                                   for m in METHODS for p in PEOPLE)]:
            status = ui.stale_status(asset, partition)
            assert status["staleStatus"] == "FRESH", (asset, partition, status)
        assert not [r for r in ui.runs() if r["status"] == "FAILURE"], "a run failed after the refused command"

        # A UI launch while another configuration writes the data root: the project's line is the failure.
        ui.set_sensor_running(AUTOMATION_SENSOR, False)
        with claim(data, "another-configuration", "`interviewsim run` (pid 1)"):
            backfill = ui.launch_backfill(["generations"], [f"simple|{PEOPLE[0]}"])
            ui.wait_backfill(backfill, WAIT_S)
        run = ui.runs_of_backfill(backfill)[0]
        assert run["status"] == "FAILURE", run
        events = ui.gql(RUN_EVENTS, {"id": run["runId"]})["logsForRun"]["events"]
        failures = [e for e in events if e["__typename"] in ("RunFailureEvent", "ExecutionStepFailureEvent")
                    or (e["__typename"] == "EngineEvent" and e.get("error"))]
        assert [e["__typename"] for e in failures] == ["RunFailureEvent"], failures
        assert failures[0]["error"] is None, failures[0]  # no stack trace beside the message
        assert "\n" not in failures[0]["message"] and "another configuration" in failures[0]["message"], failures[0]
        assert "DagsterResourceFunctionError" not in str(events)
