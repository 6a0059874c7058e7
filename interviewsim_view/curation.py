"""The explorer's curation pages: the paper's human verification of a curated corpus (issue 31, step 6).

``/curation`` lists every transcript of the last ``interviewsim curate`` into the corpus folder
(``interviewsim view --corpus DIR``): personality, file, date, quality control's verdict and reason,
the reviewer's decision, kept or excluded, and the retention rate beside the paper's 73.5%.
``/curation/transcript?file=F`` shows the model's verdict and the attributed turns side by side with
the QA pairs drawn from them, and the accept/reject form. Decisions go through
``interviewsim_core.curation.review`` (``review.csv``, atomic; the next ``curate`` honours them); the
pages read the folder on every request, so a decision shows at once (as *pending* until the re-run).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from interviewsim_core.errors import ConfigError

from . import urls
from .study import same_origin

ACCEPT_REASON = "passes the checks: identity, conversational format, content quality"
"""The reason recorded when a reviewer accepts without writing one (review.csv needs a reason)."""


def routes(corpus: Path | None, render: Callable[..., Response]) -> list[Route]:
    """The curation routes over one corpus folder (``None``: the explorer was started without ``--corpus``)."""
    from interviewsim_core.curation import review as rv

    def state() -> rv.ReviewState:
        if corpus is None:
            raise HTTPException(409, "no corpus folder: start the explorer with "
                                     "`interviewsim view --corpus DIR` (the --out folder of interviewsim curate)")
        try:
            return rv.load_review(corpus)
        except ConfigError as exc:
            raise HTTPException(409, str(exc)) from None

    def listing(request: Request) -> Response:
        s = state()
        return render(request, "curation_list.html.j2", s=s, paper=rv.PAPER_RETENTION, corpus=str(corpus))

    def transcript(request: Request) -> Response:
        file = request.query_params.get("file", "")
        s = state()
        try:
            t = rv.transcript_review(corpus, file, s)
        except (ConfigError, KeyError, ValueError) as exc:  # a provenance file edited by hand
            raise HTTPException(409, f"the curation output of {file!r} cannot be read: {exc}") from None
        if t is None:
            raise HTTPException(404, f"no transcript {file!r} in the last curation of {corpus}")
        paired = {i: p.qa_id for p in t.pairs for i in (p.question_turn, *p.response_turns)}
        return render(request, "curation_transcript.html.j2", t=t, paired=paired, checks=rv.CHECKS,
                      saved=request.query_params.get("saved", ""), corpus=str(corpus))

    async def decide(request: Request) -> Response:
        same_origin(request, "decisions are recorded from the explorer's own pages only")
        form = await request.form()
        file, decision = str(form.get("file", "")), str(form.get("decision", ""))
        s = state()
        if s.row(file) is None:
            raise HTTPException(404, f"no transcript {file!r} in the last curation of {corpus}")
        try:
            if decision not in ("accept", "reject"):
                raise ValueError("the decision is accept or reject")
            reason = rv.reason_text(str(form.get("check", "")), str(form.get("reason", "")))
            if decision == "reject" and not str(form.get("check", "")).strip():
                raise ValueError(f"a rejection names the check that failed: one of {list(rv.CHECKS)}")
            from starlette.concurrency import run_in_threadpool

            await run_in_threadpool(rv.record_decision, corpus, file, decision, reason or ACCEPT_REASON)
        except ValueError as exc:
            raise HTTPException(400, f"decision not recorded: {exc}") from None
        return RedirectResponse(urls.curation_transcript(file, saved=decision), status_code=303)

    return [Route("/curation", listing, methods=["GET"]), Route("/curation/transcript", transcript, methods=["GET"]),
            Route("/curation/decision", decide, methods=["POST"])]
