"""The event log's stored asset-check states (``check_states``): each read equals Dagster's rebuild from every
record, whatever happened since the state was stored, and a read after the first starts from the stored state."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest
# Private, as in check_states: Dagster's own rebuild of a check's state, which the stored states must equal.
from dagster._core.storage.asset_check_state import AssetCheckState, bulk_update_asset_check_state

from interviewsim_dagster import check_states

REPO = Path(__file__).resolve().parents[2]
PEOPLE = dg.DynamicPartitionsDefinition(name="people")
PARTS = dg.MultiPartitionsDefinition({"method": dg.StaticPartitionsDefinition(["a", "b"]), "person": PEOPLE})
FAILING: set[str] = set()
"""Partitions whose check fails in the next materialisation."""


@dg.asset(partitions_def=PARTS)
def table(context) -> None:
    return None


@dg.asset_check(asset=table, partitions_def=PARTS)
def rows_present(context) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=context.partition_key not in FAILING)


@dg.asset(partitions_def=PEOPLE)
def early(context) -> None:
    return None


@dg.asset_check(asset=early, partitions_def=PEOPLE)
def early_present(context) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(passed=True)


@pytest.fixture
def instance(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(REPO / "dagster.yaml", home / "dagster.yaml")  # the engine-keeping event log, as shipped
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as inst:
        assert type(inst.event_log_storage).__name__ == "EngineKeepingSqliteEventLogStorage"
        inst.add_dynamic_partitions("people", ["p1", "p2", "p3"])
        yield inst


def _make(instance, keys: list[str], check: bool = True, fail: tuple[str, ...] = ()) -> None:
    FAILING.clear()
    FAILING.update(fail)
    for key in keys:
        result = dg.materialize([table, rows_present] if check else [table], instance=instance, partition_key=key,
                                selection=None if check else [table], raise_on_error=False)
        assert result.success or fail


def _states(instance) -> tuple[AssetCheckState, AssetCheckState]:
    """(the stored-and-updated state, Dagster's rebuild from every record) of the one check."""
    key = [(rows_present.check_key, PARTS)]
    with dg.partition_loading_context(dynamic_partitions_store=instance):
        kept = instance.event_log_storage.get_asset_check_state(key)[rows_present.check_key]
        rebuilt = bulk_update_asset_check_state(instance, key, initial_states={rows_present.check_key: AssetCheckState.empty()})
    return kept, rebuilt[rows_present.check_key]


def test_a_kept_state_equals_the_rebuild_after_each_kind_of_event(instance):
    _make(instance, ["a|p1", "b|p1"])
    kept, rebuilt = _states(instance)
    assert kept == rebuilt and kept.latest_storage_id > 0
    _make(instance, ["a|p2"], fail=("a|p2",))  # a failed verdict
    _make(instance, ["b|p1"], check=False)  # a new materialisation, its check not run: no longer current
    kept, rebuilt = _states(instance)
    assert kept == rebuilt
    assert {str(k) for k in kept.subsets[check_states.AssetCheckExecutionResolvedStatus.FAILED].subset_value
            .get_partition_keys()} == {"a|p2"}
    instance.add_dynamic_partitions("people", ["p4"])  # the partitions definition changes: rebuilt
    _make(instance, ["a|p4"])
    assert _states(instance)[0] == _states(instance)[1]
    instance.delete_run(instance.get_runs(limit=1)[0].run_id)  # Dagster keeps its check rows: nothing to take back
    kept, rebuilt = _states(instance)
    assert kept == rebuilt
    instance.wipe_assets([table.key])  # records taken back: every stored state is stale
    kept, rebuilt = _states(instance)
    assert kept == rebuilt


def test_a_read_after_the_first_asks_each_check_only_the_records_after_its_stored_state(instance, monkeypatch):
    """Each check from its own stored state: ``early``'s ends before ``table``'s records begin, and one fetch from
    the smaller of the two would hand ``table``'s state every record again."""
    dg.materialize([early, early_present], instance=instance, partition_key="p1")
    _make(instance, ["a|p1", "b|p2"])
    keys = [(rows_present.check_key, PARTS), (early_present.check_key, PEOPLE)]
    with dg.partition_loading_context(dynamic_partitions_store=instance):
        first = instance.event_log_storage.get_asset_check_state(keys)
    asked: list[int | None] = []
    storage = type(instance.event_log_storage)
    original = storage.get_asset_check_partition_info

    def spy(self, keys, after_storage_id=None, partition_keys=None):
        asked.append(after_storage_id)
        return original(self, keys, after_storage_id=after_storage_id, partition_keys=partition_keys)

    monkeypatch.setattr(storage, "get_asset_check_partition_info", spy)
    with dg.partition_loading_context(dynamic_partitions_store=instance):
        again = instance.event_log_storage.get_asset_check_state(keys)
    assert again == first
    assert sorted(asked) == sorted(state.latest_storage_id for state in first.values())
    assert len(set(asked)) == 2


def test_a_stored_state_that_does_not_read_back_is_not_trusted():
    assert check_states.unpack("{not json", "d", "e") is None
    state = AssetCheckState.empty()
    text = check_states.pack(state, "d", "e")
    assert check_states.unpack(text, "d", "e") == state
    assert check_states.unpack(text, "other definition", "e") is None
    assert check_states.unpack(text, "d", "another epoch") is None
