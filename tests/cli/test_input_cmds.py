"""``interviewsim validate`` and ``interviewsim split``: exit codes, stderr listing, JSON shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from interviewsim_cli import input_cmds

runner = CliRunner()


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    # A private app keeps these tests independent of other command modules.
    app = typer.Typer(pretty_exceptions_enable=False)
    input_cmds.register(app)
    return app


def _doc(pid: str, sequences: list[int], n_pairs: int = 2) -> dict:
    return {
        "schema_version": "1.0",
        "personality_id": pid,
        "personality": {"profile": "s", "long_profile": "l"},
        "interviews": [
            {
                "interview_id": f"{pid}_S{s}",
                "sequence": s,
                "qa_pairs": [
                    {"qa_id": f"{pid}_S{s}_{j}", "question": "q?", "response": "r.", "tags": []} for j in range(n_pairs)
                ],
            }
            for s in sequences
        ],
    }


def _write(folder: Path, doc: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "prepared_input.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    _write(root / "ALPHA", _doc("ALPHA", [5, 1, 3, 2, 4, 6], n_pairs=3))  # N=6 -> 2 test
    _write(root / "BETA", _doc("BETA", [10, 20], n_pairs=1))  # N=2 -> 1 test
    return root


def test_validate_valid_corpus(app: typer.Typer, corpus: Path) -> None:
    result = runner.invoke(app, ["validate", str(corpus)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("ALPHA: ok, 6 interviews, 18 QA pairs, split 4 train / 2 test")
    assert lines[1].startswith("BETA: ok, 2 interviews, 2 QA pairs, split 1 train / 1 test")
    assert result.stderr == ""


def test_validate_lists_every_problem_on_stderr(app: typer.Typer, corpus: Path, tmp_path: Path) -> None:
    bad = _doc("GAMMA", [1, 2, 3])
    bad["interviews"][1]["sequence"] = 1
    bad["interviews"][0]["qa_pairs"][1]["tags"] = ["x", "x"]
    bad_file = _write(corpus / "GAMMA", bad)
    dup_file = _write(tmp_path / "elsewhere", _doc("ALPHA", [1, 2]))
    broken = tmp_path / "broken.json"
    broken.write_bytes(b"\x80\x81")
    missing = tmp_path / "missing"

    result = runner.invoke(app, ["validate", str(corpus), str(dup_file), str(broken), str(missing)])

    assert result.exit_code == 1
    assert result.stdout == ""
    err = result.stderr
    assert err.startswith("5 problem(s) in the input:")
    for line in [
        f"{bad_file}: $.interviews[1].sequence: [duplicate-sequence]",
        f"{bad_file}: $.interviews[0].qa_pairs[1].tags[1]: [duplicate-tag]",
        f"{dup_file}: $.personality_id: [duplicate-personality]",
        f"{broken}: $: [not-utf8]",
        f"{missing}: $: [not-found]",
    ]:
        assert line in err
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


def test_validate_refuses_an_unsplittable_personality(app: typer.Typer, tmp_path: Path) -> None:
    file = _write(tmp_path / "SOLO", _doc("SOLO", [1]))
    result = runner.invoke(app, ["validate", str(file)])
    assert result.exit_code == 1
    assert f"{file}: $.interviews: [too-few-interviews]" in result.stderr
    assert "at least 2" in result.stderr


def test_validate_needs_a_path(app: typer.Typer) -> None:
    result = runner.invoke(app, ["validate"])
    assert result.exit_code == 2


def test_split_human_output(app: typer.Typer, corpus: Path) -> None:
    result = runner.invoke(app, ["split", str(corpus)])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "ALPHA: 6 interviews, 18 QA pairs -> train 4 interviews / 12 QA pairs, test 2 interviews / 6 QA pairs" in out
    assert "  train: ALPHA_S1, ALPHA_S2, ALPHA_S3, ALPHA_S4\n" in out
    assert "  test:  ALPHA_S5, ALPHA_S6\n" in out
    assert "BETA: 2 interviews, 2 QA pairs -> train 1 interviews / 1 QA pairs, test 1 interviews / 1 QA pairs" in out


def test_split_json_shape(app: typer.Typer, corpus: Path) -> None:
    result = runner.invoke(app, ["split", str(corpus), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["test_fraction"] == 0.2
    assert [p["personality_id"] for p in data["personalities"]] == ["ALPHA", "BETA"]
    alpha = data["personalities"][0]
    assert set(alpha) == {"personality_id", "file", "interviews", "qa_pairs", "train", "test"}
    assert alpha["file"] == str(corpus / "ALPHA" / "prepared_input.json")
    assert (alpha["interviews"], alpha["qa_pairs"]) == (6, 18)
    assert alpha["train"] == {
        "interviews": 4,
        "qa_pairs": 12,
        "interview_ids": ["ALPHA_S1", "ALPHA_S2", "ALPHA_S3", "ALPHA_S4"],
        "qa_ids": [f"ALPHA_S{s}_{j}" for s in (1, 2, 3, 4) for j in range(3)],
    }
    assert alpha["test"] == {"interviews": 2, "qa_pairs": 6, "interview_ids": ["ALPHA_S5", "ALPHA_S6"],
                             "qa_ids": [f"ALPHA_S{s}_{j}" for s in (5, 6) for j in range(3)]}
    beta = data["personalities"][1]
    assert beta["train"]["interview_ids"] == ["BETA_S10"] and beta["test"]["interview_ids"] == ["BETA_S20"]


def test_split_invalid_input_prints_problems_not_json(app: typer.Typer, corpus: Path) -> None:
    bad = _doc("GAMMA", [1, 2])
    bad["interviews"][1]["sequence"] = True
    bad_file = _write(corpus / "GAMMA", bad)
    result = runner.invoke(app, ["split", str(corpus), "--json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"{bad_file}: $.interviews[1].sequence: [not-integer]" in result.stderr
    assert "Traceback" not in result.output


def test_split_refuses_one_interview_with_a_clear_message(app: typer.Typer, tmp_path: Path) -> None:
    file = _write(tmp_path / "SOLO", _doc("SOLO", [3]))
    result = runner.invoke(app, ["split", str(file), "--json"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "[too-few-interviews]" in result.stderr and "'SOLO' has 1 interview(s)" in result.stderr


def test_commands_are_registered_on_the_real_app(corpus: Path) -> None:
    from interviewsim_cli import app as real_app

    result = runner.invoke(real_app, ["validate", str(corpus)])
    assert result.exit_code == 0, result.output
    result = runner.invoke(real_app, ["split", str(corpus), "--json"])
    assert result.exit_code == 0 and json.loads(result.stdout)["personalities"]


@pytest.mark.parametrize("pid", ["A|B", "A,B", "A\u0000B", "A\nB", "P" * 600])
def test_validate_refuses_ids_that_run_cannot_use(app: typer.Typer, tmp_path: Path, pid: str) -> None:
    """These passed `validate` and then failed in `run` (the long one with a 96-line traceback)."""
    doc = _doc("P", [1, 2])
    doc["personality_id"] = pid
    file = _write(tmp_path / "X", doc)
    result = runner.invoke(app, ["validate", str(file)])
    assert result.exit_code == 1
    assert f"{file}: $.personality_id: [" in result.output
    assert "[unusable-id]" in result.output or "[id-too-long]" in result.output


def test_validate_accepts_ids_run_can_use(app: typer.Typer, tmp_path: Path) -> None:
    for n, pid in enumerate(["A/B", "Zoë", "東京", "L" * 300]):
        doc = _doc("P", [1, 2])
        doc["personality_id"] = pid
        _write(tmp_path / "c" / f"X{n}", doc)
    result = runner.invoke(app, ["validate", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert result.output.count(": ok,") == 4
