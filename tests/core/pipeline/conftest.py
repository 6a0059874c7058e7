from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the scripted gateway lives beside the tests

from interviewsim_core.embeddings import HashingEmbedder  # noqa: E402
from interviewsim_core.llm.types import ModelConfig  # noqa: E402
from interviewsim_core.loader import load_corpus  # noqa: E402
from interviewsim_core.split import split_personality  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[3] / "interviewsim_core" / "sample_corpus"
METHODS = ("simple", "wiki", "chrono-5", "memory-3", "hybrid-2-2", "random-3")


@pytest.fixture(scope="session")
def splits():
    return {d.personality_id: split_personality(d) for d in load_corpus(SAMPLE)}


@pytest.fixture(scope="session")
def split(splits):
    return splits[sorted(splits)[0]]


@pytest.fixture(scope="session")
def embedder():
    return HashingEmbedder()


@pytest.fixture(scope="session")
def models():
    return {
        "generator": ModelConfig(model="scripted/gen"),
        "builder": ModelConfig(model="scripted/builder"),
        "judges": (ModelConfig(model="scripted/judge-a", label="judge-a"),
                   ModelConfig(model="scripted/judge-b", label="judge-b")),
    }
