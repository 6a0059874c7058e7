"""Run the two-pass premise judge over conclusions and shape its ``premise_verdicts`` table.

Pass 1 for every conclusion goes through the gateway as one batch, then pass 2 for every
conclusion whose pass 1 parsed, as a second batch: pass 2 needs pass 1's JSON, and batching
each pass lets the gateway run a whole partition concurrently. The passes are planned
(``plan_pass1`` / ``plan_pass2``, no model called) and assembled (``assemble_verdicts``) apart so
the evaluation graph's runner can put them into the same batches as other steps' calls. A pass-1 output that breaks its
contract is re-asked by the gateway (the parser raises), then recorded ``invalid`` with its raw
text; pass 2 is not run for it and the verdict is INVALID. A transport failure gives ERROR.
Neither is counted as PASS or FAIL (``metrics.py`` reports them beside the pass rate).

The table's columns are the ``premise_verdicts`` schema of ``pipeline/tables.py``: the
conclusion, the verdict fields, both passes' normalised JSON, and each pass's call columns
prefixed ``pass1_`` / ``pass2_`` (all null for a pass that was not run).
"""

from __future__ import annotations

import functools
from typing import Any, Sequence

import pandas as pd

from ..contracts import premise as contract
from ..contracts import version_of
from ..llm.constraints import strict_json_schema
from ..llm.types import CallRequest, CallResult, ModelConfig
from ..pipeline.calls import CallRunner, PlannedCall, Results, call_columns, result_for, run_calls
from ..pipeline.tables import CALL_COLUMNS, conform, empty_frame
from ..split import HeldOutSplit
from .conclusions import Conclusion, atomic_item_conclusions, fact_summary_conclusions
from .verdict import Verdict, combine, unusable

TABLE = "premise_verdicts"
PASS1_PREFIX = "pass1_"
PASS2_PREFIX = "pass2_"


PASS1_MAX_TOKENS = 800
"""Reply cap of the blind pass: eleven short fields of seed 002's shape (a few hundred tokens when
answered), with room; without a cap a small model writes until the server's context is full."""
PASS2_MAX_TOKENS = 1200
"""Reply cap of the verification pass: its lists of unsupported elements and attributions can be longer."""


@functools.cache
def output_schema(result_model: type) -> dict[str, Any]:
    """The JSON schema of a pass's result model, sent as its constraint (llm/constraints.py), like the
    other JSON contracts' ``output_schema()``; the parsers stay as strict as before."""
    return strict_json_schema(result_model)


def pass1_request(c: Conclusion) -> CallRequest:
    """The blind call for one conclusion: built from the statement alone."""
    return CallRequest(
        messages=tuple(contract.build_pass1_messages(c.conclusion)),
        contract=contract.PASS1_NAME,
        contract_version=version_of(contract.PASS1_NAME),
        parser=contract.parse_pass1,
        item_id=c.conclusion_id,
        output_schema=output_schema(contract.Pass1Result),
        max_tokens=PASS1_MAX_TOKENS,
    )


def pass2_request(c: Conclusion, p1: contract.Pass1Result) -> CallRequest:
    """The verification call: conclusion, full pass-1 JSON, peer id and the whole window."""
    return CallRequest(
        messages=tuple(
            contract.build_pass2_messages(
                c.conclusion, p1.to_json(), c.peer_id, c.window, window_note=c.window_note
            )
        ),
        contract=contract.PASS2_NAME,
        contract_version=version_of(contract.PASS2_NAME),
        parser=contract.parse_pass2,
        item_id=c.conclusion_id,
        output_schema=output_schema(contract.Pass2Result),
        max_tokens=PASS2_MAX_TOKENS,
    )


def _prefixed(prefix: str, cols: dict | None) -> dict:
    if cols is None:
        return {prefix + k: None for k in CALL_COLUMNS}
    return {prefix + k: v for k, v in cols.items()}


def _verdict_for(r1: CallResult, r2: CallResult | None) -> Verdict:
    if r1.status != "ok":
        return unusable("INVALID" if r1.status == "invalid" else "ERROR", "pass1")
    assert r2 is not None
    if r2.status != "ok":
        return unusable("INVALID" if r2.status == "invalid" else "ERROR", "pass2", r1.value)
    return combine(r1.value, r2.value)


def _labels(r1: CallResult, r2: CallResult | None) -> list[str]:
    """Both passes' free-text labels, first occurrence kept, in pass order."""
    out: list[str] = []
    for r in (r1, r2):
        if r is not None and r.status == "ok":
            out.extend(lab for lab in r.value.labels if lab not in out)
    return out


def _check_ids(conclusions: Sequence[Conclusion]) -> None:
    ids = [c.conclusion_id for c in conclusions]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise ValueError(f"conclusion ids must be unique; repeated: {dup}")


def plan_pass1(conclusions: Sequence[Conclusion], premise_judge: ModelConfig,
               key_prefix: tuple = (TABLE,)) -> list[PlannedCall]:
    """Pass 1 of every conclusion (the blind read); the conclusion rides along in the planned row.

    Raises:
        ValueError: two conclusions share an id.
    """
    _check_ids(conclusions)
    return [PlannedCall((*key_prefix, c.conclusion_id, 1), premise_judge, pass1_request(c), {"conclusion": c})
            for c in conclusions]


def plan_pass2(pass1: Sequence[PlannedCall], results: Results) -> list[PlannedCall]:
    """Pass 2 of every conclusion whose pass 1 parsed: it needs pass 1's JSON, hence a second batch."""
    out = []
    for p in pass1:
        r1 = result_for(results, p.key)
        if r1.status == "ok":
            c = p.row["conclusion"]
            out.append(PlannedCall((*p.key[:-1], 2), p.model, pass2_request(c, r1.value), p.row))
    return out


def assemble_verdicts(planned: Sequence[PlannedCall], results: Results) -> pd.DataFrame:
    """One ``premise_verdicts`` row per pass-1 call of ``planned`` (pass-2 calls are matched by key)."""
    pass1 = [p for p in planned if p.key[-1] == 1]
    pass2 = {p.key[:-1]: p for p in planned if p.key[-1] == 2}
    if not pass1:
        return empty_frame(TABLE)
    rows = []
    for p1 in pass1:
        c: Conclusion = p1.row["conclusion"]
        r1 = result_for(results, p1.key)
        p2 = pass2.get(p1.key[:-1])
        r2 = result_for(results, p2.key) if p2 is not None else None
        v = _verdict_for(r1, r2)
        rows.append(
            {
                "personality_id": c.personality_id,
                "artifact_kind": c.artifact_kind,
                "conclusion_id": c.conclusion_id,
                "conclusion": c.conclusion,
                "peer_id": c.peer_id,
                "verdict": v.verdict,
                "primary_cause": v.primary_cause,
                "reasons": list(v.reasons),
                "decontextuality_score": v.decontextuality_score,
                "labels": _labels(r1, r2),
                "attributions": [a.attribution for a in v.attributions],
                "pass1_json": r1.value.to_json() if r1.status == "ok" else None,
                "pass2_json": r2.value.to_json() if r2 is not None and r2.status == "ok" else None,
                **_prefixed(PASS1_PREFIX, call_columns(p1.model, p1.request, r1)),
                **_prefixed(PASS2_PREFIX, call_columns(p2.model, p2.request, r2) if p2 is not None else None),
            }
        )
    return conform(pd.DataFrame(rows), TABLE)


def judge_conclusions(
    conclusions: Sequence[Conclusion], premise_judge: ModelConfig, gw: CallRunner
) -> pd.DataFrame:
    """Judge every conclusion with both passes; one ``premise_verdicts`` row per conclusion.

    Args:
        conclusions: what to judge; ``conclusion_id`` must be unique within the batch.
        premise_judge: the model that answers both passes.
        gw: the gateway (anything with ``run_many``).

    Raises:
        ValueError: two conclusions share an id.
    """
    pass1 = plan_pass1(conclusions, premise_judge)
    if not pass1:
        return empty_frame(TABLE)
    results = run_calls(gw, pass1)
    pass2 = plan_pass2(pass1, results)
    results.update(run_calls(gw, pass2))
    return assemble_verdicts([*pass1, *pass2], results)


def premise_verdicts_for(
    split: HeldOutSplit,
    fact_summary_df: pd.DataFrame | None,
    atomic_items_df: pd.DataFrame | None,
    premise_judge: ModelConfig,
    gw: CallRunner,
    embedder=None,
) -> pd.DataFrame:
    """The ``premise_verdicts`` partition of one personality.

    Judges every statement of its fact summary and every atomic item (rows whose build call is
    not ``ok`` have nothing to judge and are skipped; they are already counted as invalid in
    their own tables).

    Args:
        embedder: when given, the free-text labels of this partition are clustered with it and
            the ranked cluster table is attached as ``df.attrs["label_clusters"]`` (for asset
            metadata); the table itself is unchanged.
    """
    conclusions = [
        *fact_summary_conclusions(split, fact_summary_df),
        *atomic_item_conclusions(split, atomic_items_df),
    ]
    df = judge_conclusions(conclusions, premise_judge, gw)
    if embedder is not None:
        from .clustering import label_cluster_table

        df.attrs["label_clusters"] = label_cluster_table(df, embedder)
    return df
