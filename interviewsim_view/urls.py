"""Permalinks of the explorer's pages, built in one place (templates, tests, the report and the
Dagster metadata all link through here, so a page's address is defined once).

A URL holds everything its page shows (ids in the path, filters in the query string), never a
session: pasted into a paper draft or an issue it opens the same rows on the same data root. An id
is one percent-encoded path segment (``A/B`` is ``A%2FB``); the app splits the raw path, so such an id
survives the server's decoding. The query forms ``/q?personality=&qa=`` and ``/personality?id=``
(addresses printed before issue 33) stay as aliases.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from interviewsim_core.report.explorer import explorer_command

__all__ = ["explorer_command", "explorer_url", "leaderboard", "question", "rows", "personality", "personality_index", "premise",
           "prompt", "disagree", "labels", "report", "curation", "curation_transcript", "DAGSTER_UI"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DAGSTER_UI = "http://127.0.0.1:3000"
"""Where ``interviewsim ui`` serves Dagster by default (its ``--port`` 3000): the explorer's link back."""


def explorer_url(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, path: str = "/") -> str:
    """The absolute address of a page on a running explorer (``interviewsim view`` prints it)."""
    return f"http://{host}:{port}{path}"


def _seg(value: str) -> str:
    return quote(str(value), safe="")


def _query(params: dict[str, object]) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "", 0) or k == "page" and v}
    return ("?" + urlencode(kept)) if kept else ""


def leaderboard(view: str | None = None, generator: str | None = None) -> str:
    """The leaderboard (``view``: common, all_valid, ...); ``generator``: that generator's rows and the shared
    calibration methods only."""
    return "/" + _query({"view": view, "generator": generator})


def question(personality_id: str, qa_id: str, generator: str | None = None) -> str:
    """One held-out question; ``generator``: that generator's answers and the shared calibration methods only."""
    return f"/q/{_seg(personality_id)}/{_seg(qa_id)}" + _query({"generator": generator})


def rows(**filters: object) -> str:
    """The browse page with these filters (``table``, ``personality``, ``method``, ``judge``, ``min``,
    ``max``, ``label``, ``status``, ``tag``, ``q``, ``generator``: one generator's methods and the shared
    calibration ones, ``page``)."""
    return "/rows" + _query(filters)


def disagree(**filters: object) -> str:
    return "/disagree" + _query(filters)


def personality(personality_id: str, generator: str | None = None) -> str:
    """Big Five levels of one personality; ``generator``: that generator's methods only (with the calibration)."""
    return f"/personality/{_seg(personality_id)}" + _query({"generator": generator})


def personality_index() -> str:
    """Every personality (``personality`` without an id)."""
    return "/personality"


def premise(**filters: object) -> str:
    return "/premise" + _query(filters)


def prompt(cache_key: str) -> str:
    return f"/prompt/{_seg(cache_key)}"


def labels() -> str:
    return "/labels"


def report() -> str:
    """The HTML report of the data root (``<data_root>/report/report.html``), served by the explorer: the
    Dagster UI links here, since a browser refuses a ``file://`` link from an http page."""
    return "/report"


def curation() -> str:
    """Every transcript of the corpus folder given by ``--corpus``, with the retention rate."""
    return "/curation"


def curation_transcript(file: str, **extra: str) -> str:
    """One transcript of the curation (``file`` as the manifest names it, with its ``/``s) for review."""
    return "/curation/transcript" + _query({"file": file, **extra})
