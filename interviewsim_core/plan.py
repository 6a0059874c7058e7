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

from collections.abc import Collection, Iterable, Sequence

from .llm.types import ModelConfig
from .planning.lines import PlanLine, RunPlan, plan_line
from .planning.tokens import EXPECTED_COMPLETION_TOKENS, TOKENS_PER_WORD, completion_tokens, mean_answer_tokens

# The planner's public face (``planning/`` is its machinery): its plans, lines and estimates are named here.
__all__ = ["EXPECTED_COMPLETION_TOKENS", "TOKENS_PER_WORD", "PlanLine", "RunPlan", "completion_tokens",
           "has_price", "mean_answer_tokens", "over_budget", "plan_curation_of", "plan_line", "plan_run", "usd_pair"]


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


def over_budget(plan: RunPlan, limit: float, generator_of=None) -> str:
    """"the plan costs $X, more than max_cost_usd $Y", and with ``generator_of`` (``EvalConfig.generator_of``, given
    when the study has several generators) each generator's share and the one whose calls push it over.

    Why: with several generators the total alone does not tell a researcher what to drop; the generator whose
    answers and judgments, left out, bring the plan within the budget (the dearest such one) does. The CLI and
    the Dagster budget gate say the same sentence.
    """
    cost, budget = usd_pair(plan.cost_usd, limit)
    text = f"the plan costs {cost}, more than max_cost_usd {budget}"
    if generator_of is None:
        return text
    shares = sorted(plan.by_generator(generator_of).items(), key=lambda kv: (-kv[1]["cost_usd"], kv[0]))
    pushers = [label for label, v in shares if label != "shared" and plan.cost_usd - v["cost_usd"] <= limit]
    parts = [f"{label} {usd_pair(float(v['cost_usd']), limit)[0]} ({int(v['to_send']):,} calls)"
             for label, v in shares]
    text += " (" + "; ".join(parts) + ")"
    if pushers:
        text += f": generator {pushers[0]}'s calls push it over (without them it is within the budget)"
    else:
        text += ": no single generator's calls push it over (leaving out any one still exceeds the budget)"
    return text


def has_price(model: ModelConfig) -> bool:
    """True when calling ``model`` costs money by litellm's price map (batch rates too): the budget gate
    plans a run only then, since a plan of unpriced or offline models is $0 and cannot exceed a budget."""
    from .llm.transport import cost_of

    if model.model.startswith("offline/"):
        return False
    return cost_of(model.model, 1_000_000, 0) > 0 or cost_of(model.model, 0, 1_000_000) > 0


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


def plan_curation_of(cfg, personalities: list[str] | None = None, steps: Collection[str] | None = None) -> RunPlan:
    """What the graph's curation of ``personalities`` (default: the manifest's) will call, before any call
    (``curation/plan.py``); ``steps``: only the lines of these curation assets (a run of some of them).

    Here, beside the evaluation's planner, because choosing the lines of some assets reads the step table,
    which lists the curation's steps: the curation itself never imports the graph."""
    from .curation.plan import plan_curation
    from .curation.stage import curation_model

    planned = plan_curation(cfg.transcripts, cfg.manifest, curation_model(cfg), cfg.effective_cache_path,
                            personalities)
    if steps is None:
        return planned
    from .curation.run import STEPS as CONTRACT_OF
    from .pipeline.steps import STEPS

    contracts = {c for s in STEPS if s.curation and s.name in steps and s.calls_models for c in s.contracts}
    return RunPlan(lines=tuple(line for line in planned.lines if CONTRACT_OF.get(line.step) in contracts))
