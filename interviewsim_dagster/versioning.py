"""Versions: Dagster's logical data versions for staleness, and split versions for ``interviewsim run``.

Why no content hash as Dagster data version any more: a run over a partition range gives every
partition of the range the same data version (Dagster 1.13 has no per-partition version for a
materialisation), and the per-partition content versions this project used to record as
observations disagreed with it, so the UI showed aggregates "Unsynced" after an identical re-run
(issue 19). Dagster's own logical version, ``hash(code version, upstream versions)``, is stable when
nothing changed and changes with a judge (code version), but in a stage multi-asset Dagster's own
logical version moved on every identical re-run (its input provenance is read per asset, not per
partition). So every materialisation carries ``lineage_version``: the step's code version
hashed with its inputs' lineage versions, the same for every range and every re-run, new whenever a
model, prompt or setting anywhere upstream changes.

What a logical version does not see is an edit of a corpus file. Every materialisation of a per-
personality or per-personality x method partition therefore carries ``split_version`` metadata,
the hash of that personality's held-out split when it was made, and ``interviewsim run`` re-runs a
partition whose personality's split changed since (``freshness``). The UI sees the same edit through
``personality_sources`` (``defs/corpus/sources.py``), an asset every asset reads whose per-personality
version is the files themselves.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.config import JUDGE_CONTRACTS, EvalConfig
from interviewsim_core.pipeline.steps import BY_NAME, Step, Trigger, model_version

SPLIT_VERSION = "split_version"
"""Metadata key on every partitioned materialisation: the hash of the personality's split it was made from."""

TRANSCRIPTS_VERSION = "transcripts_version"
"""Metadata key on every partition of the curation's first asset (``transcript_turns``, which reads the files): the
hash of what the curation reads besides code and model (``curation.step.transcripts_version``), with
``CURATION_SOURCES``, the folders it was computed from. A change makes that partition outdated, and with it every
curation asset after it in the same run (``freshness.narrow``)."""
CURATION_SOURCES = "curation_sources"

OPERATIONAL_SUFFIXES = ("cache_hit", "cache_key", "attempts", "cost_usd")
"""Columns (also prefixed, ``pass1_cache_hit``) that say how a call went, not what the table holds."""


def content_version(df: pd.DataFrame, code_version: str | None) -> str:
    """``sha256(code version, content)`` of one partition's table, order of columns ignored."""
    keep = sorted(c for c in df.columns if not str(c).endswith(OPERATIONAL_SUFFIXES))
    body = df[keep].to_json(orient="split", index=False, default_handler=str, double_precision=12)
    digest = hashlib.sha256(f"{code_version or ''}\0{body}".encode("utf-8")).hexdigest()
    return digest[:24]


def split_version(split) -> str:
    """The hash of one personality's held-out split (every pair, its side, its text): what every
    partition of that personality is made from, besides code and models."""
    from interviewsim_core.pipeline.split_tables import split_table

    return content_version(split_table(split), None)


def judged_aggregate(step: Step) -> bool:
    """A table computed (no model call) from judgments: one row or column per judge, so it changes meaning
    with the judges. ``method_scores``, ``personality_scores``, ``leaderboard``; not the report's files."""
    if step.calls_models or step.writes_files:
        return False
    return any(BY_NAME[i.step].trigger is Trigger.JUDGE_CHANGE or judged_aggregate(BY_NAME[i.step])
               for i in step.inputs)


def code_version(step: Step, cfg: EvalConfig) -> str | None:
    """Core's code version; judged aggregates take the judges' identities, so the UI shows them stale
    after a judge change together with the judgments (a compute step's version is otherwise ``None``)."""
    if judged_aggregate(step):
        return model_version(cfg.effective_judges, JUDGE_CONTRACTS)
    return step.code_version(cfg)


def lineage_version(step: Step, cfg: EvalConfig) -> str:
    """The data version every materialisation of ``step`` carries: its code version and its inputs' lineage
    versions, hashed (this module's docstring says why a data version cannot be per partition or content-based here).

    The same whatever the run's range and however often it is re-run, so an identical re-run leaves
    nothing "Unsynced" downstream; any model, prompt or setting change upstream changes it, so what
    reads the step shows stale and the free aggregates refresh (``automation``)."""
    ups = sorted(lineage_version(BY_NAME[i.step], cfg) for i in step.inputs if BY_NAME[i.step].enabled(cfg))
    blob = f"{step.name}\0{code_version(step, cfg) or ''}\0" + "\0".join(ups)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:24]


def reread_inputs(context: dg.AssetExecutionContext) -> None:
    """Make the step record the upstream materialisations stored by now as what it read.

    Dagster reads a step's input provenance (``dagster/input_event_pointer/*``, the inputs' data
    versions) when the step starts. A run of ``interviewsim run`` starts while the runs it reads from are
    still recording and waits for them (``action_worker.wait_turn``), so without this its aggregates
    pointed before (or at no) upstream materialisation, and the UI showed the leaderboard "Unsynced"
    after a plain run (issue 33: "method_scores has a new data version")."""
    context.get_step_execution_context().fetch_external_input_asset_version_info()


def transcripts_metadata(cfg: EvalConfig, personality_id: str) -> dict[str, str]:
    """A curation partition's source version and where it was read (what ``transcripts_changed`` recomputes)."""
    from interviewsim_core.curation.step import transcripts_version

    sources = {"transcripts": str(cfg.transcripts), "manifest": str(cfg.manifest), "corpus": str(cfg.corpus)}
    return {TRANSCRIPTS_VERSION: transcripts_version(**sources, pid=personality_id),
            CURATION_SOURCES: json.dumps(sources, sort_keys=True)}


def transcripts_changed(metadata: Mapping[str, Any], personality_id: str) -> bool:
    """True when a curation partition's transcripts, manifest rows or review decisions changed since it was made
    (``interviewsim run`` then re-curates that personality, and only it). False for any other partition."""
    from interviewsim_core.curation.step import transcripts_version

    recorded, sources = (getattr(metadata.get(k), "value", metadata.get(k)) for k in (TRANSCRIPTS_VERSION, CURATION_SOURCES))
    if recorded is None or sources is None:
        return False
    return transcripts_version(**json.loads(sources), pid=personality_id) != recorded
