"""The explorer's study pages: the paper's human validation protocol (``interviewsim_core.validation``).

``/studies`` lists and creates studies (a seeded stratified sample of the data root's tables);
``/study?id=S&reviewer=R`` shows reviewer R their next task, with only what a reviewer may see (no
judge scores, methods, gold option nor the other reviewer's label); ``/study/adjudicate?id=S`` is
the queue of disagreements, where an adjudicator sees both reviews and writes a justification;
``/study/report?id=S`` the figures the report's human validation section prints; ``/study/labels.csv``
every label row. Studies live under a local data root (``<data_root>/studies``); a URL root has none.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode, urlsplit

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

from interviewsim_core.errors import ConfigError

STUDY_TABLES = ("heldout_split", "generations", "content_similarity", "factual_consistency", "fact_summary",
                "mcq_items")


def _text_skip() -> frozenset[str]:
    """The report's unread columns less the texts a reviewer reads."""
    from interviewsim_core.report.loading import UNREAD_COLUMNS

    return UNREAD_COLUMNS - {"generated", "response", "summary", "explanation"}


def study_url(study_id: str, reviewer: str = "", **extra: str) -> str:
    q = {"id": study_id, **({"reviewer": reviewer} if reviewer else {}), **extra}
    return "/study?" + urlencode(q)


def same_origin(request: Request, message: str) -> None:
    """Refuse a POST from another origin (403), so a web page elsewhere cannot write a reviewer's files."""
    origin = request.headers.get("origin")
    if origin and urlsplit(origin).netloc != request.headers.get("host", ""):
        raise HTTPException(403, message)


def routes(root: Path | None, render: Callable[..., Response]) -> list[Route]:
    """The study routes over a local data root (``None``: a URL root; every page says studies need a folder)."""
    from interviewsim_core import validation as v

    def need_root() -> Path:
        if root is None:
            raise HTTPException(409, "studies are stored under a local data root; this one is a URL")
        return root

    def load(study_id: str):
        try:
            return v.load_study(need_root(), study_id)
        except ConfigError as exc:
            raise HTTPException(404, str(exc)) from None

    def studies(request: Request) -> Response:
        ids = v.list_studies(root) if root is not None else []
        rows = []
        for sid in ids:
            s = v.load_study(root, sid)
            labels = v.load_labels(root, s)
            states = v.task_states(s, labels)
            rows.append({"id": sid, "tasks": len(s.tasks), "reviewers": s.reviewers, "labels": len(labels),
                         "queue": sum(st["status"] == "disagreement" for st in states.values()),
                         "done": sum(st["status"] in ("agreed", "adjudicated") for st in states.values())})
        return render(request, "study_list.html.j2", studies=rows, local=root is not None,
                      error=request.query_params.get("error", ""))

    async def create(request: Request) -> Response:
        same_origin(request, "studies are changed from the explorer's own pages only")
        form = await request.form()
        sid = str(form.get("study_id", "")).strip()
        reviewers = tuple(r.strip() for r in str(form.get("reviewers", "")).split(",") if r.strip())
        try:
            seed, per_kind = int(str(form.get("seed", "0"))), int(str(form.get("per_kind", "20")))
        except ValueError:
            raise HTTPException(400, "seed and tasks per kind are whole numbers") from None
        from starlette.concurrency import run_in_threadpool

        from interviewsim_core.report.loading import load_tables

        def make():
            tables = load_tables(need_root(), STUDY_TABLES, skip=_text_skip())
            return v.create_study(need_root(), sid, tables, seed=seed, per_kind=per_kind, reviewers=reviewers)

        try:
            await run_in_threadpool(make)
        except ConfigError as exc:
            raise HTTPException(400, f"study not created: {exc}") from None
        return RedirectResponse("/studies", status_code=303)

    def task_page(request: Request) -> Response:
        q = request.query_params
        s = load(q.get("id", ""))
        reviewer = q.get("reviewer", "").strip()
        labels = v.load_labels(root, s)
        todo = v.queue_for(s, labels, reviewer) if reviewer else []
        task = todo[0] if todo else None
        return render(request, "study_task.html.j2", s=s, reviewer=reviewer, remaining=len(todo),
                      view=v.reviewer_view(task) if task else None, saved=q.get("saved", ""))

    async def save(request: Request) -> Response:
        same_origin(request, "studies are changed from the explorer's own pages only")
        form = await request.form()
        sid, reviewer = str(form.get("study_id", "")), str(form.get("reviewer", "")).strip()
        s = load(sid)
        fields: dict[str, Any] = {k: str(form.get(k)) for k in ("choice", "confidence", "correct", "right_label",
                                                               "contradicts", "answer", "justification")
                                  if form.get(k) not in (None, "")}
        role = "adjudication" if form.get("role") == "adjudication" else "review"
        try:
            label = v.Label(task_id=str(form.get("task_id", "")), reviewer=reviewer, role=role, **fields)
            from starlette.concurrency import run_in_threadpool

            await run_in_threadpool(v.add_label, need_root(), s, label)
        except (ConfigError, ValueError) as exc:
            raise HTTPException(400, f"label not saved: {exc}") from None
        if role == "adjudication":
            return RedirectResponse("/study/adjudicate?" + urlencode({"id": sid, "adjudicator": reviewer}),
                                    status_code=303)
        return RedirectResponse(study_url(sid, reviewer, saved=label.task_id), status_code=303)

    def adjudicate(request: Request) -> Response:
        q = request.query_params
        s = load(q.get("id", ""))
        labels = v.load_labels(root, s)
        states = v.task_states(s, labels)
        queue = [{"view": v.reviewer_view(t), "reviews": states[t.task_id]["reviews"]}
                 for t in v.adjudication_queue(s, labels)]
        return render(request, "study_adjudicate.html.j2", s=s, queue=queue, adjudicator=q.get("adjudicator", ""))

    def report(request: Request) -> Response:
        s = load(request.query_params.get("id", ""))
        labels = v.load_labels(root, s)
        figures = v.validation_figures(s, labels)
        return render(request, "study_report.html.j2", s=s, figures=figures.to_dict("records"), n_labels=len(labels))

    def export(request: Request) -> Response:
        s = load(request.query_params.get("id", ""))
        return PlainTextResponse(v.labels_csv(s, v.load_labels(root, s)), media_type="text/csv")

    return [Route("/studies", studies, methods=["GET"]), Route("/studies", create, methods=["POST"]),
            Route("/study", task_page, methods=["GET"]), Route("/study/label", save, methods=["POST"]),
            Route("/study/adjudicate", adjudicate), Route("/study/report", report),
            Route("/study/labels.csv", export)]
