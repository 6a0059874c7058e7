"""The scale-corpus generator of the benchmarks writes valid input of the paper's shape.

The scale benchmarks measure nothing if the corpus they run on is refused by the loader, or if its
shape (pairs per personality, interviews, held-out share, prompt sizes) drifts from the paper's.
Small sizes only: this is not a timed test.
"""

from __future__ import annotations

import json
import statistics

from benchmarks.scale_corpus import MEAN_PAIRS, MEDIAN_PAIRS, generate_corpus, pair_counts
from interviewsim_core.loader import load_corpus
from interviewsim_core.schema import THEMATIC_CATEGORIES
from interviewsim_core.split import split_personality


def test_small_corpus_is_valid_and_seeded(tmp_path):
    stats = generate_corpus(tmp_path / "a", personalities=3, seed=7)
    docs = load_corpus(tmp_path / "a")  # the strict loader: raises on any schema problem
    assert [d.personality_id for d in docs] == ["SCALE_0000", "SCALE_0001", "SCALE_0002"]
    splits = [split_personality(d) for d in docs]
    assert stats.pairs == sum(len(s.train_pairs) + len(s.test_pairs) for s in splits)
    assert stats.train_pairs == {s.personality_id: len(s.train_pairs) for s in splits}
    assert all(s.test_pairs and s.train_pairs for s in splits)
    tags = {t for d in docs for it in d.interviews for p in it.qa_pairs for t in p.tags}
    assert tags <= set(THEMATIC_CATEGORIES)
    generate_corpus(tmp_path / "b", personalities=3, seed=7)
    for pid in stats.train_pairs:
        a = (tmp_path / "a" / pid / "prepared_input.json").read_bytes()
        assert a == (tmp_path / "b" / pid / "prepared_input.json").read_bytes()
    generate_corpus(tmp_path / "c", personalities=3, seed=8)
    assert (tmp_path / "c" / "SCALE_0000" / "prepared_input.json").read_bytes() != \
        (tmp_path / "a" / "SCALE_0000" / "prepared_input.json").read_bytes()


def test_shape_follows_the_paper(tmp_path):
    counts = pair_counts(1000)
    assert abs(statistics.mean(counts) - MEAN_PAIRS) < 0.01 * MEAN_PAIRS
    assert statistics.median(counts) == MEDIAN_PAIRS
    assert 12_900 <= sum(pair_counts(20)) <= 13_500  # the 20-personality corpus: ~13,375 pairs
    generate_corpus(tmp_path, personalities=2, seed=0)
    doc = json.loads((tmp_path / "SCALE_0001" / "prepared_input.json").read_text())
    pairs = [p for it in doc["interviews"] for p in it["qa_pairs"]]
    assert 20 <= len(pairs) / len(doc["interviews"]) <= 40  # the paper: 28.5 pairs per interview
    per_pair = statistics.mean(len(p["question"]) + len(p["response"]) for p in pairs)
    assert 550 <= per_pair <= 800  # a Chrono-1000 prompt of ~700 KB
    assert len(doc["personality"]["long_profile"]) <= 10_000
