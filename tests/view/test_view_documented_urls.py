"""Every explorer address the docs and the report print answers on a running ``interviewsim view`` (issue 33:
the README's ``/q/<personality>/<qa_id>`` and ``/personality/<id>`` answered 404).

The addresses are read from README.md, docs/*.md and the served report: absolute ones on the explorer's
default port, and the backquoted page paths of the explorer's routes, placeholders filled with ids of the
test's data root. A placeholder this test does not know fails it, so a newly documented form is checked too.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from pathlib import Path

from interviewsim_view import urls

from .corpus import PEOPLE

REPO = Path(__file__).resolve().parents[2]
ABSOLUTE = re.compile(r"http://(?:127\.0\.0\.1|localhost):" + str(urls.DEFAULT_PORT) + r"(/[^\s`'\")<>]*)?")
ROUTES = ("q", "personality", "rows", "disagree", "premise", "labels", "report")
PAGE_PATH = re.compile(r"`(/(?:" + "|".join(ROUTES) + r")\b[^`\s]*)`")
PLACEHOLDERS = {"personality": PEOPLE[0], "personality_id": PEOPLE[0], "id": PEOPLE[0], "qa_id": f"{PEOPLE[0]}_Q4_1",
                "label": "extractive"}  # the generator label of the run's offline/extractive


def documented_paths(texts: list[str]) -> set[str]:
    found: set[str] = set()
    for text in texts:
        found |= {m.group(1) or "/" for m in ABSOLUTE.finditer(text)}
        found |= {m.group(1) for m in PAGE_PATH.finditer(text)}
    return {p.rstrip(".,;:") for p in found}


def fill(path: str) -> str:
    def one(m: re.Match) -> str:
        assert m.group(1) in PLACEHOLDERS, f"unknown placeholder <{m.group(1)}> in a documented address {path}"
        return PLACEHOLDERS[m.group(1)]

    return re.sub(r"<([a-z_]+)>", one, path)


def test_every_documented_explorer_address_answers(server):
    base, _ = server
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    report = urllib.request.urlopen(base + urls.report(), timeout=30).read().decode("utf-8")
    paths = documented_paths([d.read_text(encoding="utf-8") for d in docs] + [report])
    # The README documents the question and personality permalinks; the report is served for the Dagster link.
    assert {"/q/<personality>/<qa_id>", "/personality/<id>"} <= paths, sorted(paths)
    failed = {}
    for path in sorted(paths):
        try:
            status = urllib.request.urlopen(base + fill(path), timeout=30).status
        except urllib.error.HTTPError as exc:
            status = exc.code
        if status != 200:
            failed[path] = status
    assert not failed, failed
