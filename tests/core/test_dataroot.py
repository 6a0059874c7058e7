"""The data root as a folder or a URL: same layout, atomic writes where the store allows, no server needed.

``file://`` is a local folder reached through fsspec (rename-atomic, like a plain path);
``memory://`` is fsspec's in-process object store, standing in for S3/GCS (one PUT per object).
The real S3 path is exercised against moto's server by ``make test-distributed``.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import dagster as dg
import pandas as pd
import pytest

from interviewsim_core.atomic_files import atomic_write
from interviewsim_core.dataroot import as_root, exists, is_local, is_url, resolve_root
from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.storage import partition_path, read_frame, write_frame
from interviewsim_dagster.io_managers import ParquetIOManager


def _rows(pid: str) -> pd.DataFrame:
    return pd.DataFrame([{
        "personality_id": pid, "qa_id": "Q1", "partition": "test", "interview_id": "I1", "sequence": 1,
        "position": 0, "order": 0, "question": "q?", "response": "r.", "tags": ["a"],
    }])


def _memory_root() -> str:
    return f"memory://interviewsim-{uuid.uuid4().hex[:8]}/run"


def test_local_values_stay_paths_and_urls_become_upaths(tmp_path):
    assert isinstance(as_root(str(tmp_path)), Path) and as_root(tmp_path) is tmp_path
    assert not is_url("C://x") and not is_url("data_out") and is_url("s3://b/p")
    url = as_root(f"file://{tmp_path}")
    assert not isinstance(url, Path) and is_local(url)
    assert not is_local(as_root("memory://b/p"))
    assert resolve_root("data_out") == Path("data_out").resolve()
    assert str(resolve_root("s3://bucket/prefix")) == "s3://bucket/prefix"


def test_layout_is_the_same_under_a_url(tmp_path):
    local = partition_path(tmp_path, "generations", "P1", "chrono-100")
    remote = partition_path(f"file://{tmp_path}", "generations", "P1", "chrono-100")
    assert remote.path == str(local)
    assert str(partition_path("s3://bucket/run", "leaderboard")) == "s3://bucket/run/leaderboard.parquet"


def test_file_url_writes_atomically_through_a_temp_file_and_reads_back(tmp_path):
    path = partition_path(f"file://{tmp_path}", "heldout_split", "P1")
    write_frame(_rows("P1"), "heldout_split", path)
    assert [p.name for p in (tmp_path / "heldout_split").iterdir()] == ["P1.parquet"]  # no temp left
    assert read_frame(path)["tags"].tolist() == [["a"]]
    assert read_frame(tmp_path / "heldout_split" / "P1.parquet").equals(read_frame(path))


def test_object_store_gets_the_whole_object_or_nothing():
    root = as_root(_memory_root())
    target = root / "report" / "x.bin"

    def broken(fh):
        fh.write(b"half of it")
        raise RuntimeError("writer died")

    with pytest.raises(RuntimeError):
        atomic_write(target, broken)
    assert not exists(target)
    atomic_write(target, lambda fh: fh.write(b"all of it"))
    assert target.read_bytes() == b"all of it"


def test_io_manager_round_trip_on_an_object_store():
    url = _memory_root()
    io = ParquetIOManager(data_root=url)
    pdef = dg.StaticPartitionsDefinition(["P1", "P2"])
    out = dg.build_output_context(asset_key=dg.AssetKey("heldout_split"), asset_partitions_def=pdef,
                                  asset_partition_key_range=dg.PartitionKeyRange("P1", "P2"))
    io.handle_output(out, {"P1": _rows("P1"), "P2": _rows("P2")})
    inp = dg.build_input_context(asset_key=dg.AssetKey("heldout_split"), asset_partitions_def=pdef,
                                 asset_partition_key_range=dg.PartitionKeyRange("P1", "P2"))
    loaded = io.load_input(inp)
    assert set(loaded) == {"P1", "P2"} and loaded["P2"]["personality_id"].tolist() == ["P2"]
    assert (as_root(url) / "heldout_split" / "P1.parquet").exists()


def test_config_keeps_url_roots_and_needs_a_local_cache_path(tmp_path):
    with pytest.raises(ConfigError, match="cache_path"):
        EvalConfig.load(env={}, overrides={"data_root": "s3://bucket/run"})
    cfg = EvalConfig.load(env={}, overrides={"data_root": "s3://bucket/run", "cache_path": str(tmp_path / "c.sqlite")})
    assert str(cfg.data_root) == "s3://bucket/run"
    assert cfg.embedding_cache_dir == tmp_path / "embeddings"
    assert EvalConfig.model_validate_json(cfg.model_dump_json()) == cfg
    local = EvalConfig.load(env={}, overrides={"data_root": str(tmp_path / "out")})
    assert isinstance(local.data_root, Path)
    assert local.embedding_cache_dir == tmp_path / "out" / ".cache" / "embeddings"  # unchanged default


def test_config_file_resolves_relative_paths_but_not_urls(tmp_path):
    f = tmp_path / "conf.yaml"
    f.write_text("data_root: s3://bucket/run\ncache_path: cache/llm.sqlite\n", encoding="utf-8")
    cfg = EvalConfig.load(config_file=f, env={})
    assert str(cfg.data_root) == "s3://bucket/run"
    assert cfg.cache_path == tmp_path / "cache" / "llm.sqlite"
