"""``interviewsim run`` makes its calls in one worker process while its runs record them (issue 21).

Each test runs the command as a user does (a subprocess) against a fake OpenAI-compatible provider
on 127.0.0.1 and reads the Dagster instance it wrote:

- the worker path records what the stage-after-stage path records: the same asset partitions, the
  same metadata names, and it sends the same calls;
- ``kill -9`` of the command takes its worker down with it, and the next run finishes without
  paying again for a call that had been answered;
- an error in the worker fails the run that waits for the partition, naming the error, and stops there.
"""

from __future__ import annotations

import collections
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest
from dg_helpers import PEOPLE, read_until, write_person

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.offline.stand_in import offline_reply

CLI = Path(sys.executable).parent / "interviewsim"
C = 4
"""Calls in flight per model: at most this many can be cut off by a kill, per model."""


def _config(tmp: Path, name: str, base_url: str, data: Path) -> Path:
    def model(m: str) -> dict:
        return {"model": m, "api_base": base_url, "max_concurrency": C, "timeout_s": 20, "max_retries": 1}

    cfg = {"corpus": str(tmp / "corpus"), "data_root": str(data), "cache_path": str(data / "llm.sqlite"),
           "methods": ["simple", "chrono-100"], "generator": model("openai/gen"), "builder": model("openai/builder"),
           "premise_judge": model("openai/premise"), "judges": [model("openai/judge")], "max_cost_usd": None}
    path = tmp / f"{name}.yaml"
    path.write_text(json.dumps(cfg))
    return path


def _start(cfg: Path, home: Path, *flags: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERVIEWSIM_")}
    env.update(DAGSTER_HOME=str(home), OPENAI_API_KEY="sk-test-worker", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return subprocess.Popen([str(CLI), "run", "--config", str(cfg), "--yes", *flags], env=env, cwd=cfg.parent,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _finish(proc: subprocess.Popen, timeout: float = 600) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
        return out
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _stored(home: Path) -> dict[tuple[str, str | None], tuple[int, dict]]:
    """(asset, partition) -> the storage id and metadata of its newest materialisation, from the instance on
    disk."""
    os.environ["DAGSTER_HOME"] = str(home)
    seen: dict[tuple[str, str | None], tuple[int, dict]] = {}
    with dg.DagsterInstance.get() as instance:
        for key in instance.get_asset_keys():
            records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=10_000).records
            for rec in reversed(records):  # oldest first: the newest of a partition wins
                mat = rec.asset_materialization
                seen[(key.to_user_string(), mat.partition)] = (rec.storage_id, dict(mat.metadata))
    return seen


def _recorded(home: Path) -> dict[tuple[str, str | None], set[str]]:
    return {k: set(meta) for k, (_id, meta) in _stored(home).items()}


def _bodies(log: list[dict], since: int = 0) -> list[str]:
    return [e["body"] for e in log[since:] if e["path"].endswith("/chat/completions") and e.get("status") == 200]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    for pid in PEOPLE:
        write_person(tmp_path / "corpus", pid)
    return tmp_path / "corpus"


@pytest.mark.slow
def test_the_worker_records_what_the_runs_in_process_record_and_sends_the_same_calls(corpus, tmp_path):
    with FakeOpenAIServer(FakeServerConfig(reply=offline_reply)) as srv:
        out = _finish(_start(_config(tmp_path, "worker", srv.base_url, tmp_path / "w"), tmp_path / "home_w"))
        assert "exit code 0" in out, out
        assert "calls: one worker process" in out, out
        worker_calls = sorted(_bodies(srv.log))
        n = len(srv.log)
        out2 = _finish(_start(_config(tmp_path, "inproc", srv.base_url, tmp_path / "p"), tmp_path / "home_p",
                              "--in-process"))
        assert "exit code 0" in out2, out2
        assert "calls: one worker process" not in out2
        in_process_calls = sorted(_bodies(srv.log, n))
    assert worker_calls and worker_calls == in_process_calls  # the selection, nothing more, nothing less
    for data in (tmp_path / "w", tmp_path / "p"):  # issue 45: the cache closed cleanly, the log checkpointed
        assert not [f.name for f in data.iterdir() if f.name.startswith("llm.sqlite") and f.name != "llm.sqlite"]
    worker, in_process = _recorded(tmp_path / "home_w"), _recorded(tmp_path / "home_p")
    assert set(worker) == set(in_process)  # one materialisation per asset partition, the same ones
    assert len([k for k in worker if k[0] == "generations"]) == len(PEOPLE) * 2
    for key, names in in_process.items():
        assert names == worker[key], key  # the same metadata (counts, preview, split version, step totals)
    assert "split_version" in worker[("generations", f"chrono-100|{PEOPLE[0]}")]
    # The worker sends its tables; the run computes their metadata, reading from the data root the inputs a
    # presenter needs (runner.stored_inputs): the same values as made in process.
    values_w, values_p = _stored(tmp_path / "home_w"), _stored(tmp_path / "home_p")
    for key, name in [*((("personality_scores", p), "methods_present") for p in PEOPLE),
                      (("leaderboard", None), "partitions_read"), (("leaderboard", None), "leaderboard"),
                      (("premise_verdicts", PEOPLE[0]), "pass_rate"), (("generations", f"chrono-100|{PEOPLE[0]}"), "rows")]:
        assert values_w[key][1][name] == values_p[key][1][name], (key, name)
    assert "step_calls_made" in worker[("generations", f"chrono-100|{PEOPLE[0]}")]
    # Runs record side by side, but a P x M partition is stored after its personality's partitions (Dagster reads
    # the inputs' data versions when it stores one: recorded first, it would show stale once its split is stored).
    stored = _stored(tmp_path / "home_w")
    for (asset, partition), (storage_id, _names) in stored.items():
        if partition and "|" in partition:
            person = partition.split("|")[1]
            assert storage_id > stored[("heldout_split", person)][0], (asset, partition)
            assert storage_id > stored[("premise_verdicts", person)][0], (asset, partition)
    for person in PEOPLE:  # the summaries are cut in blocks too (launch.halving_blocks), after their P x M blocks
        assert stored[("personality_scores", person)][0] > max(
            sid for (asset, partition), (sid, _n) in stored.items() if asset == "method_scores"
            and partition.endswith(f"|{person}")), person


def test_the_runs_are_cut_in_halving_blocks_of_personalities():
    """Half of the personalities left each time: the last block, recorded after the worker's last call, holds one."""
    from interviewsim_dagster.launch import halving_blocks

    assert [halving_blocks(n) for n in (1, 2, 3, 6, 20)] == [[1], [1, 1], [2, 1], [3, 2, 1], [10, 5, 3, 1, 1]]
    assert all(sum(halving_blocks(n)) == n and halving_blocks(n)[-1] == 1 for n in range(1, 200))


def test_a_block_holds_at_most_most_personalities_and_keeps_the_halving_tail():
    """Dagster's planned check rows grow with the square of a run's partitions (launch.RUN_PARTITIONS)."""
    from interviewsim_dagster.launch import halving_blocks

    assert halving_blocks(20, 4) == [4, 4, 4, 4, 2, 1, 1]
    assert halving_blocks(1000, 23) == [23] * 42 + [17, 9, 4, 2, 1, 1]
    for n in range(1, 300):
        for most in (1, 2, 7, 23):
            sizes = halving_blocks(n, most)
            assert sum(sizes) == n and max(sizes) <= most and sizes[-1] == 1


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (dead, not reaped by its killed parent yet) is gone for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_kill_9_takes_the_worker_down_and_the_rerun_pays_no_answered_call_again(corpus, tmp_path):
    with FakeOpenAIServer(FakeServerConfig(reply=offline_reply, latency_s=0.05)) as srv:
        cfg = _config(tmp_path, "cfg", srv.base_url, tmp_path / "data")
        proc = _start(cfg, tmp_path / "home")
        lines, pmx, reader = read_until(proc, "personality_method_assets [")
        try:
            assert pmx.wait(300), "".join(lines)
            time.sleep(2)  # the worker is making P x M calls now
            answered_before = len(_bodies(srv.log))
            os.kill(proc.pid, signal.SIGKILL)  # the command only: its worker must notice on its own
            proc.wait(30)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
        reader.join(10)
        found = re.search(r"one worker process \(pid (\d+)\)", "".join(lines))
        assert found, "".join(lines)
        worker = int(found.group(1))
        deadline = time.monotonic() + 15
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(worker), "the worker outlived its command"
        n = len(srv.log)
        assert answered_before > 0
        out = _finish(_start(cfg, tmp_path / "home"))
        assert "exit code 0" in out, out
        first, second = _bodies(srv.log[:n]), _bodies(srv.log, n)
    again = collections.Counter(b for b in second if b in set(first))
    # Only the calls cut off in flight by the kill go out again (their answers never reached the cache).
    assert sum(again.values()) <= 4 * C, sum(again.values())
    assert _recorded(tmp_path / "home").keys() >= {("generations", f"simple|{p}") for p in PEOPLE}


@pytest.mark.slow
def test_an_error_in_the_worker_fails_the_run_that_waits_for_it_and_names_it(corpus, tmp_path):
    data = tmp_path / "data"
    (data / "generations").parent.mkdir(parents=True)
    (data / "generations").write_text("a file where the generations folder goes")  # the worker cannot write there
    with FakeOpenAIServer(FakeServerConfig(reply=offline_reply)) as srv:
        out = _finish(_start(_config(tmp_path, "cfg", srv.base_url, data), tmp_path / "home"))
    assert "exit code 0" not in out, out
    # The worker streams every stage at once: each run waiting on a partition it did not make fails, naming the
    # error in one line (its traceback went to the terminal once), and the worker is gone: nothing more is paid for.
    assert re.search(r"step personality_method_stage failed: .*the action's worker ended: NotADirectoryError: ", out), out
    assert out.count("Traceback (most recent call last)") >= 1
    assert "exit code 1: a Dagster run (a step) failed" in out
    assert not [k for k in _recorded(tmp_path / "home") if k[0] == "generations"]
