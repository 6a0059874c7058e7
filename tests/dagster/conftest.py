"""Fixtures for the Dagster tests (helpers live in ``dg_helpers.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import dagster as dg  # noqa: E402
from dg_helpers import PEOPLE, make_config, run_everything, write_person  # noqa: E402

from interviewsim_dagster.definitions import build_definitions  # noqa: E402


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    for pid in PEOPLE:
        write_person(corpus, pid)
    return corpus


@pytest.fixture(scope="module")
def full_run(tmp_path_factory):
    """One complete run of the graph on the tiny corpus, shared by the read-only tests of a module."""
    tmp = tmp_path_factory.mktemp("full")
    corpus = tmp / "corpus"
    for pid in PEOPLE:
        write_person(corpus, pid)
    cfg = make_config(corpus, tmp / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    outcomes = run_everything(defs, instance, cfg)
    return {"cfg": cfg, "defs": defs, "instance": instance, "outcomes": outcomes}
