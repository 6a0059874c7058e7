from __future__ import annotations

import os

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from interviewsim_core.pipeline.storage import partition_path, read_frame, write_frame
from interviewsim_core.pipeline.tables import CALL_COLUMNS, KEY_COLUMNS, PER_METHOD, SCHEMAS, empty_frame, to_table

DESIGN_CALL_COLUMNS = ("model, contract, contract_version, status, raw_output, parse_error, error, attempts, "
                       "cache_hit, cache_key, prompt_tokens, completion_tokens, cost_usd, cached_prompt_tokens, "
                       "constraint, finish_reason, truncated").split(", ")


def test_call_columns_match_design():
    assert list(CALL_COLUMNS) == DESIGN_CALL_COLUMNS


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_every_table_has_its_keys_and_an_empty_frame(name):
    schema = SCHEMAS[name]
    assert set(KEY_COLUMNS[name]) <= set(schema.names)
    assert len(set(schema.names)) == len(schema.names)
    empty = empty_frame(name)
    assert list(empty.columns) == schema.names and len(empty) == 0
    assert to_table(empty, name).schema.equals(schema)


def test_design_payload_columns_are_present():
    assert {"summary", "explanation", "source_qa_ids"} <= set(SCHEMAS["fact_summary"].names)
    assert {"labels", "texts", "kinds", "correct_label", "shuffle_seed"} <= set(SCHEMAS["mcq_items"].names)
    assert {"chosen_label", "chosen_kind", "correct", "reward", "position"} <= set(SCHEMAS["mcq_answers"].names)
    ms = SCHEMAS["method_scores"].names
    for col in ("cs_mean", "contradiction_ratio", "ps_alignment", "mcq3_accuracy", "mcq4_reward", "mcq3_invalid",
                "mcq3_failed", "mcq3_malformed", "cs_failed", "cs_not_run", "cs_cells", "cs_mean_items",
                "embedding_model", "n_test_questions", "n_train_pairs", "cost_usd"):
        assert col in ms
    lb = SCHEMAS["leaderboard"].names
    for col in ("method", "judge", "metric", "view", "value", "ci_low", "ci_high", "coverage", "below_coverage",
                "best", "empty_reason", "embedding_model"):
        assert col in lb
    assert PER_METHOD == {"generations", "content_similarity", "factual_consistency", "generated_personality",
                          "mcq_answers", "method_scores"}


def test_to_table_refuses_wrong_frames():
    df = empty_frame("fact_summary")
    with pytest.raises(ValueError, match="missing columns"):
        to_table(df.drop(columns=["summary"]), "fact_summary")
    with pytest.raises(ValueError, match="unexpected columns"):
        to_table(df.assign(extra=[]), "fact_summary")
    bad = pd.DataFrame([{**dict.fromkeys(df.columns), "attempts": "three"}])
    with pytest.raises(ValueError, match="attempts"):
        to_table(bad, "fact_summary")
    with pytest.raises(KeyError, match="unknown table"):
        to_table(df, "nope")


def test_nullable_ints_lists_and_round_trip(tmp_path):
    row = {c: None for c in SCHEMAS["content_similarity"].names}
    row.update(personality_id="P", method="m", judge="j", qa_id="q1", score=4, status="ok", attempts=1,
               cache_hit=False, prompt_tokens=1, completion_tokens=1, cost_usd=0.0)
    rows = [row, {**row, "qa_id": "q2", "score": None, "status": "invalid", "raw_output": "garbage"}]
    df = pd.DataFrame(rows)
    path = write_frame(df, "content_similarity", partition_path(tmp_path, "content_similarity", "P", "m"))
    assert path == tmp_path / "content_similarity" / "P" / "m.parquet"
    back = read_frame(path)
    assert back["score"].tolist()[0] == 4 and pd.isna(back["score"].tolist()[1])
    assert pq.read_schema(path).field("score").type == pa.int64()
    assert os.listdir(path.parent) == ["m.parquet"]  # no temp file left behind
    items = empty_frame("mcq_items")
    items.loc[0] = {**dict.fromkeys(items.columns), "labels": ("A", "B", "C"), "n_options": 3, "attempts": 1,
                    "prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0, "cache_hit": True}
    p2 = write_frame(items, "mcq_items", partition_path(tmp_path, "mcq_items", "P"))
    assert read_frame(p2)["labels"].tolist() == [["A", "B", "C"]]


def test_partition_paths():
    assert partition_path("r", "fact_summary", "P1").as_posix() == "r/fact_summary/P1.parquet"
    assert partition_path("r", "leaderboard").as_posix() == "r/leaderboard.parquet"
    escaped = partition_path("r", "generations", "../x", "a/b")  # unsafe ids: slug + hash, never outside the root
    assert escaped.parent.parent.as_posix() == "r/generations" and ".." not in escaped.parts
    assert escaped.parent.name.startswith("_x~") and escaped.name.startswith("a_b~")
    with pytest.raises(ValueError):
        partition_path("r", "generations", "P1")
    with pytest.raises(ValueError):
        partition_path("r", "fact_summary", "P1", "simple")


def test_failed_write_keeps_the_old_file(tmp_path):
    path = partition_path(tmp_path, "fact_summary", "P")
    df = empty_frame("fact_summary")
    write_frame(df, "fact_summary", path)
    before = path.read_bytes()
    with pytest.raises(ValueError):
        write_frame(df.drop(columns=["summary"]), "fact_summary", path)
    assert path.read_bytes() == before and os.listdir(path.parent) == ["P.parquet"]


def test_partitions_are_zstd_without_text_statistics_and_every_reader_reads_them(tmp_path):
    """Storage (issue 13): zstd instead of snappy, no min/max copies of free text in the footer; pandas,
    pyarrow, the project's reader and DuckDB (what the README tells users to query with) read the files.
    A table of a few short rows is written with snappy (``SMALL_TABLE_BYTES``, issue 43)."""
    import duckdb

    from interviewsim_core.pipeline.storage import SMALL_TABLE_BYTES

    long_text = "we brought the wheat in before the rain, every single year. " * 80
    row = {c: None for c in SCHEMAS["generations"].names}
    row.update(personality_id="P", method="m", qa_id="q1", question="why?", generated=long_text, status="ok",
               raw_output=long_text, attempts=1, cache_hit=False, prompt_tokens=1, completion_tokens=1, cost_usd=0.0)
    df = pd.DataFrame([row, {**row, "qa_id": "q2", "generated": long_text[::-1]}])
    path = write_frame(df, "generations", partition_path(tmp_path, "generations", "P", "m"))
    meta = pq.ParquetFile(path).metadata
    columns = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i) for i in range(meta.num_columns)}
    assert {c.compression for c in columns.values()} == {"ZSTD"}
    assert columns["qa_id"].statistics is not None and columns["qa_id"].statistics.max == "q2"  # short ids keep them
    assert columns["generated"].statistics is None and columns["raw_output"].statistics is None
    assert read_frame(path)["generated"].tolist() == df["generated"].tolist()
    assert pd.read_parquet(path)["qa_id"].tolist() == ["q1", "q2"]
    got = duckdb.sql(f"select qa_id, generated from '{tmp_path}/generations/*/*.parquet' order by qa_id").fetchall()
    assert got == [("q1", long_text), ("q2", long_text[::-1])]
    small = df.assign(generated="short", raw_output="short")
    assert to_table(small, "generations").nbytes < SMALL_TABLE_BYTES <= to_table(df, "generations").nbytes
    small_path = write_frame(small, "generations", partition_path(tmp_path, "generations", "P", "s"))
    assert pq.ParquetFile(small_path).metadata.row_group(0).column(0).compression == "SNAPPY"
    assert read_frame(small_path)["generated"].tolist() == ["short", "short"]


def test_a_personality_method_partition_is_written_in_key_order(tmp_path):
    """write_partition sorts a P x M partition by its key (Arrow's stable sort, issue 43): rows that share a key
    prefix keep their order, a null sorts last, a per-personality partition keeps the order it was given."""
    from interviewsim_core.pipeline.runner import write_partition
    from interviewsim_core.pipeline.steps import BY_NAME, Cell

    row = {c: None for c in SCHEMAS["content_similarity"].names}
    rows = [{**row, "personality_id": "P", "method": "m", "judge": j, "qa_id": q, "raw_output": tag}
            for j, q, tag in (("b", "q1", "1"), ("a", "q2", "2"), ("a", None, "3"), ("a", "q10", "4"), ("a", "q2", "5"))]
    written = write_partition(BY_NAME["content_similarity"], Cell("P", "m"), pd.DataFrame(rows), tmp_path)
    path = partition_path(tmp_path, "content_similarity", "P", "m")
    assert read_frame(path)["raw_output"].tolist() == ["4", "2", "5", "3", "1"]  # a/q10, a/q2 (twice, in order), a/null, b
    assert written.equals(pq.read_table(path))  # the table returned is the file's (its summary is computed from it)
    atomic = {c: None for c in SCHEMAS["atomic_items"].names}
    given = pd.DataFrame([{**atomic, "personality_id": "P", "qa_id": q} for q in ("q2", "q1")])
    write_partition(BY_NAME["atomic_items"], Cell("P"), given, tmp_path)
    assert read_frame(partition_path(tmp_path, "atomic_items", "P"))["qa_id"].tolist() == ["q2", "q1"]


def test_a_reader_of_a_few_columns_gets_only_those_the_file_has(tmp_path):
    """``read_frame(columns=)``: a check of call statuses reads those columns, not the whole partition (issue 43)."""
    path = write_frame(empty_frame("generations"), "generations", tmp_path / "g.parquet")
    assert list(read_frame(path, columns=["status", "qa_id", "not_a_column"]).columns) == ["qa_id", "status"]
