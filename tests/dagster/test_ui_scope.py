"""Through the UI's GraphQL API, with the automation sensor on: a backfill does what it was asked.

One real ``interviewsim ui`` (webserver + daemon) and one fake OpenAI-compatible server (answering
as the offline model, recording every request) serve the module; the tests run in file order:

1. everything is run headless first (``interviewsim run``), then the UI starts;
2. a backfill of one personality x one method, on a cold model cache: over the next two automation
   ticks nothing else runs, what reads the re-made (identical) cell is not shown stale, and the server
   saw exactly the requests ``interviewsim run --force`` makes for that cell (so nothing of the other
   personality or method, and nothing twice);
3. a method is added to the config and the code location reloaded: only that method's partitions
   (and the aggregates that read them) run;
4. a judge change shows ``method_scores``, ``personality_scores`` and ``leaderboard`` stale, with the reason;
5. a judge change with the automation on: during the re-score the UI's "filled" and check counts leave
   out the partitions being re-made (none is lost), and the leaderboard waits for the re-score, then
   refreshes once and is current.
"""

from __future__ import annotations

import os
import time

import pytest
import yaml
from dg_helpers import PEOPLE, write_person
from ui_harness import KEY_VAR, DagsterUI, FakeModelServer, run_cli, ui_env, wait_for

from interviewsim_dagster.defs.evaluate.automation import IDLE, UPDATE_PENDING
from interviewsim_dagster.definitions import AUTOMATION_SENSOR

pytestmark = pytest.mark.slow

P1, P2 = PEOPLE
M1, M2, M_NEW = "simple", "chrono-100", "chrono-500"  # no retrieval: no embedder to configure
PER_PERSON = ("heldout_split", "fact_summary", "atomic_items", "mcq_items", "reference_personality", "premise_verdicts")
PER_CELL = ("generations", "mcq_answers", "content_similarity", "factual_consistency", "generated_personality",
            "method_scores")
TICK_WAIT_S = 240  # generous: two cores shared with other test runs


def _write_config(world: dict, **changes) -> None:
    model = {"model": "openai/fake-model", "api_base": world["server"].base_url, "api_key_env": KEY_VAR}
    cfg = {"corpus": str(world["corpus"]), "data_root": str(world["data"]), "methods": [M1, M2],
           "generator": model, "judges": [model], "builder": model, "premise_judge": model,
           "automation_interval_s": 5}
    cfg.update(changes)
    tmp = world["config"].with_suffix(".tmp")
    tmp.write_text(yaml.safe_dump(cfg))
    os.replace(tmp, world["config"])


def _cli_run(world: dict, *args: str) -> str:
    """``interviewsim run`` in its own process, as a user runs it (no gateway or cache state shared with us)."""
    result = run_cli(["run", "--config", str(world["config"]), *args], env=world["env"], cwd=world["tmp"])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.left == [], f"processes of the run outlived it: {result.left}"
    return result.stdout


def _wipe_cache(world: dict) -> None:
    for f in (world["data"] / ".cache").glob("llm.sqlite*"):
        f.unlink()


def _wait_ticks(ui: DagsterUI, after: float, n: int = 2) -> None:
    wait_for(f"{n} automation ticks", lambda: len(ui.finished_ticks_after(AUTOMATION_SENSOR, after)) >= n,
             TICK_WAIT_S)


def _idle(ui: DagsterUI) -> bool:
    return not [r for r in ui.runs() if r["status"] in ("QUEUED", "NOT_STARTED", "STARTING", "STARTED")]


def _partitions_since(ui: DagsterUI, assets, after: float) -> dict[str, set]:
    return {a: {m["partition"] for m in ui.materializations(a, after)} for a in assets}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ui_scope")
    corpus = tmp / "corpus"
    for pid in PEOPLE:
        write_person(corpus, pid)
    env = ui_env(tmp)
    with FakeModelServer(tmp) as server:
        w = {"tmp": tmp, "corpus": corpus, "data": tmp / "data", "config": tmp / "interviewsim.yaml",
             "server": server, "env": env}
        _write_config(w)
        _cli_run(w)  # everything, headless, before the UI (and its automation) starts
        with DagsterUI(env, cwd=tmp, log=tmp / "ui.log") as ui:
            w["ui"] = ui
            _wait_ticks(ui, 0, n=1)  # the sensor's first tick: it must not launch anything by itself
            assert ui.runs() and all(r["tags"].get("dagster/sensor_name") != AUTOMATION_SENSOR for r in ui.runs())
            yield w


def test_backfill_of_one_cell_runs_only_that_cell(world):
    ui, server = world["ui"], world["server"]
    _wipe_cache(world)  # cold cache: every call the backfill makes reaches the server
    seen_before = len(server.requests())
    t0 = time.time()
    backfill = ui.launch_backfill_by_asset({**{a: P1 for a in PER_PERSON}, **{a: f"{M1}|{P1}" for a in PER_CELL}})
    status = wait_for("the backfill to finish", lambda: (s := ui.backfill_status(backfill)).startswith(
        ("COMPLETED", "FAILED", "CANCELED")) and s, TICK_WAIT_S * 2)
    assert status == "COMPLETED_SUCCESS", ui.output()[-3000:]
    done = time.time()
    _wait_ticks(ui, done)
    wait_for("runs to finish", lambda: _idle(ui), TICK_WAIT_S)

    launched = [r for r in ui.runs() if r["creationTime"] >= t0]
    by_sensor = [r for r in launched if r["tags"].get("dagster/sensor_name") == AUTOMATION_SENSOR]
    assert by_sensor == [], f"the automation re-ran what the backfill rewrote unchanged: {by_sensor}"
    assert all(r["tags"].get("dagster/backfill") == backfill for r in launched)
    got = _partitions_since(ui, PER_PERSON + PER_CELL + ("personality_scores", "leaderboard"), t0)
    assert got == {**{a: {P1} for a in PER_PERSON}, **{a: {f"{M1}|{P1}"} for a in PER_CELL},
                   "personality_scores": set(), "leaderboard": set()}
    ui_calls = server.requests()[seen_before:]
    assert ui_calls, "the backfill made no model call on a cold cache"
    # The cell was re-made with identical content: what reads it, not re-made, is not "Unsynced" (STALE)
    # in the UI, as the automation (which launched nothing) agrees (issue 19; GraphQL's staleStatus is
    # what the asset graph and the catalog show).
    for asset, partition in (("personality_scores", P1), ("leaderboard", None)):
        status = ui.stale_status(asset, partition)
        assert status["staleStatus"] == "FRESH", (asset, status)

    # The same cell through the CLI on a cold cache: the UI asked the server exactly this, nothing more.
    _wipe_cache(world)
    seen = len(server.requests())
    _cli_run(world, "--personalities", P1, "--methods", M1, "--assets", ",".join(PER_PERSON + PER_CELL), "--force")
    cli_calls = server.requests()[seen:]
    assert sorted(r["body"] for r in ui_calls) == sorted(r["body"] for r in cli_calls)
    assert not [r for r in ui_calls if P2 in r["body"]]


def test_a_new_method_runs_only_its_own_partitions(world):
    """With ``automation_fill_new: true`` (opt-in since issue 19): the new method's cells and nothing else.

    Fill is turned on first, then the method added: partitions missing when fill is switched on (the
    same reload included) are never filled, as Dagster's ``since_last_handled`` resets on a condition's
    first evaluation (``test_dg_engine`` pins both halves in process)."""
    ui = world["ui"]
    _write_config(world, automation_fill_new=True)
    t_on = time.time()
    ui.reload_location()
    _wait_ticks(ui, time.time())
    assert [r for r in ui.runs() if r["creationTime"] >= t_on] == [], "turning fill on launched something"
    _write_config(world, methods=[M1, M2, M_NEW], automation_fill_new=True)
    t0 = time.time()
    ui.reload_location()
    cells = {f"{M_NEW}|{p}" for p in PEOPLE}
    wait_for("the new method's scores", lambda: {m["partition"] for m in ui.materializations("method_scores", t0)}
             >= cells, TICK_WAIT_S * 3)
    wait_for("runs to finish", lambda: _idle(ui), TICK_WAIT_S)
    _wait_ticks(ui, time.time())
    wait_for("runs to finish", lambda: _idle(ui), TICK_WAIT_S)

    got = _partitions_since(ui, PER_PERSON + PER_CELL, t0)
    assert got == {**{a: set() for a in PER_PERSON}, **{a: cells for a in PER_CELL}}
    launched = [r for r in ui.runs() if r["creationTime"] >= t0]
    assert launched and all(r["tags"].get("dagster/sensor_name") == AUTOMATION_SENSOR for r in launched)
    # The aggregates that read the new partitions follow.
    wait_for("personality_scores to follow", lambda: _partitions_since(ui, ("personality_scores",), t0)[
        "personality_scores"] == set(PEOPLE), TICK_WAIT_S)
    wait_for("the leaderboard to follow", lambda: ui.materializations("leaderboard", t0), TICK_WAIT_S)


def test_a_judge_change_shows_the_aggregates_stale_with_the_reason(world):
    ui = world["ui"]
    model = {"model": "openai/fake-model", "api_base": world["server"].base_url, "api_key_env": KEY_VAR}
    # Stop the automation from re-scoring before we look: the cron path alone would act, at 03:00.
    ui.set_sensor_running(AUTOMATION_SENSOR, False)
    _write_config(world, methods=[M1, M2, M_NEW], judges=[{**model, "seed": 7}], automation_fill_new=True)
    ui.reload_location()
    for asset, partition in (("content_similarity", f"{M1}|{P1}"), ("method_scores", f"{M1}|{P1}"),
                             ("personality_scores", P1), ("leaderboard", None)):
        status = ui.stale_status(asset, partition)
        assert status["staleStatus"] == "STALE", (asset, status)
        reasons = [c["reason"] for c in status["staleCauses"] if c["key"]["path"] == [asset]]
        assert any("code version" in r for r in reasons), (asset, status["staleCauses"])
    # What the asset graph and the catalog ask for a partitioned asset (no partition): Dagster 1.13 answers
    # FRESH whatever its partitions are, so they stay green; USER_GUIDE says so and where to look instead.
    # If this starts failing, Dagster shows partitioned staleness itself: update the guide.
    assert ui.stale_status("content_similarity")["staleStatus"] == "FRESH"
    # Generations are not judged: a judge change leaves them current.
    assert ui.stale_status("generations", f"{M1}|{P1}")["staleStatus"] == "FRESH"


def test_a_rescore_shows_work_in_progress_then_current(world):
    """What the UI shows during a re-score is Dagster's display of work in progress (issue 33; USER_GUIDE,
    "Where the UI shows it"): "0% filled" and "0 / 1 Passed" are partitions being re-made, their files
    intact; the leaderboard's "Unsynced" with "Not requested" is the automation waiting on purpose until
    nothing upstream is in progress, then one refresh, after which it is current."""
    ui = world["ui"]
    model = {"model": "openai/fake-model", "api_base": world["server"].base_url, "api_key_env": KEY_VAR}
    asset = "content_similarity"
    ui.set_sensor_running(AUTOMATION_SENSOR, True)
    # Whatever the sensor does about an earlier change (test 4's, made while it was off) ends first:
    # nothing in progress and the leaderboard current, so what follows is this change's alone.
    _wait_ticks(ui, time.time())
    wait_for("an earlier re-score to end", lambda: _idle(ui) and ui.stale_status("leaderboard")["staleStatus"] == "FRESH",
             TICK_WAIT_S * 3)
    before = ui.partition_stats(asset)
    assert before["numMaterializing"] == 0 and before["numFailed"] == 0, before
    # Only the judge changes (the methods as the earlier tests left them): with a method added in the same
    # reload (this test run alone), the sensor re-scored nothing within TICK_WAIT_S.
    current = yaml.safe_load(world["config"].read_text())
    _write_config(world, methods=current["methods"], automation_fill_new=current.get("automation_fill_new", False),
                  judges=[{**model, "seed": 8}])
    t0 = time.time()
    ui.reload_location()
    during = wait_for("the re-score to be in progress", lambda: (s := ui.partition_stats(asset))["numMaterializing"] and s,
                      TICK_WAIT_S, every_s=0.5)
    # "Filled" (numMaterialized) leaves out what is being re-made: together they are what was there.
    assert during["numMaterialized"] + during["numMaterializing"] == before["numMaterialized"], (before, during)
    assert during["numFailed"] == 0, during
    wait_for("the leaderboard's refresh", lambda: ui.materializations("leaderboard", t0), TICK_WAIT_S * 3)
    wait_for("runs to finish", lambda: _idle(ui), TICK_WAIT_S)
    _wait_ticks(ui, time.time())  # a second refresh would be requested by now
    wait_for("runs to finish", lambda: _idle(ui), TICK_WAIT_S)
    after = ui.partition_stats(asset)
    assert (after["numMaterialized"], after["numMaterializing"]) == (before["numMaterialized"], 0), after
    assert ui.check_latest_statuses(asset) and set(ui.check_latest_statuses(asset)) == {"SUCCEEDED"}
    assert len(ui.materializations("leaderboard", t0)) == 1, "the leaderboard was refreshed per partition landed"
    assert ui.stale_status("leaderboard")["staleStatus"] == "FRESH", ui.stale_status("leaderboard")
    # Every evaluation that requested nothing while an upstream update was pending waited for work in
    # progress: that node is what the leaderboard's Automation tab shows under "Not requested".
    for ev in ui.automation_evaluations("leaderboard"):
        nodes: dict = {}
        for n in ev["evaluationNodes"]:  # pre-order: the first of a label is the refresh branch's
            nodes.setdefault(n["userLabel"], n["numTrue"])
        if ev["timestamp"] >= t0 and ev["numRequested"] == 0 and nodes.get(UPDATE_PENDING.get_label()):
            assert nodes[IDLE.get_label()] == 0, ev
    ui.set_sensor_running(AUTOMATION_SENSOR, False)
