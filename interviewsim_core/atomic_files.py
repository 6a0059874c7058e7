"""One way to write a file so that no reader (and no crash) ever sees half of it.

Every artefact the project writes (Parquet partitions, the report, embedding matrices, the label
clusters) goes through ``atomic_write``: the bytes land in a temp file in the destination folder,
which is then renamed over the destination. A rename within one folder is atomic on POSIX, so a
partition is either the old file or the new one. A URL destination (``s3://``... see
``dataroot.py``) is written in one PUT instead, which object stores make atomic themselves.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO


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
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: Path | str, text: str) -> Path:
    """``atomic_write`` of UTF-8 text."""
    return atomic_write(path, lambda fh: fh.write(text.encode("utf-8")))
