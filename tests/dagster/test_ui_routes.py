"""Every launch route a researcher can click writes exactly the partitions selected, and says so.

One real ``interviewsim ui`` (webserver + daemon) and one fake OpenAI-compatible server (answering as
the offline model, recording every request) serve the whole module; two fictional people, two
methods. Each route is driven through the GraphQL mutation its page sends (read from Dagster's UI
source, ``LaunchAssetChoosePartitionsDialog``), and each test compares three things: the partitions
selected, the Parquet files rewritten (mtimes) and Dagster's materialisation events.

Routes and the ``launchPartitionBackfill`` input each page sends:

- job page -> "Materialize all" -> pick partitions -> "Launch backfill": ``assetSelection`` (the
  job's assets), ``partitionNames``, ``selector: {partitionSetName: "<job>_partition_set", ...}``
  (a job backfill, ``isAssetBackfill: false``);
- Catalog (assets selected) / asset page "Materialize..." / the asset's Partitions tab
  "Materialize selected": ``assetSelection`` + ``partitionNames`` (an asset backfill);
- asset graph "Materialize all": ``assetSelection`` (every asset) + ``allPartitions: true``.

The automation sensor is stopped for the route tests (it would add runs of its own) and started
for the last test, which checks that a CLI run beside the UI makes automation call no model.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
import yaml
from dg_helpers import PEOPLE, write_person
from ui_harness import KEY_VAR, DagsterUI, FakeModelServer, run_cli, ui_env, wait_for

from interviewsim_core.pipeline.storage import partition_path
from interviewsim_dagster.definitions import AUTOMATION_SENSOR

pytestmark = pytest.mark.slow

P1, P2 = PEOPLE
M1, M2 = "simple", "chrono-100"  # no retrieval: no embedder to configure
PER_PERSON = ("heldout_split", "fact_summary", "atomic_items", "mcq_items", "reference_personality", "premise_verdicts")
PER_CELL = ("generations", "mcq_answers", "content_similarity", "factual_consistency", "generated_personality",
            "method_scores")
CELLS = {f"{m}|{p}" for m in (M1, M2) for p in PEOPLE}
PXM_JOB = "personality_method_assets"
WAIT_S = 600  # generous: two cores shared with other test runs
TAGS: dict[str, list[dict]] = {}  # route -> tags of its runs, written to routes_tags.json for the report


def _cell(key: str) -> tuple[str, str]:
    method, person = key.split("|")
    return person, method


def _written(world: dict, asset: str, after: float) -> set[str]:
    """Partitions of ``asset`` whose Parquet file was rewritten after ``after``."""
    root = world["data"]
    if asset in PER_CELL:
        keys = {k: partition_path(root, asset, *_cell(k)) for k in CELLS}
    else:
        keys = {p: partition_path(root, asset, p) for p in PEOPLE}
    return {k for k, path in keys.items() if Path(path).is_file() and Path(path).stat().st_mtime > after}


def _materialised(ui: DagsterUI, asset: str, after: float) -> set[str]:
    return {m["partition"] for m in ui.materializations(asset, after)}


def _finish(ui: DagsterUI, backfill_id: str) -> dict:
    ui.wait_backfill(backfill_id, WAIT_S)
    return ui.backfill(backfill_id)


def _record(route: str, runs: list[dict]) -> list[dict]:
    tags = [{k: v for k, v in r["tags"].items() if k.startswith("dagster/") and k != "dagster/code_location"}
            for r in runs]
    TAGS[route] = tags
    return tags


def _check_route(world: dict, route: str, params: dict, assets, selected: set[str],
                 also: dict[str, set[str]] | None = None) -> None:
    """Launch ``params``; every asset in ``assets`` gets exactly ``selected`` (and each asset of
    ``also`` its own set), on disk and in Dagster's events, and the backfill page says so."""
    ui = world["ui"]
    time.sleep(1.1)  # mtimes: a file rewritten in the same second as t0 still counts
    t0 = time.time()
    backfill_id = ui.launch_backfill_params(params)
    shown = _finish(ui, backfill_id)
    tags = _record(route, ui.runs_of_backfill(backfill_id))
    expected = {**{a: selected for a in assets}, **(also or {})}
    written = {a: _written(world, a, t0) for a in expected}
    events = {a: _materialised(ui, a, t0) for a in expected}
    context = f"route {route}: backfill page {shown['status']}, {shown['numPartitions']} partitions; run tags {tags}"
    assert shown["status"] == "COMPLETED_SUCCESS", context
    assert events == expected, f"materialisation events differ from the selection; {context}"
    assert written == expected, f"files written differ from the selection; {context}"
    if shown["isAssetBackfill"]:  # the page's per-asset "targeted / materialized" counts
        counts = {s["assetKey"]["path"][-1]: (s["numPartitionsTargeted"], s["numPartitionsMaterialized"])
                  for s in shown["assetBackfillData"]["assetBackfillStatuses"]
                  if s["__typename"] == "AssetPartitionsStatusCounts"}
        assert {a: counts.get(a) for a in expected} == {a: (len(v), len(v)) for a, v in expected.items()}, context
    else:  # a job backfill: the page shows "n / n partitions"
        assert shown["numPartitions"] == len(selected), context


def _write_config(world: dict, **changes) -> None:
    model = {"model": "openai/fake-model", "api_base": world["server"].base_url, "api_key_env": KEY_VAR}
    cfg = {"corpus": str(world["corpus"]), "data_root": str(world["data"]), "methods": [M1, M2],
           "generator": model, "judges": [model], "builder": model, "premise_judge": model,
           "automation_interval_s": 5}
    cfg.update(changes)
    world["config"].write_text(yaml.safe_dump(cfg))


def _cli_run(world: dict, *args: str) -> str:
    """``interviewsim run`` as a user runs it, waited for by pid (``run_cli``); nothing of it may outlive it."""
    result = run_cli(["run", "--config", str(world["config"]), *args], env=world["env"], cwd=world["tmp"])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert result.left == [], f"processes of the run outlived it: {result.left}"
    return result.stdout


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ui_routes")
    corpus = tmp / "corpus"
    for pid in PEOPLE:
        write_person(corpus, pid)
    env = ui_env(tmp)
    with FakeModelServer(tmp) as server:
        w = {"tmp": tmp, "corpus": corpus, "data": tmp / "data", "config": tmp / "interviewsim.yaml",
             "server": server, "env": env}
        _write_config(w)
        registered = run_cli(["register", "--corpus", str(corpus)], env=env, cwd=tmp, timeout_s=300)
        assert registered.returncode == 0, registered.stderr
        with DagsterUI(env, cwd=tmp, log=tmp / "ui.log") as ui:
            w["ui"] = ui
            ui.set_sensor_running(AUTOMATION_SENSOR, False)
            wait_for("runs to finish", ui.idle, WAIT_S)
            yield w
        (tmp / "routes_tags.json").write_text(json.dumps(TAGS, indent=1))
        print(f"\nroute tags: {tmp / 'routes_tags.json'}")


@pytest.mark.timeout(1800)  # includes starting dagster dev and the whole graph's first run (load avg 20: ~9 min)
def test_materialize_all(world):
    ui = world["ui"]
    # what the asset graph's "Materialize all" sends: the materialisable assets (not personality_sources, external)
    keys = [n["assetKey"] for n in ui.gql("{ assetNodes { assetKey { path } isMaterializable } }")["assetNodes"]
            if n["isMaterializable"]]
    _check_route(world, "materialize_all", {"assetSelection": keys, "allPartitions": True},
                 PER_CELL, CELLS, also={a: set(PEOPLE) for a in PER_PERSON})
    assert ui.materializations("leaderboard") and ui.materializations("report")
    # The run count docs/DESIGN.md explains (issue 33: 15 runs where the README said four): at least 4 + M
    # (plan; the personality stage; one P x M run per method, as Dagster ranges a 2-D subset per method;
    # personality_scores; leaderboard + report), M more per daemon tick that found a stage partly written.
    runs = ui.runs_of_backfill(TAGS["materialize_all"][0]["dagster/backfill"])
    per_method = [r for r in runs if set(r["assets"]) & set(PER_CELL)]
    assert len(runs) >= 4 + len((M1, M2)) and len(per_method) % len((M1, M2)) == 0, [r["assets"] for r in runs]
    for r in per_method:  # each P x M run covers one method, every personality
        start, end = r["tags"]["dagster/asset_partition_range_start"], r["tags"]["dagster/asset_partition_range_end"]
        assert start.split("|")[0] == end.split("|")[0] and {start, end} == {f"{start.split('|')[0]}|{p}" for p in PEOPLE}


def test_job_page_backfill_of_one_method_over_all_personalities(world):
    selected = {f"{M2}|{p}" for p in PEOPLE}
    _check_route(world, "job_page_method", world["ui"].job_page_backfill_params(PXM_JOB, sorted(selected)),
                 PER_CELL, selected)


def test_job_page_backfill_of_all_methods_for_one_personality(world):
    selected = {f"{m}|{P1}" for m in (M1, M2)}
    _check_route(world, "job_page_personality", world["ui"].job_page_backfill_params(PXM_JOB, sorted(selected)),
                 PER_CELL, selected)


def test_job_page_backfill_of_one_cell(world):
    selected = {f"{M1}|{P2}"}
    _check_route(world, "job_page_cell", world["ui"].job_page_backfill_params(PXM_JOB, sorted(selected)),
                 PER_CELL, selected)


def test_catalog_backfill_of_several_assets(world):
    selected = {f"{M2}|{P2}", f"{M1}|{P2}"}
    params = {"assetSelection": [{"path": [a]} for a in PER_CELL], "partitionNames": sorted(selected),
              "fromFailure": False, "tags": []}
    _check_route(world, "catalog", params, PER_CELL, selected)


def test_asset_page_backfill_of_one_asset(world):
    selected = {f"{M1}|{p}" for p in PEOPLE}
    params = {"assetSelection": [{"path": ["generations"]}], "partitionNames": sorted(selected),
              "fromFailure": False, "tags": []}
    _check_route(world, "asset_page", params, ("generations",), selected)


def test_partitions_tab_one_partition(world):
    selected = {f"{M2}|{P1}"}
    params = {"assetSelection": [{"path": ["method_scores"]}], "partitionNames": sorted(selected),
              "fromFailure": False, "tags": []}
    _check_route(world, "partitions_tab", params, ("method_scores",), selected)


def test_cli_run_beside_the_ui(world):
    ui = world["ui"]
    time.sleep(1.1)
    t0 = time.time()
    _cli_run(world, "--personalities", P2, "--methods", M1, "--assets", "generations", "--force")
    runs = [r for r in ui.runs() if r["creationTime"] >= t0]
    _record("cli_run", runs)
    assert _written(world, "generations", t0) == {f"{M1}|{P2}"}
    assert _materialised(ui, "generations", t0) == {f"{M1}|{P2}"}
    assert {a: _written(world, a, t0) for a in PER_CELL if a != "generations"} == {
        a: set() for a in PER_CELL if a != "generations"}


def test_checks_show_each_partitions_verdict(world):
    """The checks sidebar and group graph read per-partition statuses: none may be left 'Skipped'."""
    checks = world["ui"].gql("""{ assetNodeOrError(assetKey: {path: ["generations"]}) { ... on AssetNode {
        assetChecksOrError { ... on AssetChecks { checks { name partitionStatuses { __typename
        ... on AssetCheckMultiPartitionStatuses { primaryDimensionName ranges { primaryDimStartKey primaryDimEndKey
        secondaryDim { __typename ... on AssetCheckDefaultPartitionStatuses { succeededPartitions skippedPartitions
        failedPartitions } } } } } } } } } } }""")
    statuses = checks["assetNodeOrError"]["assetChecksOrError"]["checks"]
    assert len(statuses) == 4
    order = {"method": [M1, M2], "personality": list(PEOPLE)}  # each dimension's partitions, in Dagster's order
    for c in statuses:
        multi = c["partitionStatuses"]
        primary = order[multi["primaryDimensionName"]]
        by_status: dict[str, set[str]] = {}
        for r in multi["ranges"]:  # run-length encoded: one range spans every primary key start .. end
            keys = primary[primary.index(r["primaryDimStartKey"]):primary.index(r["primaryDimEndKey"]) + 1]
            for status in ("succeededPartitions", "skippedPartitions", "failedPartitions"):
                for second in r["secondaryDim"][status]:
                    by_status.setdefault(status, set()).update(
                        f"{k}|{second}" if primary is order["method"] else f"{second}|{k}" for k in keys)
        assert by_status == {"succeededPartitions": CELLS}, (c["name"], multi["ranges"])


def test_terminal_at_info_and_automation_badge_on(world):
    ui = world["ui"]
    lines = ui.output().splitlines()
    debug = [line for line in lines if " - DEBUG - " in line]
    assert len(lines) > 20 and not debug, f"{len(debug)} of {len(lines)} terminal lines are DEBUG: {debug[:5]}"
    # The job page's badge reads this instance switch; the automation sensor is what runs automation.
    assert ui.gql("{ instance { autoMaterializePaused useAutoMaterializeSensors } }")["instance"] == {
        "autoMaterializePaused": False, "useAutoMaterializeSensors": True}


CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]


def _backfill_ids(ui: DagsterUI) -> set[str]:
    data = ui.gql("{ partitionBackfillsOrError(limit: 100) { ... on PartitionBackfills { results { id } } } }")
    return {b["id"] for b in data["partitionBackfillsOrError"]["results"]}


@pytest.mark.browser
def test_job_page_method_backfill_in_chromium(world):
    """The same route clicked in headless Chromium: method chrono-100, personality All, Launch backfill;
    the backfill page's partition count and status must match what was written."""
    sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    ui = world["ui"]
    selected = {f"{M2}|{p}" for p in PEOPLE}
    known = _backfill_ids(ui)
    time.sleep(1.1)
    t0 = time.time()
    base = f"http://127.0.0.1:{ui.port}"
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(120_000)
            page.goto(f"{base}/locations/interviewsim/jobs/{PXM_JOB}")
            page.get_by_role("button", name="Materialize all").first.click()
            dialog = page.get_by_role("dialog")
            dialog.get_by_text("Select a partition or create one").first.click()
            page.get_by_text(M2, exact=True).filter(visible=True).last.click()  # not MiddleTruncate's hidden copy
            dialog.get_by_role("button", name="All").nth(1).click()  # personality: All
            dialog.get_by_text(f"{len(selected)} partitions").first.wait_for()
            dialog.get_by_role("button", name="Launch backfill").click()
            new = wait_for("the backfill to be created", lambda: _backfill_ids(ui) - known, 120)
            (backfill_id,) = new
            shown = _finish(ui, backfill_id)
            page.goto(f"{base}/runs/b/{backfill_id}")  # the backfill page (Dagster 1.13's URL)
            page.get_by_text("Partition selection").first.wait_for()
            page.wait_for_timeout(3000)
            text = page.locator("body").inner_text()
        finally:
            browser.close()
    tags = _record("job_page_method_chromium", ui.runs_of_backfill(backfill_id))
    written = {a: _written(world, a, t0) for a in PER_CELL}
    context = f"backfill page: {' / '.join(line for line in text.splitlines() if 'partition' in line.lower())}; " \
              f"GraphQL {shown['status']} {shown['numPartitions']}; run tags {tags}"
    events = {a: _materialised(ui, a, t0) for a in PER_CELL}
    assert shown["isAssetBackfill"] is False and shown["numPartitions"] == len(selected), context
    assert shown["status"] == "COMPLETED_SUCCESS", context
    assert f"{len(selected)} partitions" in text, context
    n = len(selected)  # the page's table: partitions targeted, in progress, succeeded, failed
    assert re.search(rf"(^|\s){n}\s+0\s+{n}\s+0(\s|$)", text), context
    assert written == {a: selected for a in PER_CELL}, f"written {written}; {context}"
    assert events == {a: selected for a in PER_CELL}, f"materialisation events {events}; {context}"


def test_cli_run_beside_running_automation_calls_only_its_own_method(world):
    ui, server = world["ui"], world["server"]
    for f in (world["data"] / ".cache").glob("llm.sqlite*"):
        f.unlink()  # cold cache: any call automation makes reaches the server
    ui.set_sensor_running(AUTOMATION_SENSOR, True)
    t0 = time.time()
    before = len(server.requests())
    _cli_run(world, "--methods", M1, "--force")
    cli_done, cli_calls = time.time(), len(server.requests()) - before
    wait_for("three automation ticks", lambda: len(ui.finished_ticks_after(AUTOMATION_SENSOR, cli_done)) >= 3, WAIT_S)
    wait_for("runs to finish", ui.idle, WAIT_S)
    ui.set_sensor_running(AUTOMATION_SENSOR, False)
    extra = len(server.requests()) - before - cli_calls
    by_sensor = [r for r in ui.runs() if r["creationTime"] >= t0 and r["tags"].get("dagster/sensor_name") == AUTOMATION_SENSOR]
    _record("automation_after_cli", by_sensor)
    assert cli_calls > 0
    assert (extra, by_sensor) == (0, []), f"automation made {extra} model calls in {len(by_sensor)} runs after a " \
                                           f"CLI run that made {cli_calls}"
