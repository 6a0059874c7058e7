"""The explorer as a Starlette application: routes, HTML rendering, the label form.

Starlette (with uvicorn) because both already come with dagster-webserver (no new framework in the
install), they are small, well kept and typed, and plain sync endpoints run in Starlette's thread
pool, so a slow DuckDB query never blocks another page. Pages are server-rendered Jinja2 with
autoescaping on for every template (a ``<script>`` in a question is text), and need no JavaScript.

Read-only on results: the writes are a human label, to the labels CSV (``labels.py``), a study's
labels (``study.py``) and a curation reviewer's decision (``curation.py``, ``--corpus``). A POST
from another origin is refused, so a web page elsewhere cannot fill a reviewer's file. With
``--corpus`` and no data root the explorer serves the curation pages only (a corpus curated but not
yet evaluated has no tables).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from interviewsim_core.dataroot import is_local, local_path
from interviewsim_core.errors import InputValidationError

from . import pages, urls
from .labels import LabelError, LabelFile, check
from .store import Store
from .curation import routes as curation_routes
from .study import routes as study_routes

__all__ = ["ViewConfig", "create_app", "default_labels_path"]

TEMPLATES = Path(__file__).parent / "templates"
WARM_TABLES = ("content_similarity", "factual_consistency", "generations", "mcq_answers", "heldout_split",
               "premise_verdicts")
"""Tables whose file footers are read in the background at start (the browse pages scan them all)."""


@dataclass(frozen=True)
class ViewConfig:
    data_root: str | None
    """The run's tables; None: only the curation pages of ``corpus``."""
    labels: Path | None = None
    cache: Path | None = None
    blind: bool = False
    corpus: Path | None = None
    """A curated corpus folder (``interviewsim curate --out``) for the curation review pages."""


def default_labels_path(store: Store) -> Path | None:
    """``<data_root>/human_labels.csv`` for a local data root; none for a URL (the report reads labels
    from a local file, so a URL root needs ``--labels``)."""
    return Path(store.label) / "human_labels.csv" if store.local else None


def _fmt(value: Any, percent: bool = False, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value * 100:.1f}%" if percent else f"{value:.{digits}f}"
    return str(value)


def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals.update(urls=urls, fmt=_fmt)
    env.filters["pretty_json"] = lambda v: json.dumps(json.loads(v), indent=2, ensure_ascii=False) if v else ""
    return env


def _renderer(env: jinja2.Environment, **base: Any):
    """``render(request, template, status, **ctx)`` with what every page's header needs (``base``)."""

    def render(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
        return HTMLResponse(env.get_template(template).render(request=request, **base, **ctx), status_code=status)

    return render


def _error_page(render):
    """Every HTTP error as the explorer's error page (status and the message saying what to do)."""

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return render(request, "error.html.j2", status=exc.status_code, status_code=exc.status_code,
                      message=exc.detail)

    return http_error


def _corpus_only_app(config: ViewConfig) -> Starlette:
    """The explorer over a curated corpus folder alone: the curation review pages, ``/`` leading to them."""
    render = _renderer(_env(), data_root="", blind=False, labels_path=None, has_corpus=True)

    app = Starlette(routes=[Route("/", lambda request: RedirectResponse(urls.curation())),
                            *curation_routes(config.corpus, render)],
                    exception_handlers={HTTPException: _error_page(render)})
    app.state.store = None
    app.state.labels_path = None
    return app


def create_app(config: ViewConfig) -> Starlette:
    if config.data_root is None:
        return _corpus_only_app(config)
    store = Store(config.data_root)
    labels_path = config.labels or default_labels_path(store)
    label_file = LabelFile(labels_path) if labels_path else None
    cache_path = config.cache or (Path(store.label) / ".cache" / "llm.sqlite" if store.local else None)
    render = _renderer(_env(), data_root=store.label, blind=config.blind, labels_path=labels_path,
                       has_corpus=config.corpus is not None)

    def leaderboard(request: Request) -> Response:
        return render(request, "leaderboard.html.j2", board=pages.leaderboard(store, request.query_params.get("view", ""),
                                                                        request.query_params.get("generator", "")),
                      has_board=store.has("leaderboard"))

    def question(request: Request) -> Response:
        ids = _ids(request, "/q/", 2)
        pid, qa = ids if ids else (request.query_params.get("personality", ""), request.query_params.get("qa", ""))
        data = pages.question(store, pid, qa, request.query_params.get("generator", ""))
        if data is None:
            raise HTTPException(404, f"no held-out question {qa!r} of personality {pid!r} under {store.label}")
        mine, label_problem = {}, ""
        try:
            mine = label_file.for_question(pid, qa) if label_file else {}
        except InputValidationError as exc:  # the file was edited by hand into something the report refuses
            label_problem = f"the labels file cannot be read: {exc}"
        return render(request, "question.html.j2", pid=pid, qa=qa, d=data, mine=mine, label_problem=label_problem,
                      saved=request.query_params.get("saved", ""), reviewer=request.cookies.get("reviewer", ""),
                      can_label=label_file is not None)

    def rows(request: Request) -> Response:
        f = pages.Filters.parse(dict(request.query_params))
        return render(request, "rows.html.j2", b=pages.browse(store, f, config.blind), f=f,
                      methods=store.distinct(pages.BROWSE_TABLES[f.table]["asset"], "method")
                      if f.table != "heldout" and store.has(pages.BROWSE_TABLES[f.table]["asset"]) else [],
                      judges=store.distinct("content_similarity", "judge") if store.has("content_similarity") else [],
                      people=store.personalities() if store.has("heldout_split") else [],
                      tables=pages.BROWSE_TABLES)

    def disagree(request: Request) -> Response:
        q = request.query_params
        if config.blind:
            raise HTTPException(403, "blind mode: judges' scores are hidden, and this page ranks by them")
        return render(request, "disagree.html.j2",
                      d=pages.disagree(store, q.get("judge", ""), q.get("personality", ""), _int(q.get("page"))),
                      judges=store.distinct("content_similarity", "judge") if store.has("content_similarity") else [])

    def personality_index(request: Request) -> Response:
        return render(request, "personalities.html.j2", people=pages.personalities(store))

    def personality(request: Request) -> Response:
        ids = _ids(request, "/personality/", 1)
        pid = ids[0] if ids else request.query_params.get("id", "")
        if not pid:
            return personality_index(request)
        data = pages.personality(store, pid, request.query_params.get("generator", ""))
        if not data["grid"] and not store.files("heldout_split", pid):
            raise HTTPException(404, f"no personality {pid!r} under {store.label}")
        return render(request, "personality.html.j2", pid=pid, d=data)

    def premise(request: Request) -> Response:
        q = request.query_params
        return render(request, "premise.html.j2", d=pages.premise(
            store, q.get("verdict", ""), q.get("kind", ""), q.get("personality", ""), q.get("label", ""),
            _int(q.get("page"))))

    def prompt(request: Request) -> Response:
        key = request.path_params["key"]
        if cache_path is None or not cache_path.is_file():
            raise HTTPException(404, f"no model-call cache at {cache_path} (start with --cache FILE)")
        from interviewsim_core.llm.cache import SqliteCache

        cache = SqliteCache(cache_path)
        try:
            entry = cache.get(key)
        finally:
            cache.close()
        if entry is None:
            raise HTTPException(404, f"call {key} is not in the cache {cache_path}")
        return render(request, "prompt.html.j2", key=key, entry=entry,
                      command=f"interviewsim cache show {key} --cache {cache_path}")

    def report(request: Request) -> Response:
        from interviewsim_core.pipeline.steps import report_paths

        html = report_paths(store.root).html
        if not html.exists():
            raise HTTPException(404, f"no report at {html} yet: materialise the report asset, or run "
                                     f"interviewsim report --data-root {store.label}")
        return HTMLResponse(html.read_text(encoding="utf-8"))

    def labels_page(request: Request) -> Response:
        try:
            items = label_file.labels() if label_file else []
        except InputValidationError as exc:
            raise HTTPException(500, f"the labels file cannot be read: {exc}") from None
        return render(request, "labels.html.j2", items=items,
                      report_command=(f"interviewsim report --data-root {store.label} --human-labels {labels_path}"
                                      if labels_path else ""))

    async def save_label(request: Request) -> Response:
        if label_file is None:
            raise HTTPException(409, "no labels file: this data root is a URL; start the explorer with --labels FILE")
        origin = request.headers.get("origin")
        if origin and urlsplit(origin).netloc != request.headers.get("host", ""):
            raise HTTPException(403, "labels are saved from the explorer's own pages only")
        form = await request.form()
        pid, qa = str(form.get("personality_id", "")), str(form.get("qa_id", ""))
        back = urls.question(pid, str(form.get("question_qa_id", qa)))
        try:
            label = check(pid, str(form.get("method", "")), qa, str(form.get("metric", "")), str(form.get("value", "")))
            from starlette.concurrency import run_in_threadpool

            await run_in_threadpool(label_file.save, label, str(form.get("reviewer", "")))
        except (LabelError, InputValidationError) as exc:
            raise HTTPException(400, f"label not saved: {exc}") from None
        resp = RedirectResponse(f"{back}?saved={label.metric}", status_code=303)
        resp.set_cookie("reviewer", " ".join(str(form.get("reviewer", "")).split())[:120], samesite="strict",
                        httponly=True)
        return resp

    def labels_csv(request: Request) -> Response:
        if not labels_path or not labels_path.is_file():
            return PlainTextResponse("personality_id,method,qa_id,metric,value\n", media_type="text/csv")
        return PlainTextResponse(labels_path.read_text(encoding="utf-8"), media_type="text/csv")

    routes = [
        Route("/", leaderboard), Route("/rows", rows), Route("/disagree", disagree),
        Route("/q", question), Route("/q/{ids:path}", question), Route("/personality", personality),
        Route("/personality/{ids:path}", personality), Route("/premise", premise), Route("/prompt/{key}", prompt),
        Route("/report", report),
        Route("/labels", labels_page, methods=["GET"]), Route("/labels", save_label, methods=["POST"]),
        Route("/labels.csv", labels_csv),
        # The paper's human validation protocol (issue 32): its own module and templates.
        *study_routes(local_path(store.root) if store.local else None, render),
        # The curation's human verification (issue 31, step 6) over --corpus.
        *curation_routes(config.corpus, render),
    ]
    app = Starlette(routes=routes, exception_handlers={HTTPException: _error_page(render)})
    import threading

    threading.Thread(target=store.warm, args=(WARM_TABLES,), name="explorer-warm", daemon=True).start()
    app.state.store = store
    app.state.labels_path = labels_path
    return app


def _ids(request: Request, prefix: str, n: int) -> list[str] | None:
    """The ``n`` ids of a permalink path after ``prefix``, split on the raw path: the server decodes
    ``%2F`` to ``/`` in ``path``, so an id holding ``/`` is only one segment before decoding."""
    from urllib.parse import unquote

    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if raw else request.url.path
    path = path.split("?", 1)[0]
    if not path.startswith(prefix):
        return None
    parts = path[len(prefix):].split("/")
    if len(parts) != n or not all(parts):
        raise HTTPException(404, f"{prefix}{'/'.join('<id>' for _ in range(n))} expected, got {path}")
    return [unquote(p) for p in parts]


def _int(value: str | None) -> int:
    try:
        return max(0, int(value or 0))
    except ValueError:
        return 0


def data_root_problem(data_root: str) -> str | None:
    """Why the explorer cannot open this data root, or None."""
    from interviewsim_core.dataroot import as_root

    try:
        root = as_root(data_root)
    except Exception as exc:  # noqa: BLE001 - an fsspec backend missing for the scheme
        return f"cannot open {data_root}: {exc}"
    if is_local(root):
        path = local_path(root)
        if not path.is_dir():
            return f"--data-root {path} is not a folder"
        return None
    try:
        root.fs
    except Exception as exc:  # noqa: BLE001
        return f"cannot open {data_root}: {exc}"
    return None


def corpus_problem(corpus: Path | None) -> str | None:
    """Why the curation pages cannot open ``--corpus`` (not a folder, no curation output), or None."""
    if corpus is None:
        return None
    from interviewsim_core.curation.review import load_review
    from interviewsim_core.errors import ConfigError

    try:
        load_review(corpus)
    except ConfigError as exc:
        return f"--corpus {exc}"
    return None
