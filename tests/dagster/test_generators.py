"""Issue 44, first part: several generators in one study, keyed ``<label>/<method>`` (calibration methods shared).

A study run with generator A, then with A and B (an offline variant at another temperature: another identity,
so other cache keys), through ``interviewsim run``: the second run writes B's generations and judgments and
re-makes nothing else (no partition of A, no fact summary, no calibration method).
"""

from __future__ import annotations

import pandas as pd
import pytest
from dg_helpers import PEOPLE
from typer.testing import CliRunner

from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.storage import partition_path
from interviewsim_core.strategies import resolve_method

A = {"model": "offline/extractive"}
B = {"model": "offline/extractive", "label": "warm", "temperature": 0.7}


def test_method_keys_name_each_other_generator_and_share_calibration():
    cfg = EvalConfig(methods=("simple", "chrono-100", "reference"), generators=[A, B])
    assert cfg.methods == ("simple", "chrono-100", "reference", "warm/simple", "warm/chrono-100")
    assert cfg.generator == cfg.effective_generators[0] and cfg.generator_for("warm/simple").temperature == 0.7
    assert cfg.generator_for("simple").temperature == 0.0
    assert (cfg.generator_of("simple"), cfg.generator_of("warm/simple"), cfg.generator_of("reference")) == (
        "extractive", "warm", "")
    assert cfg.method_keys(["simple"]) == ("simple", "warm/simple")
    assert resolve_method("warm/chrono-100").params == resolve_method("chrono-100").params
    with pytest.raises(ConfigError):
        resolve_method("warm/reference")  # calibration calls no generator: one key for all
    assert EvalConfig.model_validate_json(cfg.model_dump_json()).methods == cfg.methods  # idempotent
    with pytest.raises(ValueError):
        EvalConfig(generators=[A, {"model": "other/extractive"}])  # two labels "extractive"
    # --generator after a config's generators means the list of one
    assert EvalConfig.load(env={}, overrides={"generators": "offline/extractive,offline/other",
                                              "methods": "simple"}).methods == ("simple", "other/simple")


def test_adding_a_generator_to_a_finished_study_makes_only_its_partitions(tiny_corpus, tmp_path, monkeypatch):
    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    data = tmp_path / "data"
    cfg = tmp_path / "cfg.yaml"

    def run(generators) -> None:
        import yaml

        cfg.write_text(yaml.safe_dump({"corpus": str(tiny_corpus), "data_root": str(data), "generators": generators,
                                       "judges": [A], "builder": A, "premise_judge": A,
                                       "methods": ["simple", "reference"]}))
        result = CliRunner().invoke(app, ["run", "--config", str(cfg), "--yes"])
        assert result.exit_code in (0, 5, 6), result.output

    run([A])
    pid = PEOPLE[0]
    kept = {(a, m): partition_path(data, a, pid, m).stat().st_mtime_ns
            for a, m in [("generations", "simple"), ("generations", "reference"), ("content_similarity", "simple")]}
    kept[("fact_summary", None)] = partition_path(data, "fact_summary", pid).stat().st_mtime_ns
    run([A, B])
    for (asset, method), mtime in kept.items():
        assert partition_path(data, asset, pid, method).stat().st_mtime_ns == mtime, (asset, method)
    warm = pd.read_parquet(partition_path(data, "generations", pid, "warm/simple"))
    assert len(warm) and not warm["cache_hit"].any()  # B's own answers, called for
    assert not partition_path(data, "generations", pid, "warm/reference").exists()
    assert (data / "content_similarity" / pid).exists()
    board = pd.read_parquet(data / "leaderboard.parquet")
    assert {"simple", "warm/simple", "reference"} <= set(board["method"])


def test_the_plan_breaks_calls_down_by_generator(tiny_corpus, tmp_path, monkeypatch):
    """``interviewsim plan --json`` counts each generator's answers and their judgments apart from what is shared."""
    import json

    from interviewsim_cli import app

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(app, ["plan", "--corpus", str(tiny_corpus), "--data-root", str(tmp_path / "data"),
                                      "--generators", "offline/extractive,offline/variant", "--judges",
                                      "offline/extractive", "--builder", "offline/extractive", "--premise-judge",
                                      "offline/extractive", "--methods", "simple,reference", "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    by = plan["by_generator"]
    assert set(by) == {"extractive", "variant", "shared"}
    assert by["extractive"]["to_send"] == by["variant"]["to_send"] > 0  # the same methods, the same calls each
    assert sum(v["to_send"] for v in by.values()) == plan["totals"]["to_send"]
    assert {ln["method"] for ln in plan["lines"]} >= {"simple", "variant/simple", "reference"}


def test_a_second_generator_at_a_local_server_asks_only_for_its_answers_and_their_judgments(
        tiny_corpus, tmp_path, monkeypatch):
    """Issue 44, measured at the server: every role is a model name of one local OpenAI-compatible server (answering
    as the offline model). A study with generator A, then A and B, sends on its second run only B's generations,
    B's MCQ answers and the judge's calls on B's answers: no call of A, of the builder (fact summaries, atomic and
    MCQ items), of the premise judge, and none for the calibration methods (counted by model name). ``interviewsim
    plan`` before it predicts the second run's calls within 10%."""
    import hashlib
    import json

    import yaml

    from interviewsim_cli import app
    from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
    from interviewsim_core.contracts import generation
    from interviewsim_core.offline.stand_in import offline_reply

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-secret")
    data, cfg = tmp_path / "data", tmp_path / "cfg.yaml"

    def models_asked(srv, since: int) -> dict[str, int]:
        asked: dict[str, int] = {}
        for entry in srv.log[since:]:
            if entry["path"].endswith("/chat/completions"):
                model = json.loads(entry["body"])["model"]
                asked[model] = asked.get(model, 0) + 1
        return asked

    def reply(model: str, messages: list[dict]) -> str:
        """A answers as the offline model, B as its terse variant. Like a real model's, every answer of B is its own
        text (the offline rules give two questions one answer where their contexts hold the same best example, and
        the judges' prompts on them would be sent once, where the plan, knowing no answer, counts each)."""
        text = offline_reply(messages, "terse" if model == "gen-b" else None)
        if model == "gen-b" and generation.MARKER in messages[0]["content"]:
            text += f" (B {hashlib.sha256(json.dumps(messages).encode()).hexdigest()[:8]})"
        return text

    with FakeOpenAIServer(FakeServerConfig(model_reply=reply)) as srv:
        def write(generators: list[str]) -> None:
            cfg.write_text(yaml.safe_dump({
                "corpus": str(tiny_corpus), "data_root": str(data), "api_base": srv.base_url,
                "generators": [{"model": f"openai/{g}"} for g in generators], "judges": [{"model": "openai/judge"}],
                "builder": {"model": "openai/builder"}, "premise_judge": {"model": "openai/premise"},
                "embedding_model": "offline/hashing",
                "methods": ["simple", "chrono-100", "reference", "copy-nearest"]}))

        def run() -> None:
            result = CliRunner().invoke(app, ["run", "--config", str(cfg), "--yes"])
            assert result.exit_code in (0, 5, 6), result.output

        write(["gen-a"])
        run()
        first = models_asked(srv, 0)
        assert {"gen-a", "judge", "builder"} <= set(first) and "gen-b" not in first
        write(["gen-a", "gen-b"])
        planned = CliRunner().invoke(app, ["plan", "--config", str(cfg), "--json"])
        assert planned.exit_code == 0, planned.output
        plan = json.loads(planned.output)
        since = len(srv.log)
        run()
        second = models_asked(srv, since)
    assert set(second) == {"gen-b", "judge"}, second  # nothing of A, the builder, the premise judge
    def rows_of(asset: str) -> pd.DataFrame:  # B's partitions of ``asset``, every personality
        return pd.concat([pd.read_parquet(partition_path(data, asset, pid, key)) for pid in PEOPLE
                          for key in ("gen-b/simple", "gen-b/chrono-100")
                          if partition_path(data, asset, pid, key).exists()], ignore_index=True)

    gens, answers = rows_of("generations"), rows_of("mcq_answers")
    assert set(gens["method"]) == {"gen-b/simple", "gen-b/chrono-100"}
    # One request per distinct prompt of B's answers (an identical prompt is sent once; re-asks on top), nothing else.
    assert second["gen-b"] >= gens["cache_key"].nunique() + answers["cache_key"].nunique() > 0
    judged = pd.concat([rows_of("content_similarity"), rows_of("factual_consistency")], ignore_index=True)
    assert second["judge"] >= judged["cache_key"].nunique() > 0
    assert plan["by_generator"].keys() >= {"gen-b"} and plan["by_generator"].get("gen-a", {}).get("to_send", 0) == 0
    sent = sum(second.values())
    print(f"second run: planned {plan['totals']['to_send']} calls to send, the server got {sent} ({second})")
    lines = [(ln["step"], ln["method"], ln["model"], ln["to_send"]) for ln in plan["lines"] if ln["to_send"]]
    assert abs(plan["totals"]["to_send"] - sent) <= 0.1 * sent, "\n".join(map(str, [plan["totals"], second, *lines]))
