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


def test_report_command_rejects_bad_inputs(tmp_path):
    runner = CliRunner()
    res = runner.invoke(app, ["report", "--data-root", str(tmp_path / "missing")])
    assert res.exit_code == 2
    bad = tmp_path / "bad.csv"
    bad.write_text("id,cat\nx,y\n")
    res = runner.invoke(app, ["report", "--data-root", str(tmp_path), "--categories", str(bad)])
    assert res.exit_code == 2 and "category" in res.output
