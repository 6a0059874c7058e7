"""Every dataset of the shared real corpus loads strictly and splits as its manifest implies."""

from __future__ import annotations

import json
import math
from fractions import Fraction
from pathlib import Path

import pytest

from interviewsim_core.loader import load_paths, validate_paths
from interviewsim_core.split import split_personality

SHARED_DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
PRESS = SHARED_DATA / "press_conferences_1960_1980"

pytestmark = pytest.mark.skipif(
    not PRESS.is_dir(), reason=f"shared corpus not found beside the repo at {SHARED_DATA.resolve()}"
)


def _datasets() -> list[Path]:
    """The prepared corpora of shared/data: a manifest listing ``persons``. Raw transcripts for curation
    (a manifest of ``transcripts``) are tests/core/curation's."""
    if not SHARED_DATA.is_dir():
        return []
    return sorted(p for p in SHARED_DATA.iterdir() if (p / "manifest.json").is_file()
                  and "persons" in json.loads((p / "manifest.json").read_text(encoding="utf-8")))


def test_every_shared_dataset_has_a_manifest_and_is_found() -> None:
    assert PRESS.resolve() in [p.resolve() for p in _datasets()]


@pytest.mark.parametrize("dataset", _datasets(), ids=lambda p: p.name)
def test_shared_dataset_loads_and_splits_as_the_manifest_says(dataset: Path) -> None:
    manifest = json.loads((dataset / "manifest.json").read_text(encoding="utf-8"))
    assert validate_paths([dataset]) == []
    loaded = load_paths([dataset])
    by_id = {item.doc.personality_id: item for item in loaded}
    persons = {p["personality_id"]: p for p in manifest["persons"]}
    assert set(by_id) == set(persons)
    # Every file of the dataset was read: one per sub-folder.
    files = sorted(dataset.glob("*/prepared_input.json"))
    assert sorted(item.path for item in loaded) == files

    total_interviews = total_pairs = 0
    for pid, item in by_id.items():
        doc, expected = item.doc, persons[pid]
        n = len(doc.interviews)
        n_pairs = sum(len(i.qa_pairs) for i in doc.interviews)
        assert (n, n_pairs) == (expected["interviews"], expected["qa_pairs"]), pid
        assert item.path.parent.name == pid

        split = split_personality(doc)
        n_test = math.ceil(Fraction(n, 5))
        assert len(split.test_interviews) == n_test, pid
        assert len(split.train_interviews) == n - n_test >= 1, pid
        assert len(split.train_pairs) + len(split.test_pairs) == n_pairs
        assert max(i.sequence for i in split.train_interviews) < min(i.sequence for i in split.test_interviews)
        # Sequences are 1..n by date here, so the held-out side is the last ceil(0.2 N) dates.
        assert sorted(i.sequence for i in doc.interviews) == list(range(1, n + 1))
        assert [i.sequence for i in split.test_interviews] == list(range(n - n_test + 1, n + 1))
        total_interviews += n
        total_pairs += n_pairs

    totals = manifest["totals"]
    assert (len(by_id), total_interviews, total_pairs) == (totals["persons"], totals["interviews"], totals["qa_pairs"])


def test_press_conference_totals_are_the_documented_ones() -> None:
    loaded = load_paths([PRESS])
    assert len(loaded) == 6
    assert sum(len(item.doc.interviews) for item in loaded) == 345
    assert sum(len(i.qa_pairs) for item in loaded for i in item.doc.interviews) == 6359
