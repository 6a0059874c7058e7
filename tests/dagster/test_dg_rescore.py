"""Re-scoring when a judge changes: code versions, the automation condition, and zero generation calls."""

from __future__ import annotations

import dagster as dg
import pytest
from dg_helpers import make_config, run_everything

from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.storage import partition_path
from interviewsim_dagster import launch, resources
from interviewsim_dagster.definitions import AUTOMATION_SENSOR, build_definitions

JUDGMENT_ASSETS = {"reference_personality", "content_similarity", "factual_consistency", "generated_personality"}
AGGREGATES = {"method_scores", "personality_scores", "leaderboard"}
"""Per-judge aggregates: versioned by the judges too, so they show as stale after a judge change."""
OFFLINE = "offline/extractive"


class RecordingGateway:
    """Wraps the real gateway and records every request with the model it went to and whether it hit the provider."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[tuple[str, str, int]] = []  # (model label, contract, calls_made)

    @property
    def stats(self):
        return self.inner.stats

    def run_many(self, calls):
        results = self.inner.run_many(calls)
        for (model, req), res in zip(calls, results, strict=True):
            self.calls.append((model.name, req.contract, res.calls_made))
        return results


def _code_versions(defs: dg.Definitions) -> dict[str, str | None]:
    graph = defs.resolve_asset_graph()
    return {k.to_user_string(): graph.get(k).code_version for k in graph.get_all_asset_keys()}


@pytest.fixture
def judged_twice(tiny_corpus, tmp_path, monkeypatch):
    judge_a = ModelConfig(model=OFFLINE, label="judge-a")
    judge_b = ModelConfig(model=OFFLINE, label="judge-b")
    cfg1 = make_config(tiny_corpus, tmp_path / "data", methods="simple,chrono-100",
                       judges=[judge_a.model_dump(), judge_b.model_dump()])
    # Judge b changes an output-affecting setting (its sampling seed): a different judge identity.
    cfg2 = cfg1.model_copy(update={"judges": (judge_a, judge_b.model_copy(update={"seed": 7}))})
    return cfg1, cfg2


def test_judge_change_changes_exactly_the_judged_code_versions(judged_twice):
    cfg1, cfg2 = judged_twice
    before, after = _code_versions(build_definitions(cfg1)), _code_versions(build_definitions(cfg2))
    changed = {k for k in before if before[k] != after[k]}
    assert changed == JUDGMENT_ASSETS | AGGREGATES
    assert before["generations"] is not None and before["generations"] == after["generations"]


def test_rescore_requests_only_judgments_and_makes_no_generation_calls(judged_twice, monkeypatch):
    cfg1, cfg2 = judged_twice
    defs1 = build_definitions(cfg1)
    instance = dg.DagsterInstance.ephemeral()
    assert all(o.success for o in run_everything(defs1, instance, cfg1))
    gen_file = partition_path(cfg1.data_root, "generations", "TINY_ALDER", "simple")
    gen_mtime = gen_file.stat().st_mtime_ns

    # The automation sensor's view: a first tick on the old code, then a tick after the judge change.
    first = dg.evaluate_automation_conditions(defs=defs1, instance=instance)
    assert first.total_requested == 0
    defs2 = build_definitions(cfg2)
    second = dg.evaluate_automation_conditions(defs=defs2, instance=instance, cursor=first.cursor)
    requested = {k.to_user_string() for k in defs2.resolve_asset_graph().get_all_asset_keys()
                 if second.get_num_requested(k)}
    # The judgments whose judge changed, and (same tick, so the same runs) their per-cell aggregate;
    # nothing upstream: generations and the builder's artefacts stay as they are.
    assert requested == JUDGMENT_ASSETS | {"method_scores"}
    assert second.get_num_requested(dg.AssetKey("content_similarity")) == 2 * 2  # every P x M partition

    # Execute what the automation launches (then its downstream) and watch every model call.
    real = resources._gateway_for
    recorders: list[RecordingGateway] = []

    def recording(*args):
        recorders.append(RecordingGateway(real(*args)))
        return recorders[-1]

    monkeypatch.setattr(resources, "_gateway_for", recording)
    selection = ",".join(sorted(requested | {"method_scores", "leaderboard"}))
    specs = launch.plan_runs(defs2, instance, cfg2.methods, selection=selection)
    # As the sensor launches them: the one writer a data root's study lets change its judges (``study.enter``).
    outcomes = launch.execute(defs2, instance, specs, progress=lambda _m: None,
                              tags={"dagster/sensor_name": AUTOMATION_SENSOR})
    assert all(o.success for o in outcomes)

    calls = [c for r in recorders for c in r.calls]
    assert calls, "the re-score asked no judge at all"
    fresh = {(label, contract) for label, contract, made in calls if made > 0}
    assert {label for label, _ in fresh} == {"judge-b"}  # only the changed judge is re-asked
    assert not [c for c in calls if c[1] in ("generation", "mcq_answering")]  # no generation at all
    assert any(contract == "content_similarity" for _, contract in fresh)
    assert gen_file.stat().st_mtime_ns == gen_mtime  # responses were not rewritten
