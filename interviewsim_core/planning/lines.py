"""A plan as lines, each priced: ``PlanLine`` (one step, method and model), ``RunPlan`` (a run's lines and
their totals, as a table) and ``plan_line``, which prices a line for its model.

Below both planners, which build their rows here: the evaluation's (``interviewsim_core.plan``, which
walks the step table and calls the curation's) and the curation's (``curation/plan.py``, whose steps the
step table lists). So the curation's planner imports neither the evaluation's nor the graph, and a price
or tokenizer rule changes in one place.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from ..llm.types import ModelConfig

__all__ = ["PlanLine", "RunPlan", "plan_line"]


class PlanLine(BaseModel):
    """One (step, method, model) line of a plan."""

    model_config = ConfigDict(frozen=True)

    step: str
    method: str
    model: str
    calls: int
    """Requests the steps make (one per planned call), repeats and cache hits included."""
    cached: int
    """Calls whose answer is already in the cache: they will not be sent or paid."""
    deduplicated: int = 0
    """Calls identical to an earlier request of the run (``note`` names whose): the gateway sends it once."""
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    """Cost of the calls not cached, at the price litellm's local map gives (batch rates in batch mode)."""
    tokenizer: str
    """``model`` when litellm counted with the model's own tokenizer, ``estimate`` otherwise."""
    priced: bool = True
    """False: litellm's map has no price for the model, so ``cost_usd`` shows $0 for calls that may cost."""
    note: str = ""
    """Why a count or price is not what it seems: repeats of another method's prompts, a missing price."""

    @property
    def to_send(self) -> int:
        return self.calls - self.cached - self.deduplicated


class RunPlan(BaseModel):
    """The plan of one run; ``lines`` sorted by step order of the run, then method and model."""

    model_config = ConfigDict(frozen=True)

    lines: tuple[PlanLine, ...]

    @property
    def calls(self) -> int:
        return sum(line.calls for line in self.lines)

    @property
    def to_send(self) -> int:
        return sum(line.to_send for line in self.lines)

    @property
    def deduplicated(self) -> int:
        return sum(line.deduplicated for line in self.lines)

    @property
    def cached(self) -> int:
        return sum(line.cached for line in self.lines)

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
        return {"calls": self.calls, "deduplicated": self.deduplicated, "cached": self.cached,
                "to_send": self.to_send,
                "prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost_usd": round(self.cost_usd, 6)}

    def by_generator(self, generator_of) -> dict[str, dict[str, float | int]]:
        """Calls to send and their cost per generator (``EvalConfig.generator_of`` of each line's method key): its
        answers and every judgment of them. "shared": what no generator's answers need (the split's artefacts,
        the calibration methods, the personality-level steps)."""
        out: dict[str, dict[str, float | int]] = {}
        for line in self.lines:
            label = (generator_of(line.method) if line.method else "") or "shared"
            total = out.setdefault(label, {"to_send": 0, "cost_usd": 0.0})
            total["to_send"] += line.to_send
            total["cost_usd"] += line.cost_usd
        return {k: {"to_send": v["to_send"], "cost_usd": round(v["cost_usd"], 6)} for k, v in out.items()}

    def to_json(self) -> dict:
        return {"totals": self.totals(), "lines": [{**line.model_dump(), "to_send": line.to_send} for line in self.lines]}

    def rows(self) -> list[tuple[str, ...]]:
        """The plan's cells, header first and totals last: one layout for the terminal and the UI."""
        head = ("step", "method", "model", "calls", "dedup", "cached", "to send", "prompt tok", "completion tok",
                "USD", "tokenizer", "note")
        rows = [head] + [(ln.step, ln.method or "-", ln.model, f"{ln.calls:,}", f"{ln.deduplicated:,}",
                          f"{ln.cached:,}", f"{ln.to_send:,}", f"{ln.prompt_tokens:,}", f"{ln.completion_tokens:,}",
                          f"{ln.cost_usd:.4f}" if ln.priced else f"{ln.cost_usd:.4f}*", ln.tokenizer, ln.note)
                         for ln in self.lines]
        t = self.totals()
        rows.append(("total", "", "", f"{t['calls']:,}", f"{t['deduplicated']:,}", f"{t['cached']:,}",
                     f"{t['to_send']:,}", f"{t['prompt_tokens']:,}", f"{t['completion_tokens']:,}",
                     f"{t['cost_usd']:.4f}", "", ""))
        return rows

    def _footnote(self) -> str:
        return "* no price in litellm's map: $0 shown (see the note)" if any(not ln.priced for ln in self.lines) else ""

    def table(self) -> str:
        """A plain-text table for the terminal (and the Dagster run's metadata)."""
        rows = self.rows()
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
        text = "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
        note = self._footnote()
        return text + ("\n" + note if note else "")

    def markdown(self) -> str:
        """The same table in Markdown, for Dagster's metadata: every column of ``table``, the notes
        (prompts that repeat another method's, missing prices) included, so no line is silently short."""
        def line(cells) -> str:
            return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

        rows = self.rows()
        out = [line(rows[0]), "|" + "---|" * len(rows[0]), *(line(r) for r in rows[1:-1]),
               line(("**total**", *rows[-1][1:]))]
        note = self._footnote()
        return "\n".join(out) + ("\n\n" + note if note else "")


def _price_note(model: ModelConfig) -> tuple[bool, str]:
    """(priced, note): the offline model is free; any other model litellm has no rate for is shown at $0."""
    from ..llm.transport import cost_of

    if model.model.startswith("offline/"):
        return True, ""
    if cost_of(model.model, 1_000_000, 0) > 0 or cost_of(model.model, 0, 1_000_000) > 0:
        return True, ""
    return False, f"no price for {model.model}: $0 shown"


def _cost(model: ModelConfig, pt: int, ct: int) -> float:
    """Prices are linear per model (``cost_of``), so a line's total prices its summed tokens."""
    if model.batch:
        from ..llm.batch import batch_cost

        return batch_cost(model.model, pt, ct)
    from ..llm.transport import cost_of

    return cost_of(model.model, pt, ct)


def plan_line(step: str, method: str, model: ModelConfig, *, calls: int, cached: int, prompt_tokens: int,
              completion_tokens: int, deduplicated: int = 0, note: str = "") -> PlanLine:
    """One row of a plan, priced for ``model``: its cost, whether a price is known (else why it shows $0) and
    which tokenizer counted it. The evaluation's plan and the curation's (``curation/plan.py``) both build
    their rows here, so a price or tokenizer rule changes in one place."""
    from .tokens import has_own_tokenizer

    priced, price_note = _price_note(model)
    return PlanLine(step=step, method=method, model=model.name, calls=calls, cached=cached, deduplicated=deduplicated,
                    prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                    cost_usd=_cost(model, prompt_tokens, completion_tokens),
                    tokenizer="model" if has_own_tokenizer(model) else "estimate", priced=priced,
                    note="; ".join(x for x in (note, price_note) if x))
