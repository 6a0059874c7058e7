"""`interviewsim run` materialises on the project's instance (DAGSTER_HOME), with flags over env over file."""

from __future__ import annotations

from pathlib import Path

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


def _ui(monkeypatch) -> dict:
    """Invoke `interviewsim ui` with dagster dev's supervisor replaced by a recorder."""
    from interviewsim_cli import app, ui_cmds

    seen: dict = {}

    def fake_supervise(args, env, cwd):
        seen.update(exe=args[0], args=args, config=env.get("INTERVIEWSIM_CONFIG"), env=env, cwd=cwd)
        return 0

    monkeypatch.setattr(ui_cmds, "supervise", fake_supervise)
    result = CliRunner().invoke(app, ["ui"])
    assert result.exit_code == 0, result.output
    seen["output"] = result.output
    return seen


def test_ui_uses_the_config_of_the_last_run(tiny_corpus, tmp_path, monkeypatch):
    """After `run --judges X`, the UI's code location builds the same graph, hence the same code versions."""
    import yaml

    from interviewsim_cli import app
    from interviewsim_cli.run_cmds import LAST_RUN_CONFIG, UI_CONFIG
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_dagster.definitions import build_definitions

    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    config = tmp_path / "interviewsim.yaml"
    config.write_text("methods: [simple, wiki]\njudges:\n  - {model: offline/extractive, label: judge-x, "
                      "api_key_env: JUDGE_X_KEY, extra_params: {top_k: 3}}\n")
    result = CliRunner().invoke(app, [
        "run", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"), "--config", str(config),
        "--methods", "simple", "--personalities", "TINY_ALDER", "--assets", "heldout_split",
    ])
    assert result.exit_code == 0, result.output
    saved = home / LAST_RUN_CONFIG
    assert str(saved) in result.output
    text = saved.read_text()
    assert yaml.safe_load(text)["judges"][0]["api_key_env"] == "JUDGE_X_KEY"  # the variable's name only

    seen = _ui(monkeypatch)
    ui_config = home / UI_CONFIG  # the first run on an instance gives the UI its config
    assert seen["config"] == str(ui_config) and str(ui_config) in seen["output"]
    assert seen["args"][1] == "dev"
    ui_cfg = EvalConfig.load_resolved(env={"INTERVIEWSIM_CONFIG": seen["config"]})
    assert ui_cfg.methods == ("simple", "wiki") and [j.name for j in ui_cfg.judges] == ["judge-x"]
    assert ui_cfg.data_root == (tmp_path / "data").resolve()
    run_cfg = EvalConfig.load_resolved(env={"INTERVIEWSIM_CONFIG": str(config)},
                          overrides={"corpus": tiny_corpus, "data_root": tmp_path / "data"})
    versions = [
        {k.to_user_string(): g.get(k).code_version for k in g.get_all_asset_keys()}
        for g in (build_definitions(c).resolve_asset_graph() for c in (run_cfg, ui_cfg))
    ]
    assert {k: v for k, v in versions[0].items() if v != versions[1][k]} == {}


def test_saved_config_drops_a_credential_put_in_extra_params(tmp_path):
    import yaml

    from interviewsim_cli.run_cmds import UI_CONFIG, save_last_run_config
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import EvalConfig

    judge = ModelConfig(model="openai/gpt-4.1", api_key_env="OPENAI_API_KEY",
                        extra_params={"api_key": "sk-do-not-store", "x_secret": "s", "max_tokens": 5, "top_k": 3})
    path = save_last_run_config(EvalConfig(judges=(judge,), generator=judge), tmp_path)
    text = path.read_text()
    assert "sk-do-not-store" not in text and "x_secret" not in text
    data = yaml.safe_load(text)
    assert data["judges"][0]["extra_params"] == data["generator"]["extra_params"] == {"max_tokens": 5, "top_k": 3}
    # The record and the UI's config (the first run writes it), both redacted; no temp file left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, UI_CONFIG])
    assert "sk-do-not-store" not in (tmp_path / UI_CONFIG).read_text()
    assert EvalConfig.load(config_file=path).judges[0].api_key_env == "OPENAI_API_KEY"


def test_ui_keeps_a_config_the_user_set(tmp_path, monkeypatch):
    from interviewsim_cli.run_cmds import LAST_RUN_CONFIG

    home = tmp_path / "home"
    home.mkdir()
    (home / LAST_RUN_CONFIG).write_text("seed: 1\n")
    mine = tmp_path / "mine.yaml"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv("INTERVIEWSIM_CONFIG", str(mine))
    seen = _ui(monkeypatch)
    assert seen["config"] == str(mine) and "set by you" in seen["output"]


def test_ui_without_a_previous_run_says_it_uses_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    seen = _ui(monkeypatch)
    assert seen["config"] is None and "no config file yet" in seen["output"]


def test_a_cli_run_does_not_rewrite_the_ui_config_unless_asked(tiny_corpus, tmp_path, monkeypatch):
    """The UI's file is written by the first run only; a later run with other flags is recorded and
    reported (terminal and the automation sensor's description), not loaded; --save-ui-config loads it."""
    import yaml

    from interviewsim_cli import app
    from interviewsim_cli.run_cmds import LAST_RUN_CONFIG, UI_CONFIG
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_dagster.definitions import AUTOMATION_SENSOR, build_definitions

    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    base = ["run", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"),
            "--personalities", "TINY_ALDER", "--assets", "heldout_split"]
    one, two = tmp_path / "one.yaml", tmp_path / "two.yaml"
    one.write_text("methods: [simple]\n")
    two.write_text("methods: [chrono-100]\n")

    def methods(path):
        return yaml.safe_load(path.read_text())["methods"]

    assert CliRunner().invoke(app, [*base, "--config", str(one)]).exit_code == 0
    assert methods(home / UI_CONFIG) == methods(home / LAST_RUN_CONFIG) == ["simple"]
    assert _ui(monkeypatch)["config"] == str(home / UI_CONFIG)

    result = CliRunner().invoke(app, [*base, "--config", str(two)])
    assert result.exit_code == 0, result.output
    assert methods(home / UI_CONFIG) == ["simple"] and methods(home / LAST_RUN_CONFIG) == ["chrono-100"]
    seen = _ui(monkeypatch)
    assert seen["config"] == str(home / UI_CONFIG)
    assert "The last `interviewsim run` used another configuration" in seen["output"] and "methods" in seen["output"]
    ui_cfg = EvalConfig.load_resolved(env={"INTERVIEWSIM_CONFIG": seen["config"]})
    sensor = build_definitions(ui_cfg).resolve_sensor_def(AUTOMATION_SENSOR)
    assert "differs in: methods" in sensor.description

    result = CliRunner().invoke(app, [*base, "--config", str(two), "--save-ui-config"])
    assert result.exit_code == 0, result.output
    assert methods(home / UI_CONFIG) == ["chrono-100"]
    seen = _ui(monkeypatch)
    assert "another configuration" not in seen["output"]
    assert not build_definitions(EvalConfig.load_resolved(env={"INTERVIEWSIM_CONFIG": seen["config"]})
                                 ).resolve_sensor_def(AUTOMATION_SENSOR).description.count("NOTE")


def test_an_instance_from_before_keeps_its_last_run_config_as_the_ui_config(tmp_path, monkeypatch):
    from interviewsim_cli.run_cmds import LAST_RUN_CONFIG, UI_CONFIG

    home = tmp_path / "home"
    home.mkdir()
    (home / LAST_RUN_CONFIG).write_text("seed: 3\n")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    seen = _ui(monkeypatch)
    assert seen["config"] == str(home / UI_CONFIG) and "copied once" in seen["output"]
    assert (home / UI_CONFIG).read_text() == "seed: 3\n"


def test_ui_starts_dagster_in_the_instance_folder_with_user_paths_kept(tmp_path, monkeypatch):
    """dagster dev runs in DAGSTER_HOME (no dagster.yaml warning); relative paths still mean the user's folder."""
    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    monkeypatch.delenv("INTERVIEWSIM_DATA_ROOT", raising=False)
    monkeypatch.setenv("INTERVIEWSIM_CORPUS", "my_corpus")
    monkeypatch.chdir(tmp_path)
    seen = _ui(monkeypatch)
    assert Path(seen["cwd"]) == home.resolve()
    assert seen["env"]["INTERVIEWSIM_CORPUS"] == str(tmp_path.resolve() / "my_corpus")
    assert seen["env"]["INTERVIEWSIM_DATA_ROOT"] == str(tmp_path.resolve() / "data_out")  # the default, pinned
    assert "dev_command" in seen["env"]["PYTHONWARNINGS"]


def test_ui_leaves_a_data_root_set_in_the_config_file_alone(tmp_path, monkeypatch):
    config = tmp_path / "c.yaml"
    config.write_text("data_root: elsewhere\n")
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("INTERVIEWSIM_CONFIG", str(config))
    monkeypatch.delenv("INTERVIEWSIM_DATA_ROOT", raising=False)
    seen = _ui(monkeypatch)
    assert "INTERVIEWSIM_DATA_ROOT" not in seen["env"]


# --- issue 10: stale personalities, unregister, exit codes, real reasons -------------------------------

OFFLINE = ["--generator", "offline/extractive", "--judges", "offline/extractive",
           "--builder", "offline/extractive", "--premise-judge", "offline/extractive"]


def _run_cli(args, home, monkeypatch):
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    return CliRunner().invoke(app, args)


def test_a_stale_personality_is_skipped_with_a_warning_and_can_be_unregistered(tiny_corpus, tmp_path, monkeypatch):
    """Registered earlier, gone from the corpus now: the others still run (was: KeyError for everyone)."""
    import shutil

    home, data = tmp_path / "home", tmp_path / "data"
    assert _run_cli(["register", "--corpus", str(tiny_corpus)], home, monkeypatch).exit_code == 0
    shutil.rmtree(tiny_corpus / "TINY_BRISK")
    result = _run_cli(["run", "--corpus", str(tiny_corpus), "--data-root", str(data), "--methods", "simple",
                       "--assets", "heldout_split", *OFFLINE], home, monkeypatch)
    assert result.exit_code == 0, result.output
    assert "skipped personality 'TINY_BRISK'" in result.output
    assert "interviewsim unregister TINY_BRISK" in result.output
    assert partition_path(data, "heldout_split", "TINY_ALDER").is_file()

    result = _run_cli(["unregister", "TINY_BRISK", "NOBODY"], home, monkeypatch)
    assert result.exit_code == 1 and "unregistered: TINY_BRISK" in result.output and "'NOBODY'" in result.output
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_dynamic_partitions("personality") == ["TINY_ALDER"]
    result = _run_cli(["unregister", "--not-in", str(tmp_path / "elsewhere")], home, monkeypatch)
    assert result.exit_code == 0 and "unregistered: TINY_ALDER" in result.output


def test_an_empty_or_missing_corpus_prints_the_real_reason(tmp_path, monkeypatch):
    from interviewsim_cli.outcome import EXIT_INPUT_REFUSED

    empty = tmp_path / "empty"
    empty.mkdir()
    for corpus, rule in ((empty, "[no-documents]"), (tmp_path / "missing", "[not-found]")):
        result = _run_cli(["run", "--corpus", str(corpus), "--data-root", str(tmp_path / "d"), *OFFLINE],
                          tmp_path / "home", monkeypatch)
        assert result.exit_code == EXIT_INPUT_REFUSED, result.output
        assert rule in result.output and str(corpus) in result.output
        assert "register --corpus DIR` first" not in result.output


def test_refused_files_make_run_exit_non_zero_after_running_the_valid_ones(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli.outcome import EXIT_INPUT_REFUSED

    (tiny_corpus / "TINY_BROKEN").mkdir()
    (tiny_corpus / "TINY_BROKEN" / "prepared_input.json").write_text("{", encoding="utf-8")
    data = tmp_path / "data"
    result = _run_cli(["run", "--corpus", str(tiny_corpus), "--data-root", str(data), "--methods", "simple",
                       "--assets", "heldout_split", *OFFLINE], tmp_path / "home", monkeypatch)
    assert result.exit_code == EXIT_INPUT_REFUSED, result.output
    assert "[invalid-json]" in result.output and "refused: 1 corpus problem" in result.output
    assert f"exit code {EXIT_INPUT_REFUSED}" in result.output
    assert partition_path(data, "heldout_split", "TINY_ALDER").is_file()


def test_invalid_outputs_above_the_threshold_exit_6_and_are_counted(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli.outcome import EXIT_INVALID_OUTPUTS
    from interviewsim_core.llm.faults import FaultSpec
    from interviewsim_core.llm.gateway import Gateway
    from interviewsim_dagster import resources

    monkeypatch.setattr(resources, "_gateway_for", lambda *_a: Gateway(cache=None, faults=FaultSpec(malformed_rate=1.0)))
    # --in-process: the patched gateway is this process's; a worker process would build its own.
    result = _run_cli(["run", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"), "--methods",
                       "simple", "--assets", "heldout_split,atomic_items", "--in-process", *OFFLINE], tmp_path / "home",
                      monkeypatch)
    assert result.exit_code == EXIT_INVALID_OUTPUTS, result.output
    assert "atomic_items: " in result.output and " invalid of " in result.output
    assert "check failed: atomic_items:invalid_output_rate_under_threshold" in result.output


def test_a_failed_asset_check_exits_5(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli.outcome import EXIT_CHECKS_FAILED
    from interviewsim_core.pipeline import generation

    real = generation.assemble_generations
    monkeypatch.setattr(generation, "assemble_generations", lambda planned, results: real(planned, results).iloc[1:])
    result = _run_cli(["run", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"), "--methods",
                       "simple", "--personalities", "TINY_ALDER", "--assets", "heldout_split,generations", "--in-process",
                       *OFFLINE], tmp_path / "home", monkeypatch)  # the patch is in this process, not a worker's
    assert result.exit_code == EXIT_CHECKS_FAILED, result.output
    assert "check failed: generations:one_generation_per_heldout_question" in result.output


def test_an_unwritable_data_root_or_cache_is_one_line_naming_the_path(tiny_corpus, tmp_path, monkeypatch):
    import os

    from interviewsim_cli.outcome import EXIT_ENVIRONMENT

    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    cases = [["--data-root", str(blocker / "data")]]
    cache_dir = tmp_path / "ro_cache"
    cache_dir.mkdir()
    config = tmp_path / "c.yaml"
    config.write_text(f"cache_path: {cache_dir / 'llm.sqlite'}\n")
    if os.geteuid() != 0:  # root ignores permission bits
        cache_dir.chmod(0o500)
        cases.append(["--data-root", str(tmp_path / "ok"), "--config", str(config)])
    try:
        for extra in cases:
            result = _run_cli(["run", "--corpus", str(tiny_corpus), *extra, *OFFLINE], tmp_path / "home", monkeypatch)
            assert result.exit_code == EXIT_ENVIRONMENT, result.output
            assert "Traceback" not in result.output
            [line] = [ln for ln in result.output.splitlines() if "is not writable" in ln]
            assert str(blocker) in line or str(cache_dir) in line
    finally:
        cache_dir.chmod(0o700)


def test_run_refuses_while_another_configuration_writes_the_data_root_and_says_it_claims_it(
        tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli.outcome import EXIT_ENVIRONMENT
    from interviewsim_core.pipeline.data_root_claims import claim

    data = tmp_path / "data"
    args = ["run", "--corpus", str(tiny_corpus), "--data-root", str(data), "--personalities", "TINY_ALDER",
            "--methods", "simple", "--assets", "heldout_split", *OFFLINE]
    with claim(data, "another-config", "`interviewsim run` (pid 1)"):
        refused = _run_cli(args, tmp_path / "home", monkeypatch)
    assert refused.exit_code == EXIT_ENVIRONMENT, refused.output
    assert "not started: data root" in refused.output and "`interviewsim run` (pid 1)" in refused.output
    assert "Traceback" not in refused.output
    assert not (data / "heldout_split").exists()
    done = _run_cli(args, tmp_path / "home", monkeypatch)
    assert done.exit_code == 0, done.output
    assert f"data root {data} is claimed by this run" in done.output
    assert not (data / ".interviewsim_writers").exists(), "the claim goes with the command"
