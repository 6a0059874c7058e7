"""The gateway's typed boundary: what a caller asks for and what it gets back.

Every model call in the product goes through ``Gateway`` (``gateway.py``) with these types, so
generation, judges, builders and the premise judge share one cache, one retry policy, one
concurrency limit per model and one cost ledger.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr
from typing_extensions import TypedDict  # pydantic needs it on Python < 3.12 (CallRequest holds Messages)


class Message(TypedDict):
    """One chat message in the OpenAI/litellm shape: what every prompt contract builds."""

    role: Literal["system", "user", "assistant"]
    content: str


CallStatus = Literal["ok", "invalid", "failed"]
"""ok: parsed under its contract; invalid: every attempt broke the contract (raw text kept);
failed: transport/provider error after retries (error kept, nothing cached)."""

# Fields of ModelConfig that cannot change a model's output, hence never part of a cache key.
OPERATIONAL_FIELDS = frozenset(
    {"max_concurrency", "timeout_s", "max_retries", "max_total_wait_s", "max_reasks", "api_key_env", "label",
     "batch", "batch_poll_s", "batch_max_wait_s", "batch_max_lines", "structured_output", "context_window"}
)
"""``structured_output`` is here because what it changes is keyed where it acts: the constraint a
call really sent (``llm/constraints.py``) is part of that call's key, so ``auto`` and an explicit
``json_schema`` that send the same schema share their answers, and a model whose calls send no
constraint keeps the keys it had before the setting existed."""

StructuredOutput = Literal["auto", "json_schema", "json_object", "grammar", "off"]
"""How a model is asked for a contract's shape (docs/CONFIG.md, "Constrained output")."""


PERSONALITY_PLACEHOLDER = "{personality_id}"
"""The one placeholder a generator's model string may hold (see ``ModelConfig.for_personality``)."""


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept: equal content gives equal bytes on every machine."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@lru_cache(maxsize=4096)
def _scalar_json(value: str | int) -> str:
    return canonical_json(value)


def scalar_json(value: Any) -> str:
    """``canonical_json`` of a key's small scalar parts (contract names, roles, indices), remembered:
    a request key writes about seven of them. ``type`` is part of the memo key (``True`` is not ``1``)."""
    return _scalar_json(value) if type(value) in (str, int) else canonical_json(value)


class ModelConfig(BaseModel):
    """One configured model for one role (generator, a judge, builder, premise judge)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    _identity_json: str | None = PrivateAttr(default=None)

    model: str
    """litellm model string, e.g. ``openai/gpt-4.1``, ``hosted_vllm/qwen3-8b``, ``offline/extractive``."""
    api_base: str | None = None
    """Base URL of an OpenAI-compatible server; part of the model's identity (different server, different model)."""
    api_key_env: str | None = None
    """Name of the environment variable that holds the key. The key itself is read at call time and never stored."""
    label: str | None = None
    """Display name in tables and the UI; defaults to ``model``."""
    temperature: float | None = 0.0
    """Sampling temperature. 0 by default: evaluations should be repeatable."""
    top_p: float | None = None
    max_tokens: int | None = None
    """Cap on every reply of this model; ``None``: each contract's own cap (``CallRequest.max_tokens``)."""
    seed: int | None = None
    """Provider-side sampling seed, where supported."""
    response_format: dict[str, Any] | None = None
    """e.g. ``{"type": "json_object"}``; changes outputs, so it is in the cache key."""
    extra_params: dict[str, Any] = Field(default_factory=dict)
    """Other output-affecting litellm parameters; in the cache key."""
    structured_output: StructuredOutput = "auto"
    """Constrained decoding per contract: ``auto`` sends a JSON schema where litellm says the model
    supports one or the model is an OpenAI-compatible server (falling back once to ``json_object``,
    then nothing, when the server refuses it), nothing to in-process models; ``grammar`` sends
    llama.cpp's ``grammar`` (GBNF) for tagged/line contracts and ``json_object`` + ``schema`` for JSON
    ones; ``off`` sends none. The parsers stay exactly as strict whatever is sent."""
    context_window: int | None = None
    """Tokens the model reads at most; ``None``: litellm's model info, else unknown (see llm/limits.py)."""
    max_concurrency: int = 16
    """Calls in flight for this model in one process."""
    timeout_s: float = 120.0
    max_retries: int = 6
    """Attempts after the first on 429/5xx/timeouts."""
    max_total_wait_s: float = 600.0
    """Cap on the total backoff sleep for one call."""
    max_reasks: int = 2
    """Extra attempts when an output breaks its contract."""
    batch: bool = False
    """Send this model's calls through the provider's Batch API (about half price, answers within
    24 h) instead of one request each; see ``llm/batch.py``. Not in the cache key: a batch answer
    and an online answer to the same request are interchangeable."""
    batch_poll_s: float = 30.0
    """Seconds between two status reads of a submitted batch."""
    batch_max_wait_s: float = 25 * 3600.0
    """Give up waiting after this long (the batch is not cancelled; a re-run keeps waiting on it)."""
    batch_max_lines: int = 50_000
    """Requests per batch file (OpenAI's limit per batch is 50,000)."""

    @property
    def name(self) -> str:
        return self.label or self.model

    def identity(self) -> dict[str, Any]:
        """The output-affecting part of this config: what a cache key and a judge's code version use."""
        return self.model_dump(exclude=set(OPERATIONAL_FIELDS))

    def identity_json(self) -> str:
        """``canonical_json(identity())``, computed once per config: every request key hashes it, and a
        plan keys millions of calls (the config is frozen, so the text cannot go stale)."""
        if self._identity_json is None:
            self._identity_json = canonical_json(self.identity())
        return self._identity_json

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> ModelConfig:
        """pydantic's copy, without the remembered identity text (the copy's fields may differ)."""
        out = super().model_copy(update=update, deep=deep)
        out._identity_json = None
        return out

    @property
    def is_per_personality(self) -> bool:
        """True for a template such as ``hosted_vllm/lora-{personality_id}`` (one adapter per person)."""
        return PERSONALITY_PLACEHOLDER in self.model

    def for_personality(self, personality_id: str) -> ModelConfig:
        """This model as it is called for ``personality_id``: the placeholder filled in, or itself.

        Why a template and not a list of models: a server that serves one LoRA adapter per person
        (vLLM, llama.cpp) names each by model name, and the paper's per-personality fine-tuning
        comparison (section 4.3) evaluates exactly that as one more method. The display name
        (``name``) stays the template, so every personality's rows name the same generator, while
        the cache key (``identity``) holds the filled-in model each call really went to.
        """
        if not self.is_per_personality:
            return self
        update: dict[str, Any] = {"model": self.model.replace(PERSONALITY_PLACEHOLDER, personality_id)}
        if self.label is None:
            update["label"] = self.model
        return self.model_copy(update=update)


class CallRequest(BaseModel):
    """One logical model call: messages plus the contract that judges the answer."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    messages: tuple[Message, ...]
    contract: str
    """Contract NAME (e.g. ``content_similarity``); part of the cache key."""
    contract_version: str
    """CONTRACT_VERSION + PARSER_VERSION of that contract; part of the cache key."""
    parser: Callable[[str], Any] | None = None
    """Strict parser; raises ContractParseError. ``None`` accepts any non-blank text."""
    sample_index: int = 0
    """Independent-sample index (PS votes 0, 1, 2): distinct keys, stable across re-runs."""
    item_id: str = ""
    """Caller's id for the item, for logs and error reports; not part of the key."""
    output_schema: dict[str, Any] | None = None
    """JSON schema of the contract's result (``contracts.<name>.output_schema``), sent as a constraint
    where the model supports one; keyed only through the constraint actually sent."""
    output_grammar: str | None = None
    """GBNF grammar of a tagged/line contract (``contracts.<name>.OUTPUT_GRAMMAR``), same rule."""
    max_tokens: int | None = None
    """The contract's reply cap (``MAX_TOKENS``), used when the model sets none. Not in the key: a cap
    only cuts a reply, and a cut reply is marked ``truncated`` (finish_reason or completion tokens)."""
    _keys: dict[str, Any] = PrivateAttr(default_factory=dict)
    """``cache.request_key``'s memo (model identity -> the texts it hashed and the key)."""


class Attempt(BaseModel):
    """One try at a call: the raw output and why it was rejected, if it was."""

    model_config = ConfigDict(frozen=True)

    raw: str | None = None
    parse_error: str | None = None
    error: str | None = None
    cache_hit: bool = False


class CallResult(BaseModel):
    """The outcome of a CallRequest after retries and re-asks."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    status: CallStatus
    value: Any = None
    """The parsed contract Result when status == 'ok'."""
    raw: str | None = None
    """Raw text of the last attempt (kept for invalid outputs)."""
    parse_error: str | None = None
    error: str | None = None
    attempts: tuple[Attempt, ...] = ()
    model: str = ""
    cache_key: str = ""
    cache_hits: int = 0
    """Attempts served from the cache."""
    calls_made: int = 0
    """Requests actually sent to the provider (after retries)."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those the provider reported as read from its prefix cache (cheaper)."""
    cost_usd: float = 0.0
    latency_s: float = 0.0
    constraint: str = "off"
    """What the last attempt sent to shape the output: ``json_schema``, ``json_object``, ``grammar`` or ``off``."""
    finish_reason: str | None = None
    """The provider's reason the last reply ended (``stop``, ``length``...); None when served from the cache."""
    truncated: bool = False
    """The last reply stopped at its token cap (``finish_reason == "length"``, or on a cache hit its
    completion tokens reached the cap): an invalid truncated reply is not a format breach."""
