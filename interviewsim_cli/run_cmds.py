"""``interviewsim run | demo | register``: the Dagster-backed commands (``ui`` is in ``ui_cmds``).

Every command works on the project's Dagster instance (``DAGSTER_HOME``; ``<repo>/.dagster_home``
when unset, created with the repo's ``dagster.yaml``), so headless runs appear in ``interviewsim ui``.
Settings come from ``EvalConfig.load``: config file (``--config`` or ``INTERVIEWSIM_CONFIG``) <
``INTERVIEWSIM_*`` environment variables < flags. The definitions are built from that config in
this process (``build_definitions``); the UI's code location builds its own from the environment it
is started in. ``ui`` loads one named file (``INTERVIEWSIM_CONFIG`` when set, else
``$DAGSTER_HOME/interviewsim.yaml``); ``run`` and ``demo`` record their effective config in
``$DAGSTER_HOME/interviewsim_last_run.yaml`` and write the UI's file only on the first run of an
instance or with ``--save-ui-config`` (``pipeline/config_files.py`` says why).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import typer

from interviewsim_core.id_lists import fits_whole
from interviewsim_core.pipeline.config_files import LAST_RUN_CONFIG, UI_CONFIG

from . import outcome
from .id_files import ids_line

REPO_ROOT = Path(__file__).resolve().parents[1]


def ensure_dagster_home() -> Path:
    """``DAGSTER_HOME``, defaulting to ``<repo>/.dagster_home``; created, with the repo's dagster.yaml copied in."""
    home = Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(home)
    src = REPO_ROOT / "dagster.yaml"
    if src.is_file() and not (home / "dagster.yaml").exists():
        tmp = home / ".dagster.yaml.tmp"
        shutil.copyfile(src, tmp)
        os.replace(tmp, home / "dagster.yaml")
    elif src.is_file() and "compute_logs:" not in (home / "dagster.yaml").read_text(errors="replace"):
        # An instance made before issue 33 keeps Dagster's tail -F step-log capture (docs/DESIGN.md).
        typer.echo(f"warning: {home / 'dagster.yaml'} has no compute_logs section: Dagster's default step-log "
                   "capture starts `tail -F` processes that can outlive this command and hold its output; "
                   f"copy the compute_logs section of {src} into it", err=True)
    return home


def _fail(message: str, code: int = 2) -> None:
    typer.echo(message, err=True)
    raise typer.Exit(code)


def _config(overrides: dict[str, Any], config_file: Optional[Path]):
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline.config import EvalConfig

    env = dict(os.environ)
    if config_file is not None:
        env["INTERVIEWSIM_CONFIG"] = str(config_file)
    try:
        return EvalConfig.load_resolved(env=env, overrides=overrides)
    except ConfigError as exc:
        _fail(str(exc))


def save_last_run_config(cfg, home: Path, save_ui_config: bool = False) -> Path:
    """Record ``cfg`` in ``<home>/interviewsim_last_run.yaml``; make it the UI's config only when asked.

    The UI loads ``<home>/interviewsim.yaml`` (``ui_config.UI_CONFIG``): this writes that file when
    it does not exist yet (the first run on an instance gives the UI its config) or when
    ``save_ui_config`` is true (``interviewsim run --save-ui-config``), never otherwise, so a run
    with other flags does not change the UI's definitions at its next reload; the UI compares the
    record with its own config and says so when they differ (``ui_config.last_run_note``). Both
    files are written atomically, in ``ui_config.saved_form`` (no credentials). Returns the record's path.
    """
    import yaml

    from interviewsim_core.pipeline.config_files import saved_form

    text = yaml.safe_dump(saved_form(cfg), sort_keys=False)
    record = _write_atomic(home / LAST_RUN_CONFIG, "# Written by every `interviewsim run` (or demo): the config it used. "
                           "`interviewsim ui` does not load it; it shows a note when it differs from the UI's.\n" + text)
    ui_config = home / UI_CONFIG
    if save_ui_config or not ui_config.exists():
        _write_atomic(ui_config, "# The config `interviewsim ui` loads (unless INTERVIEWSIM_CONFIG is set). Written by the "
                      "first `interviewsim run` on this instance or by `interviewsim run --save-ui-config`; edit it freely.\n"
                      + text)
    return record


def _write_atomic(path: Path, text: str) -> Path:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return path


def _split(value: Optional[str]) -> Optional[list[str]]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else None


def _register(instance, corpus: str):
    from interviewsim_dagster.registration import register_corpus

    reg = register_corpus(instance, corpus)
    if reg.added:
        typer.echo(f"registered {len(reg.added):,} personality partition(s): {ids_line(reg.added, 'registered')}")
    if reg.known:
        typer.echo(f"already registered: {len(reg.known):,}")
    for p in reg.problems:
        typer.echo(f"not registered: {p}", err=True)
    return reg


@dataclass(frozen=True)
class Budget:
    """How ``run`` treats a plan above ``max_cost_usd``: ``yes`` accepts it; otherwise a terminal is asked."""

    yes: bool = False


def _is_tty() -> bool:
    return sys.stdin.isatty()


PLAN_TAG_PREFIX = "interviewsim/plan_"
"""Run tags holding the plan's totals on every Dagster run ``interviewsim run`` launches."""


def _check_budget(cfg, personalities: list[str], methods, budget: Budget) -> dict[str, str]:
    """Plan the run, print its total, and stop (exit 7) when it is over budget and not accepted.

    Returns the plan totals as run tags. A run whose models are all offline costs nothing and is
    not planned (planning it would take as long as running it).
    """
    from interviewsim_core.errors import InputValidationError
    from interviewsim_core.plan import plan_run

    from interviewsim_core.plan import has_price

    models = [*cfg.effective_generators, cfg.builder, cfg.premise_judge, *cfg.judges]
    if not any(has_price(m) for m in models):
        if not all(m.model.startswith("offline/") for m in models):
            typer.echo("plan: no configured model has a price (a local server's model): $0, not planned; "
                       "`interviewsim plan` counts the calls")
        return {}
    try:
        result = plan_run(cfg, personalities, methods)
    except InputValidationError as exc:
        # Runs go on over a corpus with refused files (their personalities are skipped); the plan
        # reads the whole corpus, so it cannot be computed then. Say so rather than guess.
        typer.echo(f"warning: no plan (and no budget check): the corpus has refused files ({len(exc.problems)} "
                   "problem(s)); `interviewsim plan --personalities ...` plans the valid ones", err=True)
        return {}
    t = result.totals()
    rates = " at batch rates" if cfg.batch else ""
    typer.echo(f"plan: {t['calls']:,} model calls, {t['to_send']:,} to send ({t['cached']:,} cached, "
               f"{t['deduplicated']:,} repeats sent once), "
               f"{t['prompt_tokens']:,} prompt tokens, about ${t['cost_usd']:.2f}{rates} "
               "(per step: interviewsim plan)")
    limit = cfg.max_cost_usd
    if limit is not None and result.cost_usd > limit and not budget.yes:
        from interviewsim_core.plan import over_budget

        over = over_budget(result, limit, cfg.generator_of if len(cfg.effective_generators) > 1 else None)
        if not _is_tty():
            _fail(f"{over}: not started; pass --yes to accept it, or raise --max-cost", outcome.EXIT_OVER_BUDGET)
        if not typer.confirm(f"{over}. Start anyway?", default=False):
            _fail("not started", outcome.EXIT_OVER_BUDGET)
    from interviewsim_dagster.engine import APPROVE_TAG

    # Each run plans its own partitions again (the gate every launch route passes); the user accepted this
    # plan's total, so the runs carry it as their approval.
    return {**{PLAN_TAG_PREFIX + k: str(v) for k, v in t.items()}, APPROVE_TAG: f"{result.cost_usd:.6f}"}


def _check_human_labels(cfg) -> None:
    """Read the human labels file before any model call: the report step reads it last, and a typo
    found only there would come after the whole evaluation had been paid for."""
    if cfg.human_labels_csv is None:
        return
    from interviewsim_core.errors import InputValidationError
    from interviewsim_core.metrics.human_agreement import load_human_labels

    try:
        load_human_labels(cfg.human_labels_csv)
    except InputValidationError as exc:
        _fail(f"human_labels_csv: {exc}", outcome.EXIT_USAGE)


def _materialise(cfg, personalities, methods, assets, verbose: bool, force: bool = False,
                 budget: Budget | None = None, save_ui_config: bool = False, in_process: bool = False) -> int:
    unwritable = outcome.unwritable_paths(
        {"data root": Path(cfg.data_root), "DAGSTER_HOME": Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home")},
        {"LLM cache": Path(cfg.effective_cache_path)})
    if unwritable:
        _fail("\n".join(unwritable), outcome.EXIT_ENVIRONMENT)
    _check_human_labels(cfg)
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline import worker
    from interviewsim_core.pipeline.study import StudyMismatch, writing

    with contextlib.ExitStack() as held:
        try:  # two configurations never write one data root, at once or in turn (data_root_claims, study)
            if held.enter_context(writing(cfg, methods, f"`interviewsim run` (pid {os.getpid()})")):
                typer.echo(f"data root {cfg.data_root} is claimed by this run: runs of another configuration, the UI's "
                           "automation included, refuse to start while this run writes it")
        except StudyMismatch as exc:
            _fail(str(exc), outcome.EXIT_USAGE)
        except ConfigError as exc:
            _fail(f"not started: {exc}", outcome.EXIT_ENVIRONMENT)
        if not in_process:
            worker.spawn()  # before Dagster's import: it imports while this process registers and plans
        try:
            return _materialise_on(cfg, personalities, methods, assets, verbose, force, budget, save_ui_config,
                                   in_process)
        finally:
            worker.discard()
            worker.wait_exited()  # after the summary: the worker's own exit overlapped it


def _materialise_on(cfg, personalities, methods, assets, verbose: bool, force: bool, budget: Budget | None,
                    save_ui_config: bool, in_process: bool) -> int:
    import dagster as dg

    from interviewsim_core.errors import ConfigError
    from interviewsim_dagster import slots
    from interviewsim_dagster.definitions import build_definitions
    from interviewsim_dagster.launch import execute, leave_status_current, plan_runs

    home = ensure_dagster_home()
    defs = build_definitions(cfg, run_methods=methods)
    typer.echo(f"config of this run: {save_last_run_config(cfg, home, save_ui_config)} "
               f"(`interviewsim ui` loads {home / UI_CONFIG}{', now this one' if save_ui_config else ''})")
    with dg.DagsterInstance.get() as instance:
        typer.echo(f"Dagster instance: {home}")
        typer.echo(f"corpus: {cfg.corpus}")
        reg = _register(instance, str(cfg.corpus))
        chosen = outcome.runnable(reg, personalities, typer.echo, str(cfg.corpus))
        if chosen is None:
            _fail(f"no valid personality to evaluate in {cfg.corpus}: see the problems above", outcome.EXIT_INPUT_REFUSED)
        try:
            specs = plan_runs(defs, instance, cfg.methods, chosen, methods, assets)
        except ConfigError as exc:
            _fail(str(exc))
        tags = _check_budget(cfg, chosen, methods, budget) if budget is not None else {}
        for line in slots.free_dead_runs(instance):
            typer.echo(line)
        started = time.time()
        versions = None if force else _split_versions(cfg, chosen)
        try:
            with slots.SlotWatcher(instance, typer.echo):
                outcomes = execute(defs, instance, specs, progress=typer.echo,
                                   dagster_log_level="INFO" if verbose else "WARNING",
                                   skip_up_to_date=not force, tags=tags, split_versions=versions,
                                   worker_config=None if in_process else cfg,
                                   recording_defs=None if in_process else build_definitions(
                                       cfg, run_methods=methods, pools=False), data_root=cfg.data_root)
        except (KeyboardInterrupt, dg.DagsterExecutionInterruptedError):
            typer.echo("\ninterrupted: the partitions that finished are written and every answered call is cached; "
                       "run the same command again to resume (completed calls are not paid again)", err=True)
            return outcome.EXIT_INTERRUPTED
        from interviewsim_dagster.check_results import failed_checks

        graph = defs.resolve_asset_graph()
        # What the UI reads, current before anyone opens it (also when nothing ran: an earlier run may have left it behind).
        typer.echo(f"the UI's partition and check statuses brought up to date ({leave_status_current(instance, graph):.1f} s)")
        recorded = failed_checks(instance, graph, chosen, methods or cfg.methods)
    from interviewsim_core.llm.cache import cache_write_errors

    # Answers kept in the tables but not cached (disk full, read-only file): a path could not be written.
    cache_problems = cache_write_errors(cfg.effective_cache_path, started)
    for problem in cache_problems:
        typer.echo(f"error: {problem}", err=True)
    typer.echo(f"Parquet tables under {cfg.data_root}")
    # Skipping up-to-date partitions (``--force`` off) can make fewer or more runs than planned specs; a
    # failure stops at once, so "planned" is what ran when everything succeeded.
    ran_all = all(o.success for o in outcomes)
    n_planned = len(outcomes) if ran_all else max(len(specs), len(outcomes))
    summary = outcome.summarise(outcomes, n_planned, reg.problems, reg.stale, Path(cfg.data_root),
                                chosen, methods or cfg.methods, cfg.invalid_rate_threshold, recorded)
    if summary.run_failed:
        typer.echo("run failed: see the step errors above, or the run in the UI (interviewsim ui)", err=True)
    code = summary.exit_code()
    if cache_problems:  # a path could not be written (the step that failed on it is why the run failed)
        code = outcome.EXIT_ENVIRONMENT
    lines = summary.lines()
    if code != summary.exit_code():  # the last line names the code the shell gets
        lines[-1] = f"exit code {code}: {outcome.EXIT_CODES[code]}"
    for line in lines:
        typer.echo(line, err=code != 0)
    return code


def _split_versions(cfg, personalities: list[str]) -> dict[str, str]:
    """Each chosen personality's split hash, so an edited corpus file re-runs its partitions."""
    from interviewsim_core.loader import index_corpus, load_document
    from interviewsim_core.split import split_personality
    from interviewsim_dagster.versioning import split_version

    try:
        files = index_corpus(cfg.corpus)
    except Exception:  # noqa: BLE001 - refused files: registration already listed them; version what loads
        from interviewsim_dagster.registration import scan_corpus

        files = scan_corpus(str(cfg.corpus)).valid
    return {p: split_version(split_personality(load_document(files[p]))) for p in personalities if p in files}


def _run_options(
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Corpus folder (one sub-folder per personality)."),
    transcripts: Optional[Path] = typer.Option(
        None, "--transcripts", help="Transcripts folder to curate into --corpus first (needs --manifest; docs/CURATION.md)."),
    manifest: Optional[Path] = typer.Option(None, "--manifest", help="Manifest (CSV/JSON) of --transcripts."),
    data_root: Optional[str] = typer.Option(
        None, "--data-root", help="Where the Parquet tables go: a folder or a URL (s3://bucket/prefix, gs://, file://)."),
    methods: Optional[str] = typer.Option(None, "--methods", help="Comma-separated methods to run (default: all configured)."),
    personalities: Optional[str] = typer.Option(None, "--personalities", help="Comma-separated personality ids (default: all)."),
    generator: Optional[str] = typer.Option(None, "--generator", help="litellm model string of the generator."),
    generators: Optional[str] = typer.Option(
        None, "--generators", help="Comma-separated generators compared in one study (the first is --generator); "
        "the others' methods are keyed <label>/<method> (README, 'Comparing generators')."),
    judges: Optional[str] = typer.Option(None, "--judges", help="Comma-separated judge model strings."),
    builder: Optional[str] = typer.Option(None, "--builder", help="Model building fact summaries, atomic and MCQ items."),
    premise_judge: Optional[str] = typer.Option(None, "--premise-judge", help="Model of the two-pass premise judge."),
    api_base: Optional[str] = typer.Option(None, "--api-base", help="Base URL for every model given without its own."),
    embedding_model: Optional[str] = typer.Option(
        None, "--embedding-model", help="Embedder of the retrieval methods (Memory-k, Hybrid): a litellm embedding "
        "model, e.g. openai/text-embedding-3-small (the paper's), or offline/hashing. Required with real models "
        "and retrieval methods; give offline/hashing to retrieve offline on purpose."),
    embedding_api_base: Optional[str] = typer.Option(
        None, "--embedding-api-base", help="Base URL of the embedding server (default: --api-base)."),
    concurrency: Optional[int] = typer.Option(None, "--concurrency", min=1, help="Calls in flight per model."),
    batch: Optional[bool] = typer.Option(
        None, "--batch/--online", help="Send every model's calls through the provider's Batch API (about half "
        "price, answers within 24 h; OpenAI only) / one request each (config `batch`, default online)."),
    max_cost: Optional[float] = typer.Option(
        None, "--max-cost", min=0, help="Budget in USD (config `max_cost_usd`, default 10): a run whose plan costs "
        "more asks for confirmation, or refuses (exit 7) without --yes when not on a terminal."),
    config: Optional[Path] = typer.Option(None, "--config", help="YAML/TOML config file (flags win over it)."),
    local: bool = typer.Option(
        False, "--local", help="Local-server profile (pipeline/local_profile.py) for whatever the config leaves "
        "unset: concurrency 1, api_base http://127.0.0.1:8088/v1, per model timeout 900 s, 1 retry, 1 re-ask."),
) -> None:
    """The options ``run`` and ``plan`` share (the template ``with_run_options`` adds to a command)."""


_RUN_OPTION_NAMES = tuple(inspect.signature(_run_options).parameters)


@dataclass(frozen=True)
class RunSelection:
    """What ``run`` and ``plan`` resolved from the shared options: the config and the partitions asked for."""

    cfg: Any
    personalities: Optional[list[str]]
    methods: Optional[list[str]]


def with_run_options(command):
    """Give ``command`` the options of ``_run_options``; it receives them resolved, as ``selection``.

    One list of options for ``run`` and ``plan``, so the plan always describes the run the same flags start.
    """
    import typing

    shared = inspect.signature(_run_options).parameters
    hints = typing.get_type_hints(_run_options)
    own_hints = typing.get_type_hints(command)
    own = [p.replace(annotation=own_hints.get(n, p.annotation))
           for n, p in inspect.signature(command).parameters.items() if n != "selection"]

    @functools.wraps(command)
    def wrapper(**kwargs):
        options = {n: kwargs.pop(n) for n in _RUN_OPTION_NAMES}
        return command(selection=_resolve_run_options(**options), **kwargs)

    params = [p.replace(annotation=hints[n]) for n, p in shared.items()] + own
    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__
    return wrapper


def _resolve_run_options(*, config: Optional[Path], methods: Optional[str], personalities: Optional[str],
                         max_cost: Optional[float], local: bool, **flags: Any) -> RunSelection:
    cfg = _config({}, config)
    chosen_methods = _split(methods)
    overrides: dict[str, Any] = {**flags, "max_cost_usd": max_cost}
    if chosen_methods:
        # Methods not yet in the configured set become partitions too; configured ones keep their order.
        overrides["methods"] = list(dict.fromkeys([*cfg.methods, *chosen_methods]))
    cfg = _config(overrides, config)
    if local:
        from interviewsim_core.pipeline.local_profile import apply_local_profile

        cfg = apply_local_profile(cfg)
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline.config import check_retrieval_embedder

    try:
        check_retrieval_embedder(cfg, chosen_methods)  # the methods this run materialises, not every configured one
    except ConfigError as exc:
        _fail(f"error: {exc}")
    return RunSelection(cfg, _split(personalities), list(cfg.method_keys(chosen_methods)) if chosen_methods else None)


@with_run_options
def run(
    selection: RunSelection,
    yes: bool = typer.Option(False, "--yes", "-y", help="Start even when the plan costs more than --max-cost."),
    assets: Optional[str] = typer.Option(None, "--assets", help="Asset name(s), comma-separated, or a Dagster selection (e.g. 'content_similarity+')."),
    verbose: bool = typer.Option(False, "--verbose", help="Also print Dagster's own step log."),
    force: bool = typer.Option(False, "--force", help="Re-run partitions that are up to date (current code, unchanged inputs)."),
    save_ui_config: bool = typer.Option(False, "--save-ui-config", help="Also make this run's config the one `interviewsim ui` loads ($DAGSTER_HOME/interviewsim.yaml)."),
    in_process: bool = typer.Option(False, "--in-process", help="Make the calls in this process, in each stage run, stage after stage, instead of in one worker process that streams every stage's calls while the runs record them (the default; used only when no other run of the instance is in progress)."),
) -> None:
    """Materialise the evaluation graph headless on the project's Dagster instance (runs show in the UI).

    --methods restricts the run to those methods (all personalities: a single-method backfill);
    --personalities to those people (all methods: a single-personality backfill). The configured
    method set (config file / INTERVIEWSIM_METHODS) defines the partitions; --methods may add to it.
    Partitions already materialised with the current code on unchanged inputs are skipped (--force
    re-runs them), so a new method does not re-materialise every personality's shared assets.
    Before the first call the run is planned (``interviewsim plan``): its total is printed, and a
    total above --max-cost needs a confirmation (or --yes).
    """
    cfg = selection.cfg
    # A disk that fills up mid-run (DAGSTER_HOME's SQLite, a Parquet write): one line naming the path, exit 3.
    places = {"LLM cache": Path(cfg.effective_cache_path), "data root": Path(cfg.data_root),
              "DAGSTER_HOME": Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home")}
    with outcome.exit_on_environment_error(places, lambda line: typer.echo(line, err=True)):
        code = _curate_then_materialise(cfg, yes, selection.personalities, selection.methods, assets, verbose,
                                        force=force, budget=Budget(yes=yes), save_ui_config=save_ui_config,
                                        in_process=in_process)
    raise typer.Exit(code)


def _curate_then_materialise(cfg, yes: bool, personalities, methods, assets, verbose: bool, **materialise) -> int:
    """What ``run`` does with a config, for ``run`` and ``demo`` alike: the curation first when the config names
    transcripts (into ``cfg.corpus``, curate_stage.py), then the evaluation graph."""
    if cfg.transcripts is not None:
        from .curate_stage import curate_before_run

        ensure_dagster_home()
        curate_before_run(cfg, personalities, yes, _is_tty, force=materialise.get("force", False), verbose=verbose)
    return _materialise(cfg, personalities, methods, assets, verbose, **materialise)


@with_run_options
def plan(
    selection: RunSelection,
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON (totals and one object per line)."),
) -> None:
    """Print what ``run`` with the same flags would call and cost, without calling any model.

    One line per step, method and model: calls, calls already cached, prompt tokens (the model's
    tokenizer where litellm has it, else an estimate), expected completion tokens, USD from
    litellm's local price map (batch rates with --batch). Retrieval methods are planned with the
    offline embedder: the examples retrieved differ, their number and size do not.
    """
    import json

    from interviewsim_core.errors import ConfigError, InputValidationError
    from interviewsim_core.plan import plan_run

    curation = None
    if selection.cfg.transcripts is not None:  # the curation's calls, before its first one (curate_stage.py)
        from .curate_stage import plan_of_curation

        curation, corpus_ready = plan_of_curation(selection.cfg)
        if not as_json:
            typer.echo(f"curation (transcripts -> corpus):\n{curation.table()}")
        if not corpus_ready:
            typer.echo(json.dumps({"curation": curation.to_json()}, indent=2) if as_json else
                       f"evaluation: planned once the curation has written {selection.cfg.corpus}")
            return
    try:
        result = plan_run(selection.cfg, selection.personalities, selection.methods)
    except ConfigError as exc:
        _fail(f"error: {exc}")
    except InputValidationError as exc:
        _fail(f"error: {exc}", outcome.EXIT_INPUT_REFUSED)
    several = len(selection.cfg.effective_generators) > 1
    by_generator = result.by_generator(selection.cfg.generator_of) if several else None
    if as_json:
        typer.echo(json.dumps({**result.to_json(), **({"by_generator": by_generator} if several else {}),
                               **({"curation": curation.to_json()} if curation else {})}, indent=2))
    else:
        typer.echo(result.table())
        if by_generator:
            typer.echo(generator_lines(by_generator))


def generator_lines(by_generator: dict) -> str:
    """The plan's calls to send and cost per generator (its answers and their judgments), a line each."""
    return "by generator:\n" + "\n".join(f"  {label}: {v['to_send']:,} calls to send, ${v['cost_usd']:.4f}"
                                         for label, v in sorted(by_generator.items()))

DEMO_INPUT = "demo_input"
"""The demo's inputs, under its data root: the sample's raw transcripts (``transcripts/``) and their curation (``corpus/``)."""


def demo(
    data_root: Path = typer.Option(Path("data_out"), "--data-root", help="Where the Parquet tables go."),
    verbose: bool = typer.Option(False, "--verbose", help="Also print Dagster's own step log."),
) -> None:
    """Curate the shipped synthetic sample from raw transcripts, then evaluate it, with the offline model (no keys,
    no network), and compare it with a second offline generator (``offline/terse``).

    The sample's 60 interviews are written as raw transcripts (plain text, WebVTT, SRT, diarised JSON) and a
    manifest under ``<data root>/demo_input/transcripts/``; ``run``'s curation stage curates them into
    ``<data root>/demo_input/corpus/`` (its ``categories.csv`` fills the report's breakdown by personality
    category, its tags the breakdown by question tag), and the evaluation reads that corpus.
    """
    from interviewsim_core.curation.corpus import CATEGORIES_NAME
    from interviewsim_core.curation.sample_transcripts import write_sample_transcripts
    from interviewsim_core.pipeline.config import OFFLINE_MODEL, OFFLINE_TERSE_MODEL, EvalConfig
    from interviewsim_core.strategies import DEFAULT_METHODS
    from interviewsim_core.strategies.calibration import CALIBRATION_METHODS

    inputs = data_root.expanduser().resolve() / DEMO_INPUT
    corpus = inputs / "corpus"
    places = {"data root": data_root, "DAGSTER_HOME": Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home")}
    with outcome.exit_on_environment_error(places, lambda line: typer.echo(line, err=True)):
        manifest = write_sample_transcripts(inputs / "transcripts")
    overrides = {"data_root": data_root, "transcripts": inputs / "transcripts", "manifest": manifest, "corpus": corpus,
                 "categories_csv": corpus / CATEGORIES_NAME,
                 # Two generators (issue 44): the report's generator table and paired tests compare them.
                 "generators": f"{OFFLINE_MODEL},{OFFLINE_TERSE_MODEL}", "judges": OFFLINE_MODEL,
                 "builder": OFFLINE_MODEL, "premise_judge": OFFLINE_MODEL,
                 # The paper's PS judge stability check costs nothing offline, so the demo's report shows it.
                 "ps_stability": True,
                 # The calibration methods (ceiling and floors, docs/CALIBRATION.md) cost no generation
                 # call, so the demo's report shows normalised scores.
                 "methods": (*DEFAULT_METHODS, *CALIBRATION_METHODS)}
    env = {k: v for k, v in os.environ.items() if not k.startswith("INTERVIEWSIM_")}
    cfg = EvalConfig.load_resolved(env=env, overrides=overrides)
    typer.echo("InterviewSim demo: the shipped synthetic sample, from raw transcripts (text, WebVTT, SRT, diarised "
               "JSON) through the curation to the report, offline model (a smoke-test baseline, not a judge of quality)")
    with outcome.exit_on_environment_error(places, lambda line: typer.echo(line, err=True)):
        code = _curate_then_materialise(cfg, True, None, None, None, verbose)
    root = Path(cfg.data_root)
    if code == 0:
        from interviewsim_core.pipeline.steps import report_paths

        report = report_paths(root)
        typer.echo("")
        typer.echo(f"Transcripts:   {cfg.transcripts}  (manifest: {cfg.manifest})")
        typer.echo(f"Curated:       {cfg.corpus}  (categories: {cfg.categories_csv})")
        typer.echo(f"Parquet files: {root}/<asset>/<personality_id>[/<method>].parquet "
                   f"({sum(1 for _ in root.rglob('*.parquet'))} files)")
        typer.echo(f"Leaderboard:   {root / 'leaderboard.parquet'}")
        if report.html.is_file():
            typer.echo(f"Report:        {report.html}  (numbers as JSON: {report.json})")
        else:
            # The report step succeeded or the run would have failed: a missing file is a bug worth a non-zero exit.
            typer.echo(f"Report:        missing, expected at {report.html}", err=True)
            code = 1
        typer.echo("Open the UI:   make ui   (or .venv/bin/interviewsim ui), then http://127.0.0.1:3000")
        from interviewsim_view.urls import explorer_command, explorer_url, report as report_page

        typer.echo(f"Explorer:      {explorer_command(str(root))}, then {explorer_url()} "
                   f"(the report at {explorer_url(path=report_page())})")
    raise typer.Exit(code)


def register_cmd(
    corpus: Path = typer.Option(..., "--corpus", help="Corpus folder (or one prepared_input.json)."),
) -> None:
    """Add the corpus' valid personalities as partitions; invalid files are reported, not registered (exit 1)."""
    import dagster as dg

    unwritable = outcome.unwritable_paths({"DAGSTER_HOME": Path(os.environ.get("DAGSTER_HOME") or REPO_ROOT / ".dagster_home")})
    if unwritable:
        _fail("\n".join(unwritable), outcome.EXIT_ENVIRONMENT)
    ensure_dagster_home()
    with dg.DagsterInstance.get() as instance:
        reg = _register(instance, str(corpus.resolve()))
    if fits_whole(reg.stale):
        for pid in reg.stale:
            typer.echo(f"registered but not in this corpus: {pid!r} (`interviewsim unregister` removes it)", err=True)
    else:
        typer.echo(f"registered but not in this corpus: {len(reg.stale):,} personalities, "
                   f"{ids_line(reg.stale, 'not_in_corpus')}; `interviewsim unregister --not-in {corpus}` removes them",
                   err=True)
    raise typer.Exit(1 if reg.problems else 0)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("plan")(plan)
    app.command("demo")(demo)
    app.command("register")(register_cmd)
