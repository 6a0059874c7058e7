"""Issue 43: 200 small personalities through ``interviewsim ui``'s backfills, at a priced model, with the
automation sensor running as shipped; the partitions written are exactly the ones selected.

The world (module scope): 200 small personalities (5 interviews x 2 QA pairs, ``benchmarks/bench_plan.py``'s
``small_corpus``), two methods configured (``simple``, ``chrono-100``) and one judge, every model role
``openai/gpt-4.1`` at the fake OpenAI-compatible server (``ui_harness.FakeModelServer``: offline-model replies,
every request recorded). gpt-4.1 has a price in litellm's map, so the Dagster budget gate
(``interviewsim_dagster/engine.py``, ``_gate``) plans every run that calls a model; ``max_cost_usd`` is twice
what ``interviewsim plan --json`` says the evaluation of ``simple`` costs, so the gate passes.

The route, and why: a researcher who wants one method's results for the whole corpus opens the Jobs page
and launches the four stage jobs in their order (``launch.JOB_ORDER``), each as "Materialize all" -> pick
partitions -> "Launch backfill": ``personality_assets`` for personality All, ``personality_method_assets``
for method ``simple`` x personality All, ``personality_summary_assets`` for personality All, then the
unpartitioned ``global_assets`` (its page launches one run, not a backfill). The asset graph's
"Materialize all" cannot pick a method (it backfills every partition of every method: the second
method's cost, which is not what was asked), and ``test_ui_routes.py`` already covers the other routes at
two personalities; the job pages are where the per-method selection is made, and the four jobs are what
``interviewsim run --methods simple`` itself launches, so they are the product's 200-personality path.

Checked: every selected partition materialised (Dagster's events) and written (Parquet files), nothing
of ``chrono-100``; every run succeeded, none refused by the gate, and the model-calling runs carry the
gate's plan tags, adding up to what ``interviewsim plan`` said; every request the fake server saw is for
the planned model, and each stage sent what its gate planned within re-asks (the P x M stage's plan is an
upper bound: see that test); the automation sensor, left running, launched no run of a step that calls a
model. It does launch its documented free refreshes (``personality_scores``, the leaderboard, the report after
an upstream's data version changed) between and even during the researcher's job backfills: Dagster's
``in_progress`` sees runs and asset backfills, not a job backfill whose run has ended but which the backfill
daemon has not marked done yet (docs/PERFORMANCE.md, issue 43). Wall times, run counts and the automation
sensor's tick durations are printed (``pytest -s``) for docs/PERFORMANCE.md, never asserted.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml
from ui_harness import REPO, DagsterUI, FakeModelServer, run_cli, ui_env, wait_for

from interviewsim_core.pipeline.steps import BY_NAME
from interviewsim_core.pipeline.storage import partition_path
from interviewsim_dagster.definitions import AUTOMATION_SENSOR
from interviewsim_dagster.engine import PLAN_TAG_PREFIX
from interviewsim_dagster.launch import GLOBAL_JOB, PERSONALITY_JOB, PERSONALITY_METHOD_JOB, PERSONALITY_SUMMARY_JOB

sys.path.insert(0, str(REPO))  # benchmarks/ is not installed (as tests/core/pipeline/test_plan.py does)
from benchmarks.bench_plan import small_corpus  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.timeout(5400)]  # the first test pays for the whole world

N = 200
METHOD, OTHER = "simple", "chrono-100"  # no retrieval: no embedder to configure
MODEL = "openai/gpt-4.1"  # priced in litellm's map: the gate plans every run
WAIT_S = 3600  # per backfill; generous: two cores shared with other test runs (no timed assertion)
REASK_MARGIN = 0.05
"""Requests beyond the plan allowed for re-asks of invalid outputs (the plan counts first asks)."""
BACKFILL_JOBS = (PERSONALITY_JOB, PERSONALITY_METHOD_JOB, PERSONALITY_SUMMARY_JOB)


def _job_assets(ui: DagsterUI, job: str) -> list[str]:
    nodes = ui.gql("query($s: PipelineSelector!) { assetNodes(pipeline: $s) { assetKey { path } isMaterializable } }",
                   {"s": {"repositoryLocationName": "interviewsim", "repositoryName": "__repository__",
                          "pipelineName": job}})["assetNodes"]
    return [n["assetKey"]["path"][-1] for n in nodes if n["isMaterializable"]]


def _ticks(ui: DagsterUI, after: float) -> list[dict]:
    """The automation sensor's finished ticks after ``after``: status, start and end (epoch s), runs."""
    data = ui.gql("""query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { ... on Sensor {
        sensorState { ticks(limit: 1000) { id status timestamp endTimestamp runIds } } } } }""",
                  {"s": {"repositoryLocationName": "interviewsim", "repositoryName": "__repository__",
                         "sensorName": AUTOMATION_SENSOR}})["sensorOrError"]["sensorState"]["ticks"]
    return [t for t in data if t["timestamp"] > after and t["status"] != "STARTED"]


def _loadavg() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ui_backfill_200")
    corpus, data, config = tmp / "corpus", tmp / "data", tmp / "interviewsim.yaml"
    small_corpus(corpus, N)
    people = sorted(p.name for p in corpus.iterdir())
    env = {**ui_env(tmp), "OPENAI_API_KEY": "sk-fake-not-a-secret"}  # its config: tmp / "interviewsim.yaml"
    w: dict = {"tmp": tmp, "corpus": corpus, "data": data, "people": people, "env": env, "log": []}

    def say(line: str) -> None:
        w["log"].append(line)
        print(line, flush=True)

    with FakeModelServer(tmp) as server:
        w["server"] = server
        priced = {"model": MODEL, "api_base": server.base_url}
        settings = {"corpus": str(corpus), "data_root": str(data), "methods": [METHOD, OTHER],
                    "generator": priced, "judges": [priced], "builder": priced, "premise_judge": priced}
        config.write_text(yaml.safe_dump(settings))
        planned = run_cli(["plan", "--config", str(config), "--methods", METHOD, "--json"], env=env, cwd=tmp)
        assert planned.returncode == 0, planned.stdout[-3000:] + planned.stderr[-3000:]
        plan = json.loads(planned.stdout)
        w["plan"] = plan
        assert plan["totals"]["cost_usd"] > 0 and plan["totals"]["to_send"] > 0, plan["totals"]
        config.write_text(yaml.safe_dump({**settings, "max_cost_usd": round(2 * plan["totals"]["cost_usd"], 2)}))
        say(f"\nplan of {METHOD} over {N} personalities: {plan['totals']['to_send']:,} calls to send, "
            f"${plan['totals']['cost_usd']:.2f}; max_cost_usd ${2 * plan['totals']['cost_usd']:.2f}")

        w["register"] = run_cli(["register", "--corpus", str(corpus)], env=env, cwd=tmp, timeout_s=600)
        assert w["register"].returncode == 0, w["register"].stdout[-3000:] + w["register"].stderr[-3000:]

        with DagsterUI(env, cwd=tmp, log=tmp / "ui.log") as ui:
            w["ui"] = ui
            t_start = time.time()
            w["t_start"] = t_start
            w["backfills"], w["walls"], w["sent"] = {}, {}, {}
            for job in BACKFILL_JOBS:
                keys = [f"{METHOD}|{p}" for p in people] if job == PERSONALITY_METHOD_JOB else people
                t0 = time.monotonic()
                backfill_id = ui.launch_backfill_params(ui.job_page_backfill_params(job, keys))
                status = ui.wait_backfill(backfill_id, WAIT_S)
                w["walls"][job] = time.monotonic() - t0
                w["backfills"][job] = (backfill_id, status, ui.backfill(backfill_id))
                w["sent"][job] = len(server.requests()) - sum(w["sent"].values())
                say(f"{job}: backfill {status} in {w['walls'][job]:.0f} s, "
                    f"{len(ui.runs_of_backfill(backfill_id))} run(s); load average {_loadavg()}")
            t0 = time.monotonic()
            run_id = ui.launch_job_run(GLOBAL_JOB)
            w["global_run"] = run_id
            wait_for(f"the {GLOBAL_JOB} run to finish", lambda: ui.run_status(run_id) in ("SUCCESS", "FAILURE", "CANCELED"),
                     WAIT_S)
            w["walls"][GLOBAL_JOB] = time.monotonic() - t0
            w["sent"][GLOBAL_JOB] = len(server.requests()) - sum(w["sent"].values())
            w["wall"] = time.time() - t_start
            say(f"{GLOBAL_JOB}: run {ui.run_status(run_id)} in {w['walls'][GLOBAL_JOB]:.0f} s")
            # Let the automation sensor look at the finished result, as it would after a researcher's session.
            t_done = time.time()
            wait_for("two automation ticks after the last run", lambda: len(_ticks(ui, t_done)) >= 2, WAIT_S)
            wait_for("runs to finish", ui.idle, WAIT_S)
            w["runs"] = [r for r in ui.runs() if r["creationTime"] >= t_start - 1]
            w["ticks"] = _ticks(ui, t_start)
            w["assets"] = {job: _job_assets(ui, job) for job in (*BACKFILL_JOBS, GLOBAL_JOB)}
            w["events"] = {a: [(m["partition"], m["runId"]) for m in ui.materializations(a, after=t_start)]
                           for assets in w["assets"].values() for a in assets}
            durations = [t["endTimestamp"] - t["timestamp"] for t in w["ticks"] if t["endTimestamp"]]
            say(f"{N} personalities, method {METHOD}: {w['wall']:.0f} s from the first backfill to the global run's end; "
                f"{len(w['runs'])} run(s) in all; automation sensor: {len(durations)} tick(s), "
                + (f"duration median {statistics.median(durations):.1f} s, max {max(durations):.1f} s; "
                   if durations else "")
                + f"{len(server.requests()):,} model requests; load average {_loadavg()}")
            (tmp / "ui_backfill_200.json").write_text(json.dumps(
                {"walls": w["walls"], "wall": w["wall"], "runs": len(w["runs"]), "tick_durations": durations,
                 "loadavg": os.getloadavg()}, indent=1))
            yield w


def test_register_summarises_the_200_ids(world):
    """Issue 43 item 3: the count, the first and last id and where the whole list is, not 200 ids on a line."""
    out, people = world["register"].stdout, world["people"]
    line = next(line for line in out.splitlines() if line.startswith("registered"))
    where = Path(world["env"]["DAGSTER_HOME"]) / "interviewsim_lists" / "registered.txt"
    assert line == f"registered {N} personality partition(s): {people[0]} ... {people[-1]} (all {N}: {where})", out
    assert where.read_text().split() == people
    assert len(out) < 1000, out


def test_every_selected_partition_and_only_those_was_materialised_and_written(world):
    people, data, assets = world["people"], world["data"], world["assets"]
    for job in BACKFILL_JOBS:
        _, status, shown = world["backfills"][job]
        assert status == "COMPLETED_SUCCESS", (job, shown)
        assert shown["numPartitions"] == N, (job, shown)
    expected_keys = {PERSONALITY_METHOD_JOB: {f"{METHOD}|{p}" for p in people}}
    for job in BACKFILL_JOBS:
        own_runs = {r["runId"] for r in world["runs"] if r["tags"].get("dagster/backfill") == world["backfills"][job][0]}
        expected = expected_keys.get(job, set(people))
        for asset in assets[job]:
            events = Counter(k for k, _ in world["events"][asset])
            assert set(events) == expected, f"{asset}: {sorted(set(events) ^ expected)[:10]}"
            assert {k for k, run in world["events"][asset] if run in own_runs} == expected, \
                f"{asset}: partitions the {job} backfill did not make"
            if BY_NAME[asset].calls_models:  # a free step may also be refreshed by the automation (last test)
                assert set(events.values()) == {1}, f"{asset}: partitions materialised more than once: " \
                                                    f"{[k for k, n in events.items() if n > 1][:10]}"
            if job == PERSONALITY_METHOD_JOB:
                missing = [p for p in people if not Path(partition_path(data, asset, p, METHOD)).is_file()]
                other = [p for p in people if Path(partition_path(data, asset, p, OTHER)).exists()]
                assert (missing, other) == ([], []), f"{asset}: {METHOD} missing for {missing[:5]}, {OTHER} written for {other[:5]}"
            else:
                missing = [p for p in people if not Path(partition_path(data, asset, p)).is_file()]
                assert missing == [], f"{asset}: not written for {len(missing)}: {missing[:5]}"
    for asset in assets[GLOBAL_JOB]:
        assert (None, world["global_run"]) in world["events"][asset], (asset, world["events"][asset])
        assert {k for k, _ in world["events"][asset]} == {None}, (asset, world["events"][asset])
    assert Path(partition_path(data, "leaderboard")).is_file()
    assert not list(data.rglob(f"*{OTHER}*")), f"files of {OTHER}: {list(data.rglob(f'*{OTHER}*'))[:5]}"


def test_every_run_passed_the_budget_gate_and_its_plans_add_up_to_the_cli_plan(world):
    runs = world["runs"]
    failed = [(r["runId"], r["jobName"], r["status"]) for r in runs if r["status"] != "SUCCESS"]
    assert failed == [], f"runs that did not succeed (a refusal fails the run): {failed}"
    planned = [r for r in runs if PLAN_TAG_PREFIX + "to_send" in r["tags"]]
    jobs_planned = {r["tags"].get("dagster/backfill") for r in planned}
    assert jobs_planned == {world["backfills"][PERSONALITY_JOB][0], world["backfills"][PERSONALITY_METHOD_JOB][0]}, \
        [(r["jobName"], r["tags"]) for r in runs]
    limit = 2 * world["plan"]["totals"]["cost_usd"]
    assert all(float(r["tags"][PLAN_TAG_PREFIX + "cost_usd"]) <= limit for r in planned)
    to_send = sum(int(float(r["tags"][PLAN_TAG_PREFIX + "to_send"])) for r in planned)
    assert to_send == world["plan"]["totals"]["to_send"], [{k: v for k, v in r["tags"].items() if k.startswith(PLAN_TAG_PREFIX)}
                                                           for r in planned]


def test_the_model_server_was_asked_what_the_plan_said(world):
    """Every request is for the planned model and answered; each stage sent what its run's gate planned, within
    re-asks. The per-personality stage's prompts are all known before it runs, so its plan is exact; the P x M
    stage's plan is an upper bound: a prompt built from a generated answer can hit the cache, and the fake
    server's offline-model answers repeat the held-out ones, so the generated personality's questionnaire
    (the reference's, word for word) is mostly served from the cache."""
    requests = world["server"].requests()
    bodies = [json.loads(r["body"]) for r in requests]
    assert Counter(b.get("model") for b in bodies) == {MODEL.split("/", 1)[1]: len(requests)}
    assert Counter(r["status"] for r in requests) == {200: len(requests)}
    planned = {job: sum(int(float(r["tags"].get(PLAN_TAG_PREFIX + "to_send", 0))) for r in world["runs"]
                        if r["tags"].get("dagster/backfill") == world["backfills"][job][0]) for job in BACKFILL_JOBS}
    sent = world["sent"]
    print(f"\nplanned / sent per stage: {planned} / {sent}")
    p, pxm = planned[PERSONALITY_JOB], planned[PERSONALITY_METHOD_JOB]
    assert p <= sent[PERSONALITY_JOB] <= p * (1 + REASK_MARGIN), (planned, sent)
    assert 0 < sent[PERSONALITY_METHOD_JOB] <= pxm * (1 + REASK_MARGIN), (planned, sent)
    assert sent[PERSONALITY_SUMMARY_JOB] == sent[GLOBAL_JOB] == 0, sent  # they call no model
    assert len(requests) <= world["plan"]["totals"]["to_send"] * (1 + REASK_MARGIN)


def test_the_automation_sensor_launched_no_run_that_calls_a_model(world):
    """The automation's promise (``defs/evaluate/automation.py``): nothing that calls a model unless asked. Its
    documented free refreshes (a step that calls no model, after an upstream's data version changed) may run
    between the researcher's backfills: they are counted and printed, and may only be of such steps."""
    ours = {b[0] for b in world["backfills"].values()}
    own = [r for r in world["runs"] if r["tags"].get("dagster/backfill") not in ours and r["runId"] != world["global_run"]]
    assert world["ticks"], "the automation sensor did not tick"
    by_whom = Counter(r["tags"].get("dagster/sensor_name") for r in own)
    assert set(by_whom) <= {AUTOMATION_SENSOR}, f"runs nobody here launched: {[(r['jobName'], r['tags']) for r in own]}"
    paid = [(r["runId"], r["assets"]) for r in own if any(BY_NAME[a].calls_models for a in r["assets"])]
    assert paid == [], f"the automation sensor launched runs of model steps: {paid}"
    print(f"\nautomation runs (free refreshes): {len(own)}: {[r['assets'] for r in own]}")
