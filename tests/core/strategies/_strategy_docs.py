"""Builders of small synthetic documents for the strategy tests (no corpus files needed)."""

from __future__ import annotations

import random

from interviewsim_core.schema import Interview, PersonalityText, PreparedInput, QAPair
from interviewsim_core.split import HeldOutSplit, split_personality

WORDS = ("tax", "war", "budget", "peace", "farm", "school", "tariff", "energy", "moon", "strike", "court", "vote")


def make_doc(sizes: list[int], pid: str = "P1", seed: int = 0, sequences: list[int] | None = None) -> PreparedInput:
    """A document with len(sizes) interviews of sizes[i] pairs; questions drawn from WORDS.

    Responses carry a marker ("TRAIN?"/"RESP") that tests can grep for; ids encode
    the interview so a leak is easy to read in a failure message.
    """
    rng = random.Random(seed)
    seqs = sequences if sequences is not None else list(range(len(sizes)))
    interviews = []
    for i, (n, seq) in enumerate(zip(sizes, seqs)):
        pairs = []
        for j in range(n):
            words = rng.sample(WORDS, rng.randint(1, 4))
            pairs.append(QAPair(qa_id=f"{pid}-i{i}-q{j}", question=f"What about the {' and the '.join(words)}?",
                                response=f"RESP {pid} {i} {j}: {' '.join(words)}", tags=("Identity Narrative",)))
        interviews.append(Interview(interview_id=f"{pid}-i{i}", sequence=seq, qa_pairs=tuple(pairs)))
    return PreparedInput(
        schema_version="1.0",
        personality_id=pid,
        personality=PersonalityText(profile=f"Short profile of {pid}.", long_profile=f"Long profile of {pid}. " * 5),
        interviews=tuple(interviews),
    )


def make_split(sizes: list[int], **kw) -> HeldOutSplit:
    return split_personality(make_doc(sizes, **kw))


def test_questions(split: HeldOutSplit) -> list[tuple[str, str]]:
    """Held-out questions as (qa_id, text): the only form strategies should receive."""
    return [(p.qa_id, p.question) for p in split.test_pairs]


test_questions.__test__ = False  # a helper, not a pytest test
