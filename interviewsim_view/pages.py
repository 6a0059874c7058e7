"""What each explorer page shows, as plain data from the ``Store`` (no HTTP here, so the queries
are testable and benchmarkable without a server). Every SQL text below is a constant or built
from the fixed column maps; request values are bound parameters."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from interviewsim_core.metrics.normalised import COMMON_VIEW_NOTE
from interviewsim_core.metrics.registry import METRICS
from interviewsim_core.metrics.statistics import interval_note
from interviewsim_core.strategies import GENERATOR_SEPARATOR, generator_and_method, order_methods, split_key
from interviewsim_core.strategies.calibration import CALIBRATION_METHODS

from . import urls
from .store import PAGE_SIZE, STATUSES, Page, Store

__all__ = ["Filters", "BROWSE_TABLES", "Generators", "generators", "leaderboard", "question", "browse", "disagree", "personality",
           "personalities", "premise"]

_CALL = "status, raw_output, parse_error, error, cache_key"

BROWSE_TABLES: dict[str, dict[str, Any]] = {
    "cs": {"asset": "content_similarity", "title": "Content Similarity judgments",
           "cols": f"personality_id, method, judge, qa_id, score AS value, explanation, {_CALL}",
           "search": ("explanation",), "order": "personality_id, method, judge, qa_id"},
    "fc": {"asset": "factual_consistency", "title": "Factual Consistency judgments",
           "cols": f"personality_id, method, judge, qa_id, label AS value, explanation, {_CALL}",
           "search": ("explanation",), "order": "personality_id, method, judge, qa_id"},
    "gen": {"asset": "generations", "title": "Generated answers",
            "cols": f"personality_id, method, NULL AS judge, qa_id, question, generated, strategy, context_state, {_CALL}",
            "search": ("question", "generated"), "order": "personality_id, method, qa_id"},
    "heldout": {"asset": "heldout_split", "title": "The person's held-out answers",
                "cols": "personality_id, NULL AS method, NULL AS judge, qa_id, question, response, tags, "
                        "'ok' AS status, NULL AS raw_output, NULL AS parse_error, NULL AS error, NULL AS cache_key",
                "search": ("question", "response"), "order": "personality_id, \"order\""},
    "mcq": {"asset": "mcq_answers", "title": "MCQ answers",
            "cols": f"personality_id, method, NULL AS judge, qa_id, item_id, n_options, chosen_label, correct_label, "
                    f"correct, {_CALL}",
            "search": (), "order": "personality_id, method, item_id"},
}
"""Browse key -> the table, the columns a row shows, the text columns searched, the tie-break order of a sort."""


@dataclass
class Filters:
    """The browse filters, straight from the query string (all optional, validated here)."""

    table: str = "cs"
    personality: str = ""
    method: str = ""
    judge: str = ""
    min: int | None = None
    max: int | None = None
    label: str = ""
    status: str = ""
    tag: str = ""
    q: str = ""
    sort: str = ""
    generator: str = ""
    page: int = 0
    problems: list[str] = field(default_factory=list)

    @classmethod
    def parse(cls, params: dict[str, str]) -> Filters:
        f = cls(problems=[])
        for name in ("table", "personality", "method", "judge", "label", "status", "tag", "q", "sort", "generator"):
            setattr(f, name, (params.get(name) or getattr(f, name)).strip())
        if f.table not in BROWSE_TABLES:
            f.problems.append(f"unknown table {f.table!r}; showing cs")
            f.table = "cs"
        for name in ("min", "max", "page"):
            raw = (params.get(name) or "").strip()
            if raw:
                try:
                    setattr(f, name, int(raw))
                except ValueError:
                    f.problems.append(f"{name} must be an integer, got {raw!r}")
        f.page = max(0, f.page or 0)
        if f.status and f.status not in (*STATUSES, "bad"):
            f.problems.append(f"unknown status {f.status!r}")
            f.status = ""
        if len(f.q) > 200:
            f.q = f.q[:200]
        return f

    def link(self, **changes: object) -> str:
        values = {k: getattr(self, k) for k in ("table", "personality", "method", "judge", "min", "max", "label",
                                                "status", "tag", "q", "sort", "generator", "page")}
        values.update(changes)
        return urls.rows(**values)


@dataclass(frozen=True)
class Generators:
    """The generators behind some method keys (issue 44) and the one a page is narrowed to.

    The study's first generator keeps the plain method names; its label is ``config.generator_label`` of the model
    its generation rows name (``model``: the configured label, else the model string). Every other generator's keys
    are ``<label>/<method>``; the calibration methods call no generator and belong to all (label "")."""

    first: str
    first_model: str
    labels: tuple[str, ...]
    """The first generator's label (when a plain generation method is there), then the others', sorted."""
    chosen: str = ""
    """The generator the page shows ("" = all); the calibration methods stay (they are every generator's scale)."""
    problem: str = ""

    @property
    def several(self) -> bool:
        return len(self.labels) > 1

    def of(self, key: str) -> tuple[str, str]:
        """(generator label, method) of a method key; label "" for a calibration method."""
        return generator_and_method(key, self.first)

    def keep(self, key: str) -> bool:
        return not self.chosen or self.of(key)[0] in ("", self.chosen)

    def title(self, label: str) -> str:
        """How a page names a generator: the first one with the model its rows name."""
        if label == self.first and self.first_model and self.first_model != label:
            return f"{label} ({self.first_model})"
        return label

    def ordered(self, keys: Iterable[str]) -> list[str]:
        """``keys`` grouped by method (in ``order_methods`` order), each method's generators in ``labels`` order."""
        rank = {label: i for i, label in enumerate(self.labels)}
        keys = list(dict.fromkeys(keys))
        methods = order_methods({self.of(k)[1] for k in keys})
        return sorted(keys, key=lambda k: (methods.index(self.of(k)[1]), rank.get(self.of(k)[0], len(rank)),
                                           self.of(k)[0]))


def generators(store: Store, keys: Iterable[str], chosen: str = "", personality_id: str | None = None) -> Generators:
    """The generators of these method keys, the first one's model read from one generation file of a plain
    generation method (of ``personality_id`` when given); an unknown ``chosen`` label is a ``problem`` (and the
    page shows every generator)."""
    from interviewsim_core.pipeline.config import model_label
    from interviewsim_core.report.generators import FIRST_GENERATOR  # no generation row names the first's model

    keys = set(keys)
    plain = [k for k in order_methods(keys) if split_key(k)[0] is None and k not in CALIBRATION_METHODS]
    keyed = {label for label, _ in map(split_key, keys) if label is not None}
    first_model = ""
    # one generator and no filter: nothing shows its label, so no read (a page costs what it cost before)
    for key in plain[:1] if keyed or chosen.strip() else ():
        files = store.files("generations", personality_id, key)[:1]
        got = store.query(f"SELECT model FROM {store.scan('files')} WHERE model IS NOT NULL LIMIT 1",
                          {"files": files}) if files else []
        first_model = str(got[0]["model"]) if got else ""
    first = model_label(first_model) if first_model else FIRST_GENERATOR
    others = sorted(keyed - {first})
    labels = ((first,) if plain else ()) + tuple(others)
    problem = ""
    chosen = chosen.strip()
    if chosen and chosen not in labels:
        problem = (f"no generator {chosen!r} here; showing every generator. The generators are: "
                   f"{', '.join(labels) or 'none (no generation method)'}")
        chosen = ""
    return Generators(first=first, first_model=first_model, labels=labels, chosen=chosen, problem=problem)


def _metric_link(metric: str, method: str, judge: str | None) -> str:
    m = next((x for x in METRICS if x.name == metric), None)
    if m is None:
        return urls.rows(method=method)
    key = m.family.key
    if key == "cs":
        return urls.rows(table="cs", method=method, judge=judge or "", sort="asc")
    if key == "fc":
        return urls.rows(table="fc", method=method, judge=judge or "", label="Contradiction")
    if key == "ps":
        return urls.personality_index()
    return urls.rows(table="mcq", method=method, label=str(m.family.n_options or ""))


def leaderboard(store: Store, view: str = "", generator: str = "") -> dict[str, Any]:
    """The pipeline's leaderboard table (small: one row per method, judge, metric, view), pivoted; with several
    generators each row names its generator, the rows grouped by method, and ``generator`` keeps one generator's
    rows and the shared calibration methods."""
    rows = store.select("leaderboard", "SELECT * FROM {T}")
    views = sorted({str(r["view"]) for r in rows})
    view = view if view in views else ("common" if "common" in views else (views[0] if views else ""))
    rows = [r for r in rows if r["view"] == view]
    metric_order = [m.name for m in METRICS]
    cols: list[tuple[str, str | None]] = sorted({(r["metric"], r["judge"]) for r in rows},
                                               key=lambda c: (metric_order.index(c[0]) if c[0] in metric_order else 99,
                                                              c[1] or ""))
    labels = {m.name: m.label for m in METRICS}
    by = {(r["method"], r["metric"], r["judge"]): r for r in rows}
    gens = generators(store, {r["method"] for r in rows}, generator)
    methods = [m for m in gens.ordered(r["method"] for r in rows) if gens.keep(m)]
    table = []
    for method in methods:
        cells = []
        for metric, judge in cols:
            r = by.get((method, metric, judge))
            cells.append(None if r is None else {
                "value": r["value"], "ci_low": r["ci_low"], "ci_high": r["ci_high"], "coverage": r["coverage"],
                "ci_note": interval_note(r["value"], r["ci_low"], r["ci_high"]),
                "best": bool(r["best"]), "below": bool(r["below_coverage"]), "empty_reason": r["empty_reason"],
                "percent": metric != "cs_mean" and not metric.endswith("_reward"),
                "href": _metric_link(metric, method, judge), **(_normalised(r) if view == "all_valid" else {})})
        label, base = gens.of(method)
        table.append({"method": method, "base": base, "generator": label, "cells": cells})
    # The other views say once, above the table, why they show no normalised score (not in every cell).
    norm_note = COMMON_VIEW_NOTE if view != "all_valid" and any("normalised" in r for r in rows) else ""
    return {"view": view, "views": views, "columns": [(labels.get(m, m), j) for m, j in cols], "rows": table,
            "norm_note": norm_note, "gen": gens}


def _normalised(r: dict[str, Any]) -> dict[str, Any]:
    """A cell's normalised score (docs/CALIBRATION.md) as the leaderboard table stores it: the value with its
    interval and the floor and ceiling it is between, or the reason it has none (a leaderboard written
    before the calibration columns existed has neither)."""
    if "normalised" not in r:
        return {}
    value = r["normalised"]
    if value is None or value != value:  # NaN: undefined, and the row says why
        return {"norm": None, "norm_reason": r.get("norm_reason") or ""}
    return {"norm": value, "norm_ci": (r["norm_ci_low"], r["norm_ci_high"]),
            "norm_ci_note": interval_note(value, r["norm_ci_low"], r["norm_ci_high"]),
            "norm_between": f"{r['norm_floor']} {r['floor_value']:.3f} .. {r['norm_ceiling']} {r['ceiling_value']:.3f}"}


def question(store: Store, personality_id: str, qa_id: str, generator: str = "") -> dict[str, Any] | None:
    """Everything about one held-out question of one personality, from that personality's files only.

    ``groups``: one per method, each with one block per generator (its answer, the judges' values and
    explanations); a calibration method is one shared block. ``generator`` keeps that generator's blocks and the
    shared ones."""
    p = {"qa": qa_id}
    split = store.select("heldout_split", "SELECT * FROM {T} WHERE qa_id = $qa", p, personality_id)
    if not split:
        return None
    gens = store.select("generations", "SELECT * FROM {T} WHERE qa_id = $qa", p, personality_id)
    judged = {key: store.select(asset, f"SELECT method, judge, {col} AS value, explanation, {_CALL} "
                                       "FROM {T} WHERE qa_id = $qa ORDER BY judge", p, personality_id)
              for key, (asset, col) in (("cs", ("content_similarity", "score")),
                                        ("fc", ("factual_consistency", "label")))}
    facts = store.select("fact_summary", "SELECT summary, explanation, status, cache_key FROM {T}", {}, personality_id)
    items = store.select("mcq_items", "SELECT item_id, n_options, question, labels, texts, kinds, correct_label, "
                                      f"{_CALL} FROM {{T}} WHERE qa_id = $qa ORDER BY item_id", p, personality_id)
    answers = store.select("mcq_answers", "SELECT method, item_id, chosen_label, chosen_kind, correct, status "
                                          "FROM {T} WHERE qa_id = $qa", p, personality_id)
    by_method: dict[str, dict[str, Any]] = {}
    for g in gens:
        by_method[g["method"]] = {"gen": g, "cs": [], "fc": []}
    for key, rows in judged.items():
        for r in rows:
            by_method.setdefault(r["method"], {"gen": None, "cs": [], "fc": []})[key].append(r)
    chosen: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for a in answers:
        chosen[a["item_id"]][a["method"]] = a
    for it in items:
        it["options"] = list(zip(it["labels"] or [], it["texts"] or [], it["kinds"] or []))
        it["chosen"] = chosen.get(it["item_id"], {})
    gens = generators(store, set(by_method) | {a["method"] for a in answers}, generator, personality_id)
    methods = [m for m in (gens.ordered(by_method) if gens.several else order_methods(by_method)) if gens.keep(m)]
    groups: list[dict[str, Any]] = []
    for m in methods:
        label, base = gens.of(m)
        if not groups or groups[-1]["method"] != base:
            groups.append({"method": base, "shared": label == "", "blocks": []})
        groups[-1]["blocks"].append({"key": m, "generator": label, "title": gens.title(label) if label else "",
                                     **by_method[m]})
    answered = {a["method"] for a in answers}
    item_methods = [m for m in (gens.ordered(answered) if gens.several else order_methods(answered)) if gens.keep(m)]
    return {"split": split[0], "methods": [(m, by_method[m]) for m in methods], "groups": groups, "gen": gens,
            "fact_summary": facts[0] if facts else None, "mcq": items, "item_methods": item_methods,
            "item_heads": [(m, *gens.of(m)) for m in item_methods]}


def _where(f: Filters, spec: dict[str, Any], gens: Generators | None = None) -> tuple[list[str], dict[str, Any]]:
    where, params = [], {}
    if gens is not None and gens.chosen:
        # one generator's keys (the first's are the plain names) and the shared calibration methods
        if gens.chosen == gens.first:
            where.append("position($sep IN method) = 0")
            params["sep"] = GENERATOR_SEPARATOR
        else:
            where.append("(starts_with(method, $gen_prefix) OR method = ANY($calibration))")
            params.update(gen_prefix=gens.chosen + GENERATOR_SEPARATOR, calibration=list(CALIBRATION_METHODS))
    for name, col in (("personality", "personality_id"), ("method", "method"), ("judge", "judge")):
        value = getattr(f, name)
        if value and (name != "judge" or f.table in ("cs", "fc")) and (name != "method" or f.table != "heldout"):
            where.append(f"{col} = ${name}")
            params[name] = value
    if f.table == "cs":
        for name, op in (("min", ">="), ("max", "<=")):
            if getattr(f, name) is not None:
                where.append(f"score {op} ${name}")
                params[name] = getattr(f, name)
    if f.table == "fc" and f.label:
        where.append("label = $label")
        params["label"] = f.label
    if f.table == "mcq" and f.label:
        if f.label in ("3", "4"):
            where.append("n_options = $nopt")
            params["nopt"] = int(f.label)
        elif f.label in ("right", "wrong"):
            where.append("correct = $right")
            params["right"] = f.label == "right"
    if f.table == "heldout":
        where.append("partition = 'test'")
    if f.status == "bad":
        where.append("status <> 'ok'")
    elif f.status:
        where.append("status = $status")
        params["status"] = f.status
    if f.q and spec["search"]:
        where.append("(" + " OR ".join(f"{c} ILIKE $q" for c in spec["search"]) + ")")
        params["q"] = "%" + f.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return where, params


def browse(store: Store, f: Filters, blind: bool = False) -> dict[str, Any]:
    """One page of rows of the chosen table under the filters, in a stable order."""
    spec = BROWSE_TABLES[f.table]
    gens = None
    if f.table != "heldout" and store.has(spec["asset"]):
        gens = generators(store, store.distinct(spec["asset"], "method"), f.generator)
        if gens.problem:
            f.problems.append(gens.problem)
            f.generator = ""
    where, params = _where(f, spec, gens)
    if f.q and spec["search"]:
        where = [w.replace("ILIKE $q", "ILIKE $q ESCAPE '\\'") for w in where]
    if f.tag:
        where.append("(personality_id, qa_id) IN (SELECT personality_id, qa_id FROM "
                     f"{store.scan('split')} WHERE list_contains(tags, $tag))")
        params["tag"] = f.tag
        params["split"] = store.files("heldout_split", f.personality or None) or [""]
    # Unsorted pages are in file order (partition paths sorted, then row order): DuckDB keeps a scan's
    # order under LIMIT/OFFSET (preserve_insertion_order), so a page is stable for a given data root and
    # the scan stops once the page is full instead of sorting every matching row. A score sort is a
    # top-N over the score column, ids breaking ties.
    order = ""
    if f.table == "cs" and not blind and f.sort in ("asc", "desc"):
        order = f" ORDER BY score {'DESC' if f.sort == 'desc' else 'ASC NULLS LAST'}, {spec['order']}"
    sql = f"SELECT {spec['cols']} FROM {{T}}" + (" WHERE " + " AND ".join(where) if where else "") + order
    # A personality or method filter also narrows the files read (their paths name both).
    files = store.files(spec["asset"], f.personality or None, f.method or None)
    if f.tag and not params["split"][0]:
        page = Page([], f.page, False)
    elif not files:
        page = Page([], f.page, False)
    elif order:
        page = _sorted_page(store, f, where, params, files)
    else:
        rows = store.query(sql.replace("{T}", store.scan("files")) + " LIMIT $limit OFFSET $offset",
                           {**params, "files": files, "limit": PAGE_SIZE + 1, "offset": f.page * PAGE_SIZE})
        page = Page(rows[:PAGE_SIZE], f.page, len(rows) > PAGE_SIZE)
    if f.table in ("cs", "fc", "mcq") and page.rows:
        _attach_questions(store, page.rows)
    if f.table in ("cs", "fc") and page.rows:
        _attach_generated(store, page.rows)
    return {"spec": spec, "page": page, "filters": f, "gen": gens}


def _sorted_page(store: Store, f: Filters, where: list[str], params: dict[str, Any], files: list[str]) -> Page:
    """A score-sorted page without sorting: CS scores are the integers 1-5, so one aggregate over the
    score column counts the matching rows per score, and the page is then read score by score in
    file order (each read stops once it has its rows). A top-N sort instead would decompress the ids,
    explanations and raw outputs of every matching row: seconds on a million judgments."""
    desc = f.sort == "desc"
    cond = (" WHERE " + " AND ".join(where)) if where else ""
    counts = store.query(f"SELECT score, count(*) AS n FROM {store.scan('files')}{cond} GROUP BY score",
                         {**params, "files": files})
    counts.sort(key=lambda r: (r["score"] is None, -(r["score"] or 0) if desc else (r["score"] or 0)))
    start, need, rows = f.page * PAGE_SIZE, PAGE_SIZE, []
    total = sum(r["n"] for r in counts)
    for c in counts:
        if start >= c["n"]:
            start -= c["n"]
            continue
        is_score = "score IS NULL" if c["score"] is None else "score = $score"
        got = store.query(f"SELECT {BROWSE_TABLES[f.table]['cols']} FROM {store.scan('files')} WHERE "
                          + " AND ".join([*where, is_score]) + " LIMIT $limit OFFSET $offset",
                          {**params, "files": files, "limit": need, "offset": start,
                           **({} if c["score"] is None else {"score": c["score"]})})
        rows += got
        need -= len(got)
        start = 0
        if need <= 0:
            break
    return Page(rows, f.page, (f.page + 1) * PAGE_SIZE < total)


def _attach_questions(store: Store, rows: list[dict[str, Any]]) -> None:
    """The question text of the rows on the page, from the split files of their personalities only."""
    pids = sorted({r["personality_id"] for r in rows})
    files = [p for pid in pids for p in store.files("heldout_split", pid)]
    if not files:
        return
    got = store.query(f"SELECT personality_id, qa_id, question FROM {store.scan('files')} "
                      "WHERE personality_id = ANY($pids) AND qa_id = ANY($qas)",
                      {"files": files, "pids": pids, "qas": sorted({r["qa_id"] for r in rows})})
    text = {(g["personality_id"], g["qa_id"]): g["question"] for g in got}
    for r in rows:
        r.setdefault("question", text.get((r["personality_id"], r["qa_id"]), ""))


def _attach_generated(store: Store, rows: list[dict[str, Any]]) -> None:
    """The judged answer of each judgment on the page (what a Contradiction contradicts), from the
    generation files of their personalities and methods only."""
    files = sorted({p for r in rows for p in store.files("generations", r["personality_id"], r["method"])})
    if not files:
        return
    got = store.query(f"SELECT personality_id, method, qa_id, generated FROM {store.scan('files')} "
                      "WHERE personality_id = ANY($pids) AND qa_id = ANY($qas)",
                      {"files": files, "pids": sorted({r["personality_id"] for r in rows}),
                       "qas": sorted({r["qa_id"] for r in rows})})
    text = {(g["personality_id"], g["method"], g["qa_id"]): g["generated"] for g in got}
    for r in rows:
        r.setdefault("generated", text.get((r["personality_id"], r["method"], r["qa_id"])))


def disagree(store: Store, judge: str = "", personality_id: str = "", page: int = 0) -> dict[str, Any]:
    """Questions where the methods' CS scores spread most (max - min over methods, per judge)."""
    where, params = ["status = 'ok'"], {}
    if judge:
        where.append("judge = $judge")
        params["judge"] = judge
    files = store.files("content_similarity", personality_id or None)
    if personality_id:
        where.append("personality_id = $pid")
        params["pid"] = personality_id
    sql = ("SELECT personality_id, qa_id, judge, max(score) - min(score) AS spread, min(score) AS low, "
           "max(score) AS high, count(*) AS n_methods, arg_min(method, score) AS worst, arg_max(method, score) AS best "
           f"FROM {store.scan('files')} WHERE {' AND '.join(where)} GROUP BY personality_id, qa_id, judge "
           "HAVING count(*) > 1 ORDER BY spread DESC, personality_id, qa_id, judge LIMIT $limit OFFSET $offset")
    rows = store.query(sql, {**params, "files": files, "limit": PAGE_SIZE + 1, "offset": max(0, page) * PAGE_SIZE},
                       remember=True) if files else []
    pg = Page([dict(r) for r in rows[:PAGE_SIZE]], max(0, page), len(rows) > PAGE_SIZE)
    _attach_questions(store, pg.rows)
    return {"page": pg, "judge": judge, "personality": personality_id}


def personalities(store: Store) -> list[dict[str, Any]]:
    return store.select("heldout_split", "SELECT personality_id, count(*) FILTER (WHERE partition = 'test') AS n_test, "
                                         "count(*) FILTER (WHERE partition = 'train') AS n_train FROM {T} "
                                         "GROUP BY personality_id ORDER BY personality_id")


def _modal(votes: list[dict[str, Any]]) -> str:
    rates = [v["rate"] for v in votes if v["status"] == "ok" and v["rate"]]
    if not rates:
        return ""
    counts = Counter(rates).most_common()
    top = [r for r, c in counts if c == counts[0][1]]
    return top[0] if len(top) == 1 else "tie: " + "/".join(sorted(top))


def personality(store: Store, personality_id: str, generator: str = "") -> dict[str, Any]:
    """Big Five levels: the reference (held-out answers) and each method's generated answers, per judge,
    with every vote and its justification; PS stability where computed. With several generators the columns
    are grouped by method, each headed by its generator; ``generator`` keeps one (and the calibration methods)."""
    cols = "judge, trait, vote_index, rate, justification, status, cache_key"
    ref = store.select("reference_personality", f"SELECT {cols} FROM {{T}} ORDER BY judge, trait, vote_index", {},
                       personality_id)
    gen = store.select("generated_personality", f"SELECT method, {cols} FROM {{T}} ORDER BY method, judge, trait, "
                                                "vote_index", {}, personality_id)
    stab = store.select("ps_stability", "SELECT * FROM {T} WHERE personality_id = $pid", {"pid": personality_id})
    sources: dict[str, list[dict[str, Any]]] = {"reference": ref}
    for row in gen:
        sources.setdefault(row["method"], []).append(row)
    judges = sorted({r["judge"] for rows in sources.values() for r in rows})
    traits = sorted({r["trait"] for rows in sources.values() for r in rows})
    grid = []
    for judge in judges:
        for trait in traits:
            levels = {}
            for src, rows in sources.items():
                votes = [r for r in rows if r["judge"] == judge and r["trait"] == trait]
                levels[src] = {"modal": _modal(votes), "votes": votes}
            grid.append({"judge": judge, "trait": trait, "levels": levels})
    gens = generators(store, [s for s in sources if s != "reference"], generator, personality_id)
    methods = [s for s in sources if s != "reference"]
    order = ["reference"] + [s for s in (gens.ordered(methods) if gens.several else order_methods(methods))
                             if gens.keep(s)]
    return {"grid": grid, "sources": order, "stability": stab, "gen": gens,
            "heads": [(s, *(gens.of(s) if s != "reference" else ("", s))) for s in order]}


def premise(store: Store, verdict: str = "", kind: str = "", personality_id: str = "", label: str = "",
            page: int = 0) -> dict[str, Any]:
    """Verdict counts, the failure-attribution split and the most frequent failure labels, then a page of
    conclusions with their verdicts (counts are DuckDB aggregates; only the page's rows are fetched)."""
    counts = store.select("premise_verdicts", "SELECT artifact_kind, verdict, count(*) AS n FROM {T} "
                                              "GROUP BY ALL ORDER BY artifact_kind, verdict", remember=True)
    attribution = store.select("premise_verdicts", "SELECT a AS attribution, count(*) AS n FROM "
                                                   "(SELECT unnest(attributions) AS a FROM {T}) GROUP BY a ORDER BY n DESC, a", remember=True)
    labels = store.select("premise_verdicts", "SELECT l AS label, count(*) AS n FROM (SELECT unnest(labels) AS l "
                                              "FROM {T}) GROUP BY l ORDER BY n DESC, l LIMIT 30", remember=True)
    where, params = [], {}
    for value, sql, name in ((verdict, "verdict = $verdict", "verdict"), (kind, "artifact_kind = $kind", "kind"),
                             (personality_id, "personality_id = $pid", "pid"),
                             (label, "list_contains(labels, $label)", "label")):
        if value:
            where.append(sql)
            params[name] = value
    files = store.files("premise_verdicts", personality_id or None)
    sql = ("SELECT personality_id, artifact_kind, conclusion_id, conclusion, verdict, primary_cause, reasons, labels, "
           f"attributions, decontextuality_score, pass1_cache_key, pass2_cache_key FROM {store.scan('files')}"
           + (" WHERE " + " AND ".join(where) if where else "")
           + " ORDER BY personality_id, artifact_kind, conclusion_id LIMIT $limit OFFSET $offset")
    rows = store.query(sql, {**params, "files": files, "limit": PAGE_SIZE + 1,
                             "offset": max(0, page) * PAGE_SIZE}) if files else []
    total = sum(a["n"] for a in attribution) or 1
    attribution = [{**a, "share": a["n"] / total} for a in attribution]
    return {"counts": counts, "attribution": attribution, "labels": labels,
            "page": Page(rows[:PAGE_SIZE], max(0, page), len(rows) > PAGE_SIZE),
            "filters": {"verdict": verdict, "kind": kind, "personality": personality_id, "label": label}}
