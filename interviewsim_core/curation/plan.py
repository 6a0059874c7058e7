"""What a curation will call and cost, before its first model call (``interviewsim plan --transcripts``).

How: the curation itself (``run.curate``) runs with a planning runner in place of the gateway. Each
call the curation would send is counted (calls, cached, prompt tokens, expected completion tokens)
and answered without a model: with its cached answer when the cache has one (so a finished
curation plans 0 to send), else with the offline model's responder, parsed by the contract's own
parser. The steps after attribution are planned from those answers, as the evaluation planner
plans MCQ items from made-up atomic items (``plan.py``).

Exact: the attribution calls (the rule decides which labels need the model before any call) and the
quality-control calls (one per ingested transcript of a personality without input problems).
Estimated: QA structuring and tagging, which depend on what quality control keeps: planned with the
offline verdicts (a real model may keep more or fewer transcripts); completion tokens (contract
output sizes below). Review decisions are not read (they change only which transcripts are kept).
Nothing is written: no cache entry, no corpus file.
"""

from __future__ import annotations

import gc
import threading
from collections import Counter
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..contracts import REGISTRY
from ..errors import ContractParseError
from ..llm.types import CallRequest, CallResult, ModelConfig
from ..planning.lines import PlanLine, RunPlan, plan_line
from ..pipeline.calls import run_calls
from .run import STEPS, curate_with

__all__ = ["CURATION_COMPLETION_TOKENS", "plan_curation"]

CURATION_COMPLETION_TOKENS: dict[str, int] = {
    "speaker_attribution": 120,
    "transcript_quality": 60,
    "qa_structuring": 1500,
    "thematic_tagging": 200,
    "personality_category": 40,
}
"""Expected reply sizes: a label list with short reasons; a verdict with one sentence; the pairs of a
transcript with cleaned texts (about the transcript's length: the largest); a tag per pair; one category."""

_STEP_OF = {contract: step for step, contract in STEPS.items()}


class _PlanningRunner:
    """Stands in for the gateway: counts each call and answers it from the cache or the offline responder."""

    def __init__(self, cache) -> None:
        from ..planning.tokens import PromptTokens

        self.cache = cache
        self.tokens = PromptTokens()
        self.calls: Counter[str] = Counter()
        self.cached: Counter[str] = Counter()
        self.prompt: Counter[str] = Counter()
        self.completion: Counter[str] = Counter()
        self.models: dict[str, ModelConfig] = {}

    def run_many(self, calls: Sequence[tuple[ModelConfig, CallRequest]]) -> list[CallResult]:
        return [self._one(model, req) for model, req in calls]

    def _one(self, model: ModelConfig, req: CallRequest) -> CallResult:
        from ..llm.cache import request_key
        from ..offline import respond, respond_result

        step = _STEP_OF.get(req.contract, req.contract)
        self.models[step] = model
        self.calls[step] += 1
        # The key only finds a cached answer: without a cache (a first run) it is not computed.
        key = request_key(model, req) if self.cache is not None else ""
        entry = self.cache.get_answer(key) if self.cache is not None else None
        if entry is not None:
            self.cached[step] += 1
            raw = entry.raw
        else:
            self.prompt[step] += self.tokens.count(model, req)
            self.completion[step] += CURATION_COMPLETION_TOKENS.get(req.contract, 100)
            messages = [dict(m) for m in req.messages]
            value = respond_result(messages, req.contract)
            if value is not None:  # the offline model's typed answer: no JSON written and parsed back
                return CallResult(status="ok", value=value, model=model.name, cache_key=key)
            raw = respond(messages, req.contract)
        parse = req.parser or REGISTRY[req.contract].parse
        try:
            return CallResult(status="ok", value=parse(raw), raw=raw, model=model.name, cache_key=key)
        except ContractParseError as exc:  # a cached answer the parser now refuses: the run would re-ask
            return CallResult(status="invalid", raw=raw, parse_error=str(exc), model=model.name, cache_key=key)


class _Collector:
    """Who paused Python's cyclic garbage collector (``collector_paused``), and whether it was on before the first."""

    lock = threading.Lock()
    pausers = 0
    was_on = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while the body runs; on again after, if it was on.

    A plan holds the whole curation's values until it ends (every transcript's turns, pairs and
    attributions: each pydantic value is two tracked objects, 1.6 million at 1,000 personalities x 23
    transcripts). None of them is in a reference cycle (the collector's passes over a plan freed nothing
    past its youngest generation), but its full passes walk every live object, and they were 17% of the
    plan's CPU at that size. Reference counting frees everything as before; only cyclic garbage made
    meanwhile waits for the next pass. Nested or concurrent plans: on again when the last one ends.
    """
    with _Collector.lock:
        if _Collector.pausers == 0:
            _Collector.was_on = gc.isenabled()
            gc.disable()
        _Collector.pausers += 1
    try:
        yield
    finally:
        with _Collector.lock:
            _Collector.pausers -= 1
            if _Collector.pausers == 0 and _Collector.was_on:
                gc.enable()


def plan_curation(transcripts: Path | str, manifest: Path | str, model: ModelConfig,
                  cache_path: Path | str | None, personalities: Collection[str] | None = None) -> RunPlan:
    """The plan of ``curate(transcripts, manifest, gateway, model)`` with the cache at ``cache_path``.

    One line per curation step (``speaker_turns``, ``transcript_quality``, ``qa_pairs``, ``qa_tags``,
    ``personality_category``), method ``-``. ``personalities``: only theirs (a graph run of a few
    partitions of the curation step). Input problems do not raise: the personalities concerned
    are left out, as the curation itself would (``interviewsim curate`` lists them).
    """
    from ..llm.cache import SqliteCache

    cache = SqliteCache(Path(cache_path)) if cache_path is not None and Path(cache_path).exists() else None
    runner = _PlanningRunner(cache)
    try:
        with collector_paused():
            curate_with(transcripts, manifest, lambda planned: run_calls(runner, planned), model, out=None,
                        personalities=personalities, write=False)
    finally:
        if cache is not None:
            cache.close()
    order = list(STEPS)
    lines: list[PlanLine] = []
    for step in sorted(runner.calls, key=lambda s: order.index(s) if s in order else len(order)):
        note = ("calls depend on what quality control keeps (planned with offline verdicts)"
                if step in ("qa_pairs", "qa_tags") else "")
        lines.append(plan_line(step, "-", runner.models[step], calls=runner.calls[step], cached=runner.cached[step],
                               prompt_tokens=runner.prompt[step], completion_tokens=runner.completion[step], note=note))
    return RunPlan(lines=tuple(lines))
