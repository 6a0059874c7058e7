"""Retrieval for a whole personality: one matrix product vs per-question loops.

On the shared real corpus (Johnson's press conferences, ~1800 pairs), ranks every held-out
question against every training question with k = 100 (Memory-100) three ways and checks
they select the same pairs:

- matrix: one (n_questions x n_train) product + partial sort (what ``select_contexts`` does);
- per-question numpy: a loop over questions, each a vector product + full sort;
- per-pair python: a loop over questions and training pairs, one dot product each (the naive
  reading of the paper's J.2 algorithm).

Also times the offline embedder on the training questions, cold and from the disk cache.
Run with ``python -m benchmarks.bench_retrieval`` or ``make bench``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from interviewsim_core.embeddings import EmbeddingCache, HashingEmbedder
from interviewsim_core.loader import load_document
from interviewsim_core.split import split_personality
from interviewsim_core.strategies import select_contexts, train_question_matrix
from interviewsim_core.strategies.retrieval import SIMILARITY_DECIMALS, similarities, top_k

CORPUS = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "press_conferences_1960_1980"
DEFAULT_PERSONALITY = "NEWSCONF_JOHNSON"
K = 100


def _best_of(fn, repeat: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _per_question_numpy(query: np.ndarray, train: np.ndarray, k: int) -> list[list[int]]:
    t64 = train.astype(np.float64)
    out = []
    for q in query.astype(np.float64):
        sims = np.round(t64 @ q, SIMILARITY_DECIMALS)
        out.append(np.argsort(-sims, kind="stable")[:k].tolist())
    return out


def _per_pair_python(query: np.ndarray, train: np.ndarray, k: int) -> list[list[int]]:
    rows = list(train.astype(np.float64))
    out = []
    for q in query.astype(np.float64):
        sims = np.round(np.array([float(np.dot(q, t)) for t in rows]), SIMILARITY_DECIMALS)
        out.append(sorted(range(len(rows)), key=lambda j: (-sims[j], j))[:k])
    return out


def main(personality: str = DEFAULT_PERSONALITY, k: int = K) -> dict[str, float]:
    path = CORPUS / personality / "prepared_input.json"
    if not path.exists():
        print(f"skipped: {path} not found (the shared corpus sits beside the repo)")
        return {}
    split = split_personality(load_document(path))
    train, test = split.train_pairs, split.test_pairs
    questions = [(p.qa_id, p.question) for p in test]
    emb = HashingEmbedder()
    print(f"{personality}: {len(train)} training pairs, {len(test)} held-out questions, k={k}, embedder {emb.name}")

    with tempfile.TemporaryDirectory() as tmp:
        t_cold, matrix = _best_of(lambda: train_question_matrix(split, emb, EmbeddingCache(tmp)), 1)
        t_warm, _ = _best_of(lambda: train_question_matrix(split, emb, EmbeddingCache(tmp)), 3)
    query = emb.embed([q for _, q in questions])

    t_matrix, fast = _best_of(lambda: top_k(similarities(query, matrix), k).tolist(), 5)
    t_numpy, loop = _best_of(lambda: _per_question_numpy(query, matrix, k), 3)
    t_python, naive = _best_of(lambda: _per_pair_python(query, matrix, k), 1)
    assert fast == loop == naive, "the three rankings disagree"
    t_select, _ = _best_of(lambda: select_contexts(split, f"retrieval-{k}", questions, emb, train_embeddings=matrix), 3)

    print(f"  embed training questions   cold {t_cold * 1e3:9.1f} ms   disk cache {t_warm * 1e3:7.1f} ms"
          f"   ratio {t_cold / t_warm:7.1f}x")
    print(f"  rank, one matrix product   {t_matrix * 1e3:9.1f} ms   ({t_matrix / len(test) * 1e6:8.1f} us/question)")
    print(f"  rank, per-question numpy   {t_numpy * 1e3:9.1f} ms   ratio {t_numpy / t_matrix:7.1f}x slower")
    print(f"  rank, per-pair python      {t_python * 1e3:9.1f} ms   ratio {t_python / t_matrix:7.1f}x slower")
    print(f"  select_contexts end to end {t_select * 1e3:9.1f} ms   (embeds the questions, builds contexts)")
    return {
        "matrix_s": t_matrix, "per_question_s": t_numpy, "per_pair_s": t_python, "select_s": t_select,
        "ratio_per_question": t_numpy / t_matrix, "ratio_per_pair": t_python / t_matrix,
    }


if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main(*sys.argv[1:2])
