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
