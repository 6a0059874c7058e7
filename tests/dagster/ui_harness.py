"""A real ``interviewsim ui`` (``dagster dev``: webserver + daemon) and a fake model server, each in
its own process group, for tests that drive the UI through GraphQL as a user's browser would.

Why processes and not in-process fakes: the behaviours under test (the automation sensor's ticks,
runs launched by the daemon in their own processes, what a model server is asked) only exist in
the deployed shape. Both processes listen on 127.0.0.1 only and are stopped by process group
however the test ends (``with`` blocks; a failed start stops what it started).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from interviewsim_core.llm.testing import free_port
from interviewsim_core.offline.stand_in import contract_of

REPO = Path(__file__).resolve().parents[2]
KEY_VAR = "FAKE_MODEL_KEY"
"""The variable the UI tests' models read their key from (``api_key_env``); the fake server takes any key."""
BIN = Path(sys.executable).parent
LOCATION = "interviewsim"
UNFINISHED_RUN_STATUSES = ("QUEUED", "NOT_STARTED", "STARTING", "STARTED")
REPOSITORY = "__repository__"


def wait_for(what: str, probe: Callable[[], Any], timeout_s: float, every_s: float = 1.0) -> Any:
    """Poll ``probe`` until it returns something truthy; fail naming ``what`` after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = probe()
        if last:
            return last
        time.sleep(every_s)
    raise AssertionError(f"timed out after {timeout_s:.0f} s waiting for {what}; last value: {last!r}")


def _stop_group(proc: subprocess.Popen, sig: int = signal.SIGTERM, grace_s: float = 15.0) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # whatever of the group is left, children included
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def descendants(pid: int) -> set[int]:
    """Every living process below ``pid`` (whatever process group or session it moved to)."""
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True) if _living(p)}
    except psutil.NoSuchProcess:
        return set()


def alive(pids: Iterable[int]) -> set[int]:
    return {pid for pid in pids if psutil.pid_exists(pid) and _living(psutil.Process(pid))}


def _living(p: psutil.Process) -> bool:
    try:
        return p.status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.NoSuchProcess:
        return False


def session_members(sid: int) -> list[tuple[int, str]]:
    """(pid, command line) of every living process of session ``sid``."""
    out = []
    for p in psutil.process_iter(["status", "cmdline"]):
        if p.info["status"] in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):
            continue
        try:
            if os.getsid(p.pid) == sid:
                out.append((p.pid, " ".join(p.info["cmdline"] or []) or "?"))
        except OSError:  # ended since the listing
            continue
    return out


@dataclass
class CliResult:
    """What ``run_cli`` saw: exit code, output, and the processes of its session still alive when it exited."""

    returncode: int
    stdout: str
    stderr: str
    left: list[tuple[int, str]]


def run_cli(args: Sequence[str], *, env: dict[str, str], cwd: Path, timeout_s: float = 900) -> CliResult:
    """``interviewsim <args>`` as a user runs it, waited for by pid, never on a pipe (issue 33).

    Output goes to files, so a grandchild that keeps the command's stdout/stderr (Dagster's ``tail
    -F`` did) cannot make the wait hang; the command runs in a session of its own, and whatever of
    that session is still alive once it exited is returned (``left``) and then killed, so the caller
    can assert there was none and nothing outlives the test (``LEFT_GRACE_S`` says what may end late).
    On timeout the whole session is killed.
    """
    with tempfile.TemporaryDirectory(prefix="cli_out_") as tmp:
        out_path, err_path = Path(tmp) / "stdout", Path(tmp) / "stderr"
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen([str(BIN / "interviewsim"), *args], env=env, cwd=cwd, stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_session(proc.pid)
            proc.wait()
            raise AssertionError(f"interviewsim {' '.join(args)} still running after {timeout_s:.0f} s; killed. "
                                 f"Output:\n{out_path.read_text(errors='replace')[-3000:]}"
                                 f"{err_path.read_text(errors='replace')[-3000:]}") from None
        left = wait_for_empty_session(proc.pid, LEFT_GRACE_S)
        _kill_session(proc.pid)
        return CliResult(code, out_path.read_text(errors="replace"), err_path.read_text(errors="replace"), left)


LEFT_GRACE_S = 10.0
"""How long a process of an exited command's session may take to end by itself (Python's multiprocessing
resource tracker ends when it reads end of file from its exited parent) before it counts as left behind."""


def wait_for_empty_session(sid: int, grace_s: float) -> list[tuple[int, str]]:
    """The processes of session ``sid`` still alive after up to ``grace_s`` seconds (none: returns at once)."""
    deadline = time.monotonic() + grace_s
    left = session_members(sid)
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = session_members(sid)
    return left


def _kill_session(sid: int) -> None:
    """SIGKILL every process of session ``sid`` (what a test started there; the leader may be gone)."""
    for pid, _ in session_members(sid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class FakeModelServer:
    """``python -m interviewsim_core.llm.testing`` answering as the offline model (``offline.stand_in.offline_reply``),
    recording every request."""

    def __init__(self, workdir: Path):
        self.record = workdir / "fake_server_requests.jsonl"
        self.proc: subprocess.Popen | None = None
        self.port = 0

    def __enter__(self) -> "FakeModelServer":
        self.record.write_text("")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "interviewsim_core.llm.testing", "--latency", "0", "--reply", "interviewsim_core.offline.stand_in:offline_reply",
             "--record", str(self.record)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "tests" / "core" / "pipeline")]),
                 "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        try:
            line = self.proc.stdout.readline()  # "PORT n" once listening; EOF if it died
            if not line.startswith("PORT "):
                raise RuntimeError(f"fake model server did not start: {line!r}")
            self.port = int(line.split()[1])
        except BaseException:
            _stop_group(self.proc)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            _stop_group(self.proc, grace_s=5)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def requests(self) -> list[dict]:
        """Every request seen so far, in arrival order (``path``, ``status``, ``body``)."""
        return [json.loads(line) for line in self.record.read_text().splitlines() if line.strip()]

    def calls(self, since: int = 0) -> Counter[tuple[str, str]]:
        """The chat requests from the ``since``-th on, counted by (model name as sent, contract read off the prompt)."""
        out: Counter[tuple[str, str]] = Counter()
        for r in self.requests()[since:]:
            body = json.loads(r["body"])
            if "messages" in body:
                out[body.get("model", ""), contract_of(body["messages"])] += 1
        return out


def ui_env(tmp: Path, key: str = "sk-fake-test-key") -> dict[str, str]:
    """The environment of a UI test's own instance: none of the caller's INTERVIEWSIM_* / DAGSTER_* variables, the
    instance and the UI's config under ``tmp``, this checkout importable, litellm's local cost map, the fake key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(tmp / "dagster_home"), INTERVIEWSIM_CONFIG=str(tmp / "interviewsim.yaml"),
               PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True", **{KEY_VAR: key})
    return env


class DagsterUI:
    """``interviewsim ui`` on a free port with the given environment; GraphQL helpers for the tests."""

    def __init__(self, env: dict[str, str], cwd: Path, log: Path):
        self.env = env
        self.cwd = cwd
        self.log = log
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "DagsterUI":
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self, timeout_s: float = 300) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                [str(BIN / "interviewsim"), "ui", "--port", str(self.port)], env=self.env, cwd=self.cwd,
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        try:
            wait_for("the code location to load", self._location_loaded, timeout_s)
        except BaseException:
            self.stop()
            raise

    def stop(self, sig: int = signal.SIGTERM) -> float:
        """Signal ``interviewsim ui`` (only it: it stops its own children); returns seconds until it exited."""
        if self.proc is None:
            return 0.0
        t0 = time.monotonic()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        seconds = time.monotonic() - t0
        _stop_group(self.proc, signal.SIGKILL)
        return seconds

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    # -- GraphQL -----------------------------------------------------------------------------
    def gql(self, query: str, variables: dict | None = None, timeout_s: float = 60) -> dict:
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.port}/graphql",
            data=json.dumps({"query": query, "variables": variables or {}}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout_s) as resp:
            body = json.loads(resp.read())
        if body.get("errors"):
            raise AssertionError(f"GraphQL errors: {body['errors']}")
        return body["data"]

    def _location_loaded(self) -> bool:
        assert self.proc is not None and self.proc.poll() is None, f"interviewsim ui exited:\n{self.output()[-3000:]}"
        try:
            data = self.gql("""{ workspaceOrError { ... on Workspace { locationEntries {
                name loadStatus locationOrLoadError { __typename ... on PythonError { message } } } } } }""", timeout_s=10)
        except (OSError, urllib.error.URLError):
            return False
        for entry in data["workspaceOrError"].get("locationEntries") or []:
            if entry["name"] == LOCATION and entry["loadStatus"] == "LOADED":
                loaded = entry["locationOrLoadError"]
                assert loaded["__typename"] == "RepositoryLocation", f"code location failed to load: {loaded}"
                return True
        return False

    def reload_location(self, timeout_s: float = 300) -> None:
        self.gql(f'mutation {{ reloadRepositoryLocation(repositoryLocationName: "{LOCATION}") {{ __typename }} }}')
        wait_for("the code location to reload", self._location_loaded, timeout_s)

    def launch_backfill(self, assets: Iterable[str], partitions: Iterable[str]) -> str:
        """A UI backfill (the "Materialize selected" dialog) of ``assets`` over ``partitions``; returns its id."""
        data = self.gql(
            """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
                __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message }
                ... on InvalidSubsetError { message } } }""",
            {"p": {"assetSelection": [{"path": [a]} for a in assets], "partitionNames": list(partitions)}},
        )["launchPartitionBackfill"]
        assert data["__typename"] == "LaunchBackfillSuccess", data
        return data["backfillId"]

    def launch_backfill_params(self, params: dict) -> str:
        """``launchPartitionBackfill`` with ``params`` exactly as a page sends them; returns the backfill id."""
        data = self.gql(
            """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
                __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message }
                ... on InvalidSubsetError { message } } }""", {"p": params})["launchPartitionBackfill"]
        assert data["__typename"] == "LaunchBackfillSuccess", data
        return data["backfillId"]

    def job_page_backfill_params(self, job: str, partitions: Iterable[str]) -> dict:
        """What the job page's "Materialize all" dialog sends for a backfill (Dagster's
        ``LaunchAssetChoosePartitionsDialog``, job target): the job's assets, the partition names
        and the job's partition set, which makes it a job backfill rather than an asset backfill."""
        assets = self.gql("query($s: PipelineSelector!) { assetNodes(pipeline: $s) { assetKey { path } "
                          "isMaterializable } }", {"s": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY,
                                                         "pipelineName": job}})["assetNodes"]
        assets = [a for a in assets if a["isMaterializable"]]  # the job's sources (personality_sources) are not made
        return {"tags": [], "assetSelection": [{"path": a["assetKey"]["path"]} for a in assets],
                "partitionNames": list(partitions),
                "fromFailure": False,
                "selector": {"partitionSetName": f"{job}_partition_set",
                             "repositorySelector": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY}}}

    def launch_job_run(self, job: str) -> str:
        """What an unpartitioned job's page "Materialize all" sends (``launchPipelineExecution`` with the
        job's materialisable assets): one run, no backfill; returns its run id."""
        assets = self.gql("query($s: PipelineSelector!) { assetNodes(pipeline: $s) { assetKey { path } "
                          "isMaterializable } }", {"s": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY,
                                                         "pipelineName": job}})["assetNodes"]
        params = {"selector": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY, "pipelineName": job,
                               "assetSelection": [{"path": a["assetKey"]["path"]} for a in assets if a["isMaterializable"]]},
                  "mode": "default", "executionMetadata": {"tags": []}, "runConfigData": {}}
        data = self.gql("""mutation($p: ExecutionParams!) { launchPipelineExecution(executionParams: $p) {
            __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message }
            ... on RunConfigValidationInvalid { errors { message } } } }""", {"p": params})["launchPipelineExecution"]
        assert data["__typename"] == "LaunchRunSuccess", data
        return data["run"]["runId"]

    def run_status(self, run_id: str) -> str:
        return self.gql('query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }',
                        {"id": run_id})["runOrError"]["status"]

    def backfill(self, backfill_id: str) -> dict:
        """What the backfill page shows: status, partitions selected and their counts, asset or job backfill."""
        return self.gql('query($id: String!) { partitionBackfillOrError(backfillId: $id) { ... on PartitionBackfill { '
                        'status numPartitions isAssetBackfill partitionNames '
                        'assetBackfillData { assetBackfillStatuses { __typename '
                        '... on AssetPartitionsStatusCounts { assetKey { path } numPartitionsTargeted '
                        'numPartitionsMaterialized numPartitionsFailed } } } } } }',
                        {"id": backfill_id})["partitionBackfillOrError"]

    def runs_of_backfill(self, backfill_id: str) -> list[dict]:
        return [r for r in self.runs() if r["tags"].get("dagster/backfill") == backfill_id]

    def launch_backfill_by_asset(self, partition_by_asset: dict[str, str]) -> str:
        """One backfill of several assets, each with its own partition (assets of different partitionings)."""
        data = self.gql(
            """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
                __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message }
                ... on InvalidSubsetError { message } } }""",
            {"p": {"partitionsByAssets": [{"assetKey": {"path": [a]}, "partitions": {"ranges": [{"start": p, "end": p}]}}
                                          for a, p in partition_by_asset.items()]}},
        )["launchPartitionBackfill"]
        assert data["__typename"] == "LaunchBackfillSuccess", data
        return data["backfillId"]

    def set_sensor_running(self, sensor: str, running: bool) -> None:
        selector = {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY, "sensorName": sensor}
        if running:
            self.gql("mutation($s: SensorSelector!) { startSensor(sensorSelector: $s) { __typename } }", {"s": selector})
            return
        state = self.gql("query($s: SensorSelector!) { sensorOrError(sensorSelector: $s) { ... on Sensor { "
                         "sensorState { id selectorId } } } }", {"s": selector})["sensorOrError"]["sensorState"]
        self.gql("mutation($o: String, $i: String) { stopSensor(jobOriginId: $o, jobSelectorId: $i) { __typename } }",
                 {"o": state["id"], "i": state["selectorId"]})

    def backfill_status(self, backfill_id: str) -> str:
        return self.gql('query($id: String!) { partitionBackfillOrError(backfillId: $id) { '
                        '... on PartitionBackfill { status } } }', {"id": backfill_id}
                        )["partitionBackfillOrError"]["status"]

    def idle(self) -> bool:
        """No run of the instance is queued, starting or running."""
        return not [r for r in self.runs() if r["status"] in UNFINISHED_RUN_STATUSES]

    def wait_backfill(self, backfill_id: str, timeout_s: float) -> str:
        """Wait until the backfill has ended and no run is left unfinished; its final status."""
        status = wait_for("the backfill to finish", lambda: (s := self.backfill_status(backfill_id)).startswith(
            ("COMPLETED", "FAILED", "CANCELED")) and s, timeout_s)
        wait_for("runs to finish", self.idle, timeout_s)
        return status

    def runs(self) -> list[dict]:
        """Every run on the instance, newest first: id, status, job, tags, asset selection."""
        data = self.gql("""{ runsOrError(limit: 500) { ... on Runs { results {
            runId status jobName creationTime startTime endTime tags { key value } assetSelection { path } } } } }""")
        out = []
        for r in data["runsOrError"]["results"]:
            r["tags"] = {t["key"]: t["value"] for t in r["tags"]}
            r["assets"] = sorted("/".join(a["path"]) for a in r["assetSelection"] or [])
            out.append(r)
        return out

    def sensor_ticks(self, sensor: str, limit: int = 50) -> list[dict]:
        """The sensor's ticks, newest first: id, status, timestamp, end timestamp (None while running), run ids."""
        data = self.gql(
            """query($s: SensorSelector!, $n: Int) { sensorOrError(sensorSelector: $s) { __typename
                ... on Sensor { sensorState { ticks(limit: $n) { id status timestamp endTimestamp runIds } } } } }""",
            {"s": {"repositoryLocationName": LOCATION, "repositoryName": REPOSITORY, "sensorName": sensor}, "n": limit},
        )["sensorOrError"]
        assert data["__typename"] == "Sensor", data
        return data["sensorState"]["ticks"]

    def finished_ticks_after(self, sensor: str, t0: float) -> list[dict]:
        return [t for t in self.sensor_ticks(sensor) if t["timestamp"] > t0 and t["status"] != "STARTED"]

    def materializations(self, asset: str, after: float = 0.0) -> list[dict]:
        """Partition materialisations of ``asset`` after ``after`` (epoch s): partition, run id."""
        data = self.gql(
            """query($k: AssetKeyInput!) { assetOrError(assetKey: $k) { ... on Asset {
                assetMaterializations(limit: 1000) { partition runId timestamp } } } }""",
            {"k": {"path": [asset]}},
        )["assetOrError"]
        return [m for m in data.get("assetMaterializations") or [] if float(m["timestamp"]) / 1000 > after]

    def stale_status(self, asset: str, partition: str | None = None) -> dict:
        """Dagster's stale status of an asset (partition) and its causes (reason, category, key)."""
        data = self.gql(
            """query($k: AssetKeyInput!, $p: String) { assetNodeOrError(assetKey: $k) { ... on AssetNode {
                staleStatus(partition: $p) staleCauses(partition: $p) { reason category key { path } } } } }""",
            {"k": {"path": [asset]}, "p": partition},
        )["assetNodeOrError"]
        return data

    def partition_stats(self, asset: str) -> dict:
        """What the UI's "% filled" is computed from: numMaterialized (not being re-made), numMaterializing, numFailed, numPartitions."""
        return self.gql("""query($k: AssetKeyInput!) { assetNodeOrError(assetKey: $k) { ... on AssetNode {
            partitionStats { numMaterialized numPartitions numFailed numMaterializing } } } }""",
                        {"k": {"path": [asset]}})["assetNodeOrError"]["partitionStats"]

    def check_latest_statuses(self, asset: str) -> list[str]:
        """Each check's latest execution status (what the checks sidebar's "n / m Passed" counts)."""
        checks = self.gql("""query($k: AssetKeyInput!) { assetNodeOrError(assetKey: $k) { ... on AssetNode {
            assetChecksOrError { ... on AssetChecks { checks { executionForLatestMaterialization { status } } } } } } }""",
                          {"k": {"path": [asset]}})["assetNodeOrError"]["assetChecksOrError"]["checks"]
        return [(c["executionForLatestMaterialization"] or {}).get("status") for c in checks]

    def automation_evaluations(self, asset: str, limit: int = 50) -> list[dict]:
        """The automation sensor's evaluations of an unpartitioned asset, newest first: what its
        "Automation" tab shows (timestamp, numRequested, and each condition node's label and numTrue)."""
        return self.gql("""query($k: AssetKeyInput!, $n: Int!) { assetConditionEvaluationRecordsOrError(assetKey: $k, limit: $n) {
            ... on AssetConditionEvaluationRecords { records { evaluationId timestamp numRequested
            evaluationNodes { userLabel numTrue } } } } }""",
                        {"k": {"path": [asset]}, "n": limit})["assetConditionEvaluationRecordsOrError"]["records"]

    def should_show_nux(self) -> bool:
        return self.gql("{ shouldShowNux }")["shouldShowNux"]
