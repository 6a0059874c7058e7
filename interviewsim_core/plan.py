"""What a run will cost, before it calls any model: calls, tokens, dollars, repeats and cache hits.

How (``planning/``): personality by personality, each model step's own ``plan`` function (the step
table, ``pipeline/steps.py``) builds the calls of its partitions, exactly as the run will; each
call's request key is looked up in the model-call cache (a hit is free), checked against the keys
already planned in this run (an identical request is sent once by the gateway: *deduplicated*, and
the line says whose prompts it repeats), and its prompt tokens counted (``planning/tokens.py``).
A step whose answers a later prompt is built from (generations for the judges, atomic items for
MCQ items, premise pass 1 for pass 2) is answered: with the cached answer when there is one, so a
finished run plans 0 to send, else a synthetic answer (generations: unique per request, the person's
mean answer size) or the offline model's responder (small builder prompts), through the contract's
parser, then assembled by the step's own ``assemble``. Nothing else is answered. One personality
is held at a time; CPU per call and memory are measured in ``benchmarks/bench_plan.py``.

Exact: which calls exist and how many per step, method and model, when every output is valid
(each invalid output adds at most ``max_reasks`` re-asks; a broken builder output removes the calls
made from it), repeats and cache hits of the first asks. Estimated: completion tokens (the
contracts' output sizes, ``EXPECTED_COMPLETION_TOKENS``), prompt tokens of models without their own
tokenizer in litellm (``tokenizer: estimate``), the items derived from builder outputs (as many as
the offline builder makes) and the retrieval methods' examples (the offline embedder chooses them:
their number and size are right, not which ones). A model with no price in litellm's map is shown
at $0 with ``priced: false`` and a note.

Nothing here writes: not the cache, not Parquet.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from .llm.types import CallRequest, ModelConfig

__all__ = ["EXPECTED_COMPLETION_TOKENS", "PlanLine", "RunPlan", "completion_tokens", "mean_answer_tokens",
           "plan_line", "plan_run", "usd_pair"]

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


def completion_tokens(req: CallRequest, person_tokens: int) -> int:
    """Expected reply tokens of one call: the contract's size, per item for MCQ, the person's for generation."""
    expected = EXPECTED_COMPLETION_TOKENS.get(req.contract)
    if req.contract == "mcq_answering":
        from .contracts.mcq_answering import QUESTIONS_OPEN

        block = req.messages[-1]["content"].rpartition(QUESTIONS_OPEN)[2]
        n_items = sum(1 for line in block.splitlines() if line.startswith("Q") and line[1:2].isdigit())
        return max(1, n_items) * (expected or 8)
    if expected is not None:
        return expected
    return max(1, person_tokens)


def usd_pair(cost: float, limit: float) -> tuple[str, str]:
    """A plan's cost and a budget as dollar texts a reader can compare: cents when they tell them apart,
    more decimals until each non-zero amount shows two significant digits and the two texts differ.

    Why: cents alone turn a $0.006071 plan over a $0.0001 limit into "$0.01 ... more than $0.00".
    """
    def text(value: float, decimals: int) -> str:
        return f"${value:,.{decimals}f}"

    def enough(value: float, decimals: int) -> bool:
        return value == 0 or abs(value) >= 10 ** (1 - decimals)  # two significant digits shown

    decimals = 2
    while decimals < 12 and not (enough(cost, decimals) and enough(limit, decimals)
                                 and text(cost, decimals) != text(limit, decimals)):
        decimals += 1
    return text(cost, decimals), text(limit, decimals)


def has_price(model: ModelConfig) -> bool:
    """True when calling ``model`` costs money by litellm's price map (batch rates too): the budget gate
    plans a run only then, since a plan of unpriced or offline models is $0 and cannot exceed a budget."""
    from .llm.transport import cost_of

    if model.model.startswith("offline/"):
        return False
    return cost_of(model.model, 1_000_000, 0) > 0 or cost_of(model.model, 0, 1_000_000) > 0


def _price_note(model: ModelConfig) -> tuple[bool, str]:
    """(priced, note): the offline model is free; any other model litellm has no rate for is shown at $0."""
    from .llm.transport import cost_of

    if model.model.startswith("offline/"):
        return True, ""
    if cost_of(model.model, 1_000_000, 0) > 0 or cost_of(model.model, 0, 1_000_000) > 0:
        return True, ""
    return False, f"no price for {model.model}: $0 shown"


def _cost(model: ModelConfig, pt: int, ct: int) -> float:
    """Prices are linear per model (``cost_of``), so a line's total prices its summed tokens."""
    if model.batch:
        from .llm.batch import batch_cost

        return batch_cost(model.model, pt, ct)
    from .llm.transport import cost_of

    return cost_of(model.model, pt, ct)


def plan_run(config, personalities: Sequence[str] | None = None, methods: Sequence[str] | None = None,
             steps: Iterable[str] | None = None, cells: Iterable[tuple[str, str | None]] | None = None,
             *, observer=None) -> RunPlan:
    """The plan of ``run_evaluation(config, personalities, methods)``, without calling any model.

    Args:
        personalities / methods: as for the run (default: the corpus, ``config.methods``).
        steps: count only these steps' calls (names); the model steps their prompts are built from
            are planned too, not counted (their answers are cached or made up, as the module says).
        cells: count only these partitions: ``(personality, method)`` selects that P x M partition
            of every P x M step, ``(personality, None)`` the personality's P partitions (fact
            summary, atomic items, ...); the unpartitioned steps are then not counted. For a run of
            a few partitions (a Dagster run of a PxM selection). ``personalities``/``methods``
            still filter it.
        observer: called per call to send with (model name, step, messages, prompt tokens).

    Retrieval methods are planned with the offline embedder (embedding calls are not model calls
    of the plan, and cost a fraction of a cent per personality): the retrieved examples differ,
    their number and so the prompt sizes do not, to within the length spread of one person's answers.
    """
    from .errors import ConfigError
    from .factories import make_embedder
    from .llm.cache import SqliteCache
    from .planning.corpus import checked_documents
    from .pipeline.config import OFFLINE_EMBEDDING, check_retrieval_embedder
    from .pipeline.steps import STEPS, StepEnv, steps_for
    from .planning.walk import MemoEmbedder, Walker, planned_steps
    from .split import split_personality

    method_names = [getattr(m, "name", m) for m in (methods if methods is not None else config.methods)]
    cfg = config.model_copy(update={"embedding_model": OFFLINE_EMBEDDING})
    check_retrieval_embedder(cfg, method_names)
    model_steps = [s.name for s in steps_for(cfg) if s.plan is not None and not s.curation]  # the
    # curation's calls are planned by curation/plan.py: it writes the corpus this planner walks
    counted = set(model_steps if steps is None else steps)
    unknown = sorted(counted - set(model_steps))
    if unknown:
        raise ConfigError(f"steps that make no model call in this configuration: {unknown}; those that do: "
                          f"{model_steps}")
    chosen = None if personalities is None else set(personalities)
    by_cell: dict[str, tuple[bool, set[str]]] = {}
    for p, m in cells or ():
        whole, ms = by_cell.get(p, (False, set()))
        by_cell[p] = (whole or m is None, ms | ({m} if m is not None else set()))

    def selection(pid: str) -> tuple[bool, list[str]] | None:
        """(count its P partitions, its methods) of a personality of the corpus, None: not planned."""
        if chosen is not None and pid not in chosen:
            return None
        if cells is None:
            return True, method_names
        whole, ms = by_cell.get(pid, (False, set()))
        picked = [m for m in method_names if m in ms]
        return (whole, picked) if whole or picked else None

    current: dict[str, object] = {}
    seen: set[str] = set()
    memo: list[MemoEmbedder] = []

    def embedder() -> MemoEmbedder:
        memo.append(MemoEmbedder(make_embedder(cfg)))
        return memo[-1]

    env = StepEnv(cfg, lambda pid: current[pid], embedder=embedder, embedding_cache=None)

    path = config.effective_cache_path
    cache = SqliteCache(path) if path.exists() else None
    walker = Walker(cfg, env, cache, planned_steps(cfg, counted), counted, observer)
    try:
        if cells is None:
            walker.walk(None, (), False, False)
        for pid, doc in checked_documents(config.corpus, seen):
            sel = selection(pid)
            if sel is not None:
                current.clear()  # one personality at a time
                current[pid] = split_personality(doc)
                walker.walk(pid, sel[1], sel[0], True)
                env.forget(pid)
                for m in memo:
                    m.forget()
        current.clear()
    finally:
        if cache is not None:
            cache.close()
    unknown = sorted(set(personalities or ()) | set(by_cell)) if cells is not None else sorted(chosen or ())
    unknown = [p for p in unknown if p not in seen]
    if unknown:
        raise ConfigError(f"personalities not in {config.corpus}: {unknown}; known: {sorted(seen)}")
    return _run_plan(walker, [s.name for s in STEPS])


def plan_line(step: str, method: str, model: ModelConfig, *, calls: int, cached: int, prompt_tokens: int,
              completion_tokens: int, deduplicated: int = 0, note: str = "") -> PlanLine:
    """One row of a plan, priced for ``model``: its cost, whether a price is known (else why it shows $0) and
    which tokenizer counted it. The evaluation's plan and the curation's (``curation/plan.py``) both build
    their rows here, so a price or tokenizer rule changes in one place."""
    from .planning.tokens import has_own_tokenizer

    priced, price_note = _price_note(model)
    return PlanLine(step=step, method=method, model=model.name, calls=calls, cached=cached, deduplicated=deduplicated,
                    prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                    cost_usd=_cost(model, prompt_tokens, completion_tokens),
                    tokenizer="model" if has_own_tokenizer(model) else "estimate", priced=priced,
                    note="; ".join(x for x in (note, price_note) if x))


def _run_plan(walker, order: list[str]) -> RunPlan:
    rank = {s: i for i, s in enumerate(order)}
    lines = []
    for (step, method, name), t in walker.tallies.items():
        repeats = "; ".join(
            f"{n:,} same prompts as {m or '-'}" if s == step else f"{n:,} same prompts as {s} {m or '-'}"
            for (s, m), n in ((walker.labels[i], n) for i, n in t.repeats.most_common()))
        lines.append(plan_line(step, method, walker.models[name], calls=t.calls, cached=t.cached,
                               deduplicated=t.deduplicated, prompt_tokens=t.prompt_tokens,
                               completion_tokens=t.completion_tokens, note=repeats))
    return RunPlan(lines=tuple(sorted(lines, key=lambda ln: (rank[ln.step], ln.method, ln.model))))
