"""Parquet on local (or shared) disk: one file per asset partition, readable without Dagster.

Layout under ``data_root`` is core's (``interviewsim_core.pipeline.storage``), so a Dagster run and
``runner.run_evaluation`` write interchangeable files that users query with DuckDB/pandas:

- ``<root>/<asset>.parquet`` for unpartitioned assets (the leaderboard),
- ``<root>/<asset>/<personality_id>.parquet`` for per-personality assets,
- ``<root>/<asset>/<personality_id>/<method>.parquet`` for personality x method assets.

Every write goes through core's ``write_frame``: the asset's explicit pyarrow schema from
``tables.py`` (a column that changes type fails at write time, not in a reader's query) and an
atomic temp-file + ``os.replace`` (a crashed run never leaves a torn file that looks valid).

A single-run backfill hands this manager every partition of the run at once: an asset returns a
``dict[partition_key, DataFrame]`` and each entry lands in its own file. Partitioned inputs are
always loaded as a ``dict[partition_key, DataFrame]`` for the same reason, so asset bodies are
written once for one partition or many.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import NoReturn

import dagster as dg
import pandas as pd

from interviewsim_core.dataroot import as_root, exists
from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.data_root_claims import claim
from interviewsim_core.pipeline.steps import BY_NAME, Trigger
from interviewsim_core.pipeline.storage import partition_path as _core_path
from interviewsim_core.pipeline.storage import read_frame, write_frame
from interviewsim_core.pipeline.study import Study, enter

from .defs.corpus.partitions import dims_of
from .defs.evaluate.automation import AUTOMATION_SENSOR

ALLOW_MISSING = "interviewsim/allow_missing_partitions"
"""AssetIn metadata flag: load only the upstream partitions that exist (methods not run yet must not
break a leaderboard); without it a missing upstream file is an error, as silence would hide a bug."""


def partition_path(
    root: Path | str, asset: str, partition_key: str | None, partitions_def: dg.PartitionsDefinition | None
) -> Path:
    """Where one asset partition lives: core's layout, so direct and orchestrated runs share files.

    Multi-partition keys are parsed through their definition, never split by hand.
    """
    if partition_key is None or partitions_def is None:
        return _core_path(root, asset)
    dims = dims_of(partitions_def, partition_key)
    return _core_path(root, asset, dims["personality"], dims.get("method"))


def read_partitions(root: Path | str, asset: str, keys, partitions_def: dg.PartitionsDefinition | None, *,
                    allow_missing: bool, columns: Collection[str] | None = None) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The frames of ``asset``'s partitions ``keys`` that exist (only ``columns``, when given), and the keys
    without a file.

    Raises:
        FileNotFoundError: a partition has no file and ``allow_missing`` is off (``ALLOW_MISSING``).
    """
    out: dict[str, pd.DataFrame] = {}
    missing: list[str] = []
    for key in keys:
        path = partition_path(root, asset, key, partitions_def)
        if exists(path):
            out[key] = read_frame(path, columns=columns)
        else:
            missing.append(key)
    if missing and not allow_missing:
        raise FileNotFoundError(f"{asset}: upstream partition(s) not materialised yet: {', '.join(sorted(missing))}")
    return out, missing


class ParquetIOManager(dg.ConfigurableIOManager):
    """Stores every asset partition as its own Parquet file under ``data_root`` (see module docstring)."""

    data_root: str
    """Directory or URL (``s3://bucket/prefix``, ``gs://``, ``file://``) of the Parquet tree; created on first
    write. Point it at shared storage (object storage) for multi-machine runs."""

    config_id: str = ""
    """Identity of the configuration whose runs write with this manager (``data_root_claims.config_identity``).
    Each run holds a claim on ``data_root`` for it from resource set-up to the run's end, and a run refuses to
    start, before any step, while a writer of another configuration (an ``interviewsim run`` with other flags)
    holds one: two configurations never interleave their writes. Empty (tests building definitions by hand): no claim."""

    study: str = ""
    """The study this configuration writes (``study.study_of``, as JSON). Each run enters it at resource set-up
    (``study.enter``): a run of another configuration than the data root's study is refused. Empty: not checked."""

    @contextmanager
    def yield_for_execution(self, context: dg.InitResourceContext) -> Iterator["ParquetIOManager"]:
        if not self.config_id:
            yield self
            return
        with ExitStack() as held:
            try:
                held.enter_context(claim(self.data_root, self.config_id, f"Dagster run {context.run_id}"))
                if self.study:
                    enter(self.data_root, Study.model_validate_json(self.study), rescore=is_rescore(context.dagster_run))
            except ConfigError as exc:  # another configuration writes the data root now, or wrote its study
                refuse_run(context, str(exc))
            yield self

    def _path(self, context: dg.OutputContext | dg.InputContext, key: str | None) -> Path:
        pdef = context.asset_partitions_def if key is not None else None
        return partition_path(self.data_root, context.asset_key.path[-1], key, pdef)

    def handle_output(self, context: dg.OutputContext, obj: pd.DataFrame | Mapping[str, pd.DataFrame]) -> None:
        asset = context.asset_key.path[-1]
        if not context.has_asset_partitions:
            if not isinstance(obj, pd.DataFrame):
                raise TypeError(f"{asset}: an unpartitioned asset must return a DataFrame, got {type(obj).__name__}")
            path = self._path(context, None)
            write_frame(obj, asset, path)
            context.add_output_metadata({"path": dg.MetadataValue.path(str(path))})
            return
        keys = list(context.asset_partition_keys)
        frames = _frames_by_key(asset, keys, obj)
        paths = []
        for key in keys:
            path = self._path(context, key)
            write_frame(frames[key], asset, path)
            paths.append(path)
        # Row counts are per partition (the asset's ``rows``): a run-wide total here would sit next to each
        # partition's own count on every partition's materialisation and contradict it.
        meta: dict[str, object] = {"partitions_written": len(keys)}
        if len(paths) == 1:
            meta["path"] = dg.MetadataValue.path(str(paths[0]))
        else:
            meta["data_dir"] = dg.MetadataValue.path(str(as_root(self.data_root) / asset))
        context.add_output_metadata(meta)

    def load_input(self, context: dg.InputContext) -> pd.DataFrame | dict[str, pd.DataFrame]:
        asset = context.asset_key.path[-1]
        if not context.has_asset_partitions:
            return read_frame(self._path(context, None))
        allow_missing = bool((context.definition_metadata or {}).get(ALLOW_MISSING))
        out, missing = read_partitions(self.data_root, asset, context.asset_partition_keys,
                                       context.asset_partitions_def, allow_missing=allow_missing)
        if missing:
            context.log.info(f"{asset}: {len(missing)} upstream partition(s) not materialised yet, skipped")
        return out


def _frames_by_key(asset: str, keys: list[str], obj: object) -> Mapping[str, pd.DataFrame]:
    if isinstance(obj, pd.DataFrame):
        if len(keys) != 1:
            raise TypeError(f"{asset}: a run over {len(keys)} partitions must return a dict keyed by partition")
        return {keys[0]: obj}
    if not isinstance(obj, Mapping):
        raise TypeError(f"{asset}: expected a DataFrame or a dict of DataFrames, got {type(obj).__name__}")
    absent = [k for k in keys if k not in obj]
    if absent:
        raise KeyError(f"{asset}: no output for partition(s) {absent}")
    return obj


def is_rescore(run) -> bool:
    """A run that may change a study's judges (``study.enter``): one that re-makes judgments after a judge change in
    the UI's configuration. Either the automation sensor's re-score of every judged partition
    (``automation.rescore_on_judge_change``), or a run launched by hand (a UI backfill) that selects judgments and
    calls no other model: the re-score of part of the study, e.g. one generator's answers (issue 44), the rest left
    stale on the old judges (the UI shows them so; the automation re-scores them when it runs)."""
    if run is None:
        return False
    steps = [BY_NAME[k.path[-1]] for k in run.asset_selection or () if k.path[-1] in BY_NAME]
    judging = [s for s in steps if s.trigger is Trigger.JUDGE_CHANGE and s.calls_models]
    if run.tags.get("dagster/sensor_name") == AUTOMATION_SENSOR:
        return bool(judging)
    return bool(judging) and all(s in judging or not s.calls_models for s in steps)


def refuse_run(context: dg.InitResourceContext, message: str) -> NoReturn:
    """End the run before any step with ``message`` as its failure, and nothing else.

    A refusal raised from a resource reached the run page as Dagster's ``DagsterResourceFunctionError ...
    io_manager`` with the message as its cause between two stack traces (issue 45). So the run is reported
    failed here with the message alone, and ended the way Dagster ends an interrupted run that has already
    failed: one engine event, no second failure."""
    if context.dagster_run is None or context.instance is None:  # resources built outside a run: nothing to report
        raise ConfigError(message)
    context.instance.report_run_failed(context.dagster_run, message=message)
    raise dg.DagsterExecutionInterruptedError(message)
