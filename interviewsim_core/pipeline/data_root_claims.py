"""Which configuration is writing a data root right now: two configurations never write one interleaved.

The UI's runs use the UI's configuration and ``interviewsim run`` uses its flags; both write the
same ``data_root``. When they overlap, a table can hold one configuration's rows while Dagster's
latest event for it reports the other's (issue 33: ``method_scores`` re-made by the UI's automation
with the UI's judge between the command's write of the file and its record of it). So every writer
holds a claim while it writes: a small JSON file under ``<data_root>/.interviewsim_writers/`` naming
its configuration (``config_identity``: a hash of the effective configuration, secrets left out, as
``config_files.saved_form`` compares them), its host and pid. A writer refuses to start while a live
claim of another configuration exists, listing it; claims of the same configuration coexist (the
command and its own runs, two runs of the UI). A claim whose process is gone (killed) is removed by
the next reader, judged as ``processes.owner_gone`` judges; one of another host counts as live for
``FOREIGN_HOST_CLAIM_S``. A data root that is not a local folder (``s3://``) has no claims: there,
nothing stops two configurations interleaving (said in docs/DESIGN.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ..atomic_files import atomic_write_text
from ..dataroot import as_root, is_local, local_path
from ..errors import ConfigError
from ..processes import HOST, owner_gone

CLAIMS_DIR = ".interviewsim_writers"
FOREIGN_HOST_CLAIM_S = 24 * 3600
"""A claim of another host cannot be checked; after this long it is taken for a crashed writer's."""


class Claim(BaseModel):
    """One writer of a data root: who, with which configuration, since when."""

    model_config = ConfigDict(frozen=True)

    config_id: str
    host: str
    pid: int
    started: float
    writer: str
    """What is writing, for the message that names it (``interviewsim run``, a UI run's id)."""

    def describe(self) -> str:
        since = time.strftime("%H:%M:%S", time.localtime(self.started))
        return f"{self.writer} (configuration {self.config_id}, pid {self.pid} on {self.host}, since {since})"


def config_identity(cfg) -> str:
    """A short hash of ``cfg``'s effective configuration: equal for the same settings however spelled."""
    from .config_files import saved_form

    text = json.dumps(saved_form(cfg), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _folder(data_root) -> Path | None:
    root = as_root(data_root)  # a str (the IO manager's setting) as well as a Path or URL
    return local_path(root) / CLAIMS_DIR if is_local(root) else None


def live_claims(data_root) -> list[Claim]:
    """The claims of writers still alive (dead ones of this host are removed on the way), oldest first."""
    folder = _folder(data_root)
    if folder is None or not folder.is_dir():
        return []
    out = []
    for path in folder.glob("*.json"):
        try:
            claim = Claim.model_validate_json(path.read_text())
        except (OSError, ValidationError):
            continue  # being written (atomic writes make this rare) or not ours: never blocks anyone
        gone = owner_gone(claim.host, claim.pid) or (
            claim.host != HOST and time.time() - claim.started > FOREIGN_HOST_CLAIM_S)
        if gone:
            path.unlink(missing_ok=True)
        else:
            out.append(claim)
    return sorted(out, key=lambda c: c.started)


def other_configurations(data_root, config_id: str) -> list[Claim]:
    """Live claims on ``data_root`` of a configuration other than ``config_id``."""
    return [c for c in live_claims(data_root) if c.config_id != config_id]


def refusal(data_root, config_id: str, claims: list[Claim]) -> str:
    """The message of a writer that may not start: every other configuration writing, and what to do."""
    lines = "; ".join(c.describe() for c in claims)
    return (f"data root {data_root} is being written by a run of another configuration: {lines}. "
            f"This configuration ({config_id}) does not interleave its writes with another's: wait for that "
            f"run to end (or stop it), or use another --data-root.")


@contextmanager
def claim(data_root, config_id: str, writer: str) -> Iterator[Claim | None]:
    """Hold a claim on ``data_root`` for ``config_id`` while the block runs; None when the root is not local.

    Raises:
        ConfigError: a live writer of another configuration holds a claim (named in the message).
    """
    folder = _folder(data_root)
    if folder is None:
        yield None
        return
    others = other_configurations(data_root, config_id)
    if others:
        raise ConfigError(refusal(data_root, config_id, others))
    mine = Claim(config_id=config_id, host=HOST, pid=os.getpid(), started=time.time(), writer=writer)
    new_root = not folder.parent.exists()  # removed again if left empty
    path = folder / f"{HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"
    for attempt in range(3):
        folder.mkdir(parents=True, exist_ok=True)
        try:
            atomic_write_text(path, mine.model_dump_json())
            break
        except FileNotFoundError:  # another writer's release removed the (then empty) folder just now
            if attempt == 2:
                raise
    try:
        # Two writers starting in the same instant both saw no other claim: the later one (by start
        # time) yields, so at most one configuration goes on.
        rivals = [c for c in other_configurations(data_root, config_id) if c.started <= mine.started]
        if rivals:
            raise ConfigError(refusal(data_root, config_id, rivals))
        yield mine
    finally:
        path.unlink(missing_ok=True)
        for d in (folder, folder.parent) if new_root else (folder,):  # left as found; busy ones stay (OSError)
            try:
                d.rmdir()
            except OSError:
                break
