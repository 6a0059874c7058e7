"""Permalinks of the explorer's pages, built in one place (templates, tests, the report and the
Dagster metadata all link through here, so a page's address is defined once).

A URL holds everything its page shows (ids in the path, filters in the query string), never a
session: pasted into a paper draft or an issue it opens the same rows on the same data root.
"""

from __future__ import annotations

from urllib.parse import quote, urlencode

from interviewsim_core.report.html import explorer_command

__all__ = ["explorer_command", "explorer_url", "leaderboard", "question", "rows", "personality", "personality_index", "premise",
           "prompt", "disagree", "labels"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def explorer_url(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, path: str = "/") -> str:
    """The absolute address of a page on a running explorer (``interviewsim view`` prints it)."""
    return f"http://{host}:{port}{path}"


def _seg(value: str) -> str:
    return quote(str(value), safe="")


def _query(params: dict[str, object]) -> str:
    kept = {k: v for k, v in params.items() if v not in (None, "", 0) or k == "page" and v}
    return ("?" + urlencode(kept)) if kept else ""


def leaderboard(view: str | None = None) -> str:
    return "/" + _query({"view": view})


def question(personality_id: str, qa_id: str) -> str:
    """Ids go in the query string, not the path: an id may hold ``/`` (``A/B`` is a valid personality),
    which a path segment cannot carry through every server and proxy."""
    return "/q?" + urlencode({"personality": personality_id, "qa": qa_id})


def rows(**filters: object) -> str:
    """The browse page with these filters (``table``, ``personality``, ``method``, ``judge``, ``min``,
    ``max``, ``label``, ``status``, ``tag``, ``q``, ``page``)."""
    return "/rows" + _query(filters)


def disagree(**filters: object) -> str:
    return "/disagree" + _query(filters)


def personality(personality_id: str) -> str:
    return "/personality?" + urlencode({"id": personality_id})


def personality_index() -> str:
    """Every personality (``personality`` without an id)."""
    return "/personality"


def premise(**filters: object) -> str:
    return "/premise" + _query(filters)


def prompt(cache_key: str) -> str:
    return f"/prompt/{_seg(cache_key)}"


def labels() -> str:
    return "/labels"
