"""``user_premise_verdicts``: a team's own JSONL conclusions through the premise judge, only when configured."""

from __future__ import annotations

import json
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
from dg_helpers import make_config

from interviewsim_core.pipeline.storage import partition_path
from interviewsim_core.pipeline.tables import schema_of
from interviewsim_dagster import launch
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_dagster.definitions import build_definitions

ASSET = dg.AssetKey("user_premise_verdicts")

RECORDS = [
    {"conclusion_id": "c1", "peer_id": "alice",
     "conclusion": "Alice moved to Lisbon in 2019 to work as a harbour pilot.",
     "window": [{"speaker": "alice", "time": "2024-03-01T10:00:00Z",
                 "text": "I moved to Lisbon in 2019; the harbour pilot job was the reason."}]},
    {"conclusion_id": "c2", "peer_id": "alice",
     "conclusion": "She prefers it.",
     "window": [{"speaker": "bob", "time": "message 3", "text": "Do you like the tea or the coffee there?"},
                {"speaker": "alice", "time": "message 4", "text": "The coffee, by far."}]},
    {"conclusion_id": "c3", "peer_id": "bob",
     "conclusion": "Bob has rowed in the Quay Street race every winter since 2015.",
     "window": [{"speaker": "bob", "time": "2023-12-02", "text": "Every winter since 2015 I row the Quay Street race."}]},
]


def _jsonl(path: Path, records: list) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def _materialise(defs: dg.Definitions, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    job = defs.resolve_job_def(launch.GLOBAL_JOB)
    return job.execute_in_process(instance=instance, asset_selection=[ASSET], raise_on_error=False)


def test_definitions_load_with_and_without_conclusions(tiny_corpus, tmp_path):
    without = build_definitions(make_config(tiny_corpus, tmp_path / "data", methods="simple"))
    assert ASSET not in set(without.resolve_asset_graph().get_all_asset_keys())

    file = _jsonl(tmp_path / "mine.jsonl", RECORDS)
    with_file = build_definitions(make_config(tiny_corpus, tmp_path / "data", methods="simple",
                                              premise_conclusions=str(file)))
    graph = with_file.resolve_asset_graph()
    node = graph.get(ASSET)
    assert node.group_name == "premise" and node.partitions_def is None and not node.parent_keys
    assert node.pools == {"llm_offline"}
    assert ASSET in with_file.resolve_job_def(launch.GLOBAL_JOB).asset_layer.executable_asset_keys
    # Everything else is the same graph.
    assert set(graph.get_all_asset_keys()) - {ASSET} == set(without.resolve_asset_graph().get_all_asset_keys())


def test_env_path_is_resolved_and_changing_file_or_judge_changes_the_code_version(tiny_corpus, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.chdir(tmp_path)
    _jsonl(tmp_path / "mine.jsonl", RECORDS)
    cfg = EvalConfig.load_resolved(env={"INTERVIEWSIM_PREMISE_CONCLUSIONS": "mine.jsonl", "INTERVIEWSIM_CORPUS": str(tiny_corpus)})
    assert cfg.premise_conclusions == tmp_path / "mine.jsonl"  # absolute: UI and CLI runs read the same file

    def version(c) -> str:
        return build_definitions(c).resolve_asset_graph().get(ASSET).code_version

    other_file = cfg.model_copy(update={"premise_conclusions": tmp_path / "theirs.jsonl"})
    other_judge = cfg.model_copy(update={"premise_judge": cfg.premise_judge.model_copy(update={"seed": 5})})
    assert len({version(cfg), version(other_file), version(other_judge)}) == 3


def test_conclusions_version_joins_both_premise_code_versions(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_core.premise import conclusions

    file = _jsonl(tmp_path / "mine.jsonl", RECORDS)
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="simple", premise_conclusions=str(file))
    keys = (ASSET, dg.AssetKey("premise_verdicts"))

    def versions() -> tuple[str, ...]:
        graph = build_definitions(cfg).resolve_asset_graph()
        return tuple(graph.get(k).code_version for k in keys)

    before = versions()
    monkeypatch.setattr(conclusions, "CONCLUSIONS_VERSION", conclusions.CONCLUSIONS_VERSION + "-next")
    after = versions()
    assert all(a != b for a, b in zip(before, after))


def test_materialises_verdicts_with_headline_metadata(tiny_corpus, tmp_path):
    file = _jsonl(tmp_path / "mine.jsonl", RECORDS)
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="simple", premise_conclusions=str(file))
    instance = dg.DagsterInstance.ephemeral()
    result = _materialise(build_definitions(cfg), instance)
    assert result.success

    path = partition_path(cfg.data_root, "user_premise_verdicts")
    table = pq.read_table(path)
    assert table.schema.equals(schema_of("premise_verdicts"))
    df = table.to_pandas()
    assert sorted(df["conclusion_id"]) == ["c1", "c2", "c3"]
    assert set(df["artifact_kind"]) == {"user"}
    assert set(df["peer_id"]) == {"alice", "bob"}
    assert set(df["verdict"]) <= {"PASS", "FAIL", "INVALID", "ERROR"}
    assert (df["pass1_status"] == "ok").all()  # the offline judge answers every pass-1 request validly

    meta = instance.fetch_materializations(ASSET, limit=1).records[0].asset_materialization.metadata
    names = list(meta)
    assert names.index("attribution_split") < min(names.index(n) for n in ("pass_rate", "label_clusters", "rows"))
    for attribution in ("PRESENT_IN_WINDOW", "ABSENT_FROM_WINDOW", "ABSENT_EVERYWHERE"):
        assert attribution in meta["attribution_split"].value
    judged = df[df["verdict"].isin(["PASS", "FAIL"])]
    assert meta["judged"].value == len(judged)
    if len(judged):
        assert meta["pass_rate"].value == pytest.approx((judged["verdict"] == "PASS").mean())
    assert isinstance(meta["label_clusters"], dg.MarkdownMetadataValue)
    assert meta["rows"].value == 3
    assert meta["source"].value == str(file)


def test_invalid_file_fails_the_step_naming_every_bad_line(tiny_corpus, tmp_path):
    file = _jsonl(tmp_path / "bad.jsonl", [RECORDS[0], "{not json", {**RECORDS[2], "window": []}])
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="simple", premise_conclusions=str(file))
    result = _materialise(build_definitions(cfg), dg.DagsterInstance.ephemeral())
    assert not result.success
    failure = next(ev for ev in result.all_events if ev.is_step_failure)
    error, messages = failure.step_failure_data.error, []
    while error is not None:  # Dagster wraps the asset's exception: the problems are in its cause
        messages.append(error.message)
        error = error.cause
    message = "\n".join(messages)
    assert "InputValidationError" in message
    assert "line 2" in message and "line 3" in message
    assert not partition_path(cfg.data_root, "user_premise_verdicts").exists()
