"""What a run will cost, before it calls any model: calls, tokens, dollars and expected cache hits.

How: the run is *dry-run* through the very same steps (the runner, the step table, the plan_*
functions) with a costing gateway in place of the real one. Each call it is handed is priced
(prompt tokens counted with the model's tokenizer where litellm has one, the completion estimated
from the contract's output size), looked up in the existing cache (a hit costs nothing), and then
answered by the offline model so that the steps downstream of it can be planned too: a judge
needs a generation to judge, MCQ answering needs MCQ items. The offline model answers every
contract in a valid shape, so the planned number of calls equals the calls a real run makes when
no real output is invalid; each invalid output adds at most ``max_reasks`` re-asks, and a
contract-breaking builder output removes the calls that depended on it.

Nothing here writes: not the cache, not Parquet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from .llm.cache import Cache, request_key
from .llm.types import CallRequest, CallResult, ModelConfig

__all__ = ["EXPECTED_COMPLETION_TOKENS", "PlanLine", "RunPlan", "CostingGateway"]

EXPECTED_COMPLETION_TOKENS: dict[str, int] = {
    "content_similarity": 90,
    "factual_consistency": 90,
    "personality": 70,
    "fact_summary": 600,
    "atomic_item": 50,
    "mcq_generation": 160,
    "mcq_answering": 8,
    "premise_pass1": 180,
    "premise_pass2": 320,
}
"""Expected reply size per contract, in tokens, from the output shapes seed 000/002 ask for (a JSON
object with a one- or two-sentence explanation; a fact summary of a few hundred words; one label
per MCQ item, ``mcq_answering`` is per item). Generation is not listed: its size is the person's, their
mean training answer (``mean_answer_tokens``)."""


TOKENS_PER_WORD = 1.35
"""English prose in GPT-family tokenizers; used only where no tokenizer applies (answer-size estimates)."""


def mean_answer_tokens(split) -> int:
    """Expected size of a generated answer for one person: their mean *training* answer length.

    Training answers only: the held-out ones are the test set and stay out of everything but the
    judges' prompts, estimates included.
    """
    words = [len(p.response.split()) for p in split.train_pairs]
    return max(1, int(sum(words) / max(1, len(words)) * TOKENS_PER_WORD))


class PlanLine(BaseModel):
    """One (step, method, model) line of a plan."""

    model_config = ConfigDict(frozen=True)

    step: str
    method: str
    model: str
    calls: int
    cached: int
    """Calls whose answer is already in the cache: they will not be sent or paid."""
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    """Cost of the calls not cached, at the price litellm's local map gives (batch rates in batch mode)."""
    tokenizer: str
    """``model`` when litellm counted with the model's own tokenizer, ``estimate`` otherwise."""


class RunPlan(BaseModel):
    """The plan of one run; ``lines`` sorted by step order of the run, then method and model."""

    model_config = ConfigDict(frozen=True)

    lines: tuple[PlanLine, ...]

    @property
    def calls(self) -> int:
        return sum(line.calls for line in self.lines)

    @property
    def to_send(self) -> int:
        return sum(line.calls - line.cached for line in self.lines)

    @property
    def prompt_tokens(self) -> int:
        return sum(line.prompt_tokens for line in self.lines)

    @property
    def completion_tokens(self) -> int:
        return sum(line.completion_tokens for line in self.lines)

    @property
    def cost_usd(self) -> float:
        return sum(line.cost_usd for line in self.lines)

    def totals(self) -> dict[str, float | int]:
        return {"calls": self.calls, "cached": self.calls - self.to_send, "to_send": self.to_send,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": round(self.cost_usd, 6)}

    def to_json(self) -> dict:
        return {"totals": self.totals(), "lines": [line.model_dump() for line in self.lines]}

    def table(self) -> str:
        """A plain-text table for the terminal (and the Dagster run's metadata)."""
        head = ("step", "method", "model", "calls", "cached", "prompt tok", "completion tok", "USD", "tokenizer")
        rows = [head] + [(ln.step, ln.method or "-", ln.model, f"{ln.calls:,}", f"{ln.cached:,}",
                          f"{ln.prompt_tokens:,}", f"{ln.completion_tokens:,}", f"{ln.cost_usd:.4f}", ln.tokenizer)
                         for ln in self.lines]
        t = self.totals()
        rows.append(("total", "", "", f"{t['calls']:,}", f"{t['cached']:,}", f"{t['prompt_tokens']:,}",
                     f"{t['completion_tokens']:,}", f"{t['cost_usd']:.4f}", ""))
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
        return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows)


@dataclass
class _Acc:
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    tokenizer: str = "model"


@dataclass
class CostingGateway:
    """A ``CallRunner`` that prices calls instead of paying for them (see the module docstring).

    Args:
        cache: the run's real cache, only read (a key found there is a hit, not a cost).
    """

    cache: Cache | None = None
    generation_tokens: dict[str, int] = field(default_factory=dict)
    """Expected generated-answer size per personality id (its mean training answer, in tokens)."""
    _acc: dict[tuple[str, str, str], _Acc] = field(default_factory=dict)
    _order: list[str] = field(default_factory=list)
    _tokens: dict[tuple[str, str], tuple[int, bool]] = field(default_factory=dict)
    _offline: object | None = None
    _seen: set[str] = field(default_factory=set)
    """Cache keys already planned: the gateway sends an identical request once (later twins are
    answered by the first), so a repeat is not another call."""

    # -- CallRunner -----------------------------------------------------------------------------
    def run_many(self, calls: Sequence[tuple[ModelConfig, CallRequest]]) -> list[CallResult]:
        return self.run_planned([(None, m, r, {}) for m, r in calls])

    def run_planned(self, planned: Sequence[tuple[Hashable, ModelConfig, CallRequest, dict]]) -> list[CallResult]:
        """Price each call under its step (``key[0]``) and method, then answer it offline."""
        answers = self._answer([req for _, _, req, _ in planned])
        for (key, model, req, row), ans in zip(planned, answers, strict=True):
            step = key[0] if isinstance(key, tuple) and key else req.contract
            if step not in self._order:
                self._order.append(step)
            key = request_key(model, req)
            if key in self._seen:
                continue
            self._seen.add(key)
            acc = self._acc.setdefault((step, str(row.get("method") or ""), model.name), _Acc())
            acc.calls += 1
            if self.cache is not None and self.cache.get_answer(key) is not None:
                acc.cached += 1
                continue
            pt, exact = self._prompt_tokens(model, req)
            acc.tokenizer = acc.tokenizer if exact else "estimate"
            ct = self._completion_tokens(model, req, ans, self.generation_tokens.get(str(row.get("personality_id"))))
            acc.prompt_tokens += pt
            acc.completion_tokens += ct
            acc.cost_usd += self._cost(model, pt, ct)
        return answers

    # -- the plan -----------------------------------------------------------------------------
    def plan(self) -> RunPlan:
        rank = {s: i for i, s in enumerate(self._order)}
        lines = [PlanLine(step=s, method=m, model=mod, calls=a.calls, cached=a.cached, prompt_tokens=a.prompt_tokens,
                          completion_tokens=a.completion_tokens, cost_usd=a.cost_usd, tokenizer=a.tokenizer)
                 for (s, m, mod), a in self._acc.items()]
        return RunPlan(lines=tuple(sorted(lines, key=lambda ln: (rank[ln.step], ln.method, ln.model))))

    # -- internals ----------------------------------------------------------------------------
    def _answer(self, requests: list[CallRequest]) -> list[CallResult]:
        from .llm.gateway import Gateway
        from .pipeline.config import OFFLINE_MODEL

        if self._offline is None:
            self._offline = Gateway(cache=None)
        offline = ModelConfig(model=OFFLINE_MODEL, max_reasks=0, max_retries=0)
        return self._offline.run_many([(offline, r) for r in requests])  # type: ignore[attr-defined]

    def _prompt_tokens(self, model: ModelConfig, req: CallRequest) -> tuple[int, bool]:
        """Token count per message, memoised by content: a personality's long context repeats in
        every one of its prompts, and is tokenised once."""
        from .llm.transport import litellm_module

        exact = model.model.startswith(("openai/", "azure/")) or "/" not in model.model
        total = 4  # reply priming
        for m in req.messages:
            digest = hashlib.sha256(m["content"].encode("utf-8")).hexdigest()
            memo = self._tokens.get((model.model, digest))
            if memo is None:
                if model.model.startswith("offline/"):
                    n = len(m["content"].split())
                else:
                    n = int(litellm_module().token_counter(model=model.model, text=m["content"]))
                memo = self._tokens[(model.model, digest)] = (n + 4, exact)
            total += memo[0]
        return total, exact

    @staticmethod
    def _completion_tokens(model: ModelConfig, req: CallRequest, answer: CallResult, person: int | None) -> int:
        expected = EXPECTED_COMPLETION_TOKENS.get(req.contract)
        if req.contract == "mcq_answering":
            n_items = sum(1 for line in req.messages[-1]["content"].splitlines() if line.startswith("Q"))
            return max(1, n_items) * (expected or 8)
        if expected is not None:
            return expected
        if person is not None:
            return person
        return max(1, int(len((answer.raw or "").split()) * TOKENS_PER_WORD))

    @staticmethod
    def _cost(model: ModelConfig, pt: int, ct: int) -> float:
        if model.batch:
            from .llm.batch import batch_cost

            return batch_cost(model.model, pt, ct)
        from .llm.transport import cost_of

        return cost_of(model.model, pt, ct)


def plan_run(config, personalities: Sequence[str] | None = None, methods: Sequence[str] | None = None) -> RunPlan:
    """The plan of ``run_evaluation(config, personalities, methods)``, without calling any model.

    Retrieval methods are planned with the offline embedder (embedding calls are not model calls
    of the plan, and cost a fraction of a cent per personality): the retrieved examples differ,
    their number and so the prompt sizes do not, to within the length spread of one person's answers.
    """
    from .llm.cache import SqliteCache
    from .pipeline.config import OFFLINE_EMBEDDING
    from .pipeline.runner import run_evaluation

    from .pipeline.runner import load_splits

    path = config.effective_cache_path
    cache = SqliteCache(path) if path.exists() else None
    splits = load_splits(config, personalities)
    gateway = CostingGateway(cache=cache, generation_tokens={p: mean_answer_tokens(s) for p, s in splits.items()})
    try:
        run_evaluation(config.model_copy(update={"embedding_model": OFFLINE_EMBEDDING}), gateway=gateway,
                       personalities=personalities, methods=methods, write=False)
    finally:
        if cache is not None:
            cache.close()
    return gateway.plan()
