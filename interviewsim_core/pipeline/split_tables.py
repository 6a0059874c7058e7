"""The held-out split as a table: the first asset, and what every later step re-reads.

Later steps take the ``HeldOutSplit`` itself (it is cheap to recompute from the corpus), so this
table is for people and SQL: which pairs were training context and which were held out.
"""

from __future__ import annotations

import pandas as pd

from ..split import HeldOutSplit, PairRef
from .tables import empty_frame, schema_of


def _row(pid: str, side: str, p: PairRef) -> dict:
    return {
        "personality_id": pid, "qa_id": p.qa_id, "partition": side, "interview_id": p.interview_id,
        "sequence": p.sequence, "position": p.position, "order": p.order,
        "question": p.question, "response": p.response, "tags": list(p.tags),
    }


def split_table(split: HeldOutSplit) -> pd.DataFrame:
    """One row per QA pair of the personality, training pairs first, each side oldest first."""
    pid = split.personality_id
    rows = [_row(pid, "train", p) for p in split.train_pairs] + [_row(pid, "test", p) for p in split.test_pairs]
    if not rows:
        return empty_frame("heldout_split")
    return pd.DataFrame(rows, columns=schema_of("heldout_split").names)
