"""The report: one unpartitioned asset writing report.html + report.json under ``<data_root>/report/``.

``definitions.py`` merges ``build_assets(cfg)`` and puts the asset in the global job with the
leaderboard; ``assets.py`` explains why it reads the data root rather than loading each table.
"""

from __future__ import annotations

from .assets import build_assets, report_paths

__all__ = ["build_assets", "report_paths"]
