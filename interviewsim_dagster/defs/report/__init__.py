"""Where the ``report`` asset goes (the Report issue): ``assets.py`` beside this file, merged here.

Contract for that asset: unpartitioned, group ``report``, input ``leaderboard`` (a DataFrame) plus,
when it needs per-personality rows, ``method_scores`` etc. through ``AssetIn(partition_mapping=
AllPartitionMapping(), metadata={ALLOW_MISSING: True})`` (``io_managers.ALLOW_MISSING``) so a method
not run yet does not fail the report. It writes its HTML/JSON under ``EvalConfig.data_root`` itself
and returns nothing (``io_manager_key`` not needed when the return type is ``None``).

``definitions.py`` puts it in the global job with the leaderboard. Until that module exists this
domain contributes no asset (no placeholder).
"""

from __future__ import annotations

import importlib.util

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig


def build_assets(cfg: EvalConfig) -> list[dg.AssetsDefinition]:
    """The report domain's assets (``assets.build_assets(cfg)``), or none while that module does not exist."""
    if importlib.util.find_spec(f"{__name__}.assets") is None:
        return []
    from .assets import build_assets as build

    return list(build(cfg))
