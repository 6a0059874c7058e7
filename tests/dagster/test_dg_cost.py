"""Cost before the first call: `interviewsim plan`, `run --max-cost/--yes`, the plan run tags and the `plan` asset.

No model is ever reached: the models are real provider names (so litellm's price map prices them)
behind an api_base nothing listens on; the plan answers with the offline model, and the runs that
start materialise only `heldout_split`, which calls no model.
"""

from __future__ import annotations

import json
import re

import dagster as dg
import pytest
from typer.testing import CliRunner

from interviewsim_core.pipeline.storage import partition_path

NOWHERE = "http://127.0.0.1:9/v1"  # the discard port: a call sent here would fail, and the tests would see it
PAID = ["--generator", "openai/gpt-4.1", "--judges", "openai/gpt-4o", "--builder", "openai/gpt-4.1",
        "--premise-judge", "openai/gpt-4.1", "--api-base", NOWHERE, "--embedding-model", "offline/hashing"]


def _args(tiny_corpus, tmp_path, *extra: str) -> list[str]:
    return ["--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"), "--methods", "simple",
            "--personalities", "TINY_ALDER", *PAID, *extra]


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("INTERVIEWSIM_CONFIG", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    return tmp_path / "home"


def test_plan_prints_the_table_and_json_without_calling(tiny_corpus, tmp_path, home):
    from interviewsim_cli import app

    table = CliRunner().invoke(app, ["plan", *_args(tiny_corpus, tmp_path)])
    assert table.exit_code == 0, table.output
    assert "generations" in table.output and "openai/gpt-4.1" in table.output and "total" in table.output
    online = CliRunner().invoke(app, ["plan", *_args(tiny_corpus, tmp_path), "--json"])
    assert online.exit_code == 0, online.output
    data = json.loads(online.output)
    assert data["totals"]["calls"] > 0 and data["totals"]["cost_usd"] > 0
    assert {ln["method"] for ln in data["lines"] if ln["step"] == "generations"} == {"simple"}
    # --batch: the same calls at the batch rates.
    batch = json.loads(CliRunner().invoke(app, ["plan", *_args(tiny_corpus, tmp_path), "--json", "--batch"]).output)
    assert batch["totals"]["calls"] == data["totals"]["calls"]
    assert batch["totals"]["cost_usd"] < 0.75 * data["totals"]["cost_usd"]
    assert not (tmp_path / "data" / "generations").exists()  # nothing written


def test_batch_refuses_a_provider_without_a_batch_path(tiny_corpus, tmp_path, home):
    from interviewsim_cli import app

    result = CliRunner().invoke(app, ["plan", *_args(tiny_corpus, tmp_path), "--batch",
                                      "--judges", "anthropic/claude-sonnet-4-5"])
    assert result.exit_code == 2
    assert "judges[0]" in result.output and "batch" in result.output


def test_run_over_budget_refuses_without_yes_and_calls_nothing(tiny_corpus, tmp_path, home):
    from interviewsim_cli import app
    from interviewsim_cli.outcome import EXIT_OVER_BUDGET

    result = CliRunner().invoke(app, ["run", *_args(tiny_corpus, tmp_path), "--max-cost", "0.0001"])
    assert result.exit_code == EXIT_OVER_BUDGET == 7, result.output
    assert "plan:" in result.output and "--yes" in result.output
    # Both sides with the digits that tell them apart (issue 33: it said "$0.01 ... more than max_cost_usd $0.00").
    assert re.search(r"the plan costs \$0\.\d{5}, more than max_cost_usd \$0\.00010", result.output), result.output
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_runs() == []  # nothing launched
    assert not partition_path(tmp_path / "data", "heldout_split", "TINY_ALDER").exists()


def test_run_over_budget_asks_on_a_terminal(tiny_corpus, tmp_path, home, monkeypatch):
    from interviewsim_cli import app, run_cmds

    monkeypatch.setattr(run_cmds, "_is_tty", lambda: True)
    no = CliRunner().invoke(app, ["run", *_args(tiny_corpus, tmp_path), "--max-cost", "0.0001",
                                  "--assets", "heldout_split"], input="n\n")
    assert no.exit_code == 7, no.output
    assert "Start anyway?" in no.output
    yes = CliRunner().invoke(app, ["run", *_args(tiny_corpus, tmp_path), "--max-cost", "0.0001",
                                   "--assets", "heldout_split"], input="y\n")
    assert yes.exit_code == 0, yes.output


def test_run_with_yes_starts_and_tags_its_runs_with_the_plan(tiny_corpus, tmp_path, home):
    from interviewsim_cli import app
    from interviewsim_cli.run_cmds import PLAN_TAG_PREFIX

    result = CliRunner().invoke(app, ["run", *_args(tiny_corpus, tmp_path), "--max-cost", "0.0001", "--yes",
                                      "--assets", "heldout_split"])
    assert result.exit_code == 0, result.output
    assert partition_path(tmp_path / "data", "heldout_split", "TINY_ALDER").is_file()
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert len(runs) == 1
        tags = runs[0].tags
    assert int(tags[PLAN_TAG_PREFIX + "calls"]) > 0
    assert float(tags[PLAN_TAG_PREFIX + "cost_usd"]) > 0.0001
    assert f"{int(tags[PLAN_TAG_PREFIX + 'calls']):,} model calls" in result.output


def test_plan_asset_shows_the_plan_as_metadata(tiny_corpus, tmp_path):
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.plan import plan_run
    from interviewsim_dagster.definitions import build_definitions, build_resources

    cfg = EvalConfig(corpus=tiny_corpus, data_root=tmp_path / "data", methods=("simple",), api_base=NOWHERE,
                     generator={"model": "openai/gpt-4.1"}, judges=({"model": "openai/gpt-4o"},),
                     builder={"model": "openai/gpt-4.1"}, premise_judge={"model": "openai/gpt-4.1"}).resolved()
    defs = build_definitions(cfg)
    graph = defs.resolve_asset_graph()
    key = dg.AssetKey("plan")
    assert graph.get(key).group_name == "cost"
    assert not graph.get(key).child_keys  # upstream of nothing
    assert graph.get(key).automation_condition is None
    asset = defs.get_assets_def(key)
    result = dg.materialize([asset], resources=build_resources(cfg), instance=dg.DagsterInstance.ephemeral())
    assert result.success
    meta = result.asset_materializations_for_node("plan")[0].metadata
    expected = plan_run(cfg)
    assert meta["calls"].value == expected.calls > 0
    assert meta["cost_usd"].value == pytest.approx(expected.cost_usd, abs=1e-6)
    assert "| generations | simple | openai/gpt-4.1 |" in meta["plan"].value
    # The UI's table has every column of the terminal's, the notes included (issue 19: a method whose
    # prompts repeat another's is shown "same prompts as ...", never silently short).
    header = meta["plan"].value.splitlines()[0]
    for column in ("dedup", "cached", "to send", "tokenizer", "note"):
        assert f" {column} |" in header, header
    notes = [ln.note for ln in expected.lines if ln.note]
    assert all(n.replace("|", "\\|") in meta["plan"].value for n in notes)
    assert not (tmp_path / "data" / "generations").exists()
