"""The one configuration object of an evaluation run, and where its values come from.

Every entry point (``interviewsim run``, the Dagster resources, ``runner.run_evaluation``, a
notebook) builds an ``EvalConfig`` the same way, so a run launched from the UI and one launched
from a shell with the same settings do the same work. Precedence: flags > environment
(``INTERVIEWSIM_*``) > config file (YAML or TOML) > defaults.
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import (BaseModel, BeforeValidator, ConfigDict, Field, PlainSerializer, ValidationError, field_validator,
                      model_validator)

from ..contracts.personality import N_VOTES
from ..dataroot import as_root, is_local, is_url, resolve_root
from ..embeddings.factory import OFFLINE_EMBEDDING
from ..errors import ConfigError
from ..llm.secrets import validation_text
from ..llm.types import ModelConfig

OFFLINE_MODEL = "offline/extractive"
OFFLINE_TERSE_MODEL = "offline/terse"
"""A second offline generator (the first sentence of the offline model's answer): the demo compares the two."""
OFFLINE_PREFIX = "offline/"
"""Model strings under this provider run in-process without network: the offline model and embedder."""
DEFAULT_PS_VOTE_TEMPERATURE = 0.7
ENV_PREFIX = "INTERVIEWSIM_"

# Contracts whose wording or parser decides what a judge's rows mean: part of its identity.
JUDGE_CONTRACTS: tuple[str, ...] = ("content_similarity", "factual_consistency", "personality")

_MODEL_FIELDS = ("generator", "builder", "premise_judge")
_PATH_FIELDS = ("corpus", "transcripts", "manifest", "data_root", "cache_path", "premise_conclusions", "categories_csv",
                "human_labels_csv")


class PSVoteSampling(BaseModel):
    """How the three PS votes per trait and side are sampled: part of the PS judge's identity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    votes: int = N_VOTES
    """Independent runs per trait and side (seed 000: three)."""
    temperature: float | None = DEFAULT_PS_VOTE_TEMPERATURE
    """Temperature sent with every vote; ``None`` keeps the judge's own."""

    def vote_model(self, judge: ModelConfig, vote: int) -> ModelConfig:
        """The judge as asked for vote ``vote``: this temperature, seed = judge seed + vote index."""
        update: dict[str, Any] = {"seed": (judge.seed or 0) + vote}
        if self.temperature is not None:
            update["temperature"] = self.temperature
        return judge.model_copy(update=update)

    def describe(self) -> str:
        t = "the judge's own temperature" if self.temperature is None else f"temperature {self.temperature:g}"
        return f"{self.votes} votes per trait and side, {t}, seed = judge seed + vote index"


DataRoot = Annotated[Any, BeforeValidator(as_root), PlainSerializer(str, return_type=str)]
"""A local folder (``Path``) or a URL (``UPath``: ``s3://``, ``gs://``, ``file://``); see ``dataroot.py``."""


def _sample_corpus() -> Path:
    # Computed from this file rather than imported from loader.py so the config stays importable
    # on its own (the CLI builds a config before anything else is needed).
    return Path(__file__).resolve().parents[1] / "sample_corpus"


def _default_methods() -> tuple[str, ...]:
    from ..strategies import DEFAULT_METHODS

    return tuple(m if isinstance(m, str) else m.name for m in DEFAULT_METHODS)


_LABEL = re.compile(r"[A-Za-z0-9._-]+")


def generator_label(model: ModelConfig) -> str:
    """A generator's short name in method keys and tables: its ``label``, else its model string after the provider
    (``openai/gpt-4.1`` -> ``gpt-4.1``; a per-personality template loses its braces: ``lora-personality_id``)."""
    return model.label or model_label(model.model)


def model_label(model: str) -> str:
    """A generator's label from its model string alone (``generator_label`` without a ``label:``): what the report
    shows for the first generator when it has the tables and not the configuration."""
    return model.rsplit("/", 1)[-1].replace("{", "").replace("}", "")


def _offline(label: str | None = None) -> ModelConfig:
    return ModelConfig(model=OFFLINE_MODEL, label=label)


class EvalConfig(BaseModel):
    """What to evaluate, with which models, and where results go."""

    # Attribute docstrings become field descriptions: CLI help and the Dagster config UI show them.
    # Inputs are kept out of validation errors: a password pasted into cache_url must not reach logs.
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, hide_input_in_errors=True)

    corpus: Path = Field(default_factory=_sample_corpus)
    """Corpus folder (one sub-folder per personality) or one prepared_input.json; defaults to the shipped sample."""
    transcripts: Path | None = None
    """Folder of interview transcripts (text, WebVTT, SRT, diarised JSON) that a run first curates into ``corpus``
    (docs/CURATION.md), with the ``builder`` model; needs ``manifest``. ``None``: the corpus is read as it is."""
    manifest: Path | None = None
    """Manifest (CSV or JSON, one row per transcript) of ``transcripts``; needs ``transcripts``."""
    data_root: DataRoot = Path("data_out")
    """Where the Parquet tables go: ``<data_root>/<asset>/<personality_id>[/<method>].parquet``; a folder or a
    URL of shared storage (``s3://bucket/prefix``, ``gs://...``, ``file://...``; needs ``cache_path`` then)."""
    methods: tuple[str, ...] = Field(default_factory=_default_methods)
    """Method names (presets or the ``<strategy>-<n>[-<n>]`` grammar) evaluated for every personality."""
    generator: ModelConfig = Field(default_factory=_offline)
    """The model that simulates the personality (answers held-out questions and MCQs)."""
    generators: tuple[ModelConfig, ...] | None = None
    """Several models simulating the personality, compared in one study; the first is ``generator``. Each other
    one's methods are the method keys ``<label>/<method>`` (``generator_label``); the calibration methods call no
    generator and are shared. Unset: ``generator`` alone."""
    judges: tuple[ModelConfig, ...] = Field(default_factory=lambda: (_offline(),))
    """CS, FC and PS judges. Every metric is reported per judge, never averaged across them."""
    builder: ModelConfig = Field(default_factory=_offline)
    """Builds the evaluation artefacts: fact summaries, atomic items, MCQ items."""
    premise_judge: ModelConfig = Field(default_factory=_offline)
    """Runs the two-pass premise-usability judge of seed 002 over derived artefacts."""
    embedding_model: str | ModelConfig | None = None
    """Embedder of the retrieval methods (Memory-k, Hybrid) and of the report's overlap and premise-label
    sections: a litellm embedding model (the paper's is ``openai/text-embedding-3-small``) or
    ``offline/hashing`` (numpy bag-of-words: a smoke-test baseline). A bare string or the same mapping as
    the other roles (``model``, ``api_key_env``, ``timeout_s``, ``max_retries``, ``max_total_wait_s``,
    ``max_concurrency``, ``extra_params`` such as ``dimensions``); a bare string takes its timeout and retry
    caps from the generator (``effective_embedding``). Unset (``None``, the default) means ``offline/hashing``
    in a fully offline run; a run with a real generator or judge and a retrieval method refuses to start
    until it is set (``check_retrieval_embedder``), so naming ``offline/hashing`` explicitly is how to
    retrieve offline on purpose."""
    embedding_api_base: str | None = None
    """Base URL of the embedding server; ``None`` falls back to ``api_base`` (one local server for everything)."""
    ps_votes: int = N_VOTES
    """Independent PS runs per trait and side. Seed 000 says three and the modal rule is defined for three,
    so only 3 is accepted; it is a setting so that it is stated, versioned and shown with the judge."""
    ps_vote_temperature: float | None = DEFAULT_PS_VOTE_TEMPERATURE
    """Sampling temperature of every PS vote (each vote also gets its own seed: judge seed + vote index).
    Default 0.7: a greedy judge answers one prompt three times alike, so the votes would not be independent
    and the "three different levels -> Neutral" rule could never fire. ``None`` sends the judge's own
    temperature. Part of the PS judge's identity (code versions) and of each vote's cache key."""
    seed: int = 0
    """Seeds random selection and MCQ shuffles; part of what makes a run reproducible."""
    mcq_options: tuple[int, ...] = (3, 4)
    """MCQ option counts to build and answer; each run uses one count consistently per answering call."""
    concurrency: int | None = None
    """When set, overrides ``max_concurrency`` of every model (one knob for a small machine or a strict quota)."""
    batch: bool = False
    """When true, every model's calls go through the provider's Batch API (``ModelConfig.batch`` for all
    roles, about half price, answers within 24 h; ``llm/batch.py``). Refused at config time when a model's
    provider has no batch path this project speaks (``check_batch_support``): never silently run online."""
    max_cost_usd: float | None = 10.0
    """Budget of one ``interviewsim run``: when the plan (``interviewsim plan``) of the calls still to send
    costs more, the run asks for confirmation on a terminal and refuses without ``--yes`` otherwise (exit 7).
    Default 10 USD: far above a smoke test on the sample, far below a real corpus with paid models, so a
    large bill is always a decision. ``null`` disables the check."""
    api_base: str | None = None
    """Applied to every model given without its own ``api_base`` (one local OpenAI-compatible server for all roles)."""
    cache_path: Path | None = None
    """SQLite LLM cache; ``None`` means ``<data_root>/.cache/llm.sqlite``. Its folder also holds embedding vectors."""
    cache_url: str | None = None
    """Shared model-call cache for several machines: ``redis://host:6379/0`` or ``postgresql://user@host/db``;
    ``None`` uses the SQLite file at ``cache_path``. Passwords come from ``REDIS_PASSWORD`` / ``PGPASSWORD``,
    never from the URL (refused there)."""
    invalid_rate_threshold: float = 0.05
    """Asset checks fail when a table's share of invalid/failed model outputs exceeds this."""
    coverage_threshold: float = 0.95
    """Leaderboard: a method with fewer valid cells than this share of the expected ones (per judge and
    metric) is flagged, left out of the common question set and never marked best."""
    rescore_cron: str = "0 3 * * *"
    """When the automation re-materialises judgment assets whose judge changed."""
    automation_interval_s: int = Field(default=30, ge=5)
    """Seconds between ticks of the Dagster automation sensor (judge changes, aggregates)."""
    automation_fill_new: bool = False
    """Let the automation sensor also fill partitions nobody materialised yet (a newly registered personality,
    a method added to the config): model calls nobody launched, so off by default; when on, each such run
    passes the same budget gate as any other (``max_cost_usd``)."""
    premise_conclusions: Path | None = None
    """JSONL of your own conclusions (``{conclusion, peer_id, window, conclusion_id}`` per line) for the
    ``user_premise_verdicts`` asset; ``None`` leaves that asset out of the graph rather than defining an empty one."""
    categories_csv: Path | None = None
    """CSV with columns ``personality_id, category`` for the report's contradiction-by-category breakdown;
    ``None`` leaves that section "not run" (categories are the user's grouping, not something the corpus says)."""
    human_labels_csv: Path | None = None
    """CSV of human judgments (``personality_id, method, qa_id, metric, value``; metrics ``cs``, ``fc``,
    ``mcq_item_valid``) for the report's judge-vs-human agreement section (``metrics.human_agreement``)."""
    ps_stability: bool = False
    """Run the PS judge stability check (paper 3.3): each judge also rates the Big Five from a person's
    training answers, and the report shows how well that profile aligns with the held-out one. Off by
    default because it costs 15 judge calls per personality and judge over long prompts."""
    ps_stability_responses: int | None = None
    """Training answers the stability check rates per person: ``None`` = as many as the held-out side
    has (same volume of evidence on both sides), taken from the latest training interviews."""
    finetune_export: bool = False
    """Write each personality's training pairs as chat-format JSONL for supervised fine-tuning
    (``sft_examples`` per personality, ``sft_dataset`` writes ``<data_root>/finetune/*.jsonl``)."""

    @field_validator("methods")
    @classmethod
    def _methods_resolve(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        if not v:
            raise ValueError("at least one method is needed")
        if len(set(v)) != len(v):
            raise ValueError(f"duplicate method names in {list(v)}")
        from ..strategies import resolve_method

        for name in v:
            resolve_method(name)  # raises ConfigError naming the bad method
        return v

    @field_validator("ps_votes")
    @classmethod
    def _three_votes(cls, v: int) -> int:
        if v != N_VOTES:
            raise ValueError(f"ps_votes must be {N_VOTES}: seed 000's modal vote is defined over exactly {N_VOTES} runs")
        return v

    @field_validator("ps_vote_temperature")
    @classmethod
    def _vote_temperature(cls, v: float | None) -> float | None:
        if v is not None and not 0.0 <= v <= 2.0:
            raise ValueError(f"ps_vote_temperature must be within [0, 2] or unset, got {v}")
        return v

    @field_validator("judges")
    @classmethod
    def _judges_distinct(cls, v: tuple[ModelConfig, ...]) -> tuple[ModelConfig, ...]:
        if not v:
            raise ValueError("at least one judge is needed")
        names = [j.name for j in v]
        if len(set(names)) != len(names):
            # The judge column holds the display name; two judges sharing it would merge their rows.
            raise ValueError(f"judge display names must be distinct, got {names}; give each a label")
        return v

    @field_validator("mcq_options")
    @classmethod
    def _options_known(cls, v: tuple[int, ...]) -> tuple[int, ...]:
        if not v or any(n not in (3, 4) for n in v) or len(set(v)) != len(v):
            raise ValueError(f"mcq_options must be distinct values among 3 and 4, got {list(v)}")
        return tuple(sorted(v))

    @field_validator("concurrency")
    @classmethod
    def _positive(cls, v: int | None) -> int | None:
        if v is not None and v < 1:
            raise ValueError("concurrency must be >= 1")
        return v

    @field_validator("max_cost_usd")
    @classmethod
    def _budget(cls, v: float | None) -> float | None:
        if v is not None and v < 0:
            raise ValueError("max_cost_usd must be >= 0 (or null for no limit)")
        return v

    @model_validator(mode="after")
    def _curation_pair(self) -> EvalConfig:
        if (self.transcripts is None) != (self.manifest is None):
            raise ValueError("transcripts and manifest go together: the manifest names the transcripts' people and "
                             "dates (docs/CURATION.md)")
        if self.transcripts is not None and Path(self.corpus).expanduser().resolve() == _sample_corpus().resolve():
            raise ValueError("transcripts: name the corpus folder the curation writes (corpus / --corpus); the "
                             "default corpus is the shipped sample, which a curation must not overwrite")
        return self

    @model_validator(mode="after")
    def _batchable(self) -> EvalConfig:
        from ..llm.batch import check_batch_support

        problems = []
        for role, model in self.models_by_role().items():
            try:
                check_batch_support(self.resolve(model))
            except ValueError as exc:
                problems.append(f"{role}: {exc}")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    @field_validator("coverage_threshold")
    @classmethod
    def _coverage(cls, v: float) -> float:
        if not 0.0 <= v <= 1.0:
            raise ValueError("coverage_threshold must be within [0, 1]")
        return v

    @field_validator("invalid_rate_threshold")
    @classmethod
    def _rate(cls, v: float) -> float:
        if not 0.0 <= v <= 1.0:
            raise ValueError("invalid_rate_threshold must be within [0, 1]")
        return v

    @field_validator("cache_url")
    @classmethod
    def _cache_url(cls, v: str | None) -> str | None:
        if v:
            from ..llm.shared_cache import validate_cache_url

            try:
                validate_cache_url(v)
            except ConfigError as exc:
                raise ValueError(str(exc)) from exc
        return v or None

    @model_validator(mode="after")
    def _local_cache_for_remote_root(self) -> EvalConfig:
        if not is_local(self.data_root) and self.cache_path is None:
            raise ValueError(f"data_root {self.data_root} is not a local folder: set cache_path to a local file "
                             "(the SQLite cache, or with cache_url only the embedding vectors, live beside it)")
        return self

    @model_validator(mode="after")
    def _templates_only_for_the_generator(self) -> EvalConfig:
        # A judge or builder that changed with the person judged would score each person on a
        # different scale; only the simulated person (generation, MCQ answering) may be per person.
        bad = [f"{role} ({m.model})" for role, m in self.models_by_role().items()
               if role != "generator" and m.is_per_personality]
        if bad:
            raise ValueError(f"only the generator may be a per-personality template ({{personality_id}}); "
                             f"got it in {', '.join(bad)}")
        return self

    @model_validator(mode="after")
    def _generators_and_method_keys(self) -> EvalConfig:
        # Validators of a frozen model may settle derived fields: ``generator`` is the first of ``generators``, and
        # ``methods`` holds every method key, so everything keyed by method (partitions, tables, the plan) has them.
        from ..strategies import split_key

        gens = self.generators or ()
        if gens:
            if "generator" in self.model_fields_set and self.generator != gens[0]:
                raise ValueError(f"generator ({self.generator.model}) and the first of generators ({gens[0].model}) "
                                 "differ: give one of them")
            self.__dict__["generator"] = gens[0]
        labels = [generator_label(g) for g in gens]
        problems = [f"generator label {label!r} is used twice (set label: on each)" for label in sorted(set(labels))
                    if labels.count(label) > 1]
        problems += [f"generator label {label!r} may hold only letters, digits and . _ - (set label:)"
                     for label in labels if not _LABEL.fullmatch(label)]
        others = set(labels[1:])
        problems += [f"method {m!r} names generator {split_key(m)[0]!r}, which is not among the other generators "
                     f"({', '.join(sorted(others)) or 'none'})" for m in self.methods
                     if split_key(m)[0] is not None and split_key(m)[0] not in others]
        if problems:
            raise ValueError("; ".join(problems))
        if len(gens) > 1:
            self.__dict__["methods"] = self.method_keys(self.methods)
        return self

    def method_keys(self, names: Iterable[str]) -> tuple[str, ...]:
        """The method keys ``names`` select (``--methods``): each as given and, for a method named without a
        generator, every other generator's key of it (``simple`` -> ``simple``, ``claude/simple``)."""
        from ..strategies import expand_keys

        return expand_keys(names, [generator_label(g) for g in (self.generators or ())[1:]])

    @model_validator(mode="after")
    def _cron_shape(self) -> EvalConfig:
        if len(self.rescore_cron.split()) != 5:
            raise ValueError(f"rescore_cron must have five fields, got {self.rescore_cron!r}")
        return self

    def models_by_role(self) -> dict[str, ModelConfig]:
        """Every model the run may call, by role name ("generator", "builder", "premise_judge",
        "judges[i]"), as configured (``effective_models`` applies the run-wide knobs)."""
        return {"generator": self.generator, "builder": self.builder, "premise_judge": self.premise_judge,
                **{f"judges[{i}]": j for i, j in enumerate(self.judges)}}

    # ---- effective values: the run-wide knobs applied to each model -------------------------

    @property
    def effective_models(self) -> list[ModelConfig]:
        """``models_by_role`` with ``resolve`` applied, in that order."""
        return [self.resolve(m) for m in self.models_by_role().values()]

    def resolve(self, model: ModelConfig) -> ModelConfig:
        """``model`` with the run-wide ``api_base`` (if it has none), ``concurrency`` and ``batch`` applied."""
        update: dict[str, Any] = {}
        if self.batch and not model.batch:
            update["batch"] = True
        if self.api_base and not model.api_base:
            update["api_base"] = self.api_base
        if self.concurrency is not None:
            update["max_concurrency"] = self.concurrency
        return model.model_copy(update=update) if update else model

    @property
    def effective_generator(self) -> ModelConfig:
        return self.resolve(self.generator)

    @property
    def effective_generators(self) -> tuple[ModelConfig, ...]:
        """Every generator of the study, resolved, the first being ``effective_generator``."""
        return tuple(self.resolve(g) for g in (self.generators or (self.generator,)))

    def generator_for(self, method_key: str) -> ModelConfig:
        """The generator a method key's answers come from (resolved): ``<label>/...`` that label's, else the first."""
        from ..strategies import split_key

        label = split_key(method_key)[0]
        if label is None:
            return self.effective_generator
        for g in self.effective_generators[1:]:
            if generator_label(g) == label:
                return g
        raise ConfigError(f"method {method_key!r} names generator {label!r}, which this configuration does not have")

    def generator_of(self, method_key: str) -> str:
        """The label of the generator a method key's answers come from; "" for a calibration method (no generator)."""
        from ..strategies import generator_and_method

        return generator_and_method(method_key, generator_label(self.generator))[0]

    @property
    def effective_judges(self) -> tuple[ModelConfig, ...]:
        return tuple(self.resolve(j) for j in self.judges)

    @property
    def effective_builder(self) -> ModelConfig:
        return self.resolve(self.builder)

    @property
    def effective_premise_judge(self) -> ModelConfig:
        return self.resolve(self.premise_judge)

    @property
    def effective_cache_path(self) -> Path:
        return self.cache_path if self.cache_path is not None else self.data_root / ".cache" / "llm.sqlite"

    @property
    def embedding_cache_dir(self) -> Path:
        """Stored embedding vectors: ``<data_root>/.cache/embeddings``, or beside ``cache_path`` when the
        data root is a URL (vectors are per-process files, not objects)."""
        if is_local(self.data_root):
            return Path(self.data_root) / ".cache" / "embeddings"
        return self.effective_cache_path.parent / "embeddings"

    @property
    def effective_embedding_model(self) -> str:
        """The embedding model retrieval uses: the configured one, ``offline/hashing`` when unset."""
        if isinstance(self.embedding_model, ModelConfig):
            return self.embedding_model.model
        return self.embedding_model or OFFLINE_EMBEDDING

    @property
    def effective_embedding_api_base(self) -> str | None:
        if self.effective_embedding_model == OFFLINE_EMBEDDING:
            return None
        own = self.embedding_model.api_base if isinstance(self.embedding_model, ModelConfig) else None
        return own or self.embedding_api_base or self.api_base

    @property
    def effective_embedding(self) -> ModelConfig:
        """The embedding model as the gateway calls it: one ``ModelConfig`` like every other role.

        Given as a mapping, it is used as written (server: its own ``api_base``, else ``embedding_api_base``,
        else ``api_base``; ``concurrency`` applies). Given as a bare string, it takes ``timeout_s``,
        ``max_retries`` and ``max_total_wait_s`` from the generator: a run configured to give up on a
        stuck server after seconds must not wait ten minutes on the embedding call of the same run.
        """
        base = self.effective_embedding_api_base
        if isinstance(self.embedding_model, ModelConfig):
            model = self.embedding_model.model_copy(update={"api_base": base})
        else:
            gen = self.generator
            model = ModelConfig(model=self.effective_embedding_model, api_base=base, timeout_s=gen.timeout_s,
                                max_retries=gen.max_retries, max_total_wait_s=gen.max_total_wait_s)
        if self.concurrency is not None:
            model = model.model_copy(update={"max_concurrency": self.concurrency})
        return model

    @property
    def ps_vote_sampling(self) -> PSVoteSampling:
        """How PS votes are sampled (``judges.vote_model`` applies it; ``judge_identity`` includes it)."""
        return PSVoteSampling(votes=self.ps_votes, temperature=self.ps_vote_temperature)

    # ---- loading ------------------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        config_file: Path | None = None,
        env: Mapping[str, str] | None = None,
        overrides: Mapping[str, Any] | None = None,
    ) -> EvalConfig:
        """Build a config from a file, the environment and explicit overrides (flags win).

        Args:
            config_file: YAML (``.yaml``/``.yml``) or TOML (``.toml``) file; ``None`` falls back to
                ``INTERVIEWSIM_CONFIG`` in ``env``. Relative paths inside it are relative to the file.
            env: usually ``os.environ``; only ``INTERVIEWSIM_*`` keys are read, unknown ones refused.
            overrides: field name -> value (CLI flags). ``None`` values mean "flag not given".

        Raises:
            ConfigError: unreadable file, unknown key, or a value that fails validation.
        """
        env = dict(env or {})
        layered: dict[str, Any] = {}
        file = config_file or (Path(env[ENV_PREFIX + "CONFIG"]) if env.get(ENV_PREFIX + "CONFIG") else None)
        if file is not None:
            _layer(layered, _read_file(Path(file)))
        _layer(layered, _from_env(env))
        flags: dict[str, Any] = {}
        for key, value in (overrides or {}).items():
            if value is None:
                continue
            if key not in cls.model_fields:
                raise ConfigError(f"unknown setting {key!r}; known: {sorted(cls.model_fields)}")
            flags[key] = _coerce(key, value)
        _layer(layered, flags)
        try:
            return cls(**layered)
        except ValidationError as exc:
            raise ConfigError(f"invalid configuration:\n{validation_text(exc)}") from None  # no input echo

    def resolved(self) -> EvalConfig:
        """This config with every path absolute (``~`` expanded, relative to the working directory).

        Done once where a process builds its config, so runs launched from the UI, the CLI and the
        direct runner write to the same place whatever directory later code runs in.
        """
        updates: dict[str, Any] = {
            "corpus": Path(self.corpus).expanduser().resolve(),
            "data_root": resolve_root(self.data_root),  # a URL stays as given
            "cache_path": self.effective_cache_path.expanduser().resolve(),
        }
        for name in ("transcripts", "manifest", "premise_conclusions", "categories_csv", "human_labels_csv"):
            value = getattr(self, name)
            if value is not None:
                updates[name] = Path(value).expanduser().resolve()
        return self.model_copy(update=updates)

    @classmethod
    def load_resolved(cls, env: Mapping[str, str] | None = None,
                      overrides: Mapping[str, Any] | None = None) -> EvalConfig:
        """``load`` from ``env`` (default: this process's environment) and ``overrides``, then ``resolved``."""
        import os

        return cls.load(env=os.environ if env is None else env, overrides=overrides).resolved()


def _layer(layered: dict[str, Any], layer: Mapping[str, Any]) -> None:
    """``layer`` over ``layered`` (file < environment < flags). ``generator`` and ``generators`` are one setting:
    a later layer's ``--generator X`` means the list of one, a later ``generators`` replaces an earlier generator."""
    for one, other in (("generator", "generators"), ("generators", "generator")):
        if one in layer and other not in layer:
            layered.pop(other, None)
    layered.update(layer)


def _split_list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _model(value: Any) -> Any:
    """A model given as a bare litellm string or as the structured ModelConfig mapping."""
    if isinstance(value, str):
        return {"model": value.strip()}
    return value


def _coerce(key: str, value: Any) -> Any:
    """Turn the textual forms used by env vars, flags and files into field values."""
    if key in _MODEL_FIELDS:
        return _model(value)
    if key in ("judges", "generators") and value is not None:
        items = _split_list(value) if isinstance(value, str) else list(value)
        return [_model(v) for v in items]
    if key == "methods":
        return _split_list(value) if isinstance(value, str) else list(value)
    if key == "mcq_options":
        if isinstance(value, str):
            return [int(v) for v in _split_list(value)]
        if isinstance(value, int):
            return [value]
        return list(value)
    return value


def _from_env(env: Mapping[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX) or name == ENV_PREFIX + "CONFIG":
            continue
        key = name[len(ENV_PREFIX) :].lower()
        if key not in EvalConfig.model_fields:
            # A typo such as INTERVIEWSIM_JUDGE would otherwise be silently ignored.
            raise ConfigError(f"unknown environment setting {name}; known: "
                              f"{sorted(ENV_PREFIX + k.upper() for k in EvalConfig.model_fields)}")
        if raw == "":
            continue
        out[key] = _coerce(key, raw)
    return out


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        elif path.suffix.lower() in (".yaml", ".yml"):
            data = yaml.safe_load(text) or {}
        else:
            raise ConfigError(f"config file {path} must end in .toml, .yaml or .yml")
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(f"config file {path} is not valid: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping at the top level")
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key not in EvalConfig.model_fields:
            raise ConfigError(f"{path}: unknown setting {key!r}; known: {sorted(EvalConfig.model_fields)}")
        value = _coerce(key, value)
        if key in _PATH_FIELDS and value is not None and not is_url(value):
            p = Path(value).expanduser()
            value = p if p.is_absolute() else (path.parent / p)
        out[key] = value
    return out


def judge_identity(judge: ModelConfig, contract_names: tuple[str, ...] | list[str] = JUDGE_CONTRACTS,
                   ps_sampling: PSVoteSampling | None = None) -> str:
    """Short hash of what decides a judge's verdicts: its output-affecting config and contract versions,
    and, when it judges personality, how its PS votes are sampled (default ``PSVoteSampling()``).

    The Dagster layer uses it as the code version of judgment assets, so changing a judge's model,
    parameters, prompt, parser or vote sampling marks exactly the assets it judged as stale;
    operational settings (concurrency, retries) do not.
    """
    from ..contracts import version_of

    ident: dict[str, Any] = {"model": judge.identity(), "contracts": {n: version_of(n) for n in sorted(contract_names)}}
    if "personality" in contract_names:
        ident["ps_votes"] = (ps_sampling or PSVoteSampling()).model_dump()
    blob = json.dumps(ident, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def real_models(config: EvalConfig) -> list[str]:
    """Model strings of the generators and judges that call a provider (not ``offline/...``)."""
    roles = [*config.effective_generators, *config.effective_judges]
    return list(dict.fromkeys(m.model for m in roles if not m.model.startswith(OFFLINE_PREFIX)))


def retrieval_embedder_problem(config: EvalConfig, methods: Iterable[Any] | None = None) -> str | None:
    """Why this run must not start with its embedder, or None.

    A real generator or judge with retrieval methods (Memory-k, Hybrid) and the embedding model left
    unset would rank training questions with the offline bag-of-words embedder: publishable-looking
    numbers from a smoke-test retriever. "Unset" is ``embedding_model is None``; ``offline/hashing``
    given explicitly (flag, env, file) is a choice and passes. ``methods`` (names or specs) replaces
    ``config.methods`` for a run that selects its own.
    """
    if config.embedding_model is not None:
        return None
    from ..strategies import resolve_method

    specs = [resolve_method(m) for m in (config.methods if methods is None else methods)]
    retrieval = [s.name for s in specs if s.needs_embedder]
    real = real_models(config)
    if not retrieval or not real:
        return None
    return (f"retrieval method(s) {', '.join(retrieval)} would rank training questions with the offline "
            f"bag-of-words embedder ({OFFLINE_EMBEDDING}) while real models run ({', '.join(real)}). "
            f"Choose the embedder: --embedding-model openai/text-embedding-3-small (the paper's; "
            f"config embedding_model, env INTERVIEWSIM_EMBEDDING_MODEL), or --embedding-model "
            f"{OFFLINE_EMBEDDING} to retrieve offline on purpose.")


def check_retrieval_embedder(config: EvalConfig, methods: Iterable[Any] | None = None) -> EvalConfig:
    """``config`` unchanged, or ConfigError with ``retrieval_embedder_problem``'s message.

    Called where a run starts: ``interviewsim run``, the Dagster definitions, ``runner.run_evaluation``.
    """
    problem = retrieval_embedder_problem(config, methods)
    if problem:
        raise ConfigError(problem)
    return config
