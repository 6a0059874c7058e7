from __future__ import annotations

from pathlib import Path

import pytest

from interviewsim_core.errors import ConfigError
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline import config as config_mod
from interviewsim_core.pipeline.config import EvalConfig, judge_identity
from interviewsim_core.strategies import DEFAULT_METHODS


def test_defaults_are_offline_and_complete():
    cfg = EvalConfig()
    assert cfg.corpus.name == "sample_corpus" and cfg.corpus.is_dir()
    assert cfg.methods == tuple(DEFAULT_METHODS)
    assert cfg.generator.model == "offline/extractive" and len(cfg.judges) == 1
    assert cfg.embedding_model is None and cfg.effective_embedding_model == "offline/hashing"
    assert cfg.mcq_options == (3, 4) and cfg.seed == 0 and cfg.ps_votes == 3 and cfg.ps_vote_temperature == 0.7
    assert cfg.effective_cache_path == Path("data_out") / ".cache" / "llm.sqlite"
    assert cfg.invalid_rate_threshold == 0.05 and cfg.rescore_cron == "0 3 * * *"
    with pytest.raises(Exception):
        EvalConfig(ps_votes=5)  # stated, but the seed fixes three


def test_every_field_has_a_docstring():
    for name, field in EvalConfig.model_fields.items():
        assert field.description, f"{name} lacks a docstring"


def test_precedence_flags_over_env_over_file_over_defaults(tmp_path):
    f = tmp_path / "cfg.yaml"
    f.write_text("generator: openai/gpt-4.1\nseed: 7\nmethods: [simple, chrono-100]\ndata_root: out\n"
                 "judges: [a/one, {model: b/two, label: two, api_base: 'http://127.0.0.1:9/v1'}]\n")
    env = {"INTERVIEWSIM_SEED": "8", "INTERVIEWSIM_METHODS": "wiki,memory-10", "OTHER": "x"}
    cfg = EvalConfig.load(f, env, {"seed": 9, "generator": None})
    assert cfg.seed == 9                      # flag wins
    assert cfg.methods == ("wiki", "memory-10")  # env beats file
    assert cfg.generator.model == "openai/gpt-4.1"  # file beats default; None flag ignored
    assert cfg.data_root == tmp_path / "out"       # relative to the file
    assert [j.name for j in cfg.judges] == ["a/one", "two"]
    assert cfg.judges[1].api_base == "http://127.0.0.1:9/v1"


def test_toml_and_config_from_env(tmp_path):
    f = tmp_path / "cfg.toml"
    f.write_text('judges = "x/a, x/b"\nmcq_options = [4]\n[builder]\nmodel = "x/builder"\nmax_concurrency = 3\n')
    cfg = EvalConfig.load(None, {"INTERVIEWSIM_CONFIG": str(f), "INTERVIEWSIM_CONCURRENCY": "5"})
    assert [j.model for j in cfg.judges] == ["x/a", "x/b"] and cfg.mcq_options == (4,)
    assert cfg.builder.max_concurrency == 3 and cfg.effective_builder.max_concurrency == 5


def test_api_base_applies_only_to_models_without_their_own():
    own = ModelConfig(model="hosted_vllm/q", api_base="http://127.0.0.1:1/v1")
    cfg = EvalConfig.load(None, {"INTERVIEWSIM_API_BASE": "http://127.0.0.1:2/v1"},
                          {"judges": [own, "hosted_vllm/r"], "generator": "hosted_vllm/g"})
    assert cfg.effective_generator.api_base == "http://127.0.0.1:2/v1"
    assert [j.api_base for j in cfg.effective_judges] == ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"]
    assert cfg.generator.api_base is None  # raw field untouched; effective_* applies the knob


@pytest.mark.parametrize("kwargs", [
    {"overrides": {"nope": 1}},
    {"env": {"INTERVIEWSIM_JUDGE": "x/y"}},
    {"overrides": {"methods": "simple,not-a-method"}},
    {"overrides": {"judges": "x/a,x/a"}},
    {"overrides": {"mcq_options": "5"}},
    {"overrides": {"concurrency": 0}},
    {"overrides": {"rescore_cron": "daily"}},
])
def test_bad_settings_are_config_errors(kwargs):
    with pytest.raises(ConfigError):
        EvalConfig.load(None, kwargs.get("env", {}), kwargs.get("overrides", {}))


def test_bad_files_are_config_errors(tmp_path):
    for name, text in [("a.yaml", "- just\n- a list\n"), ("b.toml", "x = [\n"), ("c.json", "{}"),
                       ("d.yaml", "unknown_key: 1\n")]:
        (tmp_path / name).write_text(text)
        with pytest.raises(ConfigError):
            EvalConfig.load(tmp_path / name, {})
    with pytest.raises(ConfigError):
        EvalConfig.load(tmp_path / "missing.yaml", {})


def test_judge_identity_tracks_output_affecting_settings_only(monkeypatch):
    j = ModelConfig(model="openai/gpt-4.1")
    base = judge_identity(j)
    assert base == judge_identity(j.model_copy(update={"max_concurrency": 1, "label": "renamed"}))
    assert base != judge_identity(j.model_copy(update={"temperature": 0.5}))
    assert base != judge_identity(ModelConfig(model="openai/gpt-4.1", api_base="http://127.0.0.1:3/v1"))
    import interviewsim_core.contracts as contracts

    real = contracts.version_of
    monkeypatch.setattr(contracts, "version_of",
                        lambda n: real(n) + ("-bumped" if n == "content_similarity" else ""))
    assert judge_identity(j) != base
    assert judge_identity(j, ("personality",)) == judge_identity(j.model_copy(), ("personality",))
    assert config_mod.JUDGE_CONTRACTS == ("content_similarity", "factual_consistency", "personality")


def test_vote_sampling_is_part_of_the_ps_judge_identity_only():
    j = ModelConfig(model="openai/gpt-4.1")
    default = judge_identity(j, ("personality",))
    assert default == judge_identity(j, ("personality",), EvalConfig().ps_vote_sampling)
    hotter = EvalConfig(ps_vote_temperature=1.0).ps_vote_sampling
    assert judge_identity(j, ("personality",), hotter) != default
    assert judge_identity(j, ("personality",), EvalConfig(ps_vote_temperature=None).ps_vote_sampling) != default
    # CS and FC judgments do not depend on how PS votes are sampled.
    assert judge_identity(j, ("content_similarity",), hotter) == judge_identity(j, ("content_similarity",))


@pytest.mark.parametrize("bad", [{"ps_votes": 5}, {"ps_votes": 1}, {"ps_vote_temperature": -0.1},
                                 {"ps_vote_temperature": 3.0}])
def test_vote_sampling_is_validated(bad):
    with pytest.raises(ConfigError):
        EvalConfig.load(None, {}, bad)


def test_vote_sampling_from_env_and_file(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("ps_vote_temperature: null\n")
    assert EvalConfig.load(f, {}).ps_vote_temperature is None
    assert EvalConfig.load(None, {"INTERVIEWSIM_PS_VOTE_TEMPERATURE": "1.0"}).ps_vote_temperature == 1.0


# ---- the retrieval embedder guard (issue 11) ------------------------------------------------------

RETRIEVAL_REAL = {"generator": "openai/gpt-4.1", "methods": "simple,memory-100,hybrid-50-50"}


def test_real_models_with_retrieval_and_the_default_embedder_refuse_to_start():
    cfg = EvalConfig.load(None, {}, RETRIEVAL_REAL)
    problem = config_mod.retrieval_embedder_problem(cfg)
    assert problem and "--embedding-model" in problem and "memory-100, hybrid-50-50" in problem
    assert "openai/gpt-4.1" in problem and "text-embedding-3-small" in problem
    with pytest.raises(ConfigError, match="--embedding-model"):
        config_mod.check_retrieval_embedder(cfg)


def test_a_real_judge_alone_is_enough_to_refuse():
    cfg = EvalConfig.load(None, {}, {"judges": "offline/extractive,anthropic/claude-sonnet-4", "methods": "memory-3"})
    assert "anthropic/claude-sonnet-4" in config_mod.retrieval_embedder_problem(cfg)


@pytest.mark.parametrize("overrides", [
    {**RETRIEVAL_REAL, "embedding_model": "offline/hashing"},                 # explicit offline: a choice
    {**RETRIEVAL_REAL, "embedding_model": "openai/text-embedding-3-small"},  # the paper's embedder
    {"generator": "openai/gpt-4.1", "methods": "simple,chrono-100"},         # nothing retrieves
    {"methods": "memory-100"},                                               # everything offline
])
def test_the_guard_lets_deliberate_or_harmless_configs_through(overrides):
    cfg = EvalConfig.load(None, {}, overrides)
    assert config_mod.retrieval_embedder_problem(cfg) is None
    assert config_mod.check_retrieval_embedder(cfg) is cfg


def test_explicit_offline_embedder_survives_a_dump_and_reload(tmp_path):
    import yaml

    for value in (None, "offline/hashing"):
        cfg = EvalConfig.load(None, {}, {**RETRIEVAL_REAL, "embedding_model": value})
        f = tmp_path / "saved.yaml"
        f.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
        again = EvalConfig.load(f, {})
        assert again.embedding_model == value
        assert (config_mod.retrieval_embedder_problem(again) is None) == (value is not None)
    env = {"INTERVIEWSIM_EMBEDDING_MODEL": "offline/hashing"}
    assert config_mod.retrieval_embedder_problem(EvalConfig.load(None, env, RETRIEVAL_REAL)) is None


def test_offline_embedder_ignores_the_shared_api_base():
    cfg = EvalConfig.load(None, {}, {"api_base": "http://127.0.0.1:9/v1"})
    assert cfg.effective_embedding_api_base is None
    remote = EvalConfig.load(None, {}, {"api_base": "http://127.0.0.1:9/v1", "embedding_model": "openai/e"})
    assert remote.effective_embedding_api_base == "http://127.0.0.1:9/v1"


def test_json_round_trip_for_the_launchpad():
    cfg = EvalConfig.load(None, {}, {"judges": "x/a,x/b", "seed": 4, "api_base": "http://127.0.0.1:5/v1"})
    assert EvalConfig.model_validate_json(cfg.model_dump_json()) == cfg


def test_resolved_makes_every_path_absolute_once(tmp_path, monkeypatch):
    """The CLI and the Dagster code location resolve paths through ``EvalConfig`` (no Dagster import)."""
    monkeypatch.chdir(tmp_path)
    env = {"INTERVIEWSIM_DATA_ROOT": "out", "INTERVIEWSIM_PREMISE_CONCLUSIONS": "mine.jsonl",
           "INTERVIEWSIM_CORPUS": "~/corpus"}
    cfg = EvalConfig.load_resolved(env=env, overrides={"categories_csv": "cats.csv"})
    assert cfg.data_root == tmp_path / "out"
    assert cfg.cache_path == tmp_path / "out" / ".cache" / "llm.sqlite"
    assert cfg.premise_conclusions == tmp_path / "mine.jsonl" and cfg.categories_csv == tmp_path / "cats.csv"
    assert cfg.corpus.is_absolute() and "~" not in str(cfg.corpus)
    assert cfg.resolved() == cfg
