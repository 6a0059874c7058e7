"""The shipped synthetic sample is valid input and varied enough for methods to differ.

The sample is what the demo and most tests evaluate, so a malformed file or a corpus too
uniform to tell strategies apart would silently weaken everything built on it.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from interviewsim_core.loader import DOCUMENT_NAME, load_corpus, validate_paths
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR
from interviewsim_core.schema import THEMATIC_CATEGORIES, PreparedInput
from interviewsim_core.split import HeldOutSplit, split_personality

# Words too common to show that a held-out question revisits something said in training.
_STOPWORDS = frozenset(
    """about after again also always been before being came come could does doing done down
    during each even ever every feel felt first from have here into just know last like made
    make many more most much never next only other over people really said same says should
    since some still such take tell than that them then there these they thing things think
    this those through time today very want was were what when where which while will with
    would year years your yours you've you're that's it's i've i'm don't didn't""".split()
)


def _content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z][a-z'-]*[a-z]", text.lower()) if len(w) >= 4 and w not in _STOPWORDS}


@pytest.fixture(scope="module")
def docs() -> list[PreparedInput]:
    return load_corpus(SAMPLE_CORPUS_DIR)


@pytest.fixture(scope="module")
def splits(docs: list[PreparedInput]) -> list[HeldOutSplit]:
    return [split_personality(d) for d in docs]


def test_sample_dir_is_the_package_folder() -> None:
    assert SAMPLE_CORPUS_DIR.is_dir()
    assert (SAMPLE_CORPUS_DIR / "README.md").is_file()


def test_sample_passes_strict_validation_including_split() -> None:
    assert validate_paths([SAMPLE_CORPUS_DIR], require_split=True) == []


def test_sample_size_meets_the_issue(docs: list[PreparedInput]) -> None:
    assert len(docs) >= 6
    assert len({d.personality_id for d in docs}) == len(docs)
    for d in docs:
        assert d.schema_version == "1.0"
        assert d.personality_id.startswith("SYN_")
        assert d.personality.profile.strip() and d.personality.long_profile.strip()
        assert len(d.personality.long_profile) > 2 * len(d.personality.profile)
        assert len(d.interviews) >= 8, d.personality_id
        assert all(len(i.qa_pairs) >= 5 for i in d.interviews), d.personality_id


def test_tags_are_the_four_thematic_categories_and_all_appear(docs: list[PreparedInput]) -> None:
    counts: Counter[str] = Counter()
    untagged = 0
    for d in docs:
        for itv in d.interviews:
            for pair in itv.qa_pairs:
                counts.update(pair.tags)
                untagged += not pair.tags
    assert set(counts) == set(THEMATIC_CATEGORIES)
    assert untagged > 0, "some pairs should carry no tag, as the schema allows"


def test_every_split_has_both_sides_and_training_sizes_differ(splits: list[HeldOutSplit]) -> None:
    for s in splits:
        assert s.train_pairs and s.test_pairs, s.personality_id
        assert max(i.sequence for i in s.train_interviews) < min(i.sequence for i in s.test_interviews)
    assert len({len(s.train_interviews) for s in splits}) >= 3


def test_array_order_is_not_chronological_in_at_least_two_files() -> None:
    """Loaders and splitters must sort by sequence; the sample makes forgetting that visible."""
    unsorted = []
    for path in sorted(SAMPLE_CORPUS_DIR.glob(f"*/{DOCUMENT_NAME}")):
        seqs = [i["sequence"] for i in json.loads(path.read_text(encoding="utf-8"))["interviews"]]
        if seqs != sorted(seqs):
            unsorted.append(path.parent.name)
    assert len(unsorted) >= 2, unsorted


def test_files_stay_small() -> None:
    for path in SAMPLE_CORPUS_DIR.glob(f"*/{DOCUMENT_NAME}"):
        assert path.stat().st_size < 60_000, path


def test_every_personality_has_a_held_out_question_revisiting_a_training_fact(
    splits: list[HeldOutSplit],
) -> None:
    """Grounded methods can only beat profiles if held-out questions ask about trained facts.

    Counted on distinctive words (in at most three training responses of that person), so
    common words like "music" or "work" shared by chance do not count as a revisited fact.
    """
    for s in splits:
        train_words = [_content_words(p.response) for p in s.train_pairs]
        df = Counter(w for words in train_words for w in words)
        best = 0
        for q in s.test_pairs:
            qw = {w for w in _content_words(q.question) if df[w] <= 3}
            best = max(best, max(len(qw & words) for words in train_words))
        assert best >= 2, f"{s.personality_id}: no held-out question revisits a training fact"


def test_text_is_not_duplicated_across_pairs(docs: list[PreparedInput]) -> None:
    responses = [p.response for d in docs for i in d.interviews for p in i.qa_pairs]
    assert len(set(responses)) == len(responses)
    for d in docs:
        questions = [p.question for i in d.interviews for p in i.qa_pairs]
        assert len(set(questions)) == len(questions), d.personality_id


def test_responses_are_first_person_answers_of_a_few_sentences(docs: list[PreparedInput]) -> None:
    """Interview answers in the person's own voice; terse speakers may drop the pronoun now and then."""
    first_person = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|we'd|our|us)\b", re.IGNORECASE)
    for d in docs:
        pairs = [p for itv in d.interviews for p in itv.qa_pairs]
        for p in pairs:
            sentences = [s for s in re.split(r"(?<=[.!?])\s+", p.response.strip()) if s]
            assert 1 <= len(sentences) <= 6, (p.qa_id, len(sentences))
        in_first_person = sum(bool(first_person.search(p.response)) for p in pairs)
        assert in_first_person >= 0.85 * len(pairs), d.personality_id
