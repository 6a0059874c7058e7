"""The corpus resource's splits: never stale, and one file's ``stat`` per ask while nothing changed (issue 43)."""

from __future__ import annotations

import os

import pytest
from dg_helpers import person_document, write_person

from interviewsim_dagster import resources
from interviewsim_dagster.resources import CorpusResource


def test_a_split_asked_again_costs_one_files_stat_whatever_the_corpus_size(tiny_corpus, monkeypatch):
    for i in range(30):
        write_person(tiny_corpus, f"TINY_EXTRA_{i:02d}")
    corpus = CorpusResource(path=str(tiny_corpus))
    first = corpus.split("TINY_ALDER")
    corpus.split("TINY_BRISK")
    stats: list[str] = []
    real = os.stat

    def counted(path, *args, **kwargs):
        stats.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    for _ in range(20):
        assert corpus.split("TINY_ALDER") is first  # the process's cached split, not a new one
        corpus.split("TINY_BRISK")
    monkeypatch.undo()
    assert len(stats) == 40, stats[:5]
    assert {os.path.basename(os.path.dirname(s)) for s in stats} == {"TINY_ALDER", "TINY_BRISK"}


def test_an_edited_document_is_split_again(tiny_corpus):
    corpus = CorpusResource(path=str(tiny_corpus))
    before = corpus.split("TINY_ALDER")
    doc = person_document("TINY_ALDER", n_interviews=6)
    path = write_person(tiny_corpus, "TINY_ALDER", doc)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later time whatever the clock's grain
    after = corpus.split("TINY_ALDER")
    assert after is not before
    assert len(after.doc.interviews) == 6 and len(before.doc.interviews) == 5


def test_a_personality_whose_document_broke_or_went_has_no_split(tiny_corpus):
    corpus = CorpusResource(path=str(tiny_corpus))
    corpus.split("TINY_ALDER")
    corpus.split("TINY_BRISK")
    doc = person_document("TINY_ALDER")
    doc["interviews"][0]["sequence"] = -1  # breaks INPUT_SCHEMA
    write_person(tiny_corpus, "TINY_ALDER", doc)
    with pytest.raises(KeyError, match="TINY_ALDER.*no valid document"):
        corpus.split("TINY_ALDER")
    (tiny_corpus / "TINY_BRISK" / "prepared_input.json").unlink()
    with pytest.raises(KeyError, match="TINY_BRISK.*no valid document"):
        corpus.split("TINY_BRISK")
    with pytest.raises(KeyError, match="TINY_NOBODY"):
        corpus.split("TINY_NOBODY")
