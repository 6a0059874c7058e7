"""Dagster's SQLite event log, with one SQLAlchemy engine per database file instead of one per write.

Why: ``SqliteEventLogStorage`` builds a new engine for every connection it opens, and SQLAlchemy keeps
its compiled statements in the engine, so every statement of every event was compiled again. A
partition's materialisation is about a dozen statements over two files (the run's and the index), a
check verdict as many: with the runs of an ``interviewsim run`` recording hundreds of them, that
bookkeeping was most of the time from the last model call to the command's exit (issue 30). Here
each file keeps its engine, so a statement is compiled once per process.

Its connections commit with ``PRAGMA synchronous=NORMAL`` instead of SQLite's default ``FULL``: the files
are in WAL mode (Dagster sets it), where ``NORMAL`` syncs at checkpoints rather than at every commit, and
the database stays consistent whatever happens; only an operating-system crash or power loss may take
back the last events committed (a process killed loses nothing). A commit was a sync of the WAL file,
19.6 ms of wall time against 7.5 ms (one insert per connection, this machine's disk), under the
storage's lock, so the runs recording side by side waited for each other's syncs. A lost event costs no
call: the partitions are written and the answers cached, so the next run records them again.

It also remembers the tables it found: Dagster's ``has_table`` builds a fresh engine and inspects the
index file on every call, and it is called for every dynamic-partition look-up (``_check_partitions_table``:
each ``add_asset_metadata`` of a P x M partition checks every key of the run's range) and every check
verdict stored, about a tenth of the command's CPU while its runs record (py-spy, issue 30). A table,
once there, stays (a wipe deletes rows, not tables), so only a table found is remembered; a missing one
is looked for again, as a migration may add it.

It also keeps one connection open on each file it wrote lately (``KEPT_FILES``): each engine's pool holds
one idle connection, which the next transaction on that file reuses. SQLite, when the last connection to
a WAL file closes, checkpoints the WAL into the database, syncs it and deletes the WAL; with a new
connection per transaction, every transaction was the last one, so every event paid a checkpoint and
its syncs: 21.8 ms of wall time per insert against 0.17 ms with one other connection open (this
machine's disk), under the storage's lock, two or three transactions per event. Reusing it also spares
every transaction opening a connection and setting its pragmas: an ``interviewsim run`` of 6 personalities
(``benchmarks.bench_product``'s) opens 3,951 transactions, which took 1.65 s of the command's CPU to set
up with a connection each and 0.64 s with the kept one. The idle connection holds no transaction and no
lock, so other processes (the UI) read and write as before, and SQLite checkpoints at its usual WAL size
instead (``wal_autocheckpoint``). The engines are disposed (their connections closed) before ``wipe`` deletes
the files (a connection to an unlinked file would delete the new file's WAL by name when it closes), on
``dispose``, and beyond ``KEPT_FILES`` files (the least recently used first), so a long-lived UI
process holds a bounded number of files open.

It also remembers each dynamic partition set's keys for ``DYNAMIC_KEYS_TTL_S``: Dagster's ``add_asset_metadata`` checks
every key of the run's range against the instance for each partition's metadata it records, one index query per key
(``has_dynamic_partition``), about 7% of an ``interviewsim run``'s CPU at 20 small personalities (py-spy, issue 43)
and more as the range grows. What this process adds or deletes is seen at once; what another process (``interviewsim
register``, the UI) adds or deletes, within that second.

It also keeps its asset checks' partition states between reads (``check_states``): Dagster's SQLite storage keeps
none, so every asset page rebuilt each check's state from all its partitions' records, 2.5 s on a P x M asset's
page at 1,000 personalities (issue 43).

It also stores a batch of materialisations in one transaction per file (``store_event_batch``): a stage run reports
each of its partitions as an event of its own, and Dagster, with event batching on (``DAGSTER_EVENT_BATCH_SIZE``, which
this package sets: ``interviewsim_dagster/__init__.py``), hands the storage those of one asset together. Dagster's
SQLite storage stored them one by one: two transactions each, an inspection of the asset table's columns each, and
the asset's row rewritten with a second copy of each event, of which only the batch's last stays. Here the run's file
gets the batch in one statement and the index one transaction holding every event and its tags, then the asset's row
once, from the batch's last event.

Beside the class, ``latest_materializations``: each partition's latest materialisation as the check verdicts point at
it, from the index's columns (any SQL event log), not from its deserialised events.

Otherwise as Dagster's: the same files and tables (``dagster.yaml``'s layout under ``DAGSTER_HOME``,
``history/runs``), one transaction at a time under the storage's own lock, and Dagster's schema set-up
on a file's first use. Configured in the repository's ``dagster.yaml`` (``event_log_storage``); an
instance whose ``dagster.yaml`` names Dagster's own class keeps working as before, only slower.
"""

from __future__ import annotations

import collections
import contextlib
import datetime
import os
import time
from collections.abc import Iterator
from typing import Any

import dagster as dg

# Private on purpose, and only here: Dagster exports no public base for an event log storage, and this class
# is its SQLite one with a few methods changed (_connect, has_table, wipe, dispose, store_event_batch, which writes
# Dagster's own event table and picks the events its store_event mirrors in the index: ASSET_EVENTS), and
# latest_materializations reads the index's event table by its columns (SqlEventLogStorage.index_connection).
# tests/dagster/test_dg_pools.py, test_event_batch.py and test_latest_materializations.py exercise them against
# the pinned Dagster, so an upgrade that moves them fails there rather than in a user's run.
from dagster._core.events import ASSET_EVENTS
from dagster._core.storage.event_log import SqlEventLogStorage, SqliteEventLogStorage
from dagster._core.storage.event_log.schema import SqlEventLogStorageTable
from dagster._core.storage.sql import create_engine
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from sqlalchemy import event
from sqlalchemy.pool import QueuePool

from . import check_states


KEPT_FILES = 32
"""At most this many event log files held open by an engine's idle connection (see the module): an ``interviewsim run``
writes about a dozen (the index and one per run), a UI process may read hundreds of runs over its life."""

QUERY_CHUNK = 500
"""Partitions per look-up query (old SQLite builds allow 999 bound parameters in one statement)."""

DYNAMIC_KEYS_TTL_S = 1.0
"""How long a dynamic partition set's keys, once read, answer look-ups without reading the index again (see the module)."""


def _sync_at_checkpoints(dbapi_connection: Any, _record: Any) -> None:
    """Each new connection of a kept engine: WAL's ``synchronous=NORMAL`` (see the module). A file not in WAL
    mode (made by another tool) keeps ``FULL``: there ``NORMAL`` could leave it corrupt after a power loss."""
    cursor = dbapi_connection.cursor()
    try:
        if str(cursor.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
            cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()


class EngineKeepingSqliteEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` keeping one engine per shard (run or index file); see the module.

    Config: ``base_dir``, the instance's folder (``DAGSTER_HOME``, as ``storage: sqlite: base_dir``);
    the event logs live in its ``history/runs`` like Dagster's default.
    """

    def __init__(self, base_dir: str, inst_data: Any = None):
        self._engines: collections.OrderedDict[str, Any] = collections.OrderedDict()  # least recently used first
        self._tables_found: set[str] = set()
        self._dynamic_keys: dict[str, tuple[float, list[str], frozenset[str]]] = {}  # name -> (read at, keys, set)
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data: Any, config_value: Any) -> EngineKeepingSqliteEventLogStorage:
        return cls(os.path.join(config_value["base_dir"], "history", "runs", ""), inst_data=inst_data)

    @contextlib.contextmanager
    def _connect(self, shard: str) -> Iterator[Any]:  # same as Dagster's, but the engine and a connection are kept
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
                # A new file's first connection was opened before ``_initdb`` turned WAL on, so it kept
                # ``synchronous=FULL``: the pooled connections start again, in WAL mode.
                engine.dispose()
            with engine.connect() as conn, conn.begin():
                yield conn

    def _engine(self, shard: str) -> Any:
        """``shard``'s engine, made on first use; the least recently used is disposed beyond ``KEPT_FILES``.
        Called under ``_db_lock``, so no connection is checked out while one is disposed."""
        engine = self._engines.get(shard)
        if engine is not None:
            self._engines.move_to_end(shard)
            return engine
        # One pooled connection, reused by every transaction (the lock allows one at a time); any other is
        # closed when returned. ``check_same_thread``: the runs recording side by side are threads.
        engine = self._engines[shard] = create_engine(
            self.conn_string_for_shard(shard), poolclass=QueuePool, pool_size=1, max_overflow=-1,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS, "check_same_thread": False})
        event.listen(engine, "connect", _sync_at_checkpoints)
        while len(self._engines) > KEPT_FILES:
            self._engines.popitem(last=False)[1].dispose()
        return engine

    def _dispose_engines(self) -> None:
        with self._db_lock:
            while self._engines:
                self._engines.popitem(last=False)[1].dispose()

    def wipe(self) -> None:  # the open connections first: Dagster deletes the run files
        self._dispose_engines()
        self._dynamic_keys.clear()
        super().wipe()
        self._stored_check_states_stale()

    def dispose(self) -> None:
        self._dispose_engines()
        super().dispose()

    def store_event_batch(self, events: Any) -> None:
        """A batch of one run's asset events (a stage run's materialisations of one asset) in one transaction per
        file (see the module); any other batch one event at a time, as Dagster does.

        The run's file commits first, as in ``store_event``: should the index's transaction then fail, Dagster
        stores the batch again one event at a time, so the run's log shows those events twice while the index,
        which the asset pages read, holds each once."""
        events = list(events)
        asset_events = all(e.is_dagster_event and e.dagster_event_type in ASSET_EVENTS and e.dagster_event.asset_key
                           for e in events)
        if not events or not asset_events or len({e.run_id for e in events}) != 1:
            super().store_event_batch(events)
            return
        rows = [self._event_to_row(e) for e in events]  # each event serialised once, for both files
        with self.run_connection(events[0].run_id) as conn:
            conn.execute(SqlEventLogStorageTable.insert(), rows)
        with self.index_transaction() as conn:
            ids = [conn.execute(SqlEventLogStorageTable.insert().values(**row)).inserted_primary_key[0] for row in rows]
            self._store_asset_event_tags(conn, events, ids)
            latest = {e.dagster_event.asset_key: (e, i) for e, i in zip(events, ids)}  # the last of each asset
            for event, event_id in latest.values():
                self._store_asset_event(conn, event, event_id)

    def has_table(self, table_name: str) -> bool:  # Dagster's answer, remembered once it is yes (see the module)
        if table_name in self._tables_found:
            return True
        found = super().has_table(table_name)
        if found:
            self._tables_found.add(table_name)
        return found

    def _keys(self, partitions_def_name: str) -> tuple[float, list[str], frozenset[str]]:
        """The set's keys as read within ``DYNAMIC_KEYS_TTL_S``, else read now (see the module)."""
        known = self._dynamic_keys.get(partitions_def_name)
        if known is None or time.monotonic() - known[0] >= DYNAMIC_KEYS_TTL_S:
            read_at = time.monotonic()
            keys = list(super().get_dynamic_partitions(partitions_def_name))
            known = self._dynamic_keys[partitions_def_name] = (read_at, keys, frozenset(keys))
        return known

    def get_dynamic_partitions(self, partitions_def_name: str) -> list[str]:
        return list(self._keys(partitions_def_name)[1])

    def has_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> bool:
        return partition_key in self._keys(partitions_def_name)[2]

    def add_dynamic_partitions(self, partitions_def_name: str, partition_keys: Any) -> None:
        self._dynamic_keys.pop(partitions_def_name, None)
        super().add_dynamic_partitions(partitions_def_name, partition_keys)
        self._dynamic_keys.pop(partitions_def_name, None)  # a look-up between the two may have read the old keys

    def delete_dynamic_partition(self, partitions_def_name: str, partition_key: str) -> None:
        self._dynamic_keys.pop(partitions_def_name, None)
        super().delete_dynamic_partition(partitions_def_name, partition_key)
        self._dynamic_keys.pop(partitions_def_name, None)

    # -- asset checks' partition states, kept between reads (check_states.py says why) ----------------------------
    def get_asset_check_state(self, keys: Any) -> Any:
        return check_states.updated_states(self._instance, self._instance.run_storage, list(keys))

    def wipe_asset(self, asset_key: Any) -> None:  # its check rows go: the records a stored state counted
        super().wipe_asset(asset_key)
        self._stored_check_states_stale()

    def _stored_check_states_stale(self) -> None:
        if self.has_instance:  # a storage used on its own (no instance) stores no check state
            check_states.bump_epoch(self._instance.run_storage)


def latest_materializations(instance: dg.DagsterInstance, asset_key: dg.AssetKey,
                            partitions: list[str]) -> dict[str, tuple[int, str, float]]:
    """Partition -> (storage id, run id, timestamp) of its latest materialisation, for those of ``partitions`` that
    have one, read from the index's columns without deserialising an event (``check_results._targets`` says why).

    Any SQL event log (this one, Dagster's SQLite or PostgreSQL one) answers from its ``event_logs`` table: the
    latest id per partition (Dagster's ``get_latest_storage_id_by_partition``, over the asset-partition index),
    then the run id and insert time of those rows by primary key. Another kind of storage reads the records."""
    storage = instance.event_log_storage
    ids: dict[str, int] = {}
    for i in range(0, len(partitions), QUERY_CHUNK):
        ids.update(storage.get_latest_storage_id_by_partition(
            asset_key, dg.DagsterEventType.ASSET_MATERIALIZATION, set(partitions[i:i + QUERY_CHUNK])))
    by_id: dict[int, tuple[str, float]] = {}
    wanted = sorted(ids.values())
    for i in range(0, len(wanted), QUERY_CHUNK):
        chunk = wanted[i:i + QUERY_CHUNK]
        if isinstance(storage, SqlEventLogStorage):
            table = SqlEventLogStorageTable
            with storage.index_connection() as conn:
                rows = conn.execute(table.select().with_only_columns(table.c.id, table.c.run_id, table.c.timestamp)
                                    .where(table.c.id.in_(chunk))).fetchall()
            # Stored as naive UTC (``_event_insert_timestamp``); only shown in the UI, the storage id is what counts.
            by_id.update({r[0]: (r[1], r[2].replace(tzinfo=datetime.timezone.utc).timestamp()) for r in rows})
        else:
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=asset_key, storage_ids=chunk), limit=len(chunk)).records
            by_id.update({r.storage_id: (r.run_id, r.timestamp) for r in records})
    return {partition: (storage_id, *by_id[storage_id]) for partition, storage_id in ids.items() if storage_id in by_id}
