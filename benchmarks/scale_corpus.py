"""A seeded synthetic corpus with the shape of the paper's dataset, for the scale benchmarks.

The real shared corpus is small (6 personalities) and its shape is not the paper's, so costs that
grow with personalities, pairs per personality or prompt size cannot be measured on it. This
writes valid ``prepared_input.json`` files (INPUT_SCHEMA.md) whose *shape* follows the paper
(InterviewSim, arXiv 2602.20294); the text is random pseudo-words, so nothing is meaningful and
no held-out sentence repeats a training one by accident.

Figures taken from the paper:

- QA pairs per personality: mean 671.4, median 576, min 28, max 4,259 (Appendix I, Fig. 13). A
  log-normal with median 576 and mean 671.4 (sigma = sqrt(2 ln(671.4/576)) = 0.554) matches both;
  the n personalities take its n mid-quantiles ((i + 0.5) / n, seeded shuffle) so a 20-personality
  corpus already has the paper's mean and median instead of a noisy draw of them.
- Interviews: 23,536 transcripts for 671,424 pairs, i.e. 28.5 pairs per interview; at least 2 per
  personality (the split needs one on each side). The chronological hold-out then keeps about 21%
  of the pairs out (the paper: 140,799 of 671,424).
- Lengths: the paper sizes a Chrono-1000 prompt at about 700 KB (issue 13), i.e. about 700
  characters per training pair; questions average ~20 words and responses ~80 words (log-normal,
  clipped), about 125 + 520 characters.
- Tags: the paper's four thematic categories in its proportions (61.3 / 27.7 / 7.2 / 3.8 %).
- Profiles: a short profile of ~250 words and a long one capped at 10,000 characters (Wiki-Long).

Cheap partitions (``mcq_invalid``, issue 30): every response opens with the MCQ generation contract's
placeholder for the correct option (``<correct option>``). The atomic items stay valid (the answer
is the response's first sentence, which carries the placeholder), but every generated MCQ item
repeats it as its first option and the contract refuses it: no valid MCQ item, so no MCQ answering
call (``bench_product --mcq-invalid`` also gives the builder no re-ask, so an item costs one call).
A corpus of cheaper partitions, where Dagster's fixed cost per partition weighs most (researchers
re-scoring with a new judge live there).

Usage: ``python -m benchmarks.scale_corpus OUT_DIR [--personalities 20] [--seed 0] [--mcq-invalid]``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
from dataclasses import dataclass
from pathlib import Path

MEAN_PAIRS = 671.4
MEDIAN_PAIRS = 576
MIN_PAIRS, MAX_PAIRS = 28, 4259
PAIRS_PER_INTERVIEW = 671_424 / 23_536
QUESTION_WORDS = 20
RESPONSE_WORDS = 80
LONG_PROFILE_CHARS = 10_000
TAGS = (("Identity Narrative", 0.613), ("Motivations and Values", 0.277), ("Psychological Traits", 0.072),
        ("Social Identity", 0.038))

MCQ_INVALID_LEAD = "<correct option>"
"""What every response of a cheap-partition corpus opens with (``mcq_generation.OPTION_PLACEHOLDERS``)."""

_SIGMA = math.sqrt(2 * math.log(MEAN_PAIRS / MEDIAN_PAIRS))
_SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou", "ea")]


@dataclass(frozen=True)
class CorpusStats:
    personalities: int
    interviews: int
    pairs: int
    train_pairs: dict[str, int]
    test_pairs: dict[str, int]
    bytes: int


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words = {"".join(rng.choices(_SYLLABLES, k=rng.choice((1, 1, 2, 2, 2, 3)))) for _ in range(size * 2)}
    return sorted(words)[:size]


def pair_counts(n: int, seed: int = 0) -> list[int]:
    """QA pairs of each of ``n`` personalities: mid-quantiles of the paper's log-normal, shuffled."""
    dist = _lognormal_quantile
    counts = [min(MAX_PAIRS, max(MIN_PAIRS, round(dist((i + 0.5) / n)))) for i in range(n)]
    random.Random(seed).shuffle(counts)
    return counts


def _lognormal_quantile(p: float) -> float:
    from statistics import NormalDist

    return MEDIAN_PAIRS * math.exp(_SIGMA * NormalDist().inv_cdf(p))


class _Writer:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.vocab = _vocabulary(rng)

    def words(self, mean: int, lo: int, hi: int) -> int:
        return max(lo, min(hi, round(self.rng.lognormvariate(math.log(mean) - 0.08, 0.4))))

    def text(self, n_words: int, end: str = ".") -> str:
        """``n_words`` pseudo-words cut into sentences of 6 to 24 words."""
        words = self.rng.choices(self.vocab, k=n_words)
        out, i = [], 0
        while i < n_words:
            k = min(n_words - i, self.rng.randint(6, 24))
            s = " ".join(words[i:i + k])
            out.append(s[0].upper() + s[1:] + (end if i + k >= n_words else self.rng.choice(".!.?.")))
            i += k
        return " ".join(out)


def personality_document(index: int, n_pairs: int, seed: int, mcq_invalid: bool = False) -> dict:
    """One ``prepared_input.json`` document with ``n_pairs`` QA pairs (``mcq_invalid``: see the module)."""
    rng = random.Random(f"{seed}:{index}")
    w = _Writer(rng)
    n_interviews = max(2, round(n_pairs / PAIRS_PER_INTERVIEW))
    # Pairs per interview vary around the mean; every interview keeps at least one pair.
    weights = [rng.lognormvariate(0, 0.5) for _ in range(n_interviews)]
    total = sum(weights)
    sizes = [1 + int((n_pairs - n_interviews) * x / total) for x in weights]
    for k in range(n_pairs - sum(sizes)):
        sizes[k % n_interviews] += 1
    tag_names, tag_weights = zip(*TAGS)
    interviews, q = [], 0
    lead = f"{MCQ_INVALID_LEAD} " if mcq_invalid else ""
    for j, size in enumerate(sizes):
        pairs = []
        for _ in range(size):
            q += 1
            pairs.append({
                "qa_id": f"QA_{q:05d}",
                "question": w.text(w.words(QUESTION_WORDS, 4, 80), end="?"),
                "response": lead + w.text(w.words(RESPONSE_WORDS, 8, 600)),
                "tags": [rng.choices(tag_names, tag_weights)[0]],
            })
        interviews.append({"interview_id": f"INT_{j:03d}", "sequence": j, "qa_pairs": pairs})
    rng.shuffle(interviews)  # array order means nothing; the split sorts by sequence
    long_profile = w.text(1800)[:LONG_PROFILE_CHARS].rsplit(" ", 1)[0] + "."
    return {
        "schema_version": "1.0",
        "personality_id": f"SCALE_{index:04d}",
        "personality": {"profile": w.text(250), "long_profile": long_profile},
        "interviews": interviews,
    }


def generate_corpus(out: str | os.PathLike[str], personalities: int = 20, seed: int = 0,
                    mcq_invalid: bool = False) -> CorpusStats:
    """Write ``personalities`` documents under ``out/SCALE_nnnn/prepared_input.json``.

    The same (personalities, seed) always writes the same bytes, and personality i is the same
    document in every corpus size that contains it except for its pair count, so a 20- and an
    80-personality corpus have the same shape.
    """
    from interviewsim_core.split import heldout_interview_count

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    train, test, n_int, size = {}, {}, 0, 0
    for i, n in enumerate(pair_counts(personalities, seed)):
        doc = personality_document(i, n, seed, mcq_invalid)
        pid = doc["personality_id"]
        folder = root / pid
        folder.mkdir(exist_ok=True)
        data = json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode()
        tmp = folder / "prepared_input.json.tmp"
        tmp.write_bytes(data)
        tmp.replace(folder / "prepared_input.json")
        ordered = sorted(doc["interviews"], key=lambda it: it["sequence"])
        k = heldout_interview_count(len(ordered))
        train[pid] = sum(len(it["qa_pairs"]) for it in ordered[:-k])
        test[pid] = sum(len(it["qa_pairs"]) for it in ordered[-k:])
        n_int += len(ordered)
        size += len(data)
    return CorpusStats(personalities, n_int, sum(train.values()) + sum(test.values()), train, test, size)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--personalities", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mcq-invalid", action="store_true", help="cheap partitions: every MCQ item invalid")
    a = ap.parse_args(argv)
    st = generate_corpus(a.out, a.personalities, a.seed, a.mcq_invalid)
    counts = sorted(st.train_pairs[p] + st.test_pairs[p] for p in st.train_pairs)
    print(f"{st.personalities} personalities, {st.interviews} interviews, {st.pairs} QA pairs "
          f"({sum(st.test_pairs.values())} held out), pairs/personality mean {st.pairs / st.personalities:.1f} "
          f"median {counts[len(counts) // 2]}, {st.bytes / 1e6:.1f} MB -> {a.out}")


if __name__ == "__main__":
    main()
