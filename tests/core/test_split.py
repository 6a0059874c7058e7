"""The chronological hold-out: latest ceil(0.2 N) interviews by sequence, at interview level."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from interviewsim_core.errors import SplitError
from interviewsim_core.loader import load_document
from interviewsim_core.schema import Interview, PersonalityText, PreparedInput, QAPair
from interviewsim_core.split import split_personality

WORKED_EXAMPLE = """
{
  "schema_version": "1.0",
  "personality_id": "PERSONALITY_DEMO",
  "personality": {"profile": "<short profile>", "long_profile": "<long profile>"},
  "interviews": [
    {"interview_id": "INT_A", "sequence": 3,
     "qa_pairs": [{"qa_id": "QA_A1", "question": "<q>", "response": "<r>", "tags": []}]},
    {"interview_id": "INT_B", "sequence": 1,
     "qa_pairs": [{"qa_id": "QA_B1", "question": "<q>", "response": "<r>", "tags": ["Identity Narrative"]}]}
  ]
}
"""


def _expected_test_count(n: int) -> int:
    # Exact rational arithmetic: 0.2 * 15 in floats is 3.0000000000000004, whose ceil is wrong.
    return math.ceil(Fraction(1, 5) * n)


def _make(sequences: list[int], pair_counts: list[int], pid: str = "P") -> PreparedInput:
    interviews = tuple(
        Interview(
            interview_id=f"I{seq}",
            sequence=seq,
            qa_pairs=tuple(
                QAPair(qa_id=f"Q{seq}_{j}", question=f"q{seq}.{j}", response=f"r{seq}.{j}", tags=())
                for j in range(k)
            ),
        )
        for seq, k in zip(sequences, pair_counts, strict=True)
    )
    return PreparedInput(
        schema_version="1.0",
        personality_id=pid,
        personality=PersonalityText(profile="p", long_profile="lp"),
        interviews=interviews,
    )


def test_worked_example_of_the_input_schema(tmp_path: Path) -> None:
    file = tmp_path / "prepared_input.json"
    file.write_text(WORKED_EXAMPLE, encoding="utf-8")
    split = split_personality(load_document(file))
    assert [i.interview_id for i in split.test_interviews] == ["INT_A"]
    assert [i.interview_id for i in split.train_interviews] == ["INT_B"]
    assert [p.qa_id for p in split.train_pairs] == ["QA_B1"]
    assert [p.qa_id for p in split.test_pairs] == ["QA_A1"]
    assert split.train_pairs[0].tags == ("Identity Narrative",)
    assert split.personality_id == "PERSONALITY_DEMO"


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_interviews_is_refused_clearly(n: int) -> None:
    doc = _make(list(range(n)), [2] * n, pid="SOLO")
    with pytest.raises(SplitError) as info:
        split_personality(doc)
    msg = str(info.value)
    assert "'SOLO'" in msg and f"{n} interview(s)" in msg and "at least 2" in msg
    assert isinstance(info.value, ValueError)


def test_one_interview_document_loads_but_does_not_split(tmp_path: Path) -> None:
    doc = json.loads(WORKED_EXAMPLE)
    doc["interviews"] = doc["interviews"][:1]
    file = tmp_path / "prepared_input.json"
    file.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(SplitError, match="PERSONALITY_DEMO"):
        split_personality(load_document(file))


@pytest.mark.parametrize(
    ("n", "n_test"),
    [(2, 1), (3, 1), (4, 1), (5, 1), (6, 2), (9, 2), (10, 2), (11, 3), (15, 3), (16, 4), (20, 4), (21, 5), (25, 5),
     (26, 6), (30, 6)],
)  # fmt: skip
def test_held_out_count_table(n: int, n_test: int) -> None:
    split = split_personality(_make(list(range(n)), [1] * n))
    assert (len(split.train_interviews), len(split.test_interviews)) == (n - n_test, n_test)
    assert n_test == _expected_test_count(n)


@st.composite
def _documents(draw: st.DrawFn) -> PreparedInput:
    n = draw(st.integers(min_value=2, max_value=30))
    sequences = draw(st.lists(st.integers(min_value=0, max_value=10_000), min_size=n, max_size=n, unique=True))
    counts = draw(st.lists(st.integers(min_value=1, max_value=4), min_size=n, max_size=n))
    return _make(sequences, counts)  # array order is the random draw order, not chronological


@settings(max_examples=200, deadline=None)
@given(doc=_documents(), rng=st.randoms(use_true_random=False))
def test_split_properties(doc: PreparedInput, rng) -> None:
    n = len(doc.interviews)
    split = split_personality(doc)
    train, test = split.train_interviews, split.test_interviews

    assert len(test) == _expected_test_count(n)
    assert len(train) >= 1 and len(test) >= 1
    assert len(train) + len(test) == n
    # Ordered by sequence, never by array position; every test interview is later than every train one.
    assert [i.sequence for i in train + test] == sorted(i.sequence for i in doc.interviews)
    assert max(i.sequence for i in train) < min(i.sequence for i in test)
    assert {i.interview_id for i in train + test} == {i.interview_id for i in doc.interviews}

    by_id = {i.interview_id: i for i in doc.interviews}
    for side, refs in ((train, split.train_pairs), (test, split.test_pairs)):
        side_ids = {i.interview_id for i in side}
        assert len(refs) == sum(len(i.qa_pairs) for i in side)
        for k, ref in enumerate(refs):
            # Every pair stays with its own interview, at its own position.
            assert ref.interview_id in side_ids
            assert by_id[ref.interview_id].qa_pairs[ref.position] is ref.pair
            assert ref.sequence == by_id[ref.interview_id].sequence
            assert ref.order == k
        keys = [(r.sequence, r.position) for r in refs]
        assert keys == sorted(keys)  # (sequence, position) order, newest last
    assert not {r.qa_id for r in split.train_pairs} & {r.qa_id for r in split.test_pairs}

    # Shuffling the array changes nothing.
    shuffled = list(doc.interviews)
    rng.shuffle(shuffled)
    again = split_personality(doc.model_copy(update={"interviews": tuple(shuffled)}))
    assert again.train_interviews == train and again.test_interviews == test
    assert [r.qa_id for r in again.train_pairs] == [r.qa_id for r in split.train_pairs]


def test_train_pairs_order_across_interviews() -> None:
    # Interviews given newest first, with uneven pair counts.
    doc = _make([50, 7, 30, 2, 40], [1, 3, 2, 2, 1])
    split = split_personality(doc)
    assert [i.sequence for i in split.train_interviews] == [2, 7, 30, 40]
    assert [i.sequence for i in split.test_interviews] == [50]
    assert [r.qa_id for r in split.train_pairs] == [
        "Q2_0", "Q2_1", "Q7_0", "Q7_1", "Q7_2", "Q30_0", "Q30_1", "Q40_0",
    ]  # fmt: skip
    assert [r.position for r in split.train_pairs] == [0, 1, 0, 1, 2, 0, 1, 0]
    assert [r.order for r in split.train_pairs] == list(range(8))
    assert [r.qa_id for r in split.test_pairs] == ["Q50_0"]
