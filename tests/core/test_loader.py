"""The strict loader: one test per INPUT_SCHEMA rule, located by file, JSON path and rule id."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from interviewsim_core.errors import InputValidationError, Problem
from interviewsim_core.loader import (
    RULES,
    discover_documents,
    index_corpus,
    load_corpus,
    load_document,
    load_paths,
    validate_paths,
)
from interviewsim_core.schema import PreparedInput


def _doc(pid: str = "P1", n_interviews: int = 3, n_pairs: int = 2) -> dict:
    return {
        "schema_version": "1.0",
        "personality_id": pid,
        "personality": {"profile": "short", "long_profile": "long"},
        "interviews": [
            {
                "interview_id": f"{pid}_I{i}",
                "sequence": i,
                "qa_pairs": [
                    {
                        "qa_id": f"{pid}_Q{i}_{j}",
                        "question": f"question {i}.{j}?",
                        "response": f"response {i}.{j}.",
                        "tags": ["Identity Narrative"] if j % 2 == 0 else [],
                    }
                    for j in range(n_pairs)
                ],
            }
            for i in range(n_interviews)
        ],
    }


def _write(folder: Path, doc: object, name: str = "prepared_input.json") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def _problems_of(path: Path) -> list[Problem]:
    with pytest.raises(InputValidationError) as info:
        load_document(path)
    return info.value.problems


def _only(path: Path) -> Problem:
    problems = _problems_of(path)
    assert len(problems) == 1, problems
    return problems[0]


def _pair(d: dict, i: int = 0, j: int = 0) -> dict:
    return d["interviews"][i]["qa_pairs"][j]


def _set(obj: dict, key: str, value: object) -> None:
    obj[key] = value


# (mutation, expected JSON path, expected rule): one row per rule and level.
CASES = {
    "unknown-field-root": (lambda d: _set(d, "extra", 1), "$.extra", "unknown-field"),
    "unknown-field-personality": (lambda d: _set(d["personality"], "age", 3), "$.personality.age", "unknown-field"),
    "unknown-field-interview": (lambda d: _set(d["interviews"][2], "date", "x"), "$.interviews[2].date", "unknown-field"),
    "unknown-field-pair": (
        lambda d: _set(_pair(d, 1, 0), "speaker", "x"),
        "$.interviews[1].qa_pairs[0].speaker",
        "unknown-field",
    ),
    "unknown-field-odd-name": (lambda d: _set(d, "a b", 1), '$["a b"]', "unknown-field"),
    "missing-qa_id": (lambda d: _pair(d, 0, 1).pop("qa_id"), "$.interviews[0].qa_pairs[1].qa_id", "missing-field"),
    "missing-tags": (lambda d: _pair(d, 2, 1).pop("tags"), "$.interviews[2].qa_pairs[1].tags", "missing-field"),
    "missing-personality": (lambda d: d.pop("personality"), "$.personality", "missing-field"),
    "missing-long_profile": (lambda d: d["personality"].pop("long_profile"), "$.personality.long_profile", "missing-field"),
    "missing-sequence": (lambda d: d["interviews"][1].pop("sequence"), "$.interviews[1].sequence", "missing-field"),
    "missing-schema_version": (lambda d: d.pop("schema_version"), "$.schema_version", "missing-field"),
    "personality_id-not-string": (lambda d: _set(d, "personality_id", 5), "$.personality_id", "wrong-type"),
    "question-null": (lambda d: _set(_pair(d, 1, 1), "question", None), "$.interviews[1].qa_pairs[1].question", "wrong-type"),
    "response-number": (lambda d: _set(_pair(d), "response", 4.5), "$.interviews[0].qa_pairs[0].response", "wrong-type"),
    "qa_id-number": (lambda d: _set(_pair(d), "qa_id", 7), "$.interviews[0].qa_pairs[0].qa_id", "wrong-type"),
    "interview_id-bool": (lambda d: _set(d["interviews"][0], "interview_id", True), "$.interviews[0].interview_id", "wrong-type"),
    "profile-array": (lambda d: _set(d["personality"], "profile", ["x"]), "$.personality.profile", "wrong-type"),
    "long_profile-null": (lambda d: _set(d["personality"], "long_profile", None), "$.personality.long_profile", "wrong-type"),
    "personality-string": (lambda d: _set(d, "personality", "bio"), "$.personality", "wrong-type"),
    "interviews-object": (lambda d: _set(d, "interviews", {}), "$.interviews", "wrong-type"),
    "interview-string": (lambda d: d["interviews"].__setitem__(1, "I1"), "$.interviews[1]", "wrong-type"),
    "qa_pairs-string": (lambda d: _set(d["interviews"][0], "qa_pairs", "x"), "$.interviews[0].qa_pairs", "wrong-type"),
    "pair-array": (lambda d: d["interviews"][0]["qa_pairs"].__setitem__(0, []), "$.interviews[0].qa_pairs[0]", "wrong-type"),
    "tags-string": (lambda d: _set(_pair(d), "tags", "Identity Narrative"), "$.interviews[0].qa_pairs[0].tags", "wrong-type"),
    "tag-number": (lambda d: _set(_pair(d), "tags", ["a", 3]), "$.interviews[0].qa_pairs[0].tags[1]", "wrong-type"),
    "schema_version-float": (lambda d: _set(d, "schema_version", 1.0), "$.schema_version", "wrong-type"),
    "schema_version-2": (lambda d: _set(d, "schema_version", "2.0"), "$.schema_version", "unsupported-version"),
    "schema_version-1": (lambda d: _set(d, "schema_version", "1"), "$.schema_version", "unsupported-version"),
    "blank-personality_id": (lambda d: _set(d, "personality_id", "   "), "$.personality_id", "blank-id"),
    "empty-interview_id": (lambda d: _set(d["interviews"][2], "interview_id", ""), "$.interviews[2].interview_id", "blank-id"),
    "blank-qa_id": (lambda d: _set(_pair(d, 1, 1), "qa_id", "\t\n "), "$.interviews[1].qa_pairs[1].qa_id", "blank-id"),
    "empty-question": (lambda d: _set(_pair(d), "question", ""), "$.interviews[0].qa_pairs[0].question", "blank-text"),
    "blank-response": (lambda d: _set(_pair(d, 2, 0), "response", "  \n"), "$.interviews[2].qa_pairs[0].response", "blank-text"),
    "sequence-bool": (lambda d: _set(d["interviews"][1], "sequence", True), "$.interviews[1].sequence", "not-integer"),
    "sequence-float": (lambda d: _set(d["interviews"][1], "sequence", 1.0), "$.interviews[1].sequence", "not-integer"),
    "sequence-string": (lambda d: _set(d["interviews"][0], "sequence", "0"), "$.interviews[0].sequence", "not-integer"),
    "sequence-null": (lambda d: _set(d["interviews"][0], "sequence", None), "$.interviews[0].sequence", "not-integer"),
    "sequence-negative": (lambda d: _set(d["interviews"][0], "sequence", -1), "$.interviews[0].sequence", "negative-sequence"),
    "sequence-duplicate": (lambda d: _set(d["interviews"][2], "sequence", 0), "$.interviews[2].sequence", "duplicate-sequence"),
    "interview_id-duplicate": (
        lambda d: _set(d["interviews"][2], "interview_id", "P1_I0"),
        "$.interviews[2].interview_id",
        "duplicate-id",
    ),
    "qa_id-duplicate-across-interviews": (
        lambda d: _set(_pair(d, 2, 1), "qa_id", "P1_Q0_0"),
        "$.interviews[2].qa_pairs[1].qa_id",
        "duplicate-id",
    ),
    "tag-blank": (lambda d: _set(_pair(d), "tags", ["ok", " "]), "$.interviews[0].qa_pairs[0].tags[1]", "blank-tag"),
    "tag-empty": (lambda d: _set(_pair(d), "tags", [""]), "$.interviews[0].qa_pairs[0].tags[0]", "blank-tag"),
    "tag-duplicate": (
        lambda d: _set(_pair(d, 1, 0), "tags", ["Social Identity", "Psychological Traits", "Social Identity"]),
        "$.interviews[1].qa_pairs[0].tags[2]",
        "duplicate-tag",
    ),
    "interviews-empty": (lambda d: _set(d, "interviews", []), "$.interviews", "empty-array"),
    "qa_pairs-empty": (lambda d: _set(d["interviews"][1], "qa_pairs", []), "$.interviews[1].qa_pairs", "empty-array"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_rule_is_reported_with_file_path_and_rule(tmp_path: Path, case: str) -> None:
    mutate, path, rule = CASES[case]
    doc = _doc()
    mutate(doc)
    file = _write(tmp_path, doc)
    problem = _only(file)
    assert (problem.file, problem.path, problem.rule) == (str(file), path, rule)
    assert problem.message


def test_root_must_be_an_object(tmp_path: Path) -> None:
    file = _write(tmp_path, [_doc()])
    assert _only(file) == Problem(str(file), "$", "wrong-type", "expected an object, got array")


def _raw(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "prepared_input.json"
    path.write_bytes(data)
    return path


def test_duplicate_key_at_root(tmp_path: Path) -> None:
    text = json.dumps(_doc())
    text = text.replace('"personality_id": "P1"', '"personality_id": "P1", "personality_id": "P2"', 1)
    file = _raw(tmp_path, text.encode())
    problem = _only(file)
    assert (problem.file, problem.path, problem.rule) == (str(file), "$.personality_id", "duplicate-key")


def test_duplicate_key_deep_inside_a_pair(tmp_path: Path) -> None:
    text = json.dumps(_doc())
    old = '"question": "question 1.1?"'
    assert old in text
    text = text.replace(old, old + ', "question": "another?"')
    file = _raw(tmp_path, text.encode())
    problem = _only(file)
    assert (problem.path, problem.rule) == ("$.interviews[1].qa_pairs[1].question", "duplicate-key")


def test_duplicate_key_with_identical_values_is_still_refused(tmp_path: Path) -> None:
    text = json.dumps(_doc()).replace('"long_profile": "long"', '"long_profile": "long", "long_profile": "long"')
    problem = _only(_raw(tmp_path, text.encode()))
    assert (problem.path, problem.rule) == ("$.personality.long_profile", "duplicate-key")


def test_not_utf8(tmp_path: Path) -> None:
    data = json.dumps(_doc()).replace("short", "caf\u00e9").encode("latin-1")
    file = _raw(tmp_path, data)
    problem = _only(file)
    assert (problem.file, problem.path, problem.rule) == (str(file), "$", "not-utf8")


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b'{"schema_version": "1.0",',
        json.dumps(_doc()).encode() + b" {}",
        b"\xef\xbb\xbf" + json.dumps(_doc()).encode(),
        json.dumps(_doc()).replace('"sequence": 0', '"sequence": NaN').encode(),
        json.dumps(_doc()).replace('"sequence": 0', '"sequence": Infinity').encode(),
    ],
    ids=["empty", "truncated", "trailing-data", "bom", "nan", "infinity"],
)
def test_invalid_json(tmp_path: Path, data: bytes) -> None:
    file = _raw(tmp_path, data)
    problem = _only(file)
    assert (problem.file, problem.path, problem.rule) == (str(file), "$", "invalid-json")


def test_every_problem_of_one_file_is_reported(tmp_path: Path) -> None:
    doc = _doc()
    doc["extra"] = True
    doc["interviews"][0]["sequence"] = -3
    _pair(doc, 1, 1)["qa_id"] = ""
    _pair(doc, 2, 0)["tags"] = ["x", "x"]
    del doc["personality"]["profile"]
    file = _write(tmp_path, doc)
    got = {(p.path, p.rule) for p in _problems_of(file)}
    assert got == {
        ("$.extra", "unknown-field"),
        ("$.interviews[0].sequence", "negative-sequence"),
        ("$.interviews[1].qa_pairs[1].qa_id", "blank-id"),
        ("$.interviews[2].qa_pairs[0].tags[1]", "duplicate-tag"),
        ("$.personality.profile", "missing-field"),
    }


def test_many_problems_in_several_files_come_in_one_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    good = _write(corpus / "A_GOOD", _doc("A"))
    bad_b = _doc("B")
    bad_b["interviews"][1]["sequence"] = 1.0
    _pair(bad_b, 0, 0)["question"] = " "
    fb = _write(corpus / "B_BAD", bad_b)
    bad_c = _doc("C")
    bad_c["schema_version"] = "0.9"
    bad_c["interviews"][2]["qa_pairs"] = []
    fc = _write(corpus / "C_BAD", bad_c)
    (corpus / "D_BROKEN").mkdir()
    fd = corpus / "D_BROKEN" / "prepared_input.json"
    fd.write_bytes(b"{not json")
    _write(corpus / "E_EMPTY", _doc("E"), name="prepared-input.json")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))

    with pytest.raises(InputValidationError) as info:
        load_corpus(corpus)

    got = {(p.file, p.path, p.rule) for p in info.value.problems}
    assert got == {
        (str(corpus / "E_EMPTY"), "$", "missing-document"),
        (str(fb), "$.interviews[1].sequence", "not-integer"),
        (str(fb), "$.interviews[0].qa_pairs[0].question", "blank-text"),
        (str(fc), "$.schema_version", "unsupported-version"),
        (str(fc), "$.interviews[2].qa_pairs", "empty-array"),
        (str(fd), "$", "invalid-json"),
    }
    assert len(info.value.problems) == 6
    assert str(good) not in str(info.value)
    assert "6 problem(s)" in str(info.value)
    assert isinstance(info.value, ValueError)
    # validate_paths reports exactly the same problems, without raising, and nothing was written.
    assert set(validate_paths([corpus])) == set(info.value.problems)
    # index_corpus (the runner's: check everything, hold nothing) refuses with the same problems.
    with pytest.raises(InputValidationError) as indexed:
        index_corpus(corpus)
    assert set(indexed.value.problems) == set(info.value.problems)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before


def test_personality_id_in_two_files_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    first = _write(corpus / "ONE", _doc("SAME"))
    second = _write(corpus / "TWO", _doc("SAME"))
    with pytest.raises(InputValidationError) as info:
        load_corpus(corpus)
    [problem] = info.value.problems
    assert (problem.file, problem.path, problem.rule) == (str(second), "$.personality_id", "duplicate-personality")
    assert str(first) in problem.message


def test_personality_id_clash_across_separately_given_paths(tmp_path: Path) -> None:
    a = _write(tmp_path / "a", _doc("SAME"))
    b = _write(tmp_path / "b", _doc("SAME"), name="other_name.json")
    problems = validate_paths([a, b])
    assert [(p.file, p.rule) for p in problems] == [(str(b), "duplicate-personality")]


def test_same_file_reached_twice_is_not_a_clash(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    _write(corpus / "X", _doc("X"))
    loaded = load_paths([corpus, corpus / "X", corpus / "X" / "prepared_input.json"])
    assert [item.doc.personality_id for item in loaded] == ["X"]


def test_valid_corpus_loads_frozen_models_in_folder_order(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    _write(corpus / "B", _doc("PB", n_interviews=2, n_pairs=1))
    _write(corpus / "A", _doc("PA", n_interviews=4, n_pairs=3))
    (corpus / "manifest.json").write_text("{not even json")  # files beside the sub-folders are ignored
    (corpus / "A" / "notes.json").write_text("[]")  # so are other files inside a sub-folder
    (corpus / ".cache").mkdir()  # hidden folders are not personalities
    docs = load_corpus(corpus)
    assert [d.personality_id for d in docs] == ["PA", "PB"]
    pa = docs[0]
    assert isinstance(pa, PreparedInput)
    assert isinstance(pa.interviews, tuple) and isinstance(pa.interviews[0].qa_pairs, tuple)
    assert pa.interviews[0].qa_pairs[0].tags == ("Identity Narrative",)
    assert pa.interviews[0].qa_pairs[1].tags == ()
    assert pa.personality.long_profile == "long"
    assert sum(len(i.qa_pairs) for i in pa.interviews) == 12
    with pytest.raises(Exception):
        pa.personality_id = "other"  # type: ignore[misc]
    assert validate_paths([corpus]) == []


def test_unicode_large_sequences_and_empty_tags_are_valid(tmp_path: Path) -> None:
    doc = _doc()
    doc["interviews"][0]["sequence"] = 10**15
    _pair(doc)["response"] = "Ça va, 東京 \u2014 fine."
    for itv in doc["interviews"]:
        for p in itv["qa_pairs"]:
            p["tags"] = []
    loaded = load_document(_write(tmp_path, doc))
    assert loaded.interviews[0].sequence == 10**15
    assert loaded.interviews[0].qa_pairs[0].response == "Ça va, 東京 \u2014 fine."


def test_folder_that_directly_holds_the_document(tmp_path: Path) -> None:
    file = _write(tmp_path / "P", _doc("DIRECT"))
    _write(tmp_path / "P" / "nested", _doc("IGNORED"))
    assert discover_documents(tmp_path / "P") == [file]
    assert [d.personality_id for d in load_corpus(tmp_path / "P")] == ["DIRECT"]


def test_single_file_of_any_name(tmp_path: Path) -> None:
    file = _write(tmp_path, _doc("ANY"), name="person.json")
    assert [d.personality_id for d in load_corpus(file)] == ["ANY"]
    assert load_document(file).personality_id == "ANY"


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(InputValidationError) as info:
        load_corpus(missing)
    assert [(p.file, p.rule) for p in info.value.problems] == [(str(missing), "not-found")]
    with pytest.raises(InputValidationError) as info:
        load_document(missing)
    assert [(p.file, p.rule) for p in info.value.problems] == [(str(missing), "not-found")]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "readme.txt").write_text("hello")
    with pytest.raises(InputValidationError) as info:
        discover_documents(empty)
    assert [(p.file, p.path, p.rule) for p in info.value.problems] == [(str(empty), "$", "no-documents")]


def test_validate_paths_reports_unsplittable_documents_unless_asked_not_to(tmp_path: Path) -> None:
    file = _write(tmp_path / "ONE", _doc("LONELY", n_interviews=1))
    assert load_document(file).personality_id == "LONELY"  # a schema-valid document loads
    [problem] = validate_paths([file])
    assert (problem.file, problem.path, problem.rule) == (str(file), "$.interviews", "too-few-interviews")
    assert "LONELY" in problem.message and "at least 2" in problem.message
    assert validate_paths([file], require_split=False) == []


def test_validate_paths_accepts_a_single_path_and_never_raises(tmp_path: Path) -> None:
    assert validate_paths(str(tmp_path / "nope"))[0].rule == "not-found"
    file = _raw(tmp_path, b"\xff\xfe")
    assert [p.rule for p in validate_paths([file])] == ["not-utf8"]


def test_rule_table_is_the_documented_set() -> None:
    assert set(RULES) == {
        "not-found", "no-documents", "missing-document", "not-utf8", "invalid-json", "duplicate-key",
        "unknown-field", "missing-field", "wrong-type", "unsupported-version", "blank-id", "blank-text",
        "not-integer", "negative-sequence", "duplicate-sequence", "duplicate-id", "blank-tag",
        "duplicate-tag", "empty-array", "duplicate-personality", "too-few-interviews",
        "unusable-id", "id-too-long", "text-too-long", "too-many-pairs", "file-too-large", "invalid-unicode",
        "number-too-large", "not-a-file", "symlink-outside-corpus",
    }  # fmt: skip
    assert {rule for _, _, rule in CASES.values()} <= set(RULES)


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)

# Where a fuzzed value may land: (container getter, key).
_SLOTS = [
    (lambda d: d, "schema_version"),
    (lambda d: d, "personality_id"),
    (lambda d: d, "personality"),
    (lambda d: d["personality"], "profile"),
    (lambda d: d, "interviews"),
    (lambda d: d["interviews"][1], "interview_id"),
    (lambda d: d["interviews"][1], "sequence"),
    (lambda d: d["interviews"][0], "qa_pairs"),
    (lambda d: _pair(d, 2, 1), "qa_id"),
    (lambda d: _pair(d, 2, 1), "question"),
    (lambda d: _pair(d, 0, 0), "tags"),
    (lambda d: _pair(d, 0, 0), "unexpected"),
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(slot=st.sampled_from(range(len(_SLOTS))), value=_json_values)
def test_any_value_anywhere_loads_or_is_refused_with_a_known_rule(tmp_path: Path, slot: int, value: object) -> None:
    doc = _doc()
    getter, key = _SLOTS[slot]
    getter(doc)[key] = value
    file = _write(tmp_path, doc)
    problems = validate_paths([file], require_split=False)
    assert all(p.rule in RULES and p.file == str(file) and p.path.startswith("$") for p in problems)
    if problems:
        with pytest.raises(InputValidationError):
            load_document(file)
    else:
        assert load_document(file).personality_id == doc["personality_id"]


def test_loader_writes_nothing(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    _write(corpus / "A", _doc("A"))
    bad = _doc("B")
    bad["extra"] = 1
    _write(corpus / "B", bad)
    stamp = {p: os.stat(p).st_mtime_ns for p in tmp_path.rglob("*")}
    assert validate_paths([corpus])
    with pytest.raises(InputValidationError):
        load_corpus(corpus)
    load_corpus(corpus / "A")
    assert {p: os.stat(p).st_mtime_ns for p in tmp_path.rglob("*")} == stamp


@pytest.mark.parametrize(
    ("pid", "rule"),
    [
        ("A|B", "unusable-id"), ("A,B", "unusable-id"), ("A[1]", "unusable-id"), ("A...B", "unusable-id"),
        ("A\nB", "unusable-id"), ("A\x00B", "unusable-id"), ("A\tB", "unusable-id"), (" A", "unusable-id"),
        ("A\u200bB", "unusable-id"), ("\u202eA", "unusable-id"), ("A" * 513, "id-too-long"),
        ("A\ud800", "invalid-unicode"),
    ],
)
def test_personality_ids_that_run_cannot_use_are_refused_by_validate(tmp_path: Path, pid: str, rule: str) -> None:
    """validate accepts exactly what run can use: Dagster key separators, control and invisible characters."""
    doc = _doc()
    doc["personality_id"] = pid
    file = tmp_path / "prepared_input.json"
    file.write_text(json.dumps(doc), encoding="utf-8")  # ASCII escapes, so a lone surrogate can be written
    [problem] = validate_paths([file])
    assert (problem.file, problem.path, problem.rule) == (str(file), "$.personality_id", rule)


@pytest.mark.parametrize("pid", ["A/B", "A_B", "Zoë", "Zoé", "東京", "大阪", "A" * 300, "..", "a b", "P-1.x"])
def test_ids_run_can_use_pass_validate(tmp_path: Path, pid: str) -> None:
    assert validate_paths([_write(tmp_path, _doc(pid))]) == []


def test_nfc_nfd_and_case_twins_across_files_are_one_personality(tmp_path: Path) -> None:
    import unicodedata

    nfc = unicodedata.normalize("NFC", "Zoë")
    nfd = unicodedata.normalize("NFD", "Zoë")
    assert nfc != nfd
    corpus = tmp_path / "c"
    _write(corpus / "A", _doc(nfc))
    second = _write(corpus / "B", _doc(nfd))
    _write(corpus / "C", _doc("ALICE"))
    third = _write(corpus / "D", _doc("alice"))
    problems = validate_paths([corpus])
    assert [(p.file, p.path, p.rule) for p in problems] == [
        (str(second), "$.personality_id", "duplicate-personality"),
        (str(third), "$.personality_id", "duplicate-personality"),
    ]
    assert "NFC" in problems[0].message


def test_nfc_nfd_twin_qa_ids_in_one_document_are_duplicates(tmp_path: Path) -> None:
    import unicodedata

    doc = _doc()
    _pair(doc, 0, 0)["qa_id"] = unicodedata.normalize("NFC", "Q_é")
    _pair(doc, 0, 1)["qa_id"] = unicodedata.normalize("NFD", "Q_é")
    problem = _only(_write(tmp_path, doc))
    assert (problem.path, problem.rule) == ("$.interviews[0].qa_pairs[1].qa_id", "duplicate-id")


def test_text_with_only_invisible_characters_is_blank(tmp_path: Path) -> None:
    doc = _doc()
    _pair(doc)["response"] = "\u200b\u200f \u2066"
    problem = _only(_write(tmp_path, doc))
    assert (problem.path, problem.rule) == ("$.interviews[0].qa_pairs[0].response", "blank-text")
    doc = _doc()
    _pair(doc)["response"] = "\u200fمرحبا\u200c بالعالم"  # RTL mark and ZWNJ inside real text are content
    assert load_document(_write(tmp_path, doc)).personality_id == "P1"


def test_index_corpus_maps_each_personality_to_its_file_in_folder_order(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    fb = _write(corpus / "B", _doc("PB", n_interviews=2, n_pairs=1))
    fa = _write(corpus / "A", _doc("PA", n_interviews=4, n_pairs=3))
    index = index_corpus(corpus)
    assert list(index.items()) == [("PA", fa), ("PB", fb)]
    assert load_document(index["PB"]) == load_corpus(corpus)[1]


# -- issue 20: numbers beyond 64 bits; document entries that are not files ---------------------------

INT64_MAX = 2**63 - 1


@pytest.mark.parametrize("value", [2**63, 10**26, 2**64 + 5])
def test_a_sequence_beyond_64_bits_is_refused_by_validate(tmp_path: Path, value: int) -> None:
    doc = _doc()
    doc["interviews"][1]["sequence"] = value
    file = _write(tmp_path, doc)
    [problem] = validate_paths([file])
    assert (problem.file, problem.path, problem.rule) == (str(file), "$.interviews[1].sequence", "number-too-large")
    assert str(INT64_MAX) in problem.message
    with pytest.raises(InputValidationError):
        load_document(file)


def test_the_largest_sequence_validate_accepts_is_one_the_tables_can_store(tmp_path: Path) -> None:
    from interviewsim_core.pipeline.split_tables import split_table
    from interviewsim_core.pipeline.tables import to_table
    from interviewsim_core.split import split_personality

    doc = _doc()
    doc["interviews"][2]["sequence"] = INT64_MAX
    file = _write(tmp_path, doc)
    assert validate_paths([file]) == []
    table = to_table(split_table(split_personality(load_document(file))), "heldout_split")
    assert INT64_MAX in table.column("sequence").to_pylist()


def _corpus_with_entry(tmp_path: Path, make) -> tuple[Path, Path]:
    corpus = tmp_path / "corpus"
    _write(corpus / "GOOD", _doc("GOOD"))
    (corpus / "ODD").mkdir(parents=True)
    entry = corpus / "ODD" / "prepared_input.json"
    make(entry)
    return corpus, entry


@pytest.mark.parametrize("kind, make, says", [
    ("directory", lambda e: e.mkdir(), "is a directory"),
    ("fifo", lambda e: os.mkfifo(e), "is a FIFO"),
    ("loop", lambda e: e.symlink_to(e), "symbolic link loop"),
    ("dangling", lambda e: e.symlink_to(e.parent / "gone.json"), "broken symbolic link"),
])
def test_a_document_entry_that_is_not_a_file_says_what_it_is(tmp_path: Path, kind: str, make, says: str) -> None:
    corpus, entry = _corpus_with_entry(tmp_path, make)
    problems = validate_paths([corpus])
    assert [(p.file, p.path, p.rule) for p in problems] == [(str(entry), "$", "not-a-file")], problems
    assert says in problems[0].message
    with pytest.raises(InputValidationError) as info:
        load_corpus(corpus)
    assert [p.rule for p in info.value.problems] == ["not-a-file"]


def test_a_document_symlink_pointing_outside_the_corpus_is_refused(tmp_path: Path) -> None:
    outside = _write(tmp_path / "elsewhere", _doc("OUTSIDE"))
    corpus, entry = _corpus_with_entry(tmp_path, lambda e: e.symlink_to(outside))
    problems = validate_paths([corpus])
    assert [(p.file, p.path, p.rule) for p in problems] == [(str(entry), "$", "symlink-outside-corpus")]
    assert str(outside) in problems[0].message
    # A link inside the corpus folder, and a linked personality sub-folder, are still followed.
    inside = _write(corpus / ".shared", _doc("INSIDE"), name="inside.json")  # hidden: not a sub-folder
    entry.unlink()
    entry.symlink_to(inside)
    (corpus / "LINKED").symlink_to(outside.parent, target_is_directory=True)
    assert validate_paths([corpus]) == []
    assert sorted(d.personality_id for d in load_corpus(corpus)) == ["GOOD", "INSIDE", "OUTSIDE"]
