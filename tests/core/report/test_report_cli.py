"""``interviewsim report`` end to end on the shared small run, and its argument errors."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from interviewsim_cli import app


def test_report_command_writes_both_files(small_run, tmp_path):
    cats = tmp_path / "cats.csv"
    cats.write_text("personality_id,category\nSYN_AUERLUND,Sports\n")
    res = CliRunner().invoke(app, ["report", "--data-root", str(small_run), "--out", str(tmp_path / "out"),
                                   "--categories", str(cats)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert doc["sections"]["category_breakdown"]["status"] == "ok"
    assert (tmp_path / "out" / "report.html").stat().st_size > 10_000
    assert "| Method |" in res.output and "report.html" in res.output


def test_the_data_roots_report_is_printed_with_its_explorer_address(small_run, tmp_path):
    """Issue 33: a file:// path does not open from the Dagster UI; the explorer serves the data root's report."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(small_run, root)
    res = CliRunner().invoke(app, ["report", "--data-root", str(root)])
    assert res.exit_code == 0, res.output
    assert "in the explorer: http://127.0.0.1:8765/report (start it: interviewsim view --data-root" in res.output


def test_report_command_rejects_bad_inputs(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["report", "--data-root", str(tmp_path / "missing")])
    assert res.exit_code == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("id,cat\nx,y\n")
    res = runner.invoke(app, ["report", "--data-root", str(tmp_path), "--categories", str(bad)])
    assert res.exit_code == 2 and "category" in res.output


def test_report_command_methods_pairs_and_embedder_flags(small_run, tmp_path, monkeypatch):
    from interviewsim_core import factories
    from interviewsim_core.embeddings import HashingEmbedder

    asked = []

    class Named(HashingEmbedder):
        """The offline embedder under the configured model's name: no network in tests."""

        def __init__(self, model, api_base=None):
            super().__init__()
            asked.append((model, api_base))
            self.name = f"stand-in:{model}"

    monkeypatch.setattr(factories, "embedder_from", Named)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, [
        "report", "--data-root", str(small_run), "--out", str(out), "--methods", "simple,chrono-100",
        "--pair", "simple:chrono-100", "--embedding-model", "openai/text-embedding-3-small",
        "--embedding-api-base", "http://127.0.0.1:9/v1"])
    assert res.exit_code == 0, res.output
    assert asked == [("openai/text-embedding-3-small", "http://127.0.0.1:9/v1")]
    doc = json.loads((out / "report.json").read_text())
    summary = doc["sections"]["overlap"]["tables"]["summary"][0]
    assert summary["embedder"] == "stand-in:openai/text-embedding-3-small"
    tests = doc["sections"]["paired_tests"]["tables"]["paired_tests"]
    assert {(t["method_a"], t["method_b"]) for t in tests} == {("simple", "chrono-100")}

    res = CliRunner().invoke(app, ["report", "--data-root", str(small_run), "--out", str(out), "--methods", "simple"])
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "report.json").read_text())
    assert doc["meta"]["methods"] == ["simple"]
    assert {r["method"] for r in doc["sections"]["leaderboard"]["tables"]["leaderboard"]} == {"simple"}


def test_report_command_rejects_bad_pairs_and_unknown_methods(small_run, tmp_path):
    runner = CliRunner()
    out = tmp_path / "out"
    for args, needle in ((["--pair", "simple"], "A:B"), (["--pair", "simple:simple"], "A:B"),
                         (["--methods", "simple,wiki"], "wiki"), (["--pair", "simple:memory-10"], "memory-10"),
                         (["--methods", "simple", "--pair", "simple:chrono-100"], "chrono-100")):
        res = runner.invoke(app, ["report", "--data-root", str(small_run), "--out", str(out), *args])
        assert res.exit_code == 2, (args, res.output)
        assert needle in res.output
    assert not out.exists()
