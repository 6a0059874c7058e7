"""Hostile and malformed input (issue 10): every case of tests/fixtures/malformed/ refused with file, JSON path
and rule; the valid documents beside them still load; nothing is written. Big inputs are generated here."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

from interviewsim_core import input_rules
from interviewsim_core.loader import RULES, load_document, validate_paths

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "malformed"
EXPECTED: dict[str, list[str]] = json.loads((FIXTURES / "expected.json").read_text(encoding="utf-8"))


def _generator():
    spec = importlib.util.spec_from_file_location("make_fixtures", FIXTURES / "make_fixtures.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_fixture_corpus_is_what_its_generator_writes():
    committed = {str(p.relative_to(FIXTURES)): p.read_bytes() for p in FIXTURES.rglob("*")
                 if p.is_file() and p.name != "make_fixtures.py" and "__pycache__" not in p.parts}
    assert committed == _generator().files()
    assert len(EXPECTED) >= 40


def test_every_malformed_case_is_refused_with_file_path_and_rule_and_the_valid_ones_load():
    stamp = {p: os.stat(p).st_mtime_ns for p in FIXTURES.rglob("*")}
    problems = validate_paths([FIXTURES])
    by_folder: dict[str, list] = {}
    for p in problems:
        by_folder.setdefault(Path(p.file).relative_to(FIXTURES).parts[0], []).append(p)
    assert sorted(by_folder) == sorted(EXPECTED), "each case folder is refused, no valid folder is"
    for folder, (path, rule) in EXPECTED.items():
        got = [(p.path, p.rule) for p in by_folder[folder]]
        assert got == [(path, rule)], (folder, by_folder[folder])
        assert rule in RULES
        [problem] = by_folder[folder]
        if rule != "missing-document":
            assert problem.file == str(FIXTURES / folder / "prepared_input.json")
        assert problem.message
    for valid in sorted(FIXTURES.glob("00_valid_*/prepared_input.json")):
        assert validate_paths([valid]) == [], valid
        load_document(valid)
    assert {p: os.stat(p).st_mtime_ns for p in FIXTURES.rglob("*")} == stamp  # nothing written


def _big_doc(tmp_path: Path, change) -> Path:
    doc = _generator().base("BIG")
    change(doc)
    path = tmp_path / "BIG" / "prepared_input.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_10_mb_response_is_refused_by_the_text_limit(tmp_path):
    path = _big_doc(tmp_path, lambda d: d["interviews"][1]["qa_pairs"][0].update(response="word " * 2_000_000))
    [problem] = validate_paths([path])
    assert (problem.file, problem.path, problem.rule) == (str(path), "$.interviews[1].qa_pairs[0].response",
                                                          "text-too-long")
    ok = _big_doc(tmp_path / "ok", lambda d: d["interviews"][1]["qa_pairs"][0].update(
        response="w" * input_rules.MAX_TEXT_CHARS))
    assert validate_paths([ok]) == []  # the limit itself is allowed


def test_100000_qa_pairs_are_refused_by_the_pair_limit(tmp_path):
    def many(d):
        d["interviews"][0]["qa_pairs"] = [{"qa_id": f"M{k}", "question": "q?", "response": "r.", "tags": []}
                                          for k in range(100_000)]
    path = _big_doc(tmp_path, many)
    [problem] = validate_paths([path])
    assert (problem.path, problem.rule) == ("$.interviews", "too-many-pairs")
    assert "100,004 QA pairs" in problem.message


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = _big_doc(tmp_path, lambda d: None)
    monkeypatch.setattr(input_rules, "MAX_FILE_BYTES", path.stat().st_size - 1)
    [problem] = validate_paths([path])
    assert (problem.path, problem.rule) == ("$", "file-too-large")


@pytest.mark.parametrize("folder", sorted(f for f, (_p, rule) in EXPECTED.items() if rule != "missing-document"))
def test_each_case_alone_breaks_exactly_its_rule(folder):
    problems = validate_paths([FIXTURES / folder / "prepared_input.json"])
    if EXPECTED[folder][1] == "duplicate-personality":
        assert problems == []  # only a clash with another file of the corpus
        return
    assert [(p.path, p.rule) for p in problems] == [tuple(EXPECTED[folder])]
