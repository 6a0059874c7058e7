"""The direct runner and the Dagster graph hold the same steps and the same edges (core's step table)."""

from __future__ import annotations

import dagster as dg
from dg_helpers import make_config, write_transcripts

from interviewsim_core.pipeline.runner import TABLE_STEPS, cells_of
from interviewsim_core.pipeline.steps import STEPS, Partitioning, edges, steps_for
from interviewsim_dagster import factory
from interviewsim_dagster.definitions import build_definitions

PARTITIONING = {"-": Partitioning.NONE, "personality": Partitioning.PERSONALITY,
                "method|personality": Partitioning.PERSONALITY_METHOD}


UI_ONLY = {"plan", "personality_sources"}
"""Assets that are not steps of the evaluation: the cost plan (in no job, upstream of nothing) and the personalities'
files (external, upstream of every step: test_dg_graph.py's snapshot shows those edges)."""


def _mapping(pm) -> str:
    if isinstance(pm, dg.AllPartitionMapping):
        return "all"
    if isinstance(pm, dg.MultiToSingleDimensionPartitionMapping):
        return "personality"
    return "same"


def _dagster_graph(cfg):
    graph = build_definitions(cfg).resolve_asset_graph()
    nodes, found = {}, set()
    for key in graph.get_all_asset_keys():
        if key.to_user_string() in UI_ONLY:
            continue
        node = graph.get(key)
        pdef = node.partitions_def
        kind = "-" if pdef is None else (
            "|".join(d.name for d in pdef.partitions_defs) if isinstance(pdef, dg.MultiPartitionsDefinition)
            else pdef.name)
        nodes[key.to_user_string()] = (PARTITIONING[kind], node.code_version, node.group_name)
        for parent in node.parent_keys - {dg.AssetKey(a) for a in UI_ONLY}:
            unpartitioned = graph.get(parent).partitions_def is None  # one partition: nothing to map
            found.add((parent.to_user_string(), key.to_user_string(),
                       "same" if unpartitioned else _mapping(graph.get_partition_mapping(key, parent))))
    return nodes, found


def _core_edges(steps) -> set[tuple[str, str, str]]:
    # A P step reading a P x M step "by personality" and a P x M step reading a P step are one Dagster
    # mapping (to the personality dimension); between equal partitionings it is the identity.
    by_name = {s.name: s for s in steps}
    out = set()
    for up, down, mapping in edges(steps):
        if mapping == "personality" and by_name[up].partitioning is by_name[down].partitioning:
            mapping = "same"
        if mapping == "all" and by_name[up].partitioning is Partitioning.NONE:
            mapping = "same"
        out.add((up, down, mapping))
    return out


def test_same_steps_and_edges(tiny_corpus, tmp_path):
    optional = {"premise_conclusions": str(tmp_path / "mine.jsonl"), "ps_stability": True, "finetune_export": True}
    folder, manifest = write_transcripts(tmp_path)
    curating = {"transcripts": str(folder), "manifest": str(manifest)}  # prepared_input -> heldout_split
    for extra in ({}, optional, curating):
        cfg = make_config(tiny_corpus, tmp_path / "data", **extra)
        steps = steps_for(cfg)
        nodes, found = _dagster_graph(cfg)
        assert set(nodes) == {s.name for s in steps}
        assert found == _core_edges(steps)
        for s in steps:
            # Core's version, except judged aggregates, which the factory versions by the judges.
            assert nodes[s.name] == (s.partitioning, factory.code_version(s, cfg), s.group), s.name
            assert factory.code_version(s, cfg) == s.code_version(cfg) or factory.judged_aggregate(s)
        if extra is curating:  # the direct runner wires the same edge from the same table
            from interviewsim_core.pipeline.runner import _Graph
            from interviewsim_core.pipeline.steps import Cell

            assert ("prepared_input", "heldout_split", "same") in found
            g = _Graph.build(list(steps), {s.name: cells_of(s, ["ADA"], ["simple"]) for s in steps}, ["ADA"],
                             ["simple"], set())
            assert ("prepared_input", Cell("ADA")) in g.reads[("heldout_split", Cell("ADA"))]
    # The configured file and switches add their steps.
    assert {"user_premise_verdicts", "training_personality", "ps_stability", "sft_examples",
            "sft_dataset"} <= {s.name for s in steps_for(make_config(tiny_corpus, tmp_path / "data", **optional))}


def test_the_runner_runs_every_step_of_the_table():
    """Every step is either a returned table of the runner or writes files of its own (the report)."""
    from interviewsim_core.pipeline.config import EvalConfig

    default = list(steps_for(EvalConfig()))
    assert list(TABLE_STEPS) == [s.name for s in default if not s.writes_files]
    assert [s.name for s in default if s.writes_files] == ["report"]
    assert [s.name for s in STEPS if s.writes_files] == ["sft_dataset", "report"]
    # Partitions the runner evaluates per step: the same grid Dagster partitions by.
    by = {s.name: len(cells_of(s, ["A", "B"], ["m1", "m2", "m3"])) for s in default}
    assert by["generations"] == 6 and by["fact_summary"] == 2 and by["leaderboard"] == 1


def test_a_run_cannot_edit_the_config_its_graph_was_built_from(tiny_corpus, tmp_path):
    """Partitions and code versions come from the load-time config: a launchpad edit is refused, not used."""
    from interviewsim_dagster import launch

    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(cfg.corpus))
    job = defs.resolve_job_def(launch.PERSONALITY_JOB)
    edited = cfg.model_copy(update={"seed": cfg.seed + 1}).model_dump_json()
    result = job.execute_in_process(
        instance=instance, asset_selection=[dg.AssetKey("heldout_split")], partition_key="TINY_ALDER",
        run_config={"resources": {"eval_config": {"config": {"config_json": edited}}}}, raise_on_error=False)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert "cannot be changed per run" in failure.step_failure_data.error.message
    assert not (tmp_path / "data" / "heldout_split").exists()
    same = job.execute_in_process(
        instance=instance, asset_selection=[dg.AssetKey("heldout_split")], partition_key="TINY_ALDER",
        run_config={"resources": {"eval_config": {"config": {"config_json": cfg.model_dump_json()}}}})
    assert same.success
