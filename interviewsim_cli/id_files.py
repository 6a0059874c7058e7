"""Where the command line keeps the whole of a long id list it prints summarised (``interviewsim_core.id_lists``).

``interviewsim register`` of 1,000 personalities prints ``registered 1,000 personality partition(s): A ... Z
(all 1,000: <file>)`` and writes every id, one per line, to ``$DAGSTER_HOME/interviewsim_lists/<name>.txt``:
beside the instance those partitions belong to, rewritten by the next command that lists the same thing.
A short list is printed whole and writes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from interviewsim_core.atomic_files import atomic_write_text
from interviewsim_core.id_lists import fits_whole, summarise_ids

LISTS = "interviewsim_lists"
"""The folder under ``DAGSTER_HOME`` holding the lists."""


def ids_line(ids: Sequence[str], name: str) -> str:
    """``ids`` as ``summarise_ids`` prints them; a long list is first written whole to ``<name>.txt``.

    Called once the command has set ``DAGSTER_HOME`` (``run_cmds.ensure_dagster_home``), as every command
    that registers or removes partitions does before it opens the instance.
    """
    if fits_whole(ids):
        return summarise_ids(ids, "")
    path = Path(os.environ["DAGSTER_HOME"]) / LISTS / f"{name}.txt"
    return summarise_ids(ids, str(atomic_write_text(path, "".join(f"{i}\n" for i in ids))))
