"""One study per data root on every launch route (issue 45): the command and every Dagster run refuse a
configuration that is not the data root's study, in one line, and a Dagster run's refusal is its one failure."""

from __future__ import annotations

import dagster as dg
from dg_helpers import PEOPLE, make_config, offline_sample_config, write_person
from typer.testing import CliRunner

from interviewsim_core.pipeline.study import STUDY_FILE, enter, study_of
from interviewsim_dagster import launch
from interviewsim_dagster.definitions import AUTOMATION_SENSOR, build_definitions


def test_the_command_refuses_another_judge_in_one_line_before_writing(tmp_path, monkeypatch):
    from interviewsim_cli import app

    cfg_file = offline_sample_config(tmp_path, monkeypatch, methods=["simple"])
    data = tmp_path / "data"
    study = make_config(tmp_path, data, methods="simple,wiki")  # the study: offline judge, as `make demo` writes it
    enter(data, study_of(study))
    result = CliRunner().invoke(app, ["run", "--config", str(cfg_file), "--yes", "--methods", "simple,wiki",
                                      "--judges", "openai/fake-judge"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    refusal = [line for line in lines if "holds a study of another configuration" in line]
    assert len(refusal) == 1, result.output
    assert "judges offline/extractive -> openai/fake-judge" in refusal[0] and "--data-root" in refusal[0]
    assert {p.name for p in data.iterdir()} <= {STUDY_FILE, ".cache"}, "the refused command wrote a table"


def _failure_events(instance: dg.DagsterInstance, run_id: str) -> list:
    return [r.dagster_event for r in instance.all_logs(run_id)
            if r.dagster_event is not None and (r.dagster_event.is_failure or r.dagster_event.event_type_value in
                                                 ("RESOURCE_INIT_FAILURE", "STEP_FAILURE"))]


def test_a_dagster_run_of_another_configuration_fails_with_the_one_line_alone(tmp_path):
    for pid in PEOPLE:
        write_person(tmp_path / "corpus", pid)
    study = make_config(tmp_path / "corpus", tmp_path / "data", methods="simple", judges="openai/fake-judge")
    enter(study.data_root, study_of(study))
    ui = make_config(tmp_path / "corpus", tmp_path / "data", methods="simple")  # the UI's config: offline judge
    defs = build_definitions(ui)
    instance = dg.DagsterInstance.ephemeral()
    launch.register_personalities(instance, str(ui.corpus))
    job = defs.resolve_job_def("personality_assets")
    result = job.execute_in_process(instance=instance, raise_on_error=False, partition_key=PEOPLE[0])
    assert not result.success
    failures = _failure_events(instance, result.run_id)
    assert [e.event_type_value for e in failures] == ["PIPELINE_FAILURE"], [(e.event_type_value, e.message) for e in failures]
    message = failures[0].message
    assert "\n" not in message and "judges openai/fake-judge -> offline/extractive" in message
    assert failures[0].event_specific_data is None or failures[0].event_specific_data.error is None  # no stack trace
    assert not (tmp_path / "data" / "heldout_split").exists()
    # The automation would only launch refused runs: it evaluates nothing and its description says why.
    sensor = defs.resolve_sensor_def(AUTOMATION_SENSOR)
    assert "holds a study of another configuration" not in sensor.description  # a judge change: the re-score's way
    builder = make_config(tmp_path / "corpus", tmp_path / "data", methods="simple", judges="openai/fake-judge",
                          builder="openai/fake-builder")
    sensor = build_definitions(builder).resolve_sensor_def(AUTOMATION_SENSOR)
    assert "NOT EVALUATING ANY ASSET" in sensor.description and "builder" in sensor.description


def test_a_hand_launched_rescore_of_judgments_alone_may_change_the_judges():
    """Issue 44: after a judge change in the UI's configuration, a researcher re-scores one generator's answers with
    a backfill of the judged assets over its keys. Such a run (judgments, calls no other model) may take the new
    judges like the automation's re-score; a hand-launched run that also generates may not, nor the sensor's runs
    that select no judgment (``io_managers.is_rescore``)."""
    from interviewsim_dagster.io_managers import is_rescore

    def run(*assets: str, **tags: str) -> dg.DagsterRun:
        return dg.DagsterRun(job_name="__ASSET_JOB", asset_selection=frozenset(dg.AssetKey(a) for a in assets),
                             tags=tags)

    judged = ("content_similarity", "factual_consistency", "generated_personality", "method_scores")
    assert is_rescore(run(*judged, **{"dagster/backfill": "b1"}))
    assert is_rescore(run("content_similarity"))
    assert not is_rescore(run(*judged, "generations"))  # generates too: not a re-score
    assert not is_rescore(run("method_scores"))  # no judgment: nothing to re-score
    assert not is_rescore(run("heldout_split", "fact_summary", "reference_personality"))  # the builder too
    assert is_rescore(run(*judged, "generations", **{"dagster/sensor_name": AUTOMATION_SENSOR}))  # as before
    assert not is_rescore(run("personality_scores", **{"dagster/sensor_name": AUTOMATION_SENSOR}))
    assert not is_rescore(None)
