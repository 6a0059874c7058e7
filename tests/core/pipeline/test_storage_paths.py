"""Distinct ids never share a partition file (issue 10): the id -> path mapping is injective."""

from __future__ import annotations

import unicodedata
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from interviewsim_core.pipeline.storage import partition_path, path_segment

CLASHING_BEFORE = [
    ("A/B", "A_B"),
    ("Zoë", "Zoé"),
    (unicodedata.normalize("NFC", "Zoë"), unicodedata.normalize("NFD", "Zoë")),
    ("東京", "大阪"),
    ("..", "_.._"),
    ("A" * 300 + "x", "A" * 300 + "y"),
]


def test_ids_that_used_to_share_a_file_get_distinct_files(tmp_path: Path) -> None:
    for a, b in CLASHING_BEFORE:
        assert partition_path(tmp_path, "generations", a, "simple") != partition_path(tmp_path, "generations", b, "simple")
        assert partition_path(tmp_path, "heldout_split", a) != partition_path(tmp_path, "heldout_split", b)


def test_plain_ids_keep_their_name_and_others_stay_readable_and_short(tmp_path: Path) -> None:
    assert partition_path(tmp_path, "heldout_split", "NEWSCONF_FORD") == tmp_path / "heldout_split" / "NEWSCONF_FORD.parquet"
    assert path_segment("A/B").startswith("A_B~")
    long = path_segment("é" * 1000)
    assert len(long.encode()) < 100 and "/" not in long
    assert not path_segment(".hidden").startswith(".")
    for value in ("..", ".", "", "/", "../../etc"):
        seg = path_segment(value)
        assert seg not in ("", ".", "..") and "/" not in seg


@given(st.lists(st.text(min_size=1, max_size=40), min_size=2, max_size=30, unique=True))
def test_path_segment_is_injective(ids: list[str]) -> None:
    segments = [path_segment(i) for i in ids]
    assert len(set(segments)) == len(segments)
    assert all("/" not in s and s not in (".", "..") and len(s.encode("utf-8", "surrogatepass")) <= 200 for s in segments)
