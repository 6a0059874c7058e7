"""A scripted stand-in for the gateway: replies are a function of the request, parsing is real.

It runs each request's own contract parser, so the pipeline's handling of ok / invalid / failed
rows is exercised exactly as with the real gateway, while tests decide every reply precisely.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from interviewsim_core.errors import ContractParseError
from interviewsim_core.llm.types import Attempt, CallRequest, CallResult, ModelConfig


class Fail(Exception):
    """Returned (not raised) by a script to simulate a transport failure."""


Script = Callable[[ModelConfig, CallRequest], "str | Fail"]


def _between(text: str, tag: str) -> str:
    m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", text, re.S)
    assert m, f"no <{tag}> block in prompt"
    return m.group(1)


def _digest(*parts: object) -> int:
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16)


def user_text(req: CallRequest) -> str:
    return "\n".join(m["content"] for m in req.messages if m["role"] == "user")


def valid_reply(model: ModelConfig, req: CallRequest) -> str:
    """A well-formed reply for every contract, varied by prompt so aggregates are not constant."""
    text = user_text(req)
    h = _digest(model.name, text, req.sample_index)
    c = req.contract
    if c == "generation":
        q = text.rsplit("New question: ", 1)[1].splitlines()[0]
        return f"My answer to that is simple ({h % 97}): {q[:40]}"
    if c == "content_similarity":
        return json.dumps({"score": 1 + h % 5, "explanation": "overlap judged"})
    if c == "factual_consistency":
        return json.dumps({"label": ("Entailment", "Neutral", "Contradiction")[h % 3], "explanation": "per summary"})
    if c == "fact_summary":
        responses = [line[2:] for line in text.splitlines() if line.startswith("- ")]
        # Copy a held-out response verbatim so leak tests have real summary text to look for.
        return json.dumps({"summary": responses[0] if responses else "Nothing.", "explanation": "extractive"})
    if c == "personality":
        return f"<rate>{('Low', 'Neutral', 'High')[h % 3]}</rate> <justification>seen in responses</justification>"
    if c == "atomic_item":
        response = _between(text, "response")
        return f"Atomic Question: What was said in reply {h % 1000}?\nAtomic Answer: {' '.join(response.split()[:6])}"
    if c == "mcq_generation":
        kw = req.parser.keywords  # the partial's bound atomic question / answer / n_options
        kinds = ("correct", "opposite_negation", "near_miss", "plausible_misconception")[: kw["n_options"]]
        texts = [kw["atomic_answer"], "not " + kw["atomic_answer"], kw["atomic_answer"] + " or so", "something else"]
        return json.dumps({"question": kw["atomic_question"],
                           "options": [{"kind": k, "text": t} for k, t in zip(kinds, texts)],
                           "correct_answer": "A"})
    if c == "mcq_answering":
        sets = req.parser.keywords["label_sets"]
        return "\n".join(f"Q{i}: {labels[(h + i) % len(labels)]}" for i, labels in enumerate(sets, start=1))
    if c == "premise_pass1":
        return json.dumps({
            "subject": "the speaker", "predicate_and_force": "said", "object_or_content": text[-60:],
            "time": "N/A", "scope": "N/A", "unknown_slots": [], "licensed_inference": "They said it.",
            "decontextuality_score": (h % 5) / 4, "labels": ["scripted"], "bundled": False, "notes": "",
        })
    if c == "premise_pass2":
        return json.dumps({
            "interpretation": "MATCH", "interpretation_notes": "", "unsupported_elements": [],
            "force_preserved": True, "force_notes": "", "time_status": "HEDGED_APPROPRIATELY",
            "failure_attribution": [], "labels": [], "primary_cause": "NONE",
        })
    raise AssertionError(f"no scripted reply for contract {c}")


@dataclass
class ScriptedGateway:
    """``run_many`` like the real gateway; records every request it was given."""

    script: Script = valid_reply
    max_reasks: int = 0
    calls: list[tuple[ModelConfig, CallRequest]] = field(default_factory=list)
    batches: int = 0

    def run(self, model: ModelConfig, requests: Sequence[CallRequest]) -> list[CallResult]:
        return self.run_many([(model, r) for r in requests])

    def run_many(self, calls: Sequence[tuple[ModelConfig, CallRequest]]) -> list[CallResult]:
        self.batches += 1
        return [self._one(m, r) for m, r in calls]

    def _one(self, model: ModelConfig, req: CallRequest) -> CallResult:
        attempts: list[Attempt] = []
        for n in range(1, self.max_reasks + 2):
            self.calls.append((model, req))
            raw = self.script(model, req)
            # Usage adds up over attempts, as a provider bills every re-ask.
            usage = {"prompt_tokens": 10 * n, "completion_tokens": 2 * n, "cost_usd": 0.001 * n, "calls_made": n}
            if isinstance(raw, Fail):
                attempts.append(Attempt(error=str(raw)))
                return CallResult(status="failed", error=str(raw), attempts=tuple(attempts), model=model.model,
                                  calls_made=n, prompt_tokens=10 * (n - 1), completion_tokens=2 * (n - 1),
                                  cost_usd=0.001 * (n - 1))
            try:
                value = req.parser(raw) if req.parser else raw
            except ContractParseError as exc:
                attempts.append(Attempt(raw=raw, parse_error=exc.reason))
                continue
            attempts.append(Attempt(raw=raw))
            return CallResult(status="ok", value=value, raw=raw, attempts=tuple(attempts), model=model.model,
                              **usage)
        return CallResult(status="invalid", raw=attempts[-1].raw, parse_error=attempts[-1].parse_error,
                          attempts=tuple(attempts), model=model.model, **usage)


from interviewsim_core.offline.stand_in import offline_reply  # noqa: E402,F401 - the tests' remote-model stand-in
