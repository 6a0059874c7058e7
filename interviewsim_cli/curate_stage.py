"""``run`` and ``plan`` with ``--transcripts DIR --manifest FILE``: the curation before the evaluation (issue 31).

``run`` plans the curation (the budget gate, when its model has a price), materialises the graph's curation
assets (``transcript_turns`` to ``prepared_input``, one partition per personality of the manifest) on the Dagster instance through the
run's gateway and cache (a re-run skips the personalities whose inputs did not change), prints what was kept,
written, excluded and refused, then evaluates what was written, as the rest of the same graph. ``plan`` prints the curation's calls first, then the evaluation's
when the corpus exists (before the first curation it does not: the evaluation's calls depend on the pairs
the curation finds).
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter

import typer

from interviewsim_core.id_lists import summarise_ids

from . import outcome
from .id_files import ids_line


def curate_before_run(cfg, personalities, yes: bool, is_tty, force: bool = False, verbose: bool = False) -> None:
    """Materialise the graph's curation (its assets, ``transcript_turns`` to ``prepared_input``) for the manifest's personalities on the instance, then
    print what was kept, written, excluded and refused; exit 7 when its plan is over budget and not accepted,
    exit 4 when no personality has a document to evaluate. Up-to-date partitions are skipped (``--force`` re-runs
    them, from the cache): only a personality whose transcripts, manifest rows or reviews changed is re-curated."""
    from interviewsim_core.curation.stage import curation_model
    from interviewsim_core.plan import has_price, plan_curation_of, usd_pair

    model = curation_model(cfg)
    typer.echo(f"curation: {cfg.transcripts} ({cfg.manifest}) -> {cfg.corpus}, model {model.name}")
    tags: dict[str, str] = {}
    if has_price(model):
        planned = plan_curation_of(cfg, personalities or None)
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
        from interviewsim_dagster.engine import APPROVE_TAG

        tags[APPROVE_TAG] = f"{planned.cost_usd + 0.005:.2f}"  # accepted: the run's own budget gate lets it through
    chosen = _materialise_curation(cfg, personalities, tags, force, verbose)
    written = _print_tables(cfg, chosen)
    if not written:
        typer.echo(f"no personality curated into {cfg.corpus}: nothing to evaluate", err=True)
        raise typer.Exit(outcome.EXIT_INPUT_REFUSED)


def _materialise_curation(cfg, personalities, tags: dict[str, str], force: bool, verbose: bool) -> list[str]:
    """(DAGSTER_HOME set up by the caller.) Register the manifest's personalities and run the curation's assets for them, stage by stage in this process
    (one stage: the worker process streams several), holding the data root's claim; returns the personalities."""
    import dagster as dg

    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline.study import StudyMismatch, writing
    from interviewsim_core.pipeline.steps import CURATION_STEPS
    from interviewsim_dagster.defs.corpus.partitions import PERSONALITY
    from interviewsim_dagster.definitions import build_definitions
    from interviewsim_dagster.launch import execute, plan_runs
    from interviewsim_dagster.registration import manifest_personalities

    def _fail(message: str, code: int = outcome.EXIT_USAGE) -> None:
        typer.echo(message, err=True)
        raise typer.Exit(code)

    named = manifest_personalities(cfg)
    unknown = [p for p in personalities or () if p not in named]
    if unknown:
        given, names = summarise_ids(unknown, "as given with --personalities"), summarise_ids(named, str(cfg.manifest))
        _fail(f"personalities not in the manifest {cfg.manifest}: {given}; it names {names}")
    chosen = [p for p in named if not personalities or p in personalities]
    defs = build_definitions(cfg)
    with dg.DagsterInstance.get() as instance, contextlib.ExitStack() as held:
        try:
            held.enter_context(writing(cfg, None, f"`interviewsim run` (pid {os.getpid()})"))
        except StudyMismatch as exc:
            _fail(str(exc))
        except ConfigError as exc:
            _fail(f"not started: {exc}", outcome.EXIT_ENVIRONMENT)
        known = set(instance.get_dynamic_partitions(PERSONALITY))
        new = [p for p in named if p not in known]
        if new:
            instance.add_dynamic_partitions(PERSONALITY, new)
            typer.echo(f"registered {len(new):,} personality partition(s) from the manifest: "
                       f"{ids_line(new, 'registered')}")
        specs = plan_runs(defs, instance, cfg.methods, chosen, None, ",".join(CURATION_STEPS))
        outcomes = execute(defs, instance, specs, progress=typer.echo, dagster_log_level="INFO" if verbose else "WARNING",
                           skip_up_to_date=not force, tags=tags, data_root=cfg.data_root)
    if not all(o.success for o in outcomes):
        typer.echo("curation failed: see the step errors above, or the run in the UI (interviewsim ui)", err=True)
        raise typer.Exit(outcome.EXIT_RUN_FAILED)
    return chosen


def _print_tables(cfg, personalities: list[str]) -> list[str]:
    """What the curation of each personality kept, wrote, excluded and refused (its ``prepared_input`` table);
    returns the personalities written."""
    from interviewsim_core.pipeline.storage import partition_path, read_frame

    written: list[str] = []
    rows = kept = 0
    lines: list[str] = []
    problems: list[str] = []
    reasons: Counter[str] = Counter()
    for pid in personalities:
        path = partition_path(cfg.data_root, "prepared_input", pid)
        if not path.is_file():
            lines.append(f"  refused {pid}: not curated (its run failed)")
            continue
        table = read_frame(path)
        transcripts = table[table["file"] != ""]
        rows, kept = rows + len(transcripts), kept + int(transcripts["kept"].sum())
        if bool(table["written"].any()):
            written.append(pid)
            lines.append(f"  wrote {cfg.corpus / pid / 'prepared_input.json'}: {int(transcripts['kept'].sum())} "
                         f"interviews kept of {len(transcripts)}, {int(transcripts['pairs'].sum())} QA pairs")
        else:
            lines.append(f"  refused {pid}: {table['refused'].iloc[0]}")
        lines += [f"  excluded {r.file}: {r.kind}: {r.reason}" for r in transcripts.itertuples() if r.kind and not r.kept]
        reasons.update(r.kind for r in transcripts.itertuples() if r.kind and not r.kept)
        problems += [p for p in str(table["problems"].iloc[0]).splitlines() if p and p not in problems]
    typer.echo(f"{rows} transcripts, {kept} kept by quality control and review: retention {kept / rows:.1%}"
               if rows else "no transcript")
    for line in lines:
        typer.echo(line)
    if reasons:
        typer.echo("excluded per reason: " + ", ".join(f"{k} {n}" for k, n in reasons.most_common()))
    if problems:
        typer.echo(f"{len(problems)} problem(s):", err=True)
        for p in problems:
            typer.echo(f"  - {p}", err=True)
    return written


def plan_of_curation(cfg):
    """(the curation's plan, whether ``cfg.corpus`` already holds a valid corpus the evaluation can be planned on)."""
    from interviewsim_core.errors import InputValidationError
    from interviewsim_core.loader import index_corpus
    from interviewsim_core.plan import plan_curation_of

    planned = plan_curation_of(cfg)
    try:
        return planned, bool(cfg.corpus.is_dir() and index_corpus(cfg.corpus))
    except InputValidationError:  # not curated yet, or half: the evaluation is planned after the curation
        return planned, False
