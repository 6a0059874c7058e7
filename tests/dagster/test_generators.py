"""Issue 44, first part: several generators in one study, keyed ``<label>/<method>`` (calibration methods shared).

A study run with generator A, then with A and B (an offline variant at another temperature: another identity,
so other cache keys), through ``interviewsim run``: the second run writes B's generations and judgments and
re-makes nothing else (no partition of A, no fact summary, no calibration method).
"""

from __future__ import annotations

import pandas as pd
import pytest
from dg_helpers import PEOPLE
from typer.testing import CliRunner

from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.storage import partition_path
from interviewsim_core.strategies import resolve_method

A = {"model": "offline/extractive"}
B = {"model": "offline/extractive", "label": "warm", "temperature": 0.7}


def test_method_keys_name_each_other_generator_and_share_calibration():
    cfg = EvalConfig(methods=("simple", "chrono-100", "reference"), generators=[A, B])
    assert cfg.methods == ("simple", "chrono-100", "reference", "warm/simple", "warm/chrono-100")
    assert cfg.generator == cfg.effective_generators[0] and cfg.generator_for("warm/simple").temperature == 0.7
    assert cfg.generator_for("simple").temperature == 0.0
    assert (cfg.generator_of("simple"), cfg.generator_of("warm/simple"), cfg.generator_of("reference")) == (
        "extractive", "warm", "")
    assert cfg.method_keys(["simple"]) == ("simple", "warm/simple")
    assert resolve_method("warm/chrono-100").params == resolve_method("chrono-100").params
    with pytest.raises(ConfigError):
        resolve_method("warm/reference")  # calibration calls no generator: one key for all
    assert EvalConfig.model_validate_json(cfg.model_dump_json()).methods == cfg.methods  # idempotent
    with pytest.raises(ValueError):
        EvalConfig(generators=[A, {"model": "other/extractive"}])  # two labels "extractive"
    # --generator after a config's generators means the list of one
    assert EvalConfig.load(env={}, overrides={"generators": "offline/extractive,offline/other",
                                              "methods": "simple"}).methods == ("simple", "other/simple")


def test_adding_a_generator_to_a_finished_study_makes_only_its_partitions(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    data = tmp_path / "data"
    cfg = tmp_path / "cfg.yaml"

    def run(generators) -> None:
        import yaml

        cfg.write_text(yaml.safe_dump({"corpus": str(tiny_corpus), "data_root": str(data), "generators": generators,
                                       "judges": [A], "builder": A, "premise_judge": A,
                                       "methods": ["simple", "reference"]}))
        result = CliRunner().invoke(app, ["run", "--config", str(cfg), "--yes"])
        assert result.exit_code in (0, 5, 6), result.output

    run([A])
    pid = PEOPLE[0]
    kept = {(a, m): partition_path(data, a, pid, m).stat().st_mtime_ns
            for a, m in [("generations", "simple"), ("generations", "reference"), ("content_similarity", "simple")]}
    kept[("fact_summary", None)] = partition_path(data, "fact_summary", pid).stat().st_mtime_ns
    run([A, B])
    for (asset, method), mtime in kept.items():
        assert partition_path(data, asset, pid, method).stat().st_mtime_ns == mtime, (asset, method)
    warm = pd.read_parquet(partition_path(data, "generations", pid, "warm/simple"))
    assert len(warm) and not warm["cache_hit"].any()  # B's own answers, called for
    assert not partition_path(data, "generations", pid, "warm/reference").exists()
    assert (data / "content_similarity" / pid).exists()
    board = pd.read_parquet(data / "leaderboard.parquet")
    assert {"simple", "warm/simple", "reference"} <= set(board["method"])


def test_the_plan_breaks_calls_down_by_generator(tiny_corpus, tmp_path, monkeypatch):
    """``interviewsim plan --json`` counts each generator's answers and their judgments apart from what is shared."""
    import json

    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["plan", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"),
                                      "--generators", "offline/extractive,offline/variant", "--judges",
                                      "offline/extractive", "--builder", "offline/extractive", "--premise-judge",
                                      "offline/extractive", "--methods", "simple,reference", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    by = plan["by_generator"]
    assert set(by) == {"extractive", "variant", "shared"}
    assert by["extractive"]["to_send"] == by["variant"]["to_send"] > 0  # the same methods, the same calls each
    assert sum(v["to_send"] for v in by.values()) == plan["totals"]["to_send"]
    assert {ln["method"] for ln in plan["lines"]} >= {"simple", "variant/simple", "reference"}
