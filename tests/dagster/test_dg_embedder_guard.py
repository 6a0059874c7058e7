"""`interviewsim run` with real models and retrieval methods must be told which embedder to use."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.storage import partition_path


def _run(tmp_path, monkeypatch, corpus, *extra: str):
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    for k in [k for k in __import__("os").environ if k.startswith("INTERVIEWSIM_")]:
        monkeypatch.delenv(k)
    data = tmp_path / "data"
    args = ["run", "--corpus", str(corpus), "--data-root", str(data), "--personalities", "TINY_ALDER",
            "--methods", "memory-2", "--generator", "openai/gpt-4.1-mini", "--judges", "offline/extractive",
            "--assets", "heldout_split", *extra]
    return CliRunner().invoke(app, args), data


def test_run_refuses_the_default_embedder_with_a_real_generator(tiny_corpus, tmp_path, monkeypatch):
    result, data = _run(tmp_path, monkeypatch, tiny_corpus)
    assert result.exit_code == 2, result.output
    assert "--embedding-model" in result.output and "memory-2" in result.output
    assert not data.exists() and not (tmp_path / "home").exists()  # refused before anything was written


def test_an_explicit_offline_embedder_is_accepted(tiny_corpus, tmp_path, monkeypatch):
    # --assets heldout_split calls no model, so the real generator name costs nothing here.
    result, data = _run(tmp_path, monkeypatch, tiny_corpus, "--embedding-model", "offline/hashing")
    assert result.exit_code == 0, result.output
    assert partition_path(data, "heldout_split", "TINY_ALDER").is_file()


def test_the_dagster_definitions_refuse_it_too(tiny_corpus):
    from interviewsim_dagster.definitions import build_definitions

    cfg = EvalConfig.load(None, {}, {"corpus": tiny_corpus, "generator": "openai/gpt-4.1", "methods": "hybrid-1-1"})
    with pytest.raises(ConfigError, match="--embedding-model"):
        build_definitions(cfg)
    ok = cfg.model_copy(update={"embedding_model": "openai/text-embedding-3-small"})
    assert build_definitions(ok).resolve_asset_graph() is not None


def test_direct_runs_refuse_it_before_any_call(tiny_corpus, tmp_path):
    from interviewsim_core.pipeline.runner import run_evaluation

    class NoCalls:
        def __getattr__(self, name):
            raise AssertionError(f"gateway used: {name}")

    cfg = EvalConfig.load(None, {}, {"corpus": tiny_corpus, "data_root": tmp_path / "d", "methods": "memory-2",
                                     "judges": "anthropic/claude-sonnet-4"})
    with pytest.raises(ConfigError, match="--embedding-model"):
        run_evaluation(cfg, gateway=NoCalls())
    assert not (tmp_path / "d").exists()


def test_direct_runs_check_the_methods_they_are_given(tiny_corpus, tmp_path):
    from interviewsim_core.pipeline.runner import run_evaluation

    cfg = EvalConfig.load(None, {}, {"corpus": tiny_corpus, "data_root": tmp_path / "d", "methods": "simple",
                                     "generator": "openai/gpt-4.1"})
    with pytest.raises(ConfigError, match="retrieval-2"):
        run_evaluation(cfg, gateway=object(), methods=["simple", "retrieval-2"])
