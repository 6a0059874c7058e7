"""What ``interviewsim run`` tells the shell: one exit code that tells the truth, and a summary.

A run that "succeeded" while corpus files were refused, judges answered garbage or checks failed
must not look like a clean run to a script (``interviewsim run && publish``). The codes, documented
in docs/TROUBLESHOOTING.md, are ordered by severity; when several apply the smallest wins:

====  =====================================================================================
0     everything ran; no file refused, every check passed
1     a Dagster run (a step) failed; later runs were not started
2     usage or configuration error (bad flag, unknown method or personality, bad config file)
3     environment: a path that must be written or read cannot be (data root, cache, DAGSTER_HOME)
4     input refused: corpus files break INPUT_SCHEMA.md (the valid ones ran) or none is valid
5     an asset check failed (other than the invalid-output rate)
6     failed or invalid model outputs above ``invalid_rate_threshold`` in some table
7     not started: the run's plan costs more than ``max_cost_usd`` and was not accepted
      (``--yes``, or a "y" at the terminal's prompt); nothing was called
====  =====================================================================================

The row counts come from the Parquet partitions the run covered (the state users will read), not
from Dagster events, so they hold for a run that resumed from cached or earlier results too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from interviewsim_core.id_lists import fits_whole, summarise_ids

from .id_files import ids_line

EXIT_OK = 0
EXIT_RUN_FAILED = 1
EXIT_USAGE = 2
EXIT_ENVIRONMENT = 3
EXIT_INPUT_REFUSED = 4
EXIT_CHECKS_FAILED = 5
EXIT_INVALID_OUTPUTS = 6
EXIT_OVER_BUDGET = 7
EXIT_INTERRUPTED = 130

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "everything ran; no file refused, every check passed",
    EXIT_RUN_FAILED: "a Dagster run (a step) failed",
    EXIT_USAGE: "usage or configuration error",
    EXIT_ENVIRONMENT: "a path cannot be written or read (data root, cache, DAGSTER_HOME)",
    EXIT_INPUT_REFUSED: "corpus files refused (INPUT_SCHEMA.md) or no valid personality",
    EXIT_CHECKS_FAILED: "an asset check failed",
    EXIT_INVALID_OUTPUTS: "failed/invalid model outputs above invalid_rate_threshold",
    EXIT_OVER_BUDGET: "not started: the plan costs more than max_cost_usd (--max-cost) and --yes was not given",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C or SIGTERM): finished partitions are written and their calls cached",
}

INVALID_RATE_CHECK = "invalid_output_rate_under_threshold"
"""The check whose failure means "too many failed/invalid rows" (exit 6), not "a check failed" (5)."""


@dataclass
class RunSummary:
    """Everything the end-of-run summary reports; ``exit_code`` folds it into one number."""

    refused: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    runs_planned: int = 0
    runs_ok: int = 0
    run_failed: bool = False
    checks_failed: list[str] = field(default_factory=list)
    rate_checks_failed: list[str] = field(default_factory=list)
    statuses: dict[str, Counter] = field(default_factory=dict)
    threshold: float = 0.0
    validity: dict[str, Counter] = field(default_factory=dict)
    """Per table: ``first`` (valid on the first attempt), ``valid`` (after re-asks), ``outputs``."""
    output_notes: list[str] = field(default_factory=list)
    """Truncated replies and advice for mostly-invalid contracts (``output_notes``)."""

    def over_threshold(self) -> dict[str, float]:
        """Tables whose share of non-ok model outputs exceeds the threshold, with that share."""
        out: dict[str, float] = {}
        for table, counts in sorted(self.statuses.items()):
            total = sum(counts.values())
            bad = total - counts.get("ok", 0)
            if total and bad / total > self.threshold:
                out[table] = bad / total
        return out

    def exit_code(self) -> int:
        if self.run_failed:
            return EXIT_RUN_FAILED
        if self.refused:
            return EXIT_INPUT_REFUSED
        if self.checks_failed:
            return EXIT_CHECKS_FAILED
        if self.rate_checks_failed or self.over_threshold():
            return EXIT_INVALID_OUTPUTS
        return EXIT_OK

    def lines(self) -> list[str]:
        """The human summary, one fact per line; the last line names the exit code and its meaning."""
        out = [f"summary: {self.runs_ok} of {self.runs_planned} Dagster run(s) succeeded"]
        if self.refused:
            out.append(f"  refused: {len(self.refused)} corpus problem(s) (listed above as 'not registered'); "
                       "their personalities were not evaluated")
        if self.stale:
            out.append(f"  skipped: {len(self.stale):,} registered personality(ies) without a valid document in "
                       f"this corpus: {summarise_ids(self.stale, 'the file the warning above names')}")
        totals: Counter = Counter()
        for counts in self.statuses.values():
            totals.update(counts)
        if totals:
            out.append(f"  model outputs in the covered partitions: {sum(totals.values())}: "
                       + ", ".join(f"{totals.get(s, 0)} {s}" for s in ("ok", "invalid", "failed")))
        for table, counts in sorted(self.statuses.items()):
            total = sum(counts.values())
            bad = {s: n for s, n in sorted(counts.items()) if s != "ok" and n}
            if bad:
                detail = ", ".join(f"{n} {s}" for s, n in bad.items())
                out.append(f"  {table}: {detail} of {total} model output(s) "
                           f"({sum(bad.values()) / total:.1%}; threshold {self.threshold:.1%})")
        for table, v in sorted(self.validity.items()):
            if v["outputs"] and v["valid"] != v["first"]:  # re-asks changed something: say by how much
                out.append(f"  {table}: valid on first attempt {v['first']} of {v['outputs']}, "
                           f"after re-asks {v['valid']} of {v['outputs']}")
            elif v["outputs"] and v["valid"] < v["outputs"]:
                out.append(f"  {table}: valid on first attempt {v['first']} of {v['outputs']}, "
                           f"after re-asks {v['valid']} (re-asks fixed none)")
        out.extend(self.output_notes)
        for name in self.checks_failed + self.rate_checks_failed:
            out.append(f"  check failed: {name}")
        code = self.exit_code()
        out.append(f"exit code {code}: {EXIT_CODES[code]}")
        return out


def _status_columns(schema_names: Iterable[str]) -> list[str]:
    from interviewsim_core.pipeline.expected import status_columns

    return status_columns(schema_names)


def _partition_files(data_root: Path, personalities: Sequence[str], methods: Sequence[str]):
    """(table, its covered partitions' files that exist) for every table folder of the data root."""
    from interviewsim_core.pipeline.storage import partition_path
    from interviewsim_core.pipeline.tables import PER_METHOD

    root = Path(data_root)
    if not root.is_dir():
        return
    for table_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        table = table_dir.name
        files = ([partition_path(root, table, pid, m) for pid in personalities for m in methods]
                 if table in PER_METHOD else [partition_path(root, table, pid) for pid in personalities])
        files = [f for f in files if f.is_file()]
        if files:
            yield table, files


_CALL_COLUMNS = ("status", "attempts", "contract", "constraint", "truncated")
"""The call columns the summary reads (``pass1_``/``pass2_`` prefixed on the premise judge's table)."""


def call_tables(data_root: Path, personalities: Sequence[str], methods: Sequence[str]) -> list:
    """(table, status columns, column names, the call columns read) for every table with a status column: its
    covered partitions' call columns joined in one Arrow table (``storage.read_joined``, several files at a time),
    read once for the three figures below. Read file by file, the summary took 24 s at the end of a run of 100
    small personalities (7,300 partitions), with nothing else left to do (issue 43). A file this summary cannot
    read is left out (the run itself reports it)."""
    from interviewsim_core.pipeline.storage import read_joined

    out = []
    for table, files in _partition_files(data_root, personalities, methods):
        names = _first_schema(files)
        cols = _status_columns(names)
        if not cols:
            continue
        wanted = [c for c in names if c.removeprefix("pass1_").removeprefix("pass2_") in _CALL_COLUMNS]
        try:
            data = read_joined(files, columns=wanted)
        except (OSError, ValueError):  # an unreadable file: the others one by one
            data = _readable_joined(files, wanted)
        if data is not None:
            out.append((table, cols, data.column_names, data))
    return out


def _first_schema(files: Sequence[Path]) -> list[str]:
    """The column names of the first of ``files`` that can be read (none: no column)."""
    import pyarrow.parquet as pq

    for f in files:
        try:
            return pq.read_schema(f).names
        except (OSError, ValueError):
            continue
    return []


def _readable_joined(files: Sequence[Path], columns: Sequence[str]):
    import pyarrow as pa

    from interviewsim_core.pipeline.storage import read_arrow

    parts = []
    for f in files:
        try:
            parts.append(read_arrow(f, columns=columns))
        except (OSError, ValueError):
            continue
    return pa.concat_tables(parts, promote_options="permissive") if parts else None


def status_counts(data_root: Path, personalities: Sequence[str], methods: Sequence[str],
                  tables: list | None = None) -> dict[str, Counter]:
    """Model-output statuses per table over the given partitions: ``{"generations": {"ok": 80, ...}}``.

    Tables without a status column (splits, scores) are left out; missing partitions are skipped.
    ``tables``: ``call_tables`` of the same arguments, when already read.
    """
    counts: dict[str, Counter] = {}
    for table, cols, _names, data in tables if tables is not None else call_tables(data_root, personalities, methods):
        bucket = counts.setdefault(table, Counter())
        for c in cols:
            bucket.update(v for v in data.column(c).to_pylist() if v is not None)
    return counts


def validity_counts(data_root: Path, personalities: Sequence[str], methods: Sequence[str],
                    tables: list | None = None) -> dict[str, Counter]:
    """Per table, outputs valid on the first attempt and after re-asks, from the ``status``/``attempts``
    call columns (``pass1_status``/``pass1_attempts``... for the premise judge's two passes).

    An ok row with ``attempts == 1`` was valid as first answered; an ok row with more attempts needed
    a re-ask (the gateway re-asks only after a contract break; transport retries are not attempts).
    """
    out: dict[str, Counter] = {}
    for table, cols, names, data in tables if tables is not None else call_tables(data_root, personalities, methods):
        pairs = [(c, c[: -len("status")] + "attempts") for c in cols]
        pairs = [(c, a) for c, a in pairs if a in names]
        if not pairs:
            continue
        bucket = out.setdefault(table, Counter(first=0, valid=0, outputs=0))
        for c, a in pairs:
            for status, attempts in zip(data.column(c).to_pylist(), data.column(a).to_pylist()):
                if status is None:
                    continue
                bucket["outputs"] += 1
                if status == "ok":
                    bucket["valid"] += 1
                    bucket["first"] += int(attempts == 1)
    return out


def summarise(outcomes, n_planned: int, refused: Sequence[str], stale: Sequence[str],
              data_root: Path, personalities: Sequence[str], methods: Sequence[str],
              threshold: float, recorded_failures: Sequence[str] | None = None) -> RunSummary:
    """Fold the launch outcomes (``launch.RunOutcome``), refused files and table statuses into one summary.

    ``recorded_failures``: the checks whose latest verdict on the covered partitions failed, whichever
    run evaluated them (``check_results.failed_checks``); without it, those of ``outcomes``. A re-run
    that skips everything up to date evaluates no check, so only the recorded verdicts give it the
    exit code of the run that made the same data.
    """
    failed_checks = list(dict.fromkeys([c for o in outcomes for c in o.checks_failed] + list(recorded_failures or ())))
    tables = call_tables(data_root, personalities, methods)
    return RunSummary(
        refused=list(refused), stale=list(stale), runs_planned=n_planned,
        runs_ok=sum(1 for o in outcomes if o.success),
        run_failed=len(outcomes) < n_planned or not all(o.success for o in outcomes),
        checks_failed=[c for c in failed_checks if not c.endswith(f":{INVALID_RATE_CHECK}")],
        rate_checks_failed=[c for c in failed_checks if c.endswith(f":{INVALID_RATE_CHECK}")],
        statuses=status_counts(data_root, personalities, methods, tables),
        threshold=threshold,
        validity=validity_counts(data_root, personalities, methods, tables),
        output_notes=output_notes(data_root, personalities, methods, tables),
    )


def output_notes(data_root: Path, personalities: Sequence[str], methods: Sequence[str],
                 tables: list | None = None) -> list[str]:
    """Truncated replies and, per mostly-invalid contract, its likely causes and the settings that help
    (``report.validity``), over the run's partitions; nothing when every contract is mostly valid."""
    from interviewsim_core.report.validity import validity_advice, validity_table

    wanted = ("contract", "status", "constraint", "truncated")
    frames = {}
    for i, (table, _cols, names, data) in enumerate(
            tables if tables is not None else call_tables(data_root, personalities, methods)):
        cols = [c for c in names if c.removeprefix("pass1_").removeprefix("pass2_") in wanted]
        if "status" in cols or "pass1_status" in cols:
            frames[(table, i)] = data.select(cols).to_pandas()
    table = validity_table(frames)
    if table.empty:
        return []
    notes = []
    truncated = int(table["truncated"].sum())
    if truncated:
        notes.append(f"  truncated: {truncated} model output(s) stopped at their max_tokens cap "
                     "(column `truncated`; not re-asked as format breaches)")
    return notes + validity_advice(table)


def runnable(reg, personalities: Sequence[str] | None, warn, corpus: str) -> list[str] | None:
    """The personalities a run may evaluate: asked for (or all registered), minus stale ones.

    A personality registered earlier (another corpus on the shared instance, or a file since broken
    or removed) has no valid document now; evaluating it would fail every run it shares, so it is
    skipped with a warning naming it (one warning naming a few of them when they are many: a
    thousand of them are a corpus switched on a shared instance, removed at once with ``--not-in``).
    None when nothing is left to evaluate.
    """
    stale = set(reg.stale)
    wanted = list(personalities) if personalities else [*reg.known, *reg.added]
    skipped = [pid for pid in reg.stale if not personalities or pid in personalities]
    if fits_whole(skipped):
        for pid in skipped:
            warn(f"warning: skipped personality {pid!r}: registered on this Dagster instance but without a valid "
                 f"document in this corpus (`interviewsim unregister {pid}` removes it)")
    else:
        warn(f"warning: skipped {len(skipped):,} personalities registered on this Dagster instance but without a "
             f"valid document in this corpus: {ids_line(skipped, 'not_in_corpus')}; "
             f"`interviewsim unregister --not-in {corpus}` removes them")
    chosen = [p for p in wanted if p not in stale]
    return chosen or None


_PROBE_BYTES = 64 * 1024
"""What the write probe writes: a full disk refuses it, where it accepts an empty file."""


def _unwritable_dir(folder: Path) -> str | None:
    """Why files cannot be created in ``folder`` (created when missing), or None when they can."""
    import errno
    import os
    import tempfile

    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".interviewsim-write-probe.", dir=folder)
        try:
            # An empty file needs an inode, not space: a full disk only shows when bytes are written.
            os.write(fd, b"\0" * _PROBE_BYTES)
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as exc:
        reason = exc.strerror or errno.errorcode.get(exc.errno or 0, "") or str(exc)
        where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(folder) else ""
        return f"{reason}{where}"
    return None


_DISK_ERRNOS = frozenset({28, 122})  # ENOSPC, EDQUOT
_ENVIRONMENT_ERRNOS = _DISK_ERRNOS | {13, 30}  # EACCES, EROFS


def _causes(exc: BaseException):
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__ or getattr(exc, "orig", None)


def environment_problem(exc: BaseException, places: dict[str, Path]) -> str | None:
    """One line naming the path when ``exc`` (or its cause) is a full or unwritable disk, else None.

    Dagster's run storage raises SQLAlchemy's ``OperationalError: database or disk is full`` and a
    Parquet or YAML write raises ``OSError: [Errno 28]``, neither naming what the user must free.
    ``places`` maps a label ("DAGSTER_HOME", "data root", "LLM cache") to its path: a file error is
    attributed to the place holding the file; a SQLite error names no file and can only come from the
    Dagster instance's storage (the LLM cache reports its own errors with its path), so it names
    DAGSTER_HOME when given.
    """
    import sqlite3

    for cause in _causes(exc):
        if isinstance(cause, OSError) and cause.errno in _ENVIRONMENT_ERRNOS:
            reason = cause.strerror or str(cause)
            file = Path(cause.filename) if cause.filename else None
            for label, place in places.items():
                if file is not None and file.resolve().is_relative_to(Path(place).resolve()):
                    return f"{label} {place}: cannot write {file}: {reason}"
            return f"cannot write {file or 'a file'}: {reason}"
        if isinstance(cause, sqlite3.OperationalError) and "disk is full" in str(cause):
            where = next((f"{label} {place}" for label, place in places.items() if label == "DAGSTER_HOME"),
                         "a SQLite database")
            return f"{where}: the disk is full ({cause})"
    return None


def exit_on_environment_error(places: dict[str, Path], echo) -> "contextlib.AbstractContextManager[None]":
    """Turn a full/unwritable disk anywhere in the block into one line (``echo``) and exit 3.

    Anything else propagates unchanged: only errors ``environment_problem`` recognises are translated.
    """
    import contextlib

    import typer

    @contextlib.contextmanager
    def guard():
        try:
            yield
        except Exception as exc:  # SQLAlchemy's errors are not OSErrors; unrecognised ones re-raise
            if isinstance(exc, typer.Exit):
                raise
            line = environment_problem(exc, places)
            if line is None:
                raise
            echo(f"error: {line}")
            echo(f"exit code {EXIT_ENVIRONMENT}: {EXIT_CODES[EXIT_ENVIRONMENT]}")
            raise typer.Exit(EXIT_ENVIRONMENT) from None

    return guard()


def unwritable_paths(folders: dict[str, Path], files: dict[str, Path] | None = None) -> list[str]:
    """One line per path a run must write but cannot: ``data root /x is not writable: Permission denied``.

    Checked before anything starts, so a read-only data root, cache or Dagster home costs one clear
    line (and exit 3) instead of a step traceback or SQLite's ``unable to open database file`` without
    the file. A file (the SQLite cache) is checked through its folder, since SQLite writes its journal
    beside it, and itself when it exists.
    """
    import os

    problems: list[str] = []
    failed: list[Path] = []
    for label, path, is_file in [*((k, Path(v), False) for k, v in folders.items()),
                                 *((k, Path(v), True) for k, v in (files or {}).items())]:
        if any(path.is_relative_to(f) for f in failed):
            continue  # the default cache lives in the data root: one line says it all
        reason = _unwritable_dir(path.parent if is_file else path)
        if reason is None and is_file and path.exists() and not os.access(path, os.W_OK):
            reason = "the file is read-only"
        if reason is not None:
            problems.append(f"{label} {path} is not writable: {reason}")
            failed.append(path)
    return problems
