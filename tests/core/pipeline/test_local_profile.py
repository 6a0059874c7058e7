"""``interviewsim run --local``: the local-server profile fills what the config left unset, never more,
and says the same as ``deploy/local_model/interviewsim-local.yaml``."""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from pathlib import Path

import yaml
from typer.testing import CliRunner

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.local_profile import (
    LOCAL_API_BASE,
    LOCAL_CONCURRENCY,
    LOCAL_MODEL_SETTINGS,
    apply_local_profile,
)
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

PRESET = Path(__file__).resolve().parents[3] / "deploy" / "local_model" / "interviewsim-local.yaml"


def _settings(model) -> dict:
    return {k: getattr(model, k) for k in LOCAL_MODEL_SETTINGS}


def test_models_named_without_settings_get_the_local_profile():
    cfg = apply_local_profile(EvalConfig.load(overrides={"generator": "openai/gemma", "judges": "openai/gemma,openai/b"}))
    assert cfg.concurrency == LOCAL_CONCURRENCY and cfg.api_base == LOCAL_API_BASE
    for model in (cfg.generator, *cfg.judges):
        assert _settings(model) == LOCAL_MODEL_SETTINGS
    assert cfg.resolve(cfg.generator).api_base == LOCAL_API_BASE
    assert cfg.resolve(cfg.generator).max_concurrency == 1
    # The offline builder and premise judge make no request: left as they were.
    assert cfg.builder == EvalConfig().builder and cfg.premise_judge == EvalConfig().premise_judge


def test_what_the_config_sets_wins_over_the_profile(tmp_path):
    file = tmp_path / "c.yaml"
    file.write_text(yaml.safe_dump({"concurrency": 3, "api_base": "http://127.0.0.1:9999/v1",
                                    "generator": {"model": "openai/gemma", "timeout_s": 30, "max_reasks": 0}}))
    cfg = apply_local_profile(EvalConfig.load(config_file=file))
    assert cfg.concurrency == 3 and cfg.api_base == "http://127.0.0.1:9999/v1"
    assert (cfg.generator.timeout_s, cfg.generator.max_reasks, cfg.generator.max_retries) == (30, 0, 1)


def test_the_preset_file_is_the_same_profile():
    """One profile, two forms: the flag changes nothing in a config loaded from the preset file."""
    raw = yaml.safe_load(PRESET.read_text(encoding="utf-8"))
    assert raw["api_base"] == LOCAL_API_BASE and raw["concurrency"] == LOCAL_CONCURRENCY
    assert {k: raw["generator"][k] for k in LOCAL_MODEL_SETTINGS} == LOCAL_MODEL_SETTINGS
    cfg = EvalConfig.load(config_file=PRESET)
    assert apply_local_profile(cfg) == cfg


def test_run_local_records_the_profile_in_the_run_config(tmp_path, monkeypatch):
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    for var in [v for v in os.environ if v.startswith("INTERVIEWSIM_")]:
        monkeypatch.delenv(var)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    first = sorted(p for p in SAMPLE_CORPUS_DIR.iterdir() if p.is_dir())[0]
    (corpus / first.name).symlink_to(first, target_is_directory=True)
    # Only the split runs: no model step, so nothing is sent to the (absent) local server.
    result = CliRunner().invoke(app, ["run", "--local", "--corpus", str(corpus), "--data-root", str(tmp_path / "d"),
                                      "--methods", "simple", "--generator", "openai/gemma",
                                      "--assets", "heldout_split", "--yes"])
    assert result.exit_code == 0, result.output
    recorded = yaml.safe_load((tmp_path / "home" / "interviewsim_last_run.yaml").read_text(encoding="utf-8"))
    assert recorded["concurrency"] == 1 and recorded["api_base"] == LOCAL_API_BASE
    assert {k: recorded["generator"][k] for k in LOCAL_MODEL_SETTINGS} == LOCAL_MODEL_SETTINGS
