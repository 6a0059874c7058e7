"""The cost planner as it was before issue 19/22, kept as the reference the fast one must agree with.

It dry-ran the whole graph through ``pipeline.runner.run_evaluation`` (waves mode) with a costing
gateway that answered every call with the offline model (~10 ms CPU per call, every personality
held at once) and counted each distinct request key once. ``test_plan_equivalence.py`` checks that
``interviewsim_core.plan`` plans exactly the requests this one sees (``requests()``, counted before
its dedup). Not part of the package: nothing but tests imports it. The only change from the
original is the ``requests`` counter; ``plan_run`` returns the gateway (``.plan()`` is the old plan).
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from interviewsim_core.llm.cache import Cache, request_key
from interviewsim_core.llm.types import CallRequest, CallResult, ModelConfig
from interviewsim_core.plan import EXPECTED_COMPLETION_TOKENS, TOKENS_PER_WORD, PlanLine, RunPlan, mean_answer_tokens


@dataclass
class _Acc:
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    tokenizer: str = "model"
    requests: int = 0


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
            self._acc.setdefault((step, str(row.get("method") or ""), model.name), _Acc()).requests += 1
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
    def requests(self) -> dict[tuple[str, str, str], int]:
        """Requests per (step, method, model) before the dedup by key: every call the steps asked for."""
        return {k: a.requests for k, a in self._acc.items()}

    def plan(self) -> RunPlan:
        rank = {s: i for i, s in enumerate(self._order)}
        lines = [PlanLine(step=s, method=m, model=mod, calls=a.calls, cached=a.cached, prompt_tokens=a.prompt_tokens,
                          completion_tokens=a.completion_tokens, cost_usd=a.cost_usd, tokenizer=a.tokenizer)
                 for (s, m, mod), a in self._acc.items()]
        return RunPlan(lines=tuple(sorted(lines, key=lambda ln: (rank[ln.step], ln.method, ln.model))))

    # -- internals ----------------------------------------------------------------------------
    def _answer(self, requests: list[CallRequest]) -> list[CallResult]:
        from interviewsim_core.llm.gateway import Gateway
        from interviewsim_core.pipeline.config import OFFLINE_MODEL

        if self._offline is None:
            self._offline = Gateway(cache=None)
        offline = ModelConfig(model=OFFLINE_MODEL, max_reasks=0, max_retries=0)
        return self._offline.run_many([(offline, r) for r in requests])  # type: ignore[attr-defined]

    def _prompt_tokens(self, model: ModelConfig, req: CallRequest) -> tuple[int, bool]:
        """Token count per message, memoised by content: a personality's long context repeats in
        every one of its prompts, and is tokenised once."""
        from interviewsim_core.llm.transport import litellm_module

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
            from interviewsim_core.llm.batch import batch_cost

            return batch_cost(model.model, pt, ct)
        from interviewsim_core.llm.transport import cost_of

        return cost_of(model.model, pt, ct)


def plan_run(config, personalities: Sequence[str] | None = None, methods: Sequence[str] | None = None) -> CostingGateway:
    """The plan of ``run_evaluation(config, personalities, methods)``, without calling any model.

    Retrieval methods are planned with the offline embedder (embedding calls are not model calls
    of the plan, and cost a fraction of a cent per personality): the retrieved examples differ,
    their number and so the prompt sizes do not, to within the length spread of one person's answers.
    """
    from interviewsim_core.llm.cache import SqliteCache
    from interviewsim_core.pipeline.config import OFFLINE_EMBEDDING
    from interviewsim_core.pipeline.runner import load_splits, run_evaluation

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
    return gateway
