"""What a stage records of each partition it writes, whoever wrote it: a stage run's own scheduler
(``engine``) or the action's worker process (``action_worker``), whose tables the run recording them
receives. Computed by the stage run either way, so a partition carries the same metadata
(``tests/dagster/test_action_worker.py`` compares them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.steps import Cell, Step

from .batching import summary_metadata
from .presenters import PRESENTERS
from .versioning import SPLIT_VERSION, split_version, transcripts_metadata


def partition_metadata(cfg: EvalConfig, split: Callable[[str], Any]) -> Callable[..., dict[str, Any]]:
    """``(step, cell, out, inputs, summary) -> metadata`` of one written partition: the step's own headline
    (``presenters``), its table's summary (``table_summary``, computed where the table was written) and, for a
    personality's partition, the version of the split it was made from (what ``interviewsim run`` compares to
    see an edited corpus file; each personality's is hashed once).

    ``out()`` and ``inputs()`` give the partition's output and inputs, read only when asked for: a recording
    of the worker's partition reads its file back only for a step with a presenter, or the curation's
    document step (which says whether the document was written)."""
    versions: dict[str, str] = {}

    def meta(step: Step, cell: Cell, out: Callable[[], Any], inputs: Callable[[], dict[str, Any]],
             summary: dict[str, Any] | None) -> dict[str, Any]:
        present = PRESENTERS.get(step.name)
        found: dict[str, Any] = {}
        if present is not None:  # the step's own headline first, then the generic table metadata
            found.update(present(cfg, cell, inputs, out()))
        if summary is not None:
            found.update(summary_metadata(summary))
        if step.curation:  # made before the personality's document: no split version, except on the step that writes it
            if not step.inputs:  # the curation's first step (it reads the files): what it read
                found.update(transcripts_metadata(cfg, cell.personality))
            if not step.makes_document:
                return found
            made = out()
            if not (isinstance(made, pd.DataFrame) and bool(made["written"].any())):
                return found  # the split of a personality the curation refused does not exist
        if cell.personality is not None:
            if cell.personality not in versions:
                versions[cell.personality] = split_version(split(cell.personality))
            found[SPLIT_VERSION] = versions[cell.personality]
        return found

    return meta
