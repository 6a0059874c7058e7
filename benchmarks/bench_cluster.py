"""Issue 43's cluster figures: N small personalities through the Celery executor, the event log in PostgreSQL.

The loopback cluster of ``make test-distributed`` (``tests/distributed/cluster_support.py``: PostgreSQL,
Redis, moto's S3 server, two Celery workers; instance from ``deploy/dagster.yaml``), but PostgreSQL with
fsync on (what production pays) and ``pg_stat_statements`` loaded. The evaluation of one method
(``simple``, offline model: no key, no network) of N small personalities (``bench_plan.small_corpus``)
runs as ``tests/distributed/test_cluster_backfill.py`` runs it: ``launch.plan_runs``, then each run with
``execute_job`` on ``interviewsim_dagster.cluster``'s jobs, one after another, in a child process set up
like the machine launching runs. Printed:

- each stage run's wall time and the total;
- how the steps split across the workers: count and step-seconds per worker, from the Dagster event
  log (the worker is the ``Celery worker`` of the engine event each worker writes before a step; a
  step's seconds run from its STEP_START to its STEP_SUCCESS/FAILURE), and each worker process's CPU
  seconds (``/proc/<pid>/stat``);
- materialisation events and all events; the growth of Dagster's event-log tables
  (``pg_total_relation_size`` of the tables of Dagster's event-log schema, after the runs minus before
  them) per materialisation and per event, and the WAL written;
- what the event-log writes cost the server: calls and total execution time of INSERTs into those
  tables (``pg_stat_statements``, server-side: excludes the round trip and the client), the COMMITs'
  time, and PostgreSQL's CPU seconds (the postmaster's own and its exited backends', ``/proc``);
- beside it, ``interviewsim run --methods simple`` on the same corpus in one process (SQLite instance,
  local folder, SQLite cache) unless ``--no-single``.

Target: every run succeeds and both workers executed steps (PASS/FAIL); the rest are figures.

Usage: ``python -m benchmarks.bench_cluster [--personalities 1000] [--no-single] [--work DIR]``;
``--personalities 20`` is the smoke run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
METHOD = "simple"
PG_SETTINGS = {"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.track": "all"}
STATS_SETTLE_S = 11
"""PostgreSQL 15 flushes a busy backend's table counters at most every 10 s idle; wait that out before reading."""


def _pg(env: dict[str, str]):
    """A connection to the cluster's PostgreSQL (trust auth on loopback) from the machines' variables."""
    import psycopg2

    conn = psycopg2.connect(host=env["DAGSTER_PG_HOST"], port=int(env["DAGSTER_PG_PORT"]),
                            user=env["DAGSTER_PG_USER"], dbname=env["DAGSTER_PG_DB"])
    conn.autocommit = True
    return conn


def _event_log_tables() -> list[str]:
    """The tables of Dagster's own event-log schema (so "the event log" is Dagster's definition, not a guess)."""
    from dagster._core.storage.event_log.schema import SqlEventLogStorageMetadata

    return sorted(SqlEventLogStorageMetadata.tables)


def _cpu_s(pid: int, children: bool = False) -> float:
    """utime+stime of a process (and, with ``children``, of its exited and reaped children), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if children else 0)
    return ticks / os.sysconf("SC_CLK_TCK")


def pg_snapshot(env: dict[str, str], tables: list[str]) -> dict:
    """Sizes and insert counters of ``tables``, the WAL position, the statements' totals since the last reset."""
    conn = _pg(env)
    with conn.cursor() as cur:
        cur.execute("SELECT relname, pg_total_relation_size(relid), n_tup_ins FROM pg_stat_user_tables "
                    "WHERE relname = ANY(%s)", (tables,))
        per_table = {name: {"bytes": size, "inserts": ins} for name, size, ins in cur.fetchall()}
        cur.execute("SELECT pg_current_wal_lsn()::text, pg_database_size(current_database()), sessions "
                    "FROM pg_stat_database WHERE datname = current_database()")
        wal, db_bytes, sessions = cur.fetchone()
        cur.execute("SELECT query, calls, total_exec_time FROM pg_stat_statements")
        statements = cur.fetchall()
    conn.close()
    inserts = {t: [0, 0.0] for t in tables}
    commits, all_ms = [0, 0.0], 0.0
    for query, calls, ms in statements:
        all_ms += ms
        head = " ".join(query.split()[:3]).lower()
        if head.startswith("insert into "):
            table = head.split()[2].strip('"(')
            if table in inserts:
                inserts[table][0] += calls
                inserts[table][1] += ms
        elif head.startswith("commit"):
            commits[0] += calls
            commits[1] += ms
    return {"tables": per_table, "wal": wal, "db_bytes": db_bytes, "sessions": sessions, "insert_stmts": inserts,
            "commits": commits, "all_statements_ms": all_ms}


def _wal_diff(env: dict[str, str], a: str, b: str) -> int:
    conn = _pg(env)
    with conn.cursor() as cur:
        cur.execute("SELECT pg_wal_lsn_diff(%s::pg_lsn, %s::pg_lsn)", (b, a))
        out = int(cur.fetchone()[0])
    conn.close()
    return out


def child(out: Path) -> None:
    """The machine launching runs (this process has the cluster's variables): register, plan, run, read the log."""
    import dagster as dg

    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_dagster import cluster, launch

    env = dict(os.environ)
    tables = _event_log_tables()
    cfg = EvalConfig.load_resolved()
    with dg.DagsterInstance.get() as instance:
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        t0 = time.perf_counter()
        launch.register_personalities(instance, str(cfg.corpus))
        register_s = time.perf_counter() - t0
        specs = launch.plan_runs(cluster.defs, instance, [METHOD])
        time.sleep(STATS_SETTLE_S)
        conn = _pg(env)
        with conn.cursor() as cur:
            cur.execute("SELECT pg_stat_statements_reset()")
        conn.close()
        before = pg_snapshot(env, tables)
        runs = []
        t_all = time.perf_counter()
        for spec in specs:
            t0 = time.perf_counter()
            result = dg.execute_job(dg.reconstructable(cluster.JOB_FACTORIES[spec.job]), instance=instance,
                                    asset_selection=list(spec.assets), tags=launch.range_tags(spec))
            runs.append({"job": spec.job, "run_id": result.run_id, "success": result.success,
                         "seconds": time.perf_counter() - t0})
            if not result.success:
                break
        total_s = time.perf_counter() - t_all
        time.sleep(STATS_SETTLE_S)
        after = pg_snapshot(env, tables)
        for run in runs:
            run.update(read_run_log(instance, run["run_id"]))
    out.write_text(json.dumps({"register_s": register_s, "runs": runs, "total_s": total_s, "before": before,
                               "after": after, "wal_bytes": _wal_diff(env, before["wal"], after["wal"])}))


def read_run_log(instance, run_id: str) -> dict:
    """One run's event counts and, per step, its worker and seconds, from the Dagster event log."""
    import dagster as dg

    starts: dict[str, float] = {}
    steps: dict[str, dict] = {}
    counts: dict[str, int] = {}
    entries = instance.all_logs(run_id)
    for entry in entries:
        ev = entry.dagster_event
        kind = ev.event_type_value if ev is not None else "LOG_MESSAGE"
        counts[kind] = counts.get(kind, 0) + 1
        if ev is None or ev.step_key is None:
            continue
        step = steps.setdefault(ev.step_key, {"worker": None, "seconds": None})
        if ev.event_type == dg.DagsterEventType.ENGINE_EVENT:
            md = ev.event_specific_data.metadata or {}
            if "Celery worker" in md:
                step["worker"] = md["Celery worker"].value
        elif ev.event_type == dg.DagsterEventType.STEP_START:
            starts[ev.step_key] = entry.timestamp
        elif ev.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
            step["seconds"] = entry.timestamp - starts.get(ev.step_key, entry.timestamp)
    return {"events": len(entries), "counts": counts, "steps": steps}


def run_cluster(corpus: Path, work: Path) -> dict:
    """Start the loopback cluster and two workers, run the child against it; every server stopped by pid."""
    sys.path.insert(0, str(REPO / "tests" / "distributed"))
    import cluster_support  # the distributed tests' cluster: same servers, setup and workers

    with cluster_support.servers(durable=True, pg_settings=PG_SETTINGS) as started:
        c = cluster_support.build_cluster(started, work / "cluster", corpus, methods=METHOD)
        conn = _pg(c.env)
        with conn.cursor() as cur:
            cur.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        conn.close()
        (work / "worker_logs").mkdir(exist_ok=True)
        workers = cluster_support.Workers(c, cluster_support.N_WORKERS, work / "worker_logs")
        try:
            workers.start()
            pg_pid = c.pg.proc.pid
            cpu0 = {"pg": _cpu_s(pg_pid, children=True),
                    **{n: _cpu_s(p.pid) for n, p in zip(workers.names, workers.procs)}}
            out = work / "cluster.json"
            env = {**{k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))},
                   **c.env, "PYTHONPATH": str(REPO)}
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            with open(work / "launcher.log", "wb") as log:  # Dagster's console log of the runs
                done = subprocess.run([sys.executable, "-m", "benchmarks.bench_cluster", "--child", str(out)],
                                      env=env, cwd=REPO, timeout=4 * 3600, stdout=log, stderr=subprocess.STDOUT)
            if done.returncode != 0:
                raise SystemExit(f"bench_cluster: the launching process failed (exit {done.returncode}); see "
                                 f"{work / 'launcher.log'} and the worker logs in {work / 'worker_logs'}")
            res = json.loads(out.read_text())
            res["cpu_s"] = {"pg": _cpu_s(pg_pid, children=True) - cpu0["pg"],
                            **{n: _cpu_s(p.pid) - cpu0[n] for n, p in zip(workers.names, workers.procs)}}
        finally:
            workers.stop()
    return res


def run_single(corpus: Path, work: Path) -> dict:
    """``interviewsim register`` then ``interviewsim run --methods simple`` in one process on a SQLite instance."""
    home, cfg = work / "single_home", work / "single.yaml"
    home.mkdir(exist_ok=True)
    cfg.write_text(f"corpus: {corpus}\ndata_root: {work / 'single_data'}\ncache_path: {work / 'single_cache.sqlite'}\n"
                   f"methods: {METHOD}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(home), INTERVIEWSIM_CONFIG=str(cfg), LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    exe = str(Path(sys.executable).with_name("interviewsim"))
    t0 = time.perf_counter()
    reg = subprocess.run([exe, "register", "--corpus", str(corpus)], env=env, cwd=work, capture_output=True,
                         text=True, timeout=3600)
    register_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    run = subprocess.run([exe, "run", "--config", str(cfg), "--methods", METHOD, "--yes"], env=env, cwd=work,
                         capture_output=True, text=True, timeout=4 * 3600)
    run_s = time.perf_counter() - t0
    ok = reg.returncode == 0 and run.returncode == 0
    if not ok:
        print(f"single-process run failed: {(reg.stderr + run.stdout + run.stderr)[-2000:]}")
    return {"register_s": register_s, "run_s": run_s, "success": ok}


def _per_worker(runs: list[dict]) -> dict[str, list[float]]:
    """Worker -> the seconds of each step it executed (a step with no worker event is counted as "unknown")."""
    out: dict[str, list[float]] = {}
    for run in runs:
        for step in run["steps"].values():
            out.setdefault(step["worker"] or "unknown", []).append(step["seconds"] or 0.0)
    return out


def report(n: int, res: dict, single: dict | None) -> bool:
    """Print the figures as markdown tables; True when every run succeeded and both workers had steps."""
    runs = res["runs"]
    mats = sum(r["counts"].get("ASSET_MATERIALIZATION", 0) for r in runs)
    events = sum(r["events"] for r in runs)
    print(f"\n{n:,} small personalities x method `{METHOD}` (offline model), two Celery workers, "
          f"PostgreSQL fsync on; load average {os.getloadavg()[0]:.1f} (2 cores shared)\n")
    print("| stage run | steps | wall s | materialisations | events |")
    print("|---|---:|---:|---:|---:|")
    for r in runs:
        print(f"| {r['job']}{'' if r['success'] else ' (FAILED)'} | {len(r['steps'])} | {r['seconds']:.1f} | "
              f"{r['counts'].get('ASSET_MATERIALIZATION', 0):,} | {r['events']:,} |")
    print(f"| **all {len(runs)} runs** | {sum(len(r['steps']) for r in runs)} | {res['total_s']:.1f} | {mats:,} | "
          f"{events:,} |")
    print(f"\nregistering {n:,} personalities: {res['register_s']:.2f} s (before the runs, not in the total)\n")
    per = _per_worker(runs)
    print("| worker | steps | step-seconds | process CPU s |")
    print("|---|---:|---:|---:|")
    for name in sorted(set(per) | {k for k in res["cpu_s"] if k != "pg"}):
        secs = per.get(name, [])
        cpu = res["cpu_s"].get(name)
        print(f"| {name} | {len(secs)} | {sum(secs):.1f} | {'' if cpu is None else f'{cpu:.1f}'} |")
    b, a = res["before"], res["after"]
    grown = {t: a["tables"].get(t, {}).get("bytes", 0) - b["tables"].get(t, {}).get("bytes", 0) for t in a["tables"]}
    rows = {t: a["tables"][t]["inserts"] - b["tables"].get(t, {}).get("inserts", 0) for t in a["tables"]}
    total = sum(grown.values())
    print("\n| event-log table | grew by | rows inserted | INSERT statements | their exec time |")
    print("|---|---:|---:|---:|---:|")
    for t in sorted(grown, key=lambda t: -grown[t]):
        calls, ms = a["insert_stmts"].get(t, [0, 0.0])
        if grown[t] or rows[t] or calls:
            print(f"| {t} | {grown[t] / 1e6:.2f} MB | {rows[t]:,} | {calls:,} | {ms / 1000:.2f} s |")
    ins_calls = sum(c for c, _ in a["insert_stmts"].values())
    ins_ms = sum(ms for _, ms in a["insert_stmts"].values())
    print(f"\nevent-log tables: {total / 1e6:.2f} MB for {mats:,} materialisations = {total / max(mats, 1):,.0f} "
          f"bytes per materialisation ({total / max(events, 1):,.0f} bytes per event); WAL written (all writes): "
          f"{res['wal_bytes'] / 1e6:.1f} MB = {res['wal_bytes'] / max(mats, 1):,.0f} bytes per materialisation")
    print(f"INSERTs into the event-log tables: {ins_calls:,} statements, {ins_ms / 1000:.2f} s server execution "
          f"({ins_ms / max(mats, 1):.3f} ms per materialisation); COMMITs: {a['commits'][0]:,}, "
          f"{a['commits'][1] / 1000:.2f} s; every statement: {a['all_statements_ms'] / 1000:.1f} s; PostgreSQL CPU "
          f"(postmaster + exited backends): {res['cpu_s']['pg']:.1f} s = "
          f"{1000 * res['cpu_s']['pg'] / max(mats, 1):.2f} ms per materialisation, over "
          f"{a['sessions'] - b['sessions']:,} connections opened (Dagster's storage connects per operation)")
    if single:
        failed = "" if single["success"] else " FAILED"
        print(f"\n`interviewsim run --methods {METHOD}` in one process (SQLite instance, local folder): "
              f"{single['run_s']:.1f} s (+ register {single['register_s']:.1f} s){failed}; "
              f"the cluster's runs: {res['total_s']:.1f} s = {res['total_s'] / max(single['run_s'], 1e-9):.2f}x")
    ok = all(r["success"] for r in runs) and len([w for w in per if w != "unknown"]) >= 2
    print(f"every run succeeded: {all(r['success'] for r in runs)}; workers that executed steps: "
          f"{len([w for w in per if w != 'unknown'])} of 2 (target: 2) {'PASS' if ok else 'FAIL'}")
    return ok


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--personalities", type=int, default=1000)
    ap.add_argument("--no-single", action="store_true", help="skip the single-process `interviewsim run`")
    ap.add_argument("--work", type=Path, default=None, help="keep the work folder (worker logs, JSON) here")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args.child)
        return
    from benchmarks.bench_plan import small_corpus

    with tempfile.TemporaryDirectory(prefix="bench_cluster_") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        corpus = small_corpus(work / "corpus", args.personalities)
        res = run_cluster(corpus, work)
        single = None if args.no_single else run_single(corpus, work)
    ok = report(args.personalities, res, single)
    print(f"bench_cluster {'PASS' if ok else 'FAIL'}")


if __name__ == "__main__":
    main()
