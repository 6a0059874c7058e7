"""Validity of model outputs per contract and per constraint sent, and what to try when most fail.

Why a table of its own: with a real (small, local) model the first question is not "which method
wins" but "did the judges answer in shape at all", and whether constrained decoding helped
(issue 22). The rows come from the call columns every model-call table carries (``contract``,
``status``, ``constraint``, ``truncated``), so the report and the end-of-run summary count alike.
Tables written before those columns existed count as constraint ``off``, truncated unknown (0).
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

__all__ = ["VALIDITY_COLUMNS", "validity_table", "validity_advice"]

VALIDITY_COLUMNS = ("contract", "constraint", "outputs", "ok", "invalid", "failed", "truncated", "valid_share")

MOSTLY_INVALID = 0.5
"""A contract whose valid share is at most this gets the advice lines."""


def _calls(df: pd.DataFrame, prefix: str = "") -> pd.DataFrame:
    status, contract = prefix + "status", prefix + "contract"
    if df.empty or status not in df.columns or contract not in df.columns:
        return pd.DataFrame(columns=["contract", "constraint", "status", "truncated"])
    out = pd.DataFrame({"contract": df[contract], "status": df[status]})
    out["constraint"] = df[prefix + "constraint"].fillna("off") if prefix + "constraint" in df.columns else "off"
    out["truncated"] = (df[prefix + "truncated"].fillna(False).astype(bool)
                        if prefix + "truncated" in df.columns else False)
    return out[out["status"].notna()]


def validity_table(tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (contract, constraint): outputs, ok/invalid/failed/truncated counts, valid share."""
    parts = []
    for df in tables.values():
        if df is None or df.empty:
            continue
        parts.append(_calls(df))
        for prefix in ("pass1_", "pass2_"):  # the premise judge's two calls per row
            parts.append(_calls(df, prefix))
    calls = pd.concat([p for p in parts if not p.empty], ignore_index=True) if any(not p.empty for p in parts) \
        else pd.DataFrame(columns=["contract", "constraint", "status", "truncated"])
    if calls.empty:
        return pd.DataFrame(columns=list(VALIDITY_COLUMNS))
    rows = []
    for (contract, constraint), g in calls.groupby(["contract", "constraint"], sort=True):
        st = g["status"].value_counts()
        n = len(g)
        rows.append({"contract": contract, "constraint": constraint, "outputs": n, "ok": int(st.get("ok", 0)),
                     "invalid": int(st.get("invalid", 0)), "failed": int(st.get("failed", 0)),
                     "truncated": int(g["truncated"].sum()), "valid_share": st.get("ok", 0) / n})
    return pd.DataFrame(rows, columns=list(VALIDITY_COLUMNS))


def validity_advice(table: pd.DataFrame) -> list[str]:
    """Lines naming each mostly-invalid contract, its likely causes and the settings that help."""
    out = []
    for r in table.itertuples(index=False):
        if not r.outputs or r.valid_share > MOSTLY_INVALID:
            continue
        causes = []
        if r.truncated:
            causes.append(f"{r.truncated} cut at max_tokens (raise the model's max_tokens)")
        if r.failed:
            causes.append(f"{r.failed} failed calls (timeouts: raise timeout_s, lower concurrency; "
                          "'context window exceeded': a shorter method or a larger n_ctx/context_window)")
        if r.invalid - r.truncated > 0:
            fix = ("structured_output: json_schema (or json_object / grammar for llama.cpp servers)"
                   if r.constraint == "off" else "a larger model: the reply broke the format even constrained")
            causes.append(f"{r.invalid - r.truncated} broke the format ({fix})")
        out.append(f"  advice: {r.contract} [{r.constraint}]: {r.ok} of {r.outputs} valid; "
                   + "; ".join(causes) + ". See docs/CONFIG.md, 'A local server'.")
    return out
