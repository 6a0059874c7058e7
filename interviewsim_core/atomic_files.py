"""One way to write a file so that no reader (and no crash) ever sees half of it.

Every artefact the project writes (Parquet partitions, the report, embedding matrices, the label
clusters) goes through ``atomic_write``: the bytes land in a temp file in the destination folder,
which is then renamed over the destination. A rename within one folder is atomic on POSIX, so a
partition is either the old file or the new one. A URL destination (``s3://``... see
``dataroot.py``) is written in one PUT instead, which object stores make atomic themselves. Temp files carry their writer's host and pid, so
the next write of a file can remove what a killed writer left (``remove_stale_temps``).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from .processes import HOST, pid_alive


_HOST = re.sub(r"[^A-Za-z0-9-]", "-", HOST)[:40] or "host"
"""This host as it appears in temp names (file-name safe)."""


def _owner() -> str:
    """``<host>-<pid>`` of the writing process, read at write time (a forked worker has its own pid)."""
    return f"{_HOST}-{os.getpid()}"
STALE_TEMP_SECONDS = 3600
"""A temp file whose writer cannot be checked (another machine, an older name) is left alone this long."""


def _writer_alive(owner: str, age: float) -> bool:
    """Whether the writer of a temp file named with ``owner`` (``<host>-<pid>``) may still be writing it."""
    host, _, pid = owner.rpartition("-")
    if host == _HOST and pid.isdigit():
        return int(pid) == os.getpid() or pid_alive(int(pid))  # this process: another thread writes it
    return age < STALE_TEMP_SECONDS


def remove_stale_temps(path: Path) -> list[Path]:
    """Delete the hidden ``.<name>.*.tmp`` files a killed writer left beside ``path``; returns them.

    A process killed between creating its temp file and renaming it leaves the temp behind forever
    (the rename never comes). The next write of the same file removes those whose writer is gone:
    on this machine a dead pid, elsewhere (shared storage) an age over ``STALE_TEMP_SECONDS``; a
    live writer's temp is never touched, so two processes writing one partition do not break each other.
    """
    removed: list[Path] = []
    prefix = f".{path.name}."
    now = time.time()
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        owner = name[len(prefix):-len(".tmp")].rpartition(".")[0]
        try:
            age = now - entry.stat(follow_symlinks=False).st_mtime
        except OSError:
            continue
        if not _writer_alive(owner, age):
            try:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
            except OSError:
                pass  # already gone (another cleaner) or not ours to remove: the write goes on
    return removed


def atomic_write(path: Path | str, write: Callable[[IO[bytes]], None], *, mode: int = 0o644) -> Path:
    """Call ``write(fh)`` on a temp file beside ``path``, then rename it to ``path``.

    Args:
        path: destination; its folder is created when missing. A URL (or ``UPath``) of an object
            store is written in one PUT (see ``dataroot.atomic_put``).
        write: writes the content to the binary file handle it is given.
        mode: permissions of the final file (``mkstemp`` creates 0600, too tight for results
            that other people and tools open).
    """
    if not isinstance(path, Path):
        from .dataroot import as_root, atomic_put, is_local, local_path

        target = as_root(path)
        if not is_local(target):
            return atomic_put(target, write)
        path = local_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{_owner()}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        if exc.filename is None and exc.errno is not None:
            # pyarrow and file.write raise ``[Errno 28] No space left on device`` without the file:
            # name the destination, so the user knows which disk to free (and the CLI which path).
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: Path | str, text: str) -> Path:
    """``atomic_write`` of UTF-8 text."""
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
