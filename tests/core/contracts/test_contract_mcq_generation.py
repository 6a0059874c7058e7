"""MCQ generation: the paper's option structure, equality/uniqueness rules, and the seeded shuffle."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.contracts import mcq_generation as mg
from interviewsim_core.errors import ContractParseError

from contract_strategies import any_text, fence

Q, A = "Where did the person grow up?", "In Lyon"


def _item(n: int, texts: list[str] | None = None, question: str = Q) -> dict:
    texts = texts or [A, "Not in Lyon", "In Lille", "In Paris"][:n]
    return {
        "question": question,
        "options": [{"kind": k, "text": t} for k, t in zip(mg.KINDS_BY_COUNT[n], texts)],
        "correct_answer": "A",
    }


@pytest.mark.parametrize("n", [3, 4])
def test_prompt_lists_roles_in_paper_order(n: int) -> None:
    system = mg.build_messages(Q, A, n)[0]["content"]
    positions = [system.index(f". {k}:") for k in mg.KINDS_BY_COUNT[n]]
    assert positions == sorted(positions)
    assert ("plausible_misconception" in system) == (n == 4)
    assert '"correct_answer": "A"' in system


def test_prompt_refuses_bad_option_count() -> None:
    with pytest.raises(ValueError):
        mg.build_messages(Q, A, 5)


@pytest.mark.parametrize("n", [3, 4])
def test_valid_items(n: int) -> None:
    r = mg.parse(json.dumps(_item(n)), Q, A, n)
    assert [o.kind for o in r.options] == list(mg.KINDS_BY_COUNT[n])
    assert r.correct_answer == "A" and r.question == Q and r.options[0].text == A
    assert mg.parse(fence(json.dumps(_item(n))), Q, A, n) == r


def test_whitespace_differences_against_atomic_inputs_are_tolerated() -> None:
    item = _item(3, question="  Where did the   person grow up?")
    item["options"][0]["text"] = "In  Lyon "
    assert mg.parse(json.dumps(item), Q, A, 3).options[0].text == "In  Lyon"


def _breaks(n: int, change) -> str:
    item = _item(n)
    change(item)
    return json.dumps(item)


MALFORMED = [
    ("wrong count", lambda it: it["options"].pop()),
    ("correct_answer B", lambda it: it.update(correct_answer="B")),
    ("correct_answer lower", lambda it: it.update(correct_answer="a")),
    ("correct_answer int", lambda it: it.update(correct_answer=0)),
    ("extra field", lambda it: it.update(difficulty="easy")),
    ("missing field", lambda it: it.pop("correct_answer")),
    ("option extra field", lambda it: it["options"][1].update(why="x")),
    ("option missing kind", lambda it: it["options"][1].pop("kind")),
    ("kinds swapped", lambda it: it["options"].insert(1, it["options"].pop(2))),
    ("correct not first", lambda it: it["options"].reverse()),
    ("kind renamed", lambda it: it["options"][1].update(kind="opposite")),
    ("question changed", lambda it: it.update(question="Where did they grow up?")),
    ("question recased", lambda it: it.update(question=Q.lower())),
    ("first option not the answer", lambda it: it["options"][0].update(text="Lyon")),
    ("duplicate text", lambda it: it["options"][2].update(text="Not in Lyon")),
    ("duplicate text by case", lambda it: it["options"][2].update(text="NOT IN  LYON")),
    ("blank text", lambda it: it["options"][2].update(text=" ")),
    ("non-string text", lambda it: it["options"][2].update(text=3)),
    ("options not a list", lambda it: it.update(options={"A": A})),
    ("option not an object", lambda it: it["options"].__setitem__(1, "Not in Lyon")),
]


@pytest.mark.parametrize("n", [3, 4])
@pytest.mark.parametrize("label, change", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_items(n: int, label: str, change) -> None:
    with pytest.raises(ContractParseError):
        mg.parse(_breaks(n, change), Q, A, n)


def test_three_option_reply_under_four_option_parse_fails() -> None:
    with pytest.raises(ContractParseError):
        mg.parse(json.dumps(_item(3)), Q, A, 4)


def test_duplicate_key_fails() -> None:
    body = json.dumps(_item(3))
    with pytest.raises(ContractParseError, match="duplicate"):
        mg.parse(body[:-1] + ', "correct_answer": "A"}', Q, A, 3)


distinct_texts = st.lists(any_text, min_size=4, max_size=4, unique_by=mg.option_key)


@given(n=st.sampled_from([3, 4]), q=any_text, texts=distinct_texts)
def test_property_valid(n, q, texts) -> None:
    r = mg.parse(json.dumps(_item(n, texts[:n], q)), q, texts[0], n)
    assert tuple(o.kind for o in r.options) == mg.KINDS_BY_COUNT[n]


@given(n=st.sampled_from([3, 4]), q=any_text, texts=distinct_texts, data=st.data())
def test_property_duplicate_option_text_fails(n, q, texts, data) -> None:
    texts = texts[:n]
    i, j = data.draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
    dup = texts[j]
    if data.draw(st.booleans()) and dup.upper().casefold() == dup.casefold():
        dup = "  " + dup.upper()  # same choice under the uniqueness rule
    texts[i] = dup
    with pytest.raises(ContractParseError):
        mg.parse(json.dumps(_item(n, texts, q)), q, texts[0], n)


@given(n=st.sampled_from([3, 4]), texts=distinct_texts, seed=st.text(max_size=20))
def test_property_shuffle_keeps_roles_and_key(n, texts, seed) -> None:
    r = mg.parse(json.dumps(_item(n, texts[:n])), Q, texts[0], n)
    s = mg.shuffle_item(r, seed)
    assert s.labels == mg.LABELS_BY_COUNT[n]
    assert sorted(zip(s.kinds, s.texts)) == sorted((o.kind, o.text) for o in r.options)
    assert s.texts[s.labels.index(s.correct_label)] == texts[0].strip()
    assert s.kind_of(s.correct_label) == "correct"
    assert mg.shuffle_item(r, seed) == s


def test_shuffle_depends_on_the_seed_and_uses_every_position() -> None:
    r = mg.parse(json.dumps(_item(4)), Q, A, 4)
    positions = {mg.shuffle_item(r, f"seed-{i}").correct_label for i in range(200)}
    assert positions == {"A", "B", "C", "D"}
    orders = {mg.shuffle_item(r, f"seed-{i}").kinds for i in range(200)}
    assert len(orders) > 12


def test_shuffle_is_stable_across_processes() -> None:
    """sha256-derived, so a fresh interpreter (new hash salt) gives the same order."""
    code = "from interviewsim_core.contracts.mcq_generation import permutation; print(permutation('run7:qa3#1', 4))"
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": str(s)}).stdout
        for s in (1, 2)
    }
    assert outs == {str(mg.permutation("run7:qa3#1", 4)) + "\n"}


def test_shuffled_item_validates_its_own_consistency() -> None:
    with pytest.raises(ValueError):
        mg.ShuffledItem(question="q", labels=("A", "B", "C"), texts=("x", "y", "z"),
                        kinds=("correct", "near_miss", "near_miss"), correct_label="A")
    with pytest.raises(ValueError):
        mg.ShuffledItem(question="q", labels=("A", "B", "C"), texts=("x", "y", "z"),
                        kinds=("correct", "opposite_negation", "near_miss"), correct_label="B")


@pytest.mark.parametrize(
    "seed_key, n, expected",
    [("0:SYN_A-qa7#1", 4, (2, 1, 3, 0)), ("0:SYN_A-qa7#1", 3, (2, 1, 0)), ("42:x", 4, (3, 2, 1, 0)), ("", 4, (0, 3, 1, 2))],
)
def test_permutation_golden_values(seed_key: str, n: int, expected: tuple) -> None:
    """Pinned: a change here silently reshuffles every stored MCQ item, so it must be deliberate."""
    assert mg.permutation(seed_key, n) == expected
