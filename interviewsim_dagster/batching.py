"""A partition's summary (``interviewsim_core.pipeline.table_summary``) as Dagster metadata: its preview as a
table value, which the asset page shows inline (a markdown value needs a click).

A stage run reports these per partition; the step's totals over the whole run (``step_*``) come from the
scheduler's counts (``engine.run_stage``).
"""

from __future__ import annotations

from typing import Any

import dagster as dg
import pandas as pd

from interviewsim_core.pipeline.table_summary import Preview, cell_text


def summary_metadata(summary: dict[str, Any]) -> dict[str, Any]:
    """``summary`` with its ``preview`` as a table value (numbers and booleans typed, so they sort as numbers)."""
    found = dict(summary)
    preview: Preview = found["preview"]
    names = [name for name, _kind in preview.columns]
    found["preview"] = dg.MetadataValue.table(
        [dg.TableRecord(dict(zip(names, row))) for row in preview.rows],
        schema=dg.TableSchema(columns=[dg.TableColumn(name, kind) for name, kind in preview.columns]))
    return found


def preview_markdown(df: pd.DataFrame, rows: int = 10) -> str:
    """The first rows as a markdown table, long cells cut so the UI stays readable."""
    if df.empty:
        return "_no rows_"
    head = df.head(rows).copy()
    for col in head.columns:
        head[col] = [cell_text(v) for v in head[col]]
    return head.to_markdown(index=False)
