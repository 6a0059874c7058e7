"""Asset checks' partition states, kept between reads: what the UI's asset pages ask of every check they show.

Why: each asset page (its Partitions tab, the leaderboard's page) asks the live state of the asset's checks and its
neighbours' (``AssetGraphLiveQuery``: every check's partition statuses). Dagster's open-source storages keep no
such state (``get_checkpointed_asset_check_state`` returns an empty one), so every read rebuilds it from every
partition's latest check execution, and the rebuild grows with the square of the partitions: each record's
partition is added to a subset by copying it (``AssetCheckState.with_updates``). At 1,000 personalities x 11
methods, a P x M check's 11,000 partitions took 0.6 s, the ``generations`` page's four checks 2.5 s on every
visit, and all 15 checks 6.3 s (issue 43, docs/PERFORMANCE.md).

Here the state each read builds is stored in Dagster's key-value store (``run_storage.set_cursor_values``), and
the next read starts from it and applies only the records after its ``latest_storage_id``, which is the
incremental update Dagster's own loader does for storages that keep a state. A stored state is used only if
it was made under the same partitions definition (its identifier: the methods, and the personalities through
the dynamic set's id, so a registered or removed personality starts again from nothing) and in the same epoch:
a wipe, of the instance or of an asset (``bump_epoch``), makes every stored state stale, since it takes back
check records the state counted (a deleted run does not: Dagster keeps its check rows, and its rebuild counts
them too). A state that cannot be read back is rebuilt, never trusted.

Dagster's check state and its incremental update are private API of the pinned Dagster (``pyproject.toml``);
``tests/dagster/test_check_states.py`` compares every kept state with Dagster's own rebuild, so an upgrade that
moves or changes them fails there rather than in a user's UI.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import dagster as dg
# Private on purpose, and only here: Dagster has no public API for a check's state or its incremental update (see
# the module; tests/dagster/test_check_states.py holds them to Dagster's own rebuild).
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionResolvedStatus
from dagster._core.storage.asset_check_state import AssetCheckState, bulk_update_asset_check_state

EPOCH_KEY = "interviewsim/check_states/epoch"
"""The key-value entry naming the current epoch: a stored state made in another one is not used."""
STATE_PREFIX = "interviewsim/check_states/"


def state_key(check: dg.AssetCheckKey) -> str:
    return STATE_PREFIX + hashlib.sha1(check.to_user_string().encode()).hexdigest()


def definition_id(partitions_def: dg.PartitionsDefinition | None) -> str:
    """What a stored state must have been made under: the partitions definition, its dynamic keys included
    (read through the partition loading context's store)."""
    return "unpartitioned" if partitions_def is None else partitions_def.get_serializable_unique_identifier()


def pack(state: AssetCheckState, definition: str, epoch: str) -> str:
    """One state as text; its subsets through Dagster's serdes (the state itself has enum keys serdes refuses)."""
    return json.dumps({
        "definition": definition, "epoch": epoch, "latest_storage_id": state.latest_storage_id,
        "subsets": {status.value: dg.serialize_value(subset) for status, subset in state.subsets.items()},
        "in_progress_runs": {run: dg.serialize_value(subset) for run, subset in state.in_progress_runs.items()},
    })


def unpack(text: str | None, definition: str, epoch: str) -> AssetCheckState | None:
    """The stored state if it was made under ``definition`` in ``epoch`` and reads back whole, else None."""
    if not text:
        return None
    try:
        raw = json.loads(text)
        if raw["definition"] != definition or raw["epoch"] != epoch:
            return None
        return AssetCheckState(
            latest_storage_id=int(raw["latest_storage_id"]),
            subsets={AssetCheckExecutionResolvedStatus(s): dg.deserialize_value(v) for s, v in raw["subsets"].items()},
            in_progress_runs={run: dg.deserialize_value(v) for run, v in raw["in_progress_runs"].items()},
        )
    except Exception:  # written by another Dagster version, cut short: rebuilt from the records instead
        return None


def current_epoch(kv: Any) -> str:
    epoch = kv.get_cursor_values({EPOCH_KEY}).get(EPOCH_KEY)
    if epoch is None:
        epoch = uuid.uuid4().hex
        kv.set_cursor_values({EPOCH_KEY: epoch})
    return epoch


def bump_epoch(kv: Any) -> None:
    """Every stored state stale: check records it counted were taken back (a wipe)."""
    kv.set_cursor_values({EPOCH_KEY: uuid.uuid4().hex})


def updated_states(instance: Any, kv: Any, keys: Sequence[tuple[dg.AssetCheckKey, dg.PartitionsDefinition | None]]
                   ) -> Mapping[dg.AssetCheckKey, AssetCheckState]:
    """Each check's state brought up to date from its stored one (or from nothing), the advanced ones stored.

    A check with a stored state is updated alone: Dagster fetches the records after the smallest
    ``latest_storage_id`` of a batch, and the personality stage's checks end long before the P x M stage's, whose
    states would then apply every P x M record again (the rebuild's cost). The checks without one go in one batch."""
    epoch = current_epoch(kv)
    states: dict[dg.AssetCheckKey, AssetCheckState] = {}
    with dg.partition_loading_context(dynamic_partitions_store=instance):  # dynamic keys looked up on the instance
        definitions = {key: definition_id(pdef) for key, pdef in keys}
        stored_text = kv.get_cursor_values({state_key(key) for key, _ in keys})
        stored = {key: unpack(stored_text.get(state_key(key)), definitions[key], epoch) for key, _ in keys}
        fresh = [k for k in keys if stored[k[0]] is None]
        for batch in [[k] for k in keys if stored[k[0]] is not None] + ([fresh] if fresh else []):
            states.update(bulk_update_asset_check_state(
                instance, batch, initial_states={key: stored[key] or AssetCheckState.empty() for key, _ in batch}))
    advanced = {state_key(key): pack(state, definitions[key], epoch) for key, state in states.items()
                if stored[key] is None or state != stored[key]}
    if advanced:
        kv.set_cursor_values(advanced)
    return states
