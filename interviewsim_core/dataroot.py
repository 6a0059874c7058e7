"""The data root as a local folder or a URL (``s3://``, ``gs://``, ``file://``...), one API for both.

On one machine results are files under a folder; on a cluster every worker must write where every
other worker (and the analyst's DuckDB) can read, i.e. object storage. Both go through here so the
rest of the code never asks which one it has: ``as_root`` returns a ``pathlib.Path`` for a local
folder and a ``upath.UPath`` (fsspec) for a URL; both support ``/``, ``.exists()``, ``.open()``,
``.name`` and ``.parent``, which is all the table layout (``pipeline/storage.py``) needs.

Atomic writes "where the store allows": a local folder (plain path or ``file://``) gets a temp file
in the destination folder then ``os.replace``; an object store gets the whole object in one PUT,
which S3, GCS and Azure make visible all at once or not at all (no reader ever sees half an object;
there is no rename to use there). Which fsspec backend a scheme needs (``s3fs``, ``gcsfs``...) is the
user's install; credentials come from the backend's usual environment (``AWS_*``, ``GOOGLE_*``),
never from the configuration.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, Union

__all__ = ["Root", "as_root", "atomic_put", "exists", "forget_listings", "is_local", "is_url", "local_path",
           "resolve_root"]

_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")

Root = Union[Path, Any]
"""A ``pathlib.Path`` (local) or a ``upath.UPath`` (a URL); typed loosely so importing this module never
imports fsspec."""


def is_url(value: object) -> bool:
    """``scheme://...`` (a one-letter scheme would be a Windows drive, not a URL)."""
    return isinstance(value, str) and bool(_URL.match(value)) or _is_upath(value)


def _is_upath(value: object) -> bool:
    return type(value).__module__.startswith("upath") and not isinstance(value, Path)


def as_root(value: str | os.PathLike[str] | Any) -> Root:
    """A local path stays a ``Path``; a URL (or a ``UPath``) becomes a ``UPath``."""
    if _is_upath(value):
        return value
    if isinstance(value, Path):
        return value
    text = os.fspath(value) if not isinstance(value, str) else value
    if is_url(text):
        from upath import UPath

        return UPath(text)
    return Path(text)


def is_local(path: Root) -> bool:
    """True for plain paths and ``file://`` URLs: a rename is atomic there."""
    return isinstance(path, Path) or getattr(path, "protocol", "") in ("file", "local")


def local_path(path: Root) -> Path:
    """The filesystem path of a local root (plain or ``file://``)."""
    return path if isinstance(path, Path) else Path(path.path)


def resolve_root(value: str | os.PathLike[str] | Any) -> Root:
    """Absolute for a local folder (so a run does not depend on its working directory); URLs as given."""
    root = as_root(value)
    return root.expanduser().resolve() if isinstance(root, Path) else root


def forget_listings(path: Root) -> None:
    """Drop what this process's fsspec filesystem remembers (listings, sizes, ETags) about ``path``.

    fsspec filesystems are cached per process and remember listings; a long-lived worker would
    otherwise read an object another worker has since replaced with the old ETag (s3fs then fails
    with ``FileExpired``) or list a folder without the partitions written since. Local paths: no-op.
    """
    if isinstance(path, Path):
        return
    try:
        # Everything, not just ``path``: s3fs keeps each sub-folder's listing separately.
        path.fs.invalidate_cache()
    except Exception:  # noqa: BLE001 - filesystems without a cache
        pass


def exists(path: Root) -> bool:
    """``path.exists()``, without trusting a listing cached before another worker wrote the object."""
    if not isinstance(path, Path):
        try:
            path.fs.invalidate_cache(str(path.parent.path))
        except Exception:  # noqa: BLE001 - filesystems without a cache
            pass
    return path.exists()


def atomic_put(path: Root, write: Callable[[IO[bytes]], None]) -> Root:
    """Write an object to a non-local root in one PUT (see module docstring); returns ``path``."""
    buf = io.BytesIO()
    write(buf)
    path.fs.pipe_file(path.path, buf.getvalue())
    try:
        path.fs.invalidate_cache(str(path.parent.path))
    except Exception:  # noqa: BLE001
        pass
    return path
