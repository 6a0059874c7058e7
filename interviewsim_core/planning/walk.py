"""Plan a run one personality at a time, through the step table's own functions, without a model.

Which calls exist is decided by the steps themselves (``pipeline.steps.STEPS``: each model step's
``plan``, ``replan`` and ``assemble``), never re-derived here: this module only walks one
personality's nodes in step order, answers the calls whose answers a later prompt is built from
(``answers``), and accounts every call it is handed. What it holds is one personality's split, its
upstream tables and the token memo; a run-wide map of the requests seen (a 64-bit hash each) tells a
repeated request, which the gateway sends once, from a new one.

Steps whose results nothing downstream reads (the judges, MCQ answering) are planned and counted
but never answered or assembled: that is most of the calls, and they cost a prompt build, a key
and a token count each.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..llm.cache import Cache, request_key
from ..llm.constraints import constraint_for
from ..llm.types import CallRequest, CallResult, ModelConfig
from ..pipeline.calls import PlannedCall, failed_result
from ..pipeline.steps import Cell, Partitioning, Step, StepEnv, inputs_for, steps_for
from .answers import offline_answer, result_of, synthetic_generation
from .tokens import TOKENS_PER_WORD, PromptTokens, completion_tokens, mean_answer_tokens

Observer = Callable[[str, str, Sequence[dict], int], None]
"""Called per call to send: (model name, step, messages, prompt tokens); ``bench_cost`` meters prefixes with it."""


@dataclass
class Tally:
    """The running counts of one (step, method, model) line."""

    calls: int = 0
    deduplicated: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    repeats: Counter = field(default_factory=Counter)
    """Deduplicated calls by the (step, method) whose prompts they repeat."""


def planned_steps(config, counted: set[str]) -> list[Step]:
    """The steps to plan: the counted ones and every model step whose answers their prompts are built from."""
    steps = [s for s in steps_for(config) if s.plan is not None and not s.curation]
    by_name = {s.name: s for s in steps}
    need = set(counted)
    for s in reversed(steps):
        if s.name in need:
            need |= {i.step for i in s.inputs if i.load and i.step in by_name}
    return [s for s in steps if s.name in need]


def assembled_steps(steps: Sequence[Step]) -> set[str]:
    """Steps whose tables another planned step reads: answered in full and assembled."""
    names = {s.name for s in steps}
    return {i.step for s in steps for i in s.inputs if i.load and i.step in names}


class _LazyResults(Mapping):
    """The results of a round, made only when a step function reads one.

    A ``replan`` decides the next round from the results it looks at: the premise judge's pass 2
    reads pass 1, and after pass 2 it reads nothing, so pass 2 (the costliest offline answer) is
    never answered."""

    def __init__(self, answer: Callable[[Any], CallResult]):
        self._answer = answer
        self._keys: dict[Any, None] = {}
        self._made: dict[Any, CallResult] = {}

    def add(self, key: Any) -> None:
        self._keys[key] = None

    def __getitem__(self, key: Any) -> CallResult:
        if key not in self._keys:
            raise KeyError(key)
        if key not in self._made:
            self._made[key] = self._answer(key)
        return self._made[key]

    def __iter__(self):
        return iter(self._keys)

    def __len__(self) -> int:
        return len(self._keys)


class Walker:
    """Accounts the calls of a run; ``walk`` plans one personality (or the unpartitioned steps)."""

    def __init__(self, config, env: StepEnv, cache: Cache | None, steps: Sequence[Step], counted: set[str],
                 observer: Observer | None = None):
        self.config, self.env, self.cache, self.steps, self.counted = config, env, cache, steps, counted
        self.assembled = assembled_steps(steps)
        self.observer = observer
        self.tallies: dict[tuple[str, str, str], Tally] = defaultdict(Tally)
        self.models: dict[str, ModelConfig] = {}
        self.seen: dict[int, int] = {}
        self.labels: list[tuple[str, str]] = []
        self._label_ids: dict[tuple[str, str], int] = {}
        self.tokens = PromptTokens()
        self._completion = completion_tokens
        self._answer_words = 0
        self._answer_tokens = 0

    # -- one personality ------------------------------------------------------------------------
    def walk(self, personality: str | None, methods: Sequence[str], count_p: bool, count_pxm: bool) -> None:
        """Plan ``personality``'s P steps (counted if ``count_p``) and its P x M steps for ``methods``
        (counted if ``count_pxm``); ``None``: the unpartitioned model steps."""
        if personality is not None:
            split = self.env.split(personality)
            self._answer_tokens = mean_answer_tokens(split)
            self._answer_words = max(1, round(self._answer_tokens / TOKENS_PER_WORD))
        done: dict[str, dict[Cell, Any]] = defaultdict(dict)
        for step in self.steps:
            if personality is None:
                if step.partitioning is not Partitioning.NONE:
                    continue
                cells, counted = [Cell()], True
            elif step.partitioning is Partitioning.NONE:
                continue
            elif step.partitioning is Partitioning.PERSONALITY:
                cells, counted = [Cell(personality)], count_p
            else:
                cells, counted = [Cell(personality, m) for m in methods], count_pxm
            counted = counted and step.name in self.counted
            for cell in cells:
                frame = self._node(step, cell, inputs_for(step, cell, done), counted)
                if frame is not None:
                    done[step.name][cell] = frame
        self.tokens.forget()

    def _node(self, step: Step, cell: Cell, inputs: dict[str, Any], counted: bool) -> Any:
        """Plan one partition (every round); answer it as far as a step function reads the answers."""
        assemble = step.name in self.assembled
        if not counted and not assemble:
            return None
        calls: list[PlannedCall] = []
        pending: dict[Any, tuple[PlannedCall, str, Any]] = {}
        results = _LazyResults(lambda k: self._answer(*pending.pop(k)))
        todo = step.plan(self.env, cell, inputs)
        while todo:
            for p in todo:
                # A calibration candidate (given at planning): never sent, so not a call.
                entry = None if p.given is not None else self._account(step.name, cell, p) if counted else self._cached(p)
                if assemble or step.replan is not None:
                    pending[p.key] = (p, entry)
                    results.add(p.key)
            calls.extend(todo)
            todo = step.replan(self.env, cell, calls, results) if step.replan is not None else []
        return step.assemble(self.env, cell, calls, results, inputs) if assemble else None

    # -- one call ---------------------------------------------------------------------------------
    def _cached(self, p: PlannedCall):
        """The call's cache entry: only with a cache is its request key (a sha256 of the prompt) needed."""
        return self.cache.get_answer(request_key(p.model, p.request)) if self.cache is not None else None

    @staticmethod
    def _identity(p: PlannedCall) -> int:
        """What makes two requests the same request for the gateway, hashed by Python, not sha256.

        The same fields as the request key (``llm.cache.cache_key``): the model's identity, the
        constraint (its kind; the body it sends follows from the kind, the contract and the model),
        the contract and its version, the sample index and every message. Most planned calls are
        counted and never answered or looked up, so they need no sha256 of their prompt; string
        hashes are remembered by the strings, and the shared parts of prompts are shared strings.
        64 bits, as the key prefix this replaces: a collision among 10 million calls has a chance of
        about 3 in a million."""
        req = p.request
        return hash((p.model.identity_json(), constraint_for(p.model, req)[0], req.contract, req.contract_version,
                     req.sample_index, *(x for m in req.messages for x in (m["role"], m["content"]))))

    def _account(self, step: str, cell: Cell, p: PlannedCall):
        """Count one call under its line; returns its cache entry (or None)."""
        model, req = p.model, p.request
        method = str(p.row.get("method") or cell.method or "")
        self.models.setdefault(model.name, model)
        tally = self.tallies[(step, method, model.name)]
        tally.calls += 1
        label = self._label_ids.setdefault((step, method), len(self._label_ids))
        if label == len(self.labels):
            self.labels.append((step, method))
        short = self._identity(p)
        first = self.seen.get(short)
        if first is not None:
            tally.deduplicated += 1
            tally.repeats[first] += 1
            return self._cached(p)
        self.seen[short] = label
        entry = self._cached(p)
        if entry is not None:
            tally.cached += 1
            return entry
        pt = self.tokens.count(model, req)
        tally.prompt_tokens += pt
        tally.completion_tokens += self._completion(req, self._answer_tokens)
        if self.observer is not None:
            self.observer(model.name, step, req.messages, pt)
        return None

    def _answer(self, p: PlannedCall, entry) -> CallResult:
        if p.given is not None:
            return failed_result(p)
        req: CallRequest = p.request
        key = request_key(p.model, req)  # seeds the synthetic generation and stamps the result, as a run's would
        if entry is not None:
            raw = entry.raw
        elif req.contract == "generation":
            raw = synthetic_generation(key, self._answer_words)
        else:
            raw = offline_answer(req)
        return result_of(req, raw, key, p.model.model)


class MemoEmbedder:
    """The offline embedder with a per-personality memo of its vectors.

    The runner shares them through its embedding cache; the plan has none (it writes nothing), and
    the same questions are embedded by generation retrieval and again by MCQ retrieval."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.store_vectors = getattr(inner, "store_vectors", True)
        self._memo: dict[str, Any] = {}

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def forget(self) -> None:
        self._memo.clear()

    def embed(self, texts: Sequence[str]):
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            self._memo.update(zip(missing, self.inner.embed(missing)))
        if not texts:
            return self.inner.embed([])
        return np.stack([self._memo[t] for t in texts])
