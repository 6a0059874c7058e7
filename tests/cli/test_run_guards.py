"""``interviewsim run``/``plan`` guards of issue 20: the retrieval-embedder check concerns the methods
that will run, and a full ``DAGSTER_HOME`` is one line naming the path (exit 3), not a traceback."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import pytest
from typer.testing import CliRunner

from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

REAL = ["--generator", "openai/gpt-4.1", "--api-base", "http://127.0.0.1:9"]  # never called: no model step runs


def _cli(args: list[str], home: Path, monkeypatch):
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    for var in [v for v in os.environ if v.startswith("INTERVIEWSIM_")]:
        monkeypatch.delenv(var)
    return CliRunner().invoke(app, args)


def _corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    first = sorted(p for p in SAMPLE_CORPUS_DIR.iterdir() if p.is_dir())[0]
    (corpus / first.name).symlink_to(first, target_is_directory=True)
    return corpus


def test_real_models_with_only_non_retrieval_methods_selected_are_not_refused(tmp_path, monkeypatch):
    """Issue 20: the default method set's memory-*/hybrid methods were named although not selected (exit 2)."""
    corpus = _corpus(tmp_path)
    common = ["--corpus", str(corpus), "--data-root", str(tmp_path / "data"), "--methods", "simple,chrono-100", *REAL]
    planned = _cli(["plan", *common], tmp_path / "home", monkeypatch)
    assert planned.exit_code == 0, planned.output
    assert "memory-100" not in planned.output and "total" in planned.output
    ran = _cli(["run", *common, "--assets", "heldout_split", "--yes"], tmp_path / "home", monkeypatch)
    assert ran.exit_code == 0, ran.output
    assert "retrieval method" not in ran.output


@pytest.mark.parametrize("command", ["plan", "run"])
def test_a_selected_retrieval_method_without_an_embedder_is_still_refused(tmp_path, monkeypatch, command):
    corpus = _corpus(tmp_path)
    result = _cli([command, "--corpus", str(corpus), "--data-root", str(tmp_path / "data"),
                   "--methods", "simple,memory-10", *REAL], tmp_path / "home", monkeypatch)
    assert result.exit_code == 2, result.output
    assert "memory-10" in result.output and "--embedding-model" in result.output
    assert "memory-100" not in result.output  # only what was selected
    assert not (tmp_path / "data").exists()


# -- a full disk under DAGSTER_HOME / the data root: exit 3, one line naming the path ---------------

@pytest.fixture
def full_tmpfs(small_tmpfs):
    """The 2 MB tmpfs (tests/conftest.py), filled up."""
    with open(small_tmpfs / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
        except OSError:
            pass
    return small_tmpfs


def test_a_full_dagster_home_is_one_line_naming_it_and_exit_3(tmp_path, monkeypatch, full_tmpfs):
    home = full_tmpfs / "home"
    corpus = _corpus(tmp_path)
    result = _cli(["run", "--corpus", str(corpus), "--data-root", str(tmp_path / "data"), "--methods", "simple",
                   "--assets", "heldout_split", "--generator", "offline/extractive"], home, monkeypatch)
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output and "sqlalchemy" not in result.output.lower()
    [line] = [ln for ln in result.output.splitlines() if str(home) in ln]
    assert line.startswith("DAGSTER_HOME") and "No space left on device" in line


def test_a_disk_full_error_mid_run_becomes_one_line_naming_the_path(tmp_path):
    import sqlite3

    from interviewsim_cli.outcome import environment_problem

    home = tmp_path / "home"

    class OperationalError(Exception):  # what SQLAlchemy raises around sqlite3's error
        pass

    try:
        try:
            raise sqlite3.OperationalError("database or disk is full")
        except sqlite3.OperationalError as inner:
            raise OperationalError("(sqlite3.OperationalError) database or disk is full [SQL: INSERT ...]") from inner
    except OperationalError as exc:
        line = environment_problem(exc, {"data root": tmp_path / "data", "DAGSTER_HOME": home})
    assert line == f"DAGSTER_HOME {home}: the disk is full (database or disk is full)"
    err = OSError(28, "No space left on device", str(tmp_path / "data" / "generations" / "P.parquet"))
    line = environment_problem(err, {"data root": tmp_path / "data", "DAGSTER_HOME": home})
    assert line == f"data root {tmp_path / 'data'}: cannot write {err.filename}: No space left on device"
    assert environment_problem(ValueError("not about disks"), {"DAGSTER_HOME": home}) is None


def test_a_parquet_write_on_a_full_disk_names_the_file(full_tmpfs):
    """pyarrow's ``OSError: [Errno 28]`` named no file (issue 20); the atomic write adds the destination."""
    import pandas as pd

    from interviewsim_core.pipeline.storage import write_frame

    df = pd.DataFrame([{"personality_id": "P", "qa_id": f"q{i}", "partition": "test", "interview_id": "I",
                        "sequence": 1, "position": i, "order": i, "question": f"{i}" * 2000, "response": "r",
                        "tags": []} for i in range(500)])
    dest = full_tmpfs / "heldout_split" / "P.parquet"
    with pytest.raises(OSError) as info:
        write_frame(df, "heldout_split", dest)
    assert info.value.errno == 28 and info.value.filename == str(dest)
    assert not dest.exists() and not list(dest.parent.glob(".*.tmp"))
