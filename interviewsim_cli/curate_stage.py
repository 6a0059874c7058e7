"""``run`` and ``plan`` with ``--transcripts DIR --manifest FILE``: the curation before the evaluation (issue 31).

``run`` plans the curation (the budget gate, when its model has a price), curates into ``--corpus`` through
the run's gateway (its cache: a re-run curates for free), prints what was kept, written, excluded and
refused, then evaluates what was written. ``plan`` prints the curation's calls first, then the evaluation's
when the corpus exists (before the first curation it does not: the evaluation's calls depend on the pairs
the curation finds).
"""

from __future__ import annotations

import typer

from . import outcome


def curate_before_run(cfg, yes: bool, is_tty) -> None:
    """Curate ``cfg.transcripts`` into ``cfg.corpus``; exit 7 when its plan is over budget and not accepted,
    exit 4 when no personality could be written."""
    from interviewsim_core.curation.stage import curate_corpus, curation_model, plan_curation_of
    from interviewsim_core.factories import make_gateway
    from interviewsim_core.plan import has_price, usd_pair

    from .curate_cmds import print_problems, print_summary

    model = curation_model(cfg)
    typer.echo(f"curation: {cfg.transcripts} ({cfg.manifest}) -> {cfg.corpus}, model {model.name}")
    if has_price(model):
        planned = plan_curation_of(cfg)
        t = planned.totals()
        typer.echo(f"curation plan: {t['calls']:,} model calls, {t['to_send']:,} to send, about ${t['cost_usd']:.2f}")
        limit = cfg.max_cost_usd
        if limit is not None and planned.cost_usd > limit and not yes:
            cost, budget = usd_pair(planned.cost_usd, limit)
            over = f"the curation's plan costs {cost}, more than max_cost_usd {budget}"
            if not is_tty():
                typer.echo(f"{over}: not started; pass --yes to accept it, or raise --max-cost", err=True)
                raise typer.Exit(outcome.EXIT_OVER_BUDGET)
            if not typer.confirm(f"{over}. Start anyway?", default=False):
                typer.echo("not started", err=True)
                raise typer.Exit(outcome.EXIT_OVER_BUDGET)
    with make_gateway(cfg) as gateway:
        result = curate_corpus(cfg, gateway)
        gateway.raise_for_cache_errors()
    print_summary(result, model.name, cfg.corpus)
    if result.problems:
        print_problems(result)
    if not result.written:
        typer.echo(f"no personality curated into {cfg.corpus}: nothing to evaluate", err=True)
        raise typer.Exit(outcome.EXIT_INPUT_REFUSED)


def plan_of_curation(cfg):
    """(the curation's plan, whether ``cfg.corpus`` already holds a valid corpus the evaluation can be planned on)."""
    from interviewsim_core.curation.stage import plan_curation_of
    from interviewsim_core.errors import InputValidationError
    from interviewsim_core.loader import index_corpus

    planned = plan_curation_of(cfg)
    try:
        return planned, bool(cfg.corpus.is_dir() and index_corpus(cfg.corpus))
    except InputValidationError:  # not curated yet, or half: the evaluation is planned after the curation
        return planned, False
