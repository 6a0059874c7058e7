"""The asset graph as a snapshot, the definitions validated by Dagster's CLI, and the UI served by `dagster dev`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest
from dg_helpers import curating_config, make_config

from interviewsim_core.llm.testing import free_port
from interviewsim_dagster.definitions import AUTOMATION_SENSOR, build_definitions
from interviewsim_dagster.defs.corpus.sources import SOURCE

REPO = Path(__file__).resolve().parents[2]
DAGSTER = Path(sys.executable).with_name("dagster")

P, PXM, NONE = "personality", "method|personality", "-"
EXPECTED = {
    "heldout_split": ("corpus", P, []),
    "fact_summary": ("references", P, ["heldout_split"]),
    "atomic_items": ("references", P, ["heldout_split"]),
    "mcq_items": ("references", P, ["atomic_items"]),
    "reference_personality": ("references", P, ["heldout_split"]),
    "premise_verdicts": ("premise", P, ["atomic_items", "fact_summary"]),
    "generations": ("simulate", PXM, ["heldout_split"]),
    "mcq_answers": ("simulate", PXM, ["mcq_items"]),
    "content_similarity": ("evaluate", PXM, ["generations"]),
    "factual_consistency": ("evaluate", PXM, ["fact_summary", "generations"]),
    "generated_personality": ("evaluate", PXM, ["generations"]),
    "method_scores": ("evaluate", PXM, ["atomic_items", "content_similarity", "factual_consistency",
                                        "generated_personality", "generations", "mcq_answers", "mcq_items",
                                        "reference_personality"]),
    "personality_scores": ("evaluate", P, ["method_scores"]),
    "leaderboard": ("evaluate", NONE, ["method_scores"]),
    "report": ("report", NONE, ["leaderboard", "premise_verdicts"]),
    "plan": ("cost", NONE, []),
}


def _sourced(steps: dict) -> dict:
    """``steps`` (asset -> group, partitioning, parents) as the graph holds them: every step also reads its
    personalities' sources (``defs/corpus/sources.py``), an external asset of its own; the plan is not a step."""
    out = {a: (g, p, sorted([*parents, SOURCE]) if a != "plan" else parents) for a, (g, p, parents) in steps.items()}
    return {**out, SOURCE: ("corpus", P, [])}


def _partitioning(pdef) -> str:
    if pdef is None:
        return NONE
    if isinstance(pdef, dg.MultiPartitionsDefinition):
        return "|".join(d.name for d in pdef.partitions_defs)
    return pdef.name


def test_graph_snapshot(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    graph = defs.resolve_asset_graph()
    actual = {
        k.to_user_string(): (graph.get(k).group_name, _partitioning(graph.get(k).partitions_def),
                             sorted(p.to_user_string() for p in graph.get(k).parent_keys))
        for k in graph.get_all_asset_keys()
    }
    assert actual == _sourced(EXPECTED)
    pxm = graph.get(dg.AssetKey("generations")).partitions_def
    assert pxm.get_partitions_def_for_dimension("method").get_partition_keys() == list(cfg.methods)
    # Every partitioned asset backfills in one run; every model-calling asset names a provider pool.
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        if node.partitions_def is not None and node.is_materializable:
            assert node.backfill_policy == dg.BackfillPolicy.single_run(), key
    assert graph.get(dg.AssetKey("content_similarity")).pools == {"llm_offline"}
    checks = sorted(f"{k.asset_key.to_user_string()}:{k.name}" for k in graph.asset_check_keys)
    assert "generations:no_heldout_text_in_generation_prompts" in checks
    assert "mcq_answers:no_heldout_text_in_mcq_answering_prompts" in checks
    assert "mcq_answers:mcq_items_expected_have_answers" in checks
    assert "generations:profile_context_present" in checks
    assert len(checks) == 15
    sensors = {s.name: s for s in defs.sensors}
    assert sensors[AUTOMATION_SENSOR].default_status == dg.DefaultSensorStatus.RUNNING
    assert sensors["personality_registration"].default_status == dg.DefaultSensorStatus.RUNNING


def test_graph_snapshot_with_curation(tmp_path):
    """A config naming transcripts and a manifest puts the curation upstream of heldout_split; without, it is absent."""
    from interviewsim_core.pipeline.steps import CURATION_CONTRACTS, model_version

    cfg = curating_config(tmp_path)
    graph = build_definitions(cfg).resolve_asset_graph()
    actual = {k.to_user_string(): (graph.get(k).group_name, _partitioning(graph.get(k).partitions_def),
                                   sorted(p.to_user_string() for p in graph.get(k).parent_keys))
              for k in graph.get_all_asset_keys()}
    turns, roles, quality, pairs, tags = "transcript_turns", "speaker_turns", "transcript_quality", "qa_pairs", "qa_tags"
    assert actual == _sourced({**EXPECTED, turns: ("curation", P, []), roles: ("curation", P, [turns]),
                      quality: ("curation", P, sorted([turns, roles])),
                      pairs: ("curation", P, sorted([turns, roles, quality])),
                      tags: ("curation", P, sorted([turns, roles, quality, pairs])),
                      "prepared_input": ("curation", P, sorted([turns, roles, quality, pairs, tags])),
                      "heldout_split": ("corpus", P, ["prepared_input"])})
    for name in (turns, roles, quality, pairs, tags, "prepared_input"):
        node = graph.get(dg.AssetKey(name))
        assert node.automation_condition is None  # the curation is never launched unasked
        assert node.backfill_policy == dg.BackfillPolicy.single_run()
    for name, contracts in ((roles, ("speaker_attribution",)), (quality, ("transcript_quality",)),
                            (pairs, ("qa_structuring",)), (tags, ("thematic_tagging", "personality_category")),
                            ("prepared_input", CURATION_CONTRACTS)):  # the corpus's provenance names every step's
        assert graph.get(dg.AssetKey(name)).code_version == model_version([cfg.effective_builder], contracts)
    assert graph.get(dg.AssetKey(roles)).pools == {"llm_offline"}  # a model step waits for the model's pool
    node = graph.get(dg.AssetKey("prepared_input"))
    other = curating_config(tmp_path / "other", builder={"model": "offline/other"})
    assert build_definitions(other).resolve_asset_graph().get(dg.AssetKey("prepared_input")).code_version \
        != node.code_version  # the builder model is part of the curation's code version
    # heldout_split stays a root with the automation of a root when nothing is curated
    plain = build_definitions(make_config(tmp_path / "corpus", tmp_path / "plain")).resolve_asset_graph()
    assert "prepared_input" not in {k.to_user_string() for k in plain.get_all_asset_keys()}
    assert plain.get(dg.AssetKey("heldout_split")).automation_condition is None


def _env(tmp_path: Path, corpus: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERVIEWSIM_")}
    home = tmp_path / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    env.update(DAGSTER_HOME=str(home), INTERVIEWSIM_CORPUS=str(corpus), INTERVIEWSIM_DATA_ROOT=str(tmp_path / "data"),
               INTERVIEWSIM_METHODS="simple,chrono-100", LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


def test_dagster_definitions_validate_passes_on_the_workspace(tiny_corpus, tmp_path):
    proc = subprocess.run([str(DAGSTER), "definitions", "validate", "-w", str(REPO / "workspace.yaml")],
                          cwd=REPO, env=_env(tmp_path, tiny_corpus), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_dagster_dev_serves_the_asset_graph(tiny_corpus, tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [str(DAGSTER), "dev", "-w", str(REPO / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO, env=_env(tmp_path, tiny_corpus), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        query = {"query": "{ assetNodes { assetKey { path } } }"}
        deadline = time.monotonic() + 240
        names: set[str] = set()
        while time.monotonic() < deadline and not names:
            assert proc.poll() is None, "dagster dev exited early"
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps(query).encode(),
                                             headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(req, timeout=10) as resp:
                    body = json.loads(resp.read())
                names = {"/".join(n["assetKey"]["path"]) for n in (body.get("data") or {}).get("assetNodes") or []}
            except OSError:
                time.sleep(1.0)
        assert names == set(_sourced(EXPECTED))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
