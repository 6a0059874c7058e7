"""``personality_sources``: what each personality's evaluation is made from, as an external asset.

Why it exists: a data version here is the lineage (code and models, ``versioning``), one per asset, since a
run over a range of personalities gives every partition of it the same version (Dagster 1.13). An edited
transcript or document changes no lineage, so the UI kept everything green while every result still used the
old text (issue 45). This asset carries the other half, per personality: its partition's data version is
core's ``source_version`` (the transcripts, manifest rows and review decisions when the config curates, else
the document). Every asset depends on it (P x M assets through their personality), so when a personality's
version changes, Dagster shows that personality's assets stale ("has a new dependency data version"), and
only that personality's, until a launch re-makes them.

Who records it: nobody materialises it. An observation is logged only when a personality's version differs
from the last one recorded, by the personality_registration sensor on every tick (an edit made while the UI
is up, ``interviewsim curate`` included) and by every run of the stage that reads the files, before its
first step, so what a run makes records the version it was made from (``engine``).

What the automation does with it: nothing (``factory.automation`` ignores it). A new source version means
new calls (a re-curation, new generations), which nobody asked for; the stale badges say what a launch
(``Materialize stale``, ``interviewsim run``) will re-make. Dagster skips the check for an unpartitioned asset
reading 100 or more partitions (``SKIP_PARTITION_DATA_VERSION_DEPENDENCY_THRESHOLD``), so from 100
personalities on, the leaderboard does not show it (docs/DESIGN.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import dagster as dg

from interviewsim_core.curation.sources import source_version
from interviewsim_core.pipeline.config import EvalConfig

from .partitions import personality_partitions

SOURCE = "personality_sources"
SOURCE_KEY = dg.AssetKey(SOURCE)
DATA_VERSION_TAG = "dagster/data_version"
"""The tag Dagster reads a materialisation's or observation's data version from (``freshness`` reads it too)."""

personality_sources = dg.AssetSpec(
    SOURCE_KEY, partitions_def=personality_partitions, group_name="corpus",
    description="What each personality's evaluation is made from, outside the project: its transcripts, manifest "
    "rows and review decisions when the configuration curates, else its prepared_input.json. Observed (never "
    "materialised) by the personality_registration sensor and by each run reading the files, only when it "
    "changed; every asset depends on it, so an edit shows that personality's results stale.")


def recorded(instance: dg.DagsterInstance, personalities: Sequence[str]) -> dict[str, str]:
    """The last source version observed per personality (two queries, whatever the number of personalities)."""
    ids = instance.get_latest_storage_id_by_partition(SOURCE_KEY, dg.DagsterEventType.ASSET_OBSERVATION,
                                                      set(personalities))
    if not ids:
        return {}
    records = instance.fetch_observations(dg.AssetRecordsFilter(asset_key=SOURCE_KEY, storage_ids=list(ids.values())),
                                          limit=len(ids)).records
    out = {}
    for r in records:
        obs = r.asset_observation
        if obs is not None and obs.partition is not None:
            out[obs.partition] = (obs.tags or {}).get(DATA_VERSION_TAG, "")
    return out


def changed(instance: dg.DagsterInstance, cfg: EvalConfig, personalities: Sequence[str],
            documents: Mapping[str, str]) -> list[dg.AssetObservation]:
    """One observation per personality whose source version differs from the last recorded (or was never recorded).

    ``documents``: personality -> its document, for a configuration that does not curate (a personality
    without one is "document:missing")."""
    if not personalities:
        return []
    before = recorded(instance, personalities)
    out = []
    for pid in personalities:
        now = source_version(cfg, pid, documents.get(pid))
        if before.get(pid) != now:
            out.append(dg.AssetObservation(asset_key=SOURCE_KEY, partition=pid,
                                           tags={DATA_VERSION_TAG: now, "dagster/data_version_is_user_provided": "true"}))
    return out
