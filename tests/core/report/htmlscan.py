"""A tiny HTML reader for the tests: sections, tables and numeric cells of the report page."""

from __future__ import annotations

from html.parser import HTMLParser


class ReportPage(HTMLParser):
    """Collects section ids/statuses, table names, img sources and every cell with a data-key."""

    def __init__(self, html: str):
        super().__init__()
        self.sections: dict[str, str] = {}
        self.tables: list[str] = []
        self.images: list[str] = []
        self.cells: dict[tuple[str, str], tuple[str, str | None]] = {}
        self.links: list[str] = []
        self.classes: dict[tuple[str, str], str] = {}
        self._table = ""
        self._cell: dict | None = None
        self._text: list[str] = []
        self._in_ci = False
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections[a["id"]] = a.get("data-status", "")
        elif tag == "table":
            self._table = a.get("data-table", "")
            self.tables.append(self._table)
        elif tag == "img":
            self.images.append(a.get("src", ""))
        elif tag in ("link", "script"):
            self.links.append(a.get("href") or a.get("src") or tag)
        elif tag == "td" and "data-key" in a:
            self._cell, self._text = a, []
        elif tag == "span" and self._cell is not None and "ci" in (a.get("class") or ""):
            self._in_ci = True

    def handle_endtag(self, tag):
        if tag == "span":
            self._in_ci = False
        if tag == "td" and self._cell is not None:
            key = (self._table, self._cell["data-key"])
            self.cells[key] = ("".join(self._text).strip(), self._cell.get("data-v"))
            self.classes[key] = self._cell.get("class") or ""
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None and not self._in_ci:
            self._text.append(data)
