"""`interviewsim run` materialises on the project's instance (DAGSTER_HOME), with flags over env over file."""

from __future__ import annotations

import dagster as dg
from typer.testing import CliRunner

from interviewsim_core.pipeline.storage import partition_path


def test_run_command_materialises_one_personality_on_the_instance(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli import app

    home = tmp_path / "home"
    data = tmp_path / "data"
    config = tmp_path / "interviewsim.yaml"
    config.write_text("methods: [simple, wiki]\nseed: 3\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("INTERVIEWSIM_DATA_ROOT", str(tmp_path / "ignored"))  # the flag below wins
    result = CliRunner().invoke(app, [
        "run", "--corpus", str(tiny_corpus), "--data-root", str(data), "--config", str(config),
        "--personalities", "TINY_ALDER", "--methods", "simple", "--generator", "offline/extractive",
        "--judges", "offline/extractive", "--concurrency", "4", "--assets", "heldout_split,generations",
    ])
    assert result.exit_code == 0, result.output
    assert "[1/2] personality_assets [TINY_ALDER]: heldout_split" in result.output
    assert "[2/2] personality_method_assets [simple|TINY_ALDER]: generations" in result.output
    assert partition_path(data, "generations", "TINY_ALDER", "simple").is_file()
    assert not partition_path(data, "fact_summary", "TINY_ALDER").exists()  # --assets limited the run
    assert not partition_path(data, "generations", "TINY_ALDER", "wiki").exists()
    assert not (tmp_path / "ignored").exists()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert len(instance.get_runs()) == 2  # recorded on the instance the UI reads
        assert sorted(instance.get_dynamic_partitions("personality")) == ["TINY_ALDER", "TINY_BRISK"]
