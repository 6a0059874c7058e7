"""The same data gives the same exit code (issue 30).

A run ended 5 (a check failed) and its immediate re-run, which found everything up to date and made no
run, ended 6: the failed check's verdict was read from the events of the runs just made, and the re-run
made none, so only the invalid outputs read from the tables were left. The summary now reads the
latest verdict of every check on the covered partitions from the instance (``check_results.failed_checks``).
"""

from __future__ import annotations

import dagster as dg
from dg_helpers import PEOPLE, make_config

from interviewsim_cli import outcome
from interviewsim_dagster import launch
from interviewsim_dagster.check_results import failed_checks
from interviewsim_dagster.defs.corpus.partitions import pxm_key
from interviewsim_dagster.definitions import build_definitions

CHECK = "one_generation_per_heldout_question"


def test_a_rerun_that_runs_nothing_ends_with_the_code_of_the_run_that_made_the_data(tiny_corpus, tmp_path):
    cfg = make_config(tiny_corpus, tmp_path / "data")
    defs = build_definitions(cfg)
    graph = defs.resolve_asset_graph()
    methods = list(cfg.methods)
    with dg.DagsterInstance.ephemeral() as instance:
        launch.register_personalities(instance, str(cfg.corpus))
        assert failed_checks(instance, graph, PEOPLE, methods) == []
        # What the first run's check recorded: a failed verdict on one P x M partition, another passed.
        failing, passing = (str(pxm_key(p, methods[0])) for p in PEOPLE)
        for partition, passed in ((failing, False), (passing, True)):
            instance.report_runless_asset_event(dg.AssetCheckEvaluation(
                asset_key=dg.AssetKey("generations"), check_name=CHECK, passed=passed, partition=partition))
        recorded = failed_checks(instance, graph, PEOPLE, methods)
        assert recorded == [f"generations:{CHECK}"]
        assert failed_checks(instance, graph, PEOPLE[1:], methods) == []  # only the covered partitions count

    spec = launch.RunSpec(launch.PERSONALITY_METHOD_JOB, (dg.AssetKey("generations"),), failing, failing)
    first_run = [launch.RunOutcome(spec, "r1", True, 1.0, 1, 0, [f"generations:{CHECK}"])]

    def code(outcomes, recorded_failures) -> int:
        return outcome.summarise(outcomes, len(outcomes), [], [], tmp_path / "data", list(PEOPLE), methods,
                                 cfg.invalid_rate_threshold, recorded_failures).exit_code()

    assert code(first_run, recorded) == code([], recorded) == outcome.EXIT_CHECKS_FAILED
    assert code([], None) == outcome.EXIT_OK  # the runs made now alone (the old way): the failed check is lost
