"""Personality partitions: registered by the sensor (with cursor) and by `interviewsim register`; invalid files reported."""

from __future__ import annotations

import json

import dagster as dg
from dg_helpers import PEOPLE, person_document, write_person
from typer.testing import CliRunner

from interviewsim_dagster.defs.corpus.sensors import personality_registration
from interviewsim_dagster.registration import parse_cursor
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_dagster.resources import CorpusResource, EvalConfigResource


def _broken(corpus):
    doc = person_document("TINY_BROKEN")
    doc["interviews"][0]["sequence"] = -1  # breaks INPUT_SCHEMA: sequence must be >= 0
    doc["surprise"] = True                 # and an unknown field
    return write_person(corpus, "TINY_BROKEN", doc)


def _tick(instance, corpus, cursor=None) -> dg.SensorResult:
    resources = {"corpus": CorpusResource(path=str(corpus)),
                 "eval_config": EvalConfigResource.from_config(EvalConfig(corpus=corpus))}
    ctx = dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources)
    result = personality_registration(ctx)
    for event in result.asset_events:  # what the daemon does with them (the personalities' source versions)
        instance.report_runless_asset_event(event)
    return result


def test_sensor_registers_valid_files_and_reports_invalid_ones(tiny_corpus):
    broken = _broken(tiny_corpus)
    with dg.instance_for_test() as instance:
        result = _tick(instance, tiny_corpus)
        (request,) = result.dynamic_partitions_requests
        assert request.partitions_def_name == "personality"
        assert sorted(request.partition_keys) == sorted(PEOPLE)
        assert result.skip_reason is None
        instance.add_dynamic_partitions("personality", list(request.partition_keys))

        # Next tick, the registered personalities' source versions are recorded (defs/corpus/sources.py).
        sourced = _tick(instance, tiny_corpus, result.cursor)
        assert not sourced.dynamic_partitions_requests
        assert sorted(str(e.partition) for e in sourced.asset_events) == sorted(PEOPLE)

        # Then nothing new: the skip reason names the invalid file and its rule.
        again = _tick(instance, tiny_corpus, sourced.cursor)
        assert not again.dynamic_partitions_requests and not again.asset_events
        assert str(broken) in again.skip_reason.skip_message
        assert "TINY_BROKEN" not in instance.get_dynamic_partitions("personality")

        # A new valid file becomes a partition; unchanged files are not re-validated (cursor reused).
        state_before = parse_cursor(again.cursor)
        write_person(tiny_corpus, "TINY_CAMPION")
        third = _tick(instance, tiny_corpus, again.cursor)
        assert list(third.dynamic_partitions_requests[0].partition_keys) == ["TINY_CAMPION"]
        state_after = parse_cursor(third.cursor)
        for path, state in state_before.items():
            assert state_after[path] == state
        instance.add_dynamic_partitions("personality", ["TINY_CAMPION"])

        # Fixing the broken file registers it on the next tick.
        broken.write_text(json.dumps(person_document("TINY_BROKEN")), encoding="utf-8")
        fourth = _tick(instance, tiny_corpus, third.cursor)
        assert list(fourth.dynamic_partitions_requests[0].partition_keys) == ["TINY_BROKEN"]


def test_register_command_adds_partitions_and_reports_invalid_files(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli import app

    _broken(tiny_corpus)
    home = tmp_path / "dagster_home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    result = CliRunner().invoke(app, ["register", "--corpus", str(tiny_corpus)])
    assert result.exit_code == 1, result.output
    assert "TINY_BROKEN" in result.output and "not registered" in result.output
    assert (home / "dagster.yaml").is_file()  # the CLI set the instance up from the repo's dagster.yaml
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert sorted(instance.get_dynamic_partitions("personality")) == sorted(PEOPLE)


def test_malformed_fixture_corpus_registers_only_the_valid_files_and_writes_nothing_for_the_rest(tmp_path, monkeypatch):
    """tests/fixtures/malformed: 50+ refused files beside valid ones; run evaluates only the valid ones (exit 4)."""
    import unicodedata
    from pathlib import Path

    from interviewsim_cli import app
    from interviewsim_cli.outcome import EXIT_INPUT_REFUSED
    from interviewsim_core.pipeline.storage import read_frame

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "malformed"
    expected = json.loads((fixtures / "expected.json").read_text(encoding="utf-8"))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    data = tmp_path / "data"
    result = CliRunner().invoke(app, [
        "run", "--corpus", str(fixtures), "--data-root", str(data), "--methods", "simple", "--assets", "heldout_split",
        "--generator", "offline/extractive", "--judges", "offline/extractive", "--builder", "offline/extractive",
        "--premise-judge", "offline/extractive",
    ])
    assert result.exit_code == EXIT_INPUT_REFUSED, result.output
    for folder, (path, rule) in expected.items():
        assert any(folder in line and f": {path}: [{rule}]" in line for line in result.output.splitlines()), folder
    valid = {"valid_plain", "valid_rtl", "valid/slash", unicodedata.normalize("NFC", "Zoë_Valid")}
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        assert set(instance.get_dynamic_partitions("personality")) == valid
    written = {read_frame(f)["personality_id"].iloc[0] for f in (data / "heldout_split").glob("*.parquet")}
    assert written == valid


def test_sensor_registers_the_manifest_s_personalities_when_the_config_curates(tmp_path):
    """Before any document exists, so their curation (``prepared_input``) can be launched from the UI."""
    from dg_helpers import CURATED, curating_config

    cfg = curating_config(tmp_path)
    resources = {"corpus": CorpusResource(path=str(cfg.corpus)), "eval_config": EvalConfigResource.from_config(cfg)}
    with dg.instance_for_test() as instance:
        result = personality_registration(dg.build_sensor_context(instance=instance, resources=resources))
        (request,) = result.dynamic_partitions_requests
        assert sorted(request.partition_keys) == sorted(CURATED)
        assert not cfg.corpus.exists()


def test_a_scan_validates_again_only_the_files_changed_since_this_process_last_scanned_them(tiny_corpus, monkeypatch):
    """``interviewsim run`` scans the corpus to register, to plan and in every stage run it records: an unchanged
    file keeps its verdict, an edited one is validated again (its verdict may change)."""
    from interviewsim_dagster import registration

    validated: list[str] = []
    real = registration._validate
    monkeypatch.setattr(registration, "_validate", lambda path, fp: validated.append(path.parent.name) or real(path, fp))
    first = registration.scan_corpus(tiny_corpus)
    assert sorted(first.valid) == sorted(PEOPLE) and sorted(validated) == sorted(PEOPLE)
    validated.clear()
    assert registration.scan_corpus(tiny_corpus).valid == first.valid and validated == []
    broken = _broken(tiny_corpus)  # a new file, then an edit of a valid one that breaks it
    doc = json.loads((tiny_corpus / PEOPLE[0] / "prepared_input.json").read_text())
    doc["surprise"] = True
    (tiny_corpus / PEOPLE[0] / "prepared_input.json").write_text(json.dumps(doc))
    again = registration.scan_corpus(tiny_corpus)
    assert sorted(validated) == sorted([PEOPLE[0], broken.parent.name])
    assert PEOPLE[0] not in again.valid and any("surprise" in p for p in again.problems)


def test_registering_a_thousand_personalities_prints_a_few_lines_with_count_first_last_and_the_full_list(
        tmp_path, monkeypatch):
    """The paper's scale (issue 43): one line per list, not 1,000 ids in one line nor a line per id; every id
    in the file the line names."""
    from interviewsim_cli import app

    ids = [f"SYN_{i:04d}" for i in range(1000)]
    for pid in ids:
        write_person(tmp_path / "corpus", pid, person_document(pid, n_interviews=2, pairs=1))
    home = tmp_path / "home"
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    listed = home / "interviewsim_lists" / "registered.txt"

    result = CliRunner().invoke(app, ["register", "--corpus", str(tmp_path / "corpus")])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"registered 1,000 personality partition(s): SYN_0000 ... SYN_0999 (all 1,000: {listed})"]
    assert listed.read_text(encoding="utf-8").splitlines() == ids

    # The instance now holds them all; another corpus leaves them without a document: one line, not 1,000.
    write_person(tmp_path / "other", "OTHER_ONE")
    other = CliRunner().invoke(app, ["register", "--corpus", str(tmp_path / "other")])
    assert other.exit_code == 0, other.output
    stale = [line for line in other.output.splitlines() if "not in this corpus" in line]
    assert len(stale) == 1 and "1,000 personalities, SYN_0000 ... SYN_0999" in stale[0], other.output
    assert "--not-in" in stale[0]
    assert (home / "interviewsim_lists" / "not_in_corpus.txt").read_text(encoding="utf-8").splitlines() == ids

    gone = CliRunner().invoke(app, ["unregister", "--not-in", str(tmp_path / "other")])
    assert gone.exit_code == 0, gone.output
    assert len(gone.output.splitlines()) == 1 and gone.output.startswith("unregistered 1,000 personality partition(s)")
