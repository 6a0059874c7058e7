"""Pools are named as dagster.yaml documents: one per provider, a joint one for a multi-provider judge set."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from dg_helpers import make_config

from interviewsim_dagster import check_states
from interviewsim_dagster.definitions import build_definitions

REPO = Path(__file__).resolve().parents[2]


def test_pool_names_match_the_documented_scheme(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="simple", generator="openai/gpt-4.1-mini",
                      judges="anthropic/claude-sonnet-4,openai/gpt-4.1", builder="offline/extractive")
    graph = build_definitions(cfg).resolve_asset_graph()

    def pools(name: str) -> set[str]:
        return set(graph.get(dg.AssetKey(name)).pools)

    # One pool per op (Dagster) and one op per stage: a stage whose models span several providers takes the
    # joint, sorted name (the per-personality stage: builder offline, judges anthropic + openai).
    for pxm in ("generations", "mcq_answers", "content_similarity", "factual_consistency", "generated_personality"):
        assert pools(pxm) == {"llm_anthropic_openai"}, pxm
    assert pools("atomic_items") == pools("reference_personality") == {"llm_anthropic_offline_openai"}
    doc = (REPO / "dagster.yaml").read_text()
    assert '"llm_anthropic_openai"' in doc
    assert "dagster instance concurrency set llm_openai" in doc
    assert "dagster instance concurrency set llm_anthropic_openai" in doc


def test_a_sigkilled_run_does_not_hold_its_pool_slot_and_waiting_is_reported(tiny_corpus, tmp_path, monkeypatch):
    """With a pool limit of 1, a run killed while holding the slot used to block every later run (0 calls, no word)."""
    import os
    import shutil
    import signal
    import subprocess
    import sys
    import time

    from typer.testing import CliRunner

    from interviewsim_cli import app
    from interviewsim_dagster.slots import SlotWatcher

    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    args = ["run", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"), "--methods", "simple",
            "--personalities", "TINY_ALDER", "--assets", "heldout_split,atomic_items",
            "--generator", "offline/extractive", "--judges", "offline/extractive", "--builder", "offline/extractive",
            "--premise-judge", "offline/extractive"]
    with dg.DagsterInstance.get() as instance:  # `dagster instance concurrency set llm_offline 1`
        instance.event_log_storage.set_concurrency_slots("llm_offline", 1)
    # A run inside its model-calling step (holding the llm_offline slot) is SIGKILLed. ``--in-process``: the
    # runs make their calls and take pool slots there; the worker path's runs only record, without a pool.
    script = (
        "import sys, time\n"
        "from interviewsim_dagster import batching\n"
        "batching.run_calls = lambda *a, **k: time.sleep(600)\n"
        "from interviewsim_cli import app\n"
        "app(sys.argv[1:])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, *args, "--in-process"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    try:
        with dg.DagsterInstance.get() as instance:
            deadline = time.monotonic() + 120
            while not instance.event_log_storage.get_concurrency_info("llm_offline").claimed_slots:
                assert proc.poll() is None and time.monotonic() < deadline, "the first run never took the slot"
                time.sleep(0.5)
            assert SlotWatcher(instance, print).poll() == []  # no run of this process waits
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    with dg.DagsterInstance.get() as instance:
        assert instance.event_log_storage.get_concurrency_info("llm_offline").claimed_slots  # still held by the dead run
        [killed] = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))

    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"run {killed.run_id[:8]}" in result.output and "is gone: marked failed" in result.output
    assert "pool slots are freed" in result.output
    assert time.monotonic() - started < 100
    with dg.DagsterInstance.get() as instance:
        assert instance.get_run_by_id(killed.run_id).status == dg.DagsterRunStatus.FAILURE
        assert not instance.event_log_storage.get_concurrency_info("llm_offline").claimed_slots


def test_a_run_waiting_for_a_slot_says_so(tiny_corpus, tmp_path, monkeypatch):
    """A live run holds the only slot: the next run's output names the pool and the holder while it waits."""
    from interviewsim_dagster import slots

    with dg.instance_for_test(overrides={"concurrency": {"pools": {"granularity": "op"}}}) as instance:
        storage = instance.event_log_storage
        storage.set_concurrency_slots("llm_offline", 1)
        assert storage.claim_concurrency_slot("llm_offline", "holder-run-0001", "atomic_items").is_claimed
        mine = instance.add_run(dg.DagsterRun(job_name="personality_assets", run_id="mine-run-0001",
                                              status=dg.DagsterRunStatus.STARTED, tags=slots.owner_tags()))
        assert not storage.claim_concurrency_slot("llm_offline", mine.run_id, "atomic_items").is_claimed
        reported: list[str] = []
        lines = slots.SlotWatcher(instance, reported.append).poll()
        assert lines == reported and len(lines) == 1
        assert "waiting for a slot in pool llm_offline (limit 1; held by run(s) holder-r" in lines[0]
        assert "atomic_items" in lines[0]


def test_the_worker_paths_runs_take_no_pool_slot_and_its_event_log_keeps_one_engine_per_file(tiny_corpus, tmp_path,
                                                                                             monkeypatch):
    """``interviewsim run``'s stage runs only record what its worker made: with every llm pool at 0 slots they
    finish (a run taking a slot would wait for ever), while the pool's definition stays on the UI's assets.
    The instance is the repository's ``dagster.yaml`` (the engine-keeping SQLite event log, issue 30)."""
    import os
    import shutil
    import subprocess
    import sys

    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))  # dagster.yaml reads it
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("INTERVIEWSIM_CONFIG", None)
    with dg.DagsterInstance.get() as instance:
        storage = instance.event_log_storage
        assert type(storage).__name__ == "EngineKeepingSqliteEventLogStorage"
        assert storage._base_dir == str(home / "history" / "runs")  # Dagster's own layout
        storage.set_concurrency_slots("llm_offline", 0)
    args = ["run", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"), "--methods", "simple",
            "--personalities", "TINY_ALDER", "--assets", "heldout_split,atomic_items",
            "--generator", "offline/extractive", "--judges", "offline/extractive", "--builder", "offline/extractive",
            "--premise-judge", "offline/extractive"]
    proc = subprocess.Popen([str(Path(sys.executable).parent / "interviewsim"), *args], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    assert "one worker process" in out and "waiting for a slot" not in out
    assert "the UI's partition and check statuses brought up to date" in out
    with dg.DagsterInstance.get() as instance:
        mats = instance.fetch_materializations(dg.AssetKey("atomic_items"), limit=10).records
        assert [m.partition_key for m in mats] == ["TINY_ALDER"]
        assert not instance.event_log_storage.get_concurrency_info("llm_offline").claimed_slots
        # what the UI reads, left current by the run (launch.leave_status_current): no first read pays for it
        record = instance.get_asset_records([dg.AssetKey("atomic_items")])[0]
        assert record.asset_entry.cached_status.latest_storage_id == mats[0].storage_id
        graph = build_definitions(make_config(tiny_corpus, tmp_path / "d2", methods="simple")).resolve_asset_graph()
        checks = [k for k in graph.asset_check_keys if k.asset_key == dg.AssetKey("atomic_items")]
        stored = instance.run_storage.get_cursor_values({check_states.state_key(k) for k in checks})
        assert checks and len(stored) == len(checks)
    assert set(build_definitions(make_config(tiny_corpus, tmp_path / "d2", methods="simple")).resolve_asset_graph()
               .get(dg.AssetKey("atomic_items")).pools) == {"llm_offline"}


def test_the_event_log_remembers_a_table_it_found_and_looks_again_for_a_missing_one(tmp_path, monkeypatch):
    """Dagster's ``has_table`` opens a new engine per call, and every dynamic-partition look-up asks it (issue
    30): the instance's event log asks Dagster once per table found, and again each time for a table not there."""
    from dagster._core.storage.event_log import SqliteEventLogStorage

    from interviewsim_dagster.event_log_storage import EngineKeepingSqliteEventLogStorage

    storage = EngineKeepingSqliteEventLogStorage(str(tmp_path / "runs"))
    asked: list[str] = []
    real = SqliteEventLogStorage.has_table
    monkeypatch.setattr(SqliteEventLogStorage, "has_table", lambda self, name: asked.append(name) or real(self, name))
    assert [storage.has_table("dynamic_partitions") for _ in range(3)] == [True] * 3
    assert [storage.has_table("no_such_table") for _ in range(2)] == [False] * 2
    assert asked == ["dynamic_partitions", "no_such_table", "no_such_table"]
    storage.add_dynamic_partitions("personality", ["A"])
    assert storage.has_dynamic_partition("personality", "A") and not storage.has_dynamic_partition("personality", "B")
    assert asked.count("dynamic_partitions") == 1


def test_the_event_log_remembers_dynamic_keys_a_second_and_sees_its_own_changes_at_once(tmp_path, monkeypatch):
    """``add_asset_metadata`` looks up every key of the run's range per partition recorded (issue 43): the keys are
    read once a second; this storage's own adds and deletes are seen at once, another process's within the second."""
    from dagster._core.storage.event_log import SqliteEventLogStorage

    from interviewsim_dagster import event_log_storage
    from interviewsim_dagster.event_log_storage import EngineKeepingSqliteEventLogStorage

    clock = [100.0]
    monkeypatch.setattr(event_log_storage.time, "monotonic", lambda: clock[0])
    mine = EngineKeepingSqliteEventLogStorage(str(tmp_path / "runs"))
    other = EngineKeepingSqliteEventLogStorage(str(tmp_path / "runs"))  # another process on the same files
    reads: list[str] = []
    real = SqliteEventLogStorage.get_dynamic_partitions
    monkeypatch.setattr(SqliteEventLogStorage, "get_dynamic_partitions",
                        lambda self, name: reads.append(name) or real(self, name))
    mine.add_dynamic_partitions("personality", ["A", "B"])
    assert [mine.has_dynamic_partition("personality", k) for k in ("A", "B", "C", "A")] == [True, True, False, True]
    assert mine.get_dynamic_partitions("personality") == ["A", "B"] and len(reads) == 1
    other.add_dynamic_partitions("personality", ["C"])
    assert not mine.has_dynamic_partition("personality", "C")  # within the second: the keys read before
    clock[0] += event_log_storage.DYNAMIC_KEYS_TTL_S
    assert mine.has_dynamic_partition("personality", "C") and len(reads) == 2
    mine.delete_dynamic_partition("personality", "A")
    assert not mine.has_dynamic_partition("personality", "A")  # its own change, at once
    assert mine.get_dynamic_partitions("personality") == ["B", "C"]
    mine.get_dynamic_partitions("personality").append("D")  # a caller's copy: the remembered keys stay
    assert not mine.has_dynamic_partition("personality", "D")


def test_the_event_log_syncs_its_wal_files_at_checkpoints_only(tmp_path):
    """WAL with ``synchronous=NORMAL`` (1) on the instance's event log connections, not SQLite's FULL (2): a
    commit no longer waits for a sync of the disk (issue 30); a file not in WAL mode keeps FULL."""
    import sqlite3

    from interviewsim_dagster.event_log_storage import EngineKeepingSqliteEventLogStorage, _sync_at_checkpoints

    storage = EngineKeepingSqliteEventLogStorage(str(tmp_path / "runs"))
    storage.add_dynamic_partitions("personality", ["A"])  # the index file, made and written
    with storage.run_connection("r1") as conn:  # a file this storage makes: WAL is turned on after it opened one
        conn.exec_driver_sql("SELECT 1")
    for connection in (storage.index_connection, lambda: storage.run_connection("r1")):
        with connection() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA synchronous").scalar() == 1
    other = sqlite3.connect(tmp_path / "other.db")
    assert other.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    _sync_at_checkpoints(other, None)
    assert other.execute("PRAGMA synchronous").fetchone()[0] == 2
    other.close()


def test_the_event_log_keeps_its_files_open_so_a_transaction_does_not_checkpoint(tmp_path, monkeypatch):
    """A transaction's connection is not the file's last (issue 30): SQLite does not checkpoint and delete the WAL
    when it closes (a checkpoint and its syncs per transaction, 21.8 ms against 0.17 ms), and the next transaction
    reuses it; at most ``KEPT_FILES`` files stay open, the oldest closed first; ``wipe`` closes them before it
    deletes the files, and the storage works on afterwards."""
    from interviewsim_dagster import event_log_storage
    from interviewsim_dagster.event_log_storage import EngineKeepingSqliteEventLogStorage

    monkeypatch.setattr(event_log_storage, "KEPT_FILES", 3)
    runs = tmp_path / "runs"
    storage = EngineKeepingSqliteEventLogStorage(str(runs))
    storage.add_dynamic_partitions("personality", ["A"])
    assert (runs / "index.db-wal").exists()  # written, closed, and still in the WAL: no checkpoint on close
    for run in ("r1", "r2", "r3"):
        with storage.run_connection(run) as conn:
            conn.exec_driver_sql("SELECT 1")
    assert list(storage._engines) == ["r1", "r2", "r3"]  # the index, least recently used, was closed
    used = []
    for _ in range(2):  # one connection per file, reused: no connect and pragmas per transaction
        with storage.run_connection("r3") as conn:
            used.append(conn.connection.dbapi_connection)
    assert used[0] is used[1]
    storage.add_dynamic_partitions("personality", ["B"])
    assert list(storage._engines) == ["r2", "r3", "index"]
    storage.wipe()
    assert list(storage._engines) == ["index"] and not (runs / "r2.db").exists()  # the index is emptied, not deleted
    storage.add_dynamic_partitions("personality", ["C"])
    assert storage.get_dynamic_partitions("personality") == ["C"]
    storage.dispose()
    assert not storage._engines
