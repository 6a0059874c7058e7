"""The curation as Dagster assets (issue 31): ``transcript_turns`` to ``prepared_input`` per personality, upstream
of ``heldout_split``.

Small transcripts written by the test (``dg_helpers.write_transcripts``), the offline model, in-process runs.
"""

from __future__ import annotations

import dagster as dg
from dg_helpers import CURATED, automation_ticks, curating_config

from interviewsim_core.pipeline.steps import CURATION_STEPS
from interviewsim_core.loader import DOCUMENT_NAME
from interviewsim_core.pipeline.storage import partition_path, read_frame
from interviewsim_dagster import freshness, launch
from interviewsim_dagster.definitions import build_definitions
from interviewsim_dagster.registration import manifest_personalities
from interviewsim_dagster.versioning import TRANSCRIPTS_VERSION

CURATION, SPLIT = dg.AssetKey("prepared_input"), dg.AssetKey("heldout_split")
STEPS = [dg.AssetKey(name) for name in CURATION_STEPS]  # transcript_turns ... prepared_input
FIRST = STEPS[0]  # reads the files: it carries the transcripts' version


def _setup(tmp_path):
    cfg = curating_config(tmp_path)
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("personality", manifest_personalities(cfg))  # what the sensor registers
    return cfg, defs, instance


def _materialisations(instance, key) -> dict[str, int]:
    records = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=100).records
    out: dict[str, int] = {}
    for r in records:
        out[r.partition_key] = out.get(r.partition_key, 0) + 1
    return out


def test_materialising_one_personality_curates_that_personality_only(tmp_path):
    cfg, defs, instance = _setup(tmp_path)
    assert manifest_personalities(cfg) == sorted(CURATED)
    job = defs.resolve_job_def(launch.PERSONALITY_JOB)
    result = job.execute_in_process(instance=instance, asset_selection=[*STEPS, SPLIT], partition_key="ADA")
    assert result.success
    assert (cfg.corpus / "ADA" / DOCUMENT_NAME).is_file() and (cfg.corpus / "ADA" / "provenance.json").is_file()
    assert not (cfg.corpus / "BEN").exists()
    table = read_frame(partition_path(cfg.data_root, "prepared_input", "ADA"))
    assert list(table["file"]) == ["ada_0.txt", "ada_1.txt", "ada_2.txt"]
    assert table["kept"].all() and table["written"].all() and (table["pairs"] == 3).all()
    assert partition_path(cfg.data_root, "heldout_split", "ADA").is_file()  # the split read what it wrote
    assert not partition_path(cfg.data_root, "prepared_input", "BEN").exists()
    for key in STEPS:  # each step's table, ADA's only
        assert partition_path(cfg.data_root, key.path[-1], "ADA").is_file()
        assert not partition_path(cfg.data_root, key.path[-1], "BEN").exists()
    (mat,) = instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=FIRST), limit=5).records
    assert mat.partition_key == "ADA" and mat.asset_materialization.metadata[TRANSCRIPTS_VERSION].value


def test_an_edited_transcript_re_curates_its_personality_only(tmp_path):
    cfg, defs, instance = _setup(tmp_path)

    def run() -> None:
        specs = launch.plan_runs(defs, instance, cfg.methods, selection=",".join([*CURATION_STEPS, "heldout_split"]))
        outcomes = launch.execute(defs, instance, specs, progress=lambda _line: None, skip_up_to_date=True)
        assert all(o.success for o in outcomes)

    run()
    docs = {pid: cfg.corpus / pid / DOCUMENT_NAME for pid in CURATED}
    before = {pid: p.stat().st_mtime_ns for pid, p in docs.items()}
    assert _materialisations(instance, CURATION) == {"ADA": 1, "BEN": 1}

    run()  # nothing changed: nothing re-curated, nothing re-split
    for key in STEPS:
        assert _materialisations(instance, key) == {"ADA": 1, "BEN": 1}
    assert _materialisations(instance, SPLIT) == {"ADA": 1, "BEN": 1}

    edited = cfg.transcripts / "ada_1.txt"
    edited.write_text(edited.read_text(encoding="utf-8").replace("from a neighbour", "from an old sailor"),
                      encoding="utf-8")
    graph = defs.resolve_asset_graph()
    assert not freshness.is_up_to_date(graph, instance, FIRST, "ADA", list(cfg.methods))
    assert freshness.is_up_to_date(graph, instance, FIRST, "BEN", list(cfg.methods))

    run()
    for key in STEPS:  # every curation step after the one that read the edited file
        assert _materialisations(instance, key) == {"ADA": 2, "BEN": 1}
    assert _materialisations(instance, SPLIT) == {"ADA": 2, "BEN": 1}  # and its split after it
    assert docs["BEN"].stat().st_mtime_ns == before["BEN"]
    assert docs["ADA"].stat().st_mtime_ns != before["ADA"]
    assert "an old sailor" in docs["ADA"].read_text(encoding="utf-8")


def test_automation_never_curates_and_only_refreshes_the_free_split_after_a_curation(tmp_path):
    cfg, defs, instance = _setup(tmp_path)
    requested, cursor = automation_ticks(defs, instance, None)
    assert requested == {}  # registered, nothing materialised: the automation curates nothing
    job = defs.resolve_job_def(launch.PERSONALITY_JOB)
    assert job.execute_in_process(instance=instance, asset_selection=STEPS[:-1], partition_key="ADA").success
    requested, cursor = automation_ticks(defs, instance, cursor)
    assert requested == {}  # the curation's steps before the corpus: the automation does not write the document
    assert job.execute_in_process(instance=instance, asset_selection=[CURATION], partition_key="ADA").success
    requested, _ = automation_ticks(defs, instance, cursor)
    assert requested == {"heldout_split": {"ADA"}}  # no model step, no other personality


def test_a_ui_launch_of_the_curation_passes_the_budget_gate_first(tmp_path):
    """A priced builder: the run's gate plans the curation's calls (``curation/plan.py``) and refuses the run over
    ``max_cost_usd`` before any call; nothing is written."""
    cfg = curating_config(tmp_path, builder={"model": "openai/gpt-4.1"}, max_cost_usd=0.000001)
    defs = build_definitions(cfg)
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("personality", manifest_personalities(cfg))
    job = defs.resolve_job_def(launch.PERSONALITY_JOB)
    result = job.execute_in_process(instance=instance, asset_selection=[*STEPS, SPLIT], partition_key="ADA",
                                    raise_on_error=False)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.is_step_failure]
    assert "Refused by the budget gate" in failure.step_failure_data.error.message
    tags = instance.get_run_by_id(result.run_id).tags
    assert int(tags["interviewsim/plan_calls"]) > 0  # the curation's calls were planned
    assert not (cfg.corpus / "ADA").exists()
    assert not any(partition_path(cfg.data_root, name, "ADA").exists() for name in CURATION_STEPS)


def test_a_second_data_root_on_the_same_instance_is_made_not_skipped(tmp_path):
    """One Dagster instance serves several data roots (``DAGSTER_HOME`` is shared): a curation and split made into one
    are not "up to date" for another that holds no table (the demo into a new ``--data-root`` wrote nothing), and an
    identical re-run into either still skips everything."""
    cfg, defs, instance = _setup(tmp_path)
    selection = ",".join([*CURATION_STEPS, "heldout_split"])

    def run(c, d) -> None:
        specs = launch.plan_runs(d, instance, c.methods, selection=selection)
        outcomes = launch.execute(d, instance, specs, progress=lambda _line: None, skip_up_to_date=True,
                                  data_root=c.data_root)
        assert all(o.success for o in outcomes)

    run(cfg, defs)
    other = cfg.model_copy(update={"data_root": tmp_path / "data2", "corpus": tmp_path / "corpus2"})
    run(other, build_definitions(other))
    for key in [*STEPS, SPLIT]:
        assert _materialisations(instance, key) == {"ADA": 2, "BEN": 2}
        assert partition_path(other.data_root, key.path[-1], "ADA").is_file()
    assert (other.corpus / "ADA" / DOCUMENT_NAME).is_file()
    run(other, build_definitions(other))  # nothing changed for either: nothing re-made
    run(cfg, defs)
    assert _materialisations(instance, SPLIT) == {"ADA": 2, "BEN": 2}
