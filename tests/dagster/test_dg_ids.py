"""Distinct personality ids never share an output file, run together or one after the other (issue 10)."""

from __future__ import annotations

import unicodedata

import dagster as dg
from dg_helpers import make_config, person_document, run_everything, write_person
from typer.testing import CliRunner

from interviewsim_core.pipeline.storage import read_frame
from interviewsim_dagster.definitions import build_definitions

TWINS = [
    ("A/B", "A_B"),
    ("Zoë", "Zoé"),
    (unicodedata.normalize("NFD", "Renée"), "Renee"),  # an NFD id against its ASCII look-alike
    ("東京", "大阪"),  # two all-CJK ids of the same length
]


def _write(corpus, folder: str, pid: str):
    return write_person(corpus, folder, person_document(pid, n_interviews=2, pairs=1) | {"personality_id": pid})


def test_one_after_the_other_on_the_same_instance_and_data_root(tmp_path, monkeypatch):
    """The second corpus must neither overwrite the first's files nor fail on the first's stale partitions."""
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    data = tmp_path / "data"
    firsts = [a for a, _ in TWINS[:2]] + [TWINS[3][0]]
    seconds = [b for _, b in TWINS[:2]] + [TWINS[3][1]]
    outputs = []
    for n, people in enumerate((firsts, seconds)):
        corpus = tmp_path / f"corpus_{n}"
        for k, pid in enumerate(people):
            _write(corpus, f"P{k}", pid)
        result = CliRunner().invoke(app, [
            "run", "--corpus", str(corpus), "--data-root", str(data), "--methods", "simple",
            "--generator", "offline/extractive", "--judges", "offline/extractive",
            "--builder", "offline/extractive", "--premise-judge", "offline/extractive",
        ])
        outputs.append(result.output)
        assert result.exit_code == 0, result.output
    for pid in firsts:  # the second run skipped the first corpus' personalities, naming each
        assert f"skipped personality {pid!r}" in outputs[1]
    splits = sorted((data / "heldout_split").glob("*.parquet"))
    assert sorted(read_frame(f)["personality_id"].iloc[0] for f in splits) == sorted(firsts + seconds)
    board = read_frame(data / "leaderboard.parquet")
    assert set(board["n_personalities"]) == {6}, board


def test_twins_in_one_corpus_get_their_own_files(tmp_path):
    corpus = tmp_path / "corpus"
    for n, (a, b) in enumerate(TWINS):
        _write(corpus, f"T{n}a", a)
        _write(corpus, f"T{n}b", b)
    long_id = "Ł" * 300  # 600 bytes in UTF-8: used to end in "File name too long"
    _write(corpus, "T9", long_id)
    cfg = make_config(corpus, tmp_path / "data", methods="simple")
    defs = build_definitions(cfg)
    with dg.instance_for_test() as instance:
        outcomes = run_everything(defs, instance, cfg)
        assert all(o.success for o in outcomes), outcomes
        assert len(instance.get_dynamic_partitions("personality")) == 9
    gens = sorted((tmp_path / "data" / "generations").rglob("*.parquet"))
    assert len(gens) == 9
    assert long_id in {read_frame(f)["personality_id"].iloc[0] for f in gens}
    for f in gens:  # one personality per file: nothing mixed
        assert read_frame(f)["personality_id"].nunique() == 1
    board = read_frame(tmp_path / "data" / "leaderboard.parquet")
    assert set(board["n_personalities"]) == {9}
