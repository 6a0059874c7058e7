"""Where the ``report`` asset goes (the Report issue): ``assets.py`` beside this file, merged here.

Contract for that asset: unpartitioned, group ``report``, input ``leaderboard`` (a DataFrame) plus,
when it needs per-personality rows, ``method_scores`` etc. through ``AssetIn(partition_mapping=
AllPartitionMapping(), metadata={ALLOW_MISSING: True})`` (``io_managers.ALLOW_MISSING``) so a method
not run yet does not fail the report. It writes its HTML/JSON under ``EvalConfig.data_root`` itself
and returns nothing (``io_manager_key`` not needed when the return type is ``None``).

Until that module exists this domain contributes no definitions (no placeholder asset).
"""

from __future__ import annotations

import importlib.util

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig


def build_defs(cfg: EvalConfig) -> dg.Definitions:
    if importlib.util.find_spec(f"{__name__}.assets") is None:
        return dg.Definitions()
    from .assets import build_assets

    return dg.Definitions(assets=build_assets(cfg))
