"""What a personality's evaluation is made from outside the project, as one version per personality.

Code and models are versioned by the lineage (``interviewsim_dagster.versioning``); this is the rest: the
files a person edits. When the configuration curates, the personality's transcripts, manifest rows and
reviewers' decisions (``transcripts_version``: what its curation reads); otherwise its document. The Dagster
layer records it as the personality's partition of an external asset that every asset reads, so an edited
transcript or document shows that personality's results stale in the UI, and only that personality's.
"""

from __future__ import annotations

from pathlib import Path

from ..pipeline.config import EvalConfig
from .stage import curates
from .step import file_digest, transcripts_version


def source_version(cfg: EvalConfig, personality_id: str, document: str | Path | None) -> str:
    """The personality's source version: ``transcripts:<hash>`` when ``cfg`` curates, else ``document:<sha256>``
    of ``document`` (its ``prepared_input.json``; "document:missing" when it has none)."""
    if curates(cfg):
        assert cfg.transcripts is not None and cfg.manifest is not None
        return "transcripts:" + transcripts_version(cfg.transcripts, cfg.manifest, cfg.corpus, personality_id)
    return "document:" + (file_digest(Path(document))[:24] if document is not None else "missing")
