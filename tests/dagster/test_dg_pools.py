"""Pools are named as dagster.yaml documents: one per provider, a joint one for a multi-provider judge set."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from dg_helpers import make_config

from interviewsim_dagster.definitions import build_definitions

REPO = Path(__file__).resolve().parents[2]


def test_pool_names_match_the_documented_scheme(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data", methods="simple", generator="openai/gpt-4.1-mini",
                      judges="anthropic/claude-sonnet-4,openai/gpt-4.1", builder="offline/extractive")
    graph = build_definitions(cfg).resolve_asset_graph()

    def pools(name: str) -> set[str]:
        return set(graph.get(dg.AssetKey(name)).pools)

    assert pools("generations") == pools("mcq_answers") == {"llm_openai"}
    assert pools("atomic_items") == {"llm_offline"}
    # One pool per step (Dagster), so judges of two providers share the joint, sorted name.
    for judged in ("content_similarity", "factual_consistency", "generated_personality", "reference_personality"):
        assert pools(judged) == {"llm_anthropic_openai"}, judged
    doc = (REPO / "dagster.yaml").read_text()
    assert '"llm_anthropic_openai"' in doc
    assert "dagster instance concurrency set llm_openai" in doc
    assert "dagster instance concurrency set llm_anthropic_openai" in doc
