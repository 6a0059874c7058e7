"""Planned model calls and how their outcomes become table rows.

Each step is split in two so the orchestrator can batch: ``plan_*`` returns ``PlannedCall``s (no
model is called), the caller runs any number of plans, across partitions and judges, through one
``Gateway.run_many``, and ``assemble_*`` turns the results back into that step's table. The key
of a planned call is globally unique (it starts with the table name and the partition), so the
results of one big batch can be handed to every assembler as one mapping.
"""

from __future__ import annotations

import functools

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from types import ModuleType
from typing import Any, NamedTuple, Protocol

import pandas as pd

from ..llm.types import Message
from ..llm.types import CallRequest, CallResult, ModelConfig
from .tables import CALL_COLUMNS, empty_frame, schema_of


class PlannedCall(NamedTuple):
    """One call a step needs: its key, the model to ask, the request, and the row fields known up front."""

    key: Hashable
    model: ModelConfig
    request: CallRequest
    row: dict[str, Any]
    failure: str | None = None
    """Set when the call cannot be made because an input of it failed (a retrieval method's embedder):
    nothing is sent and the row is a ``failed`` result with this error (``failed_result``), so the
    partition is written and every other partition of the run goes on."""
    given: Any = None
    """The parsed value of a row built without a model (a calibration method's candidate,
    ``strategies.calibration``): nothing is sent, the row is ``ok`` with this value (``failed_result``)."""

    @property
    def unsent(self) -> bool:
        """Whether this call's result is known at planning (a failure or a given value): never sent."""
        return self.failure is not None or self.given is not None


CALIBRATION_MODEL = "calibration (no model)"
"""The ``model`` of a row whose value was given at planning, not asked of a model."""


def failed_result(call: PlannedCall) -> CallResult:
    """The result of a call known at planning: ``failed`` with its ``failure``, or ``ok`` with its
    ``given`` value (a calibration candidate). Never sent, nothing spent."""
    if call.failure is None and call.given is not None:
        return CallResult(status="ok", value=call.given, model=CALIBRATION_MODEL)
    return CallResult(status="failed", error=call.failure, model=call.model.name)


class CallRunner(Protocol):
    """What the steps need from the gateway (``llm.gateway.Gateway`` satisfies it)."""

    def run_many(self, calls: Sequence[tuple[ModelConfig, CallRequest]]) -> list[CallResult]: ...


Results = Mapping[Hashable, CallResult]


def check_unique_keys(planned: Sequence[PlannedCall]) -> None:
    """Raise ValueError when two planned calls share a key: their results would overwrite each other."""
    keys = [p.key for p in planned]
    if len(set(keys)) != len(keys):
        dup = next(k for k in keys if keys.count(k) > 1)
        raise ValueError(f"two planned calls share the key {dup!r}")


def run_calls(gateway: CallRunner, planned: Iterable[PlannedCall]) -> dict[Hashable, CallResult]:
    """Run every planned call in one gateway batch and key the results as planned.

    Raises:
        ValueError: two planned calls share a key (``check_unique_keys``).
    """
    planned = list(planned)
    check_unique_keys(planned)
    out = {p.key: failed_result(p) for p in planned if p.unsent}
    planned = [p for p in planned if not p.unsent]
    if not planned:
        return out
    price = getattr(gateway, "run_planned", None)  # the cost planner wants each call's step and row
    if price is not None:
        results = price([(p.key, p.model, p.request, p.row) for p in planned])
    else:
        results = gateway.run_many([(p.model, p.request) for p in planned])
    out.update(zip((p.key for p in planned), results, strict=True))
    return out


def contract_request(
    contract: ModuleType, messages: Sequence[Message], *, item_id: str,
    parser: Callable[[str], Any] | None = None, sample_index: int = 0,
) -> CallRequest:
    """A request judged by ``contract``'s own parser (or a bound variant of it) under its current version."""
    from ..contracts import version_of

    return CallRequest(
        messages=tuple(messages),
        contract=contract.NAME,
        contract_version=version_of(contract.NAME),
        parser=parser or contract.parse,
        sample_index=sample_index,
        item_id=item_id,
        **output_shape(contract),
    )


def output_shape(contract: Any) -> dict[str, Any]:
    """What a contract module says of its output's shape and size (``output_schema()`` for a JSON
    contract, ``OUTPUT_GRAMMAR`` for a tagged/line one, ``MAX_TOKENS``), as CallRequest fields.
    Sent as a constraint and a cap where the model allows (llm/constraints.py); absent: none."""
    return dict(_output_shape(contract))


@functools.lru_cache(maxsize=None)
def _output_shape(contract: Any) -> tuple[tuple[str, Any], ...]:
    """``output_shape`` made once per contract module: pydantic's ``model_json_schema`` costs ~6 ms,
    and every planned and sent call carries its contract's schema (it was most of a plan's CPU).
    The schema dict is shared by every request of the contract: read, never mutated."""
    schema = getattr(contract, "output_schema", None)
    return (("output_schema", schema() if callable(schema) else None),
            ("output_grammar", getattr(contract, "OUTPUT_GRAMMAR", None)),
            ("max_tokens", getattr(contract, "MAX_TOKENS", None)))


def call_columns(model: ModelConfig, request: CallRequest, result: CallResult) -> dict[str, Any]:
    """The call columns of DESIGN.md for one result; raw text is kept whatever the status."""
    return {
        "model": result.model or model.model,
        "contract": request.contract,
        "contract_version": request.contract_version,
        "status": result.status,
        "raw_output": result.raw,
        "parse_error": result.parse_error,
        "error": result.error,
        "attempts": len(result.attempts),
        # Served entirely from the cache: nothing was sent to a provider for this row.
        "cache_hit": bool(result.cache_hits > 0 and result.calls_made == 0),
        # The prompt behind the row: `interviewsim cache show <cache_key>` rebuilds it (the audit trail).
        "cache_key": result.cache_key,
        "prompt_tokens": int(result.prompt_tokens),
        "completion_tokens": int(result.completion_tokens),
        "cached_prompt_tokens": int(result.cached_prompt_tokens),
        "cost_usd": float(result.cost_usd),
        # What shaped the reply (llm/constraints.py) and how it ended: validity per constraint in the
        # report, and a reply cut at its cap counted as truncated rather than as a format breach.
        "constraint": result.constraint,
        "finish_reason": result.finish_reason,
        "truncated": bool(result.truncated),
    }


def result_for(results: Results, key: Hashable) -> CallResult:
    """The result of one planned call; a missing one is a caller bug, so it says which key."""
    try:
        return results[key]
    except KeyError:
        raise KeyError(f"no result for planned call {key!r}: run the plan before assembling it") from None


def assemble(
    table: str,
    planned: Sequence[PlannedCall],
    results: Results,
    payload: Callable[[Any], dict[str, Any]],
) -> pd.DataFrame:
    """Rows of ``table``: the planned row, the parsed payload when ok (nulls otherwise), the call columns.

    Invalid and failed outputs stay as rows with null payload and their raw text: counted, never guessed.
    """
    if not planned:
        return empty_frame(table)
    columns = schema_of(table).names
    payload_cols = [c for c in columns if c not in CALL_COLUMNS and c not in planned[0].row]
    rows = []
    for p in planned:
        res = result_for(results, p.key)
        values = payload(res.value) if res.status == "ok" else dict.fromkeys(payload_cols)
        rows.append({**p.row, **values, **call_columns(p.model, p.request, res)})
    return pd.DataFrame(rows, columns=columns)
