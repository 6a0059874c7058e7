"""Explicit Arrow schemas of every table the evaluation writes (docs/DESIGN.md, "Tables").

Writing through a fixed schema instead of letting pandas infer one means an all-null column, an
empty partition or a pandas upgrade cannot change a column's type between files, so DuckDB and
pandas can read ``<data_root>/<asset>/**/*.parquet`` as one table.
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from ..metrics.leaderboard import LEADERBOARD_FIELDS
from ..metrics.scores import MACRO_METRICS, METHOD_SCORE_FIELDS

_S = pa.string()
_I = pa.int64()
_F = pa.float64()
_B = pa.bool_()
_LS = pa.list_(pa.string())
_LF = pa.list_(pa.float64())
_KIND_TYPES = {"str": _S, "int": _I, "float": _F, "bool": _B, "list_str": _LS, "list_float": _LF}

CALL_FIELDS: tuple[pa.Field, ...] = (
    pa.field("model", _S),
    pa.field("contract", _S),
    pa.field("contract_version", _S),
    pa.field("status", _S),
    pa.field("raw_output", _S),
    pa.field("parse_error", _S),
    pa.field("error", _S),
    pa.field("attempts", _I),
    pa.field("cache_hit", _B),
    pa.field("cache_key", _S),
    pa.field("prompt_tokens", _I),
    pa.field("completion_tokens", _I),
    pa.field("cost_usd", _F),
    pa.field("cached_prompt_tokens", _I),
    pa.field("constraint", _S),
    pa.field("finish_reason", _S),
    pa.field("truncated", _B),
)
"""Columns of every row that comes from one model call: who answered, under which contract, how it went."""

CALL_COLUMNS: tuple[str, ...] = tuple(f.name for f in CALL_FIELDS)


def _schema(fields: list[tuple[str, pa.DataType]], *, calls: bool = False, prefixes: tuple[str, ...] = ()) -> pa.Schema:
    out = [pa.field(n, t) for n, t in fields]
    if calls:
        out.extend(CALL_FIELDS)
    for prefix in prefixes:
        out.extend(pa.field(prefix + f.name, f.type) for f in CALL_FIELDS)
    return pa.schema(out)


SCHEMAS: dict[str, pa.Schema] = {
    "heldout_split": _schema([
        ("personality_id", _S), ("qa_id", _S), ("partition", _S), ("interview_id", _S),
        ("sequence", _I), ("position", _I), ("order", _I), ("question", _S), ("response", _S), ("tags", _LS),
    ]),
    "fact_summary": _schema([
        ("personality_id", _S), ("summary", _S), ("explanation", _S), ("source_qa_ids", _LS),
    ], calls=True),
    "atomic_items": _schema([
        ("personality_id", _S), ("qa_id", _S), ("interview_id", _S), ("sequence", _I),
        ("atomic_question", _S), ("atomic_answer", _S),
    ], calls=True),
    "mcq_items": _schema([
        ("personality_id", _S), ("item_id", _S), ("qa_id", _S), ("interview_id", _S), ("n_options", _I),
        ("question", _S), ("labels", _LS), ("texts", _LS), ("kinds", _LS), ("correct_label", _S),
        ("shuffle_seed", _S),
    ], calls=True),
    "reference_personality": _schema([
        ("personality_id", _S), ("judge", _S), ("trait", _S), ("vote_index", _I), ("vote_temperature", _F),
        ("rate", _S), ("justification", _S),
    ], calls=True),
    "training_personality": _schema([
        ("personality_id", _S), ("judge", _S), ("trait", _S), ("vote_index", _I), ("vote_temperature", _F),
        ("rate", _S), ("justification", _S),
    ], calls=True),
    "generations": _schema([
        ("personality_id", _S), ("method", _S), ("qa_id", _S), ("interview_id", _S), ("question", _S),
        ("generated", _S), ("strategy", _S), ("n_context_requested", _I), ("n_context_used", _I),
        ("context_qa_ids", _LS), ("context_chars", _I), ("context_state", _S),
    ], calls=True),
    "content_similarity": _schema([
        ("personality_id", _S), ("method", _S), ("judge", _S), ("qa_id", _S), ("score", _I), ("explanation", _S),
    ], calls=True),
    "factual_consistency": _schema([
        ("personality_id", _S), ("method", _S), ("judge", _S), ("qa_id", _S), ("label", _S), ("explanation", _S),
    ], calls=True),
    "generated_personality": _schema([
        ("personality_id", _S), ("method", _S), ("judge", _S), ("trait", _S), ("vote_index", _I), ("vote_temperature", _F),
        ("rate", _S), ("justification", _S),
    ], calls=True),
    "mcq_answers": _schema([
        ("personality_id", _S), ("method", _S), ("n_options", _I), ("item_id", _S), ("interview_id", _S),
        ("qa_id", _S), ("position", _I), ("chosen_label", _S), ("chosen_kind", _S), ("correct_label", _S),
        ("correct", _B), ("reward", _F),
    ], calls=True),
    # Derived from the metric registry (metrics/registry.py) through metrics.scores: one list of metrics.
    "method_scores": _schema([(n, _KIND_TYPES[k]) for n, k in METHOD_SCORE_FIELDS]),
    "premise_verdicts": _schema([
        ("personality_id", _S), ("artifact_kind", _S), ("conclusion_id", _S), ("conclusion", _S), ("peer_id", _S),
        ("verdict", _S), ("primary_cause", _S), ("reasons", _LS), ("decontextuality_score", _F), ("labels", _LS),
        ("attributions", _LS), ("pass1_json", _S), ("pass2_json", _S),
    ], prefixes=("pass1_", "pass2_")),
}

# User-supplied conclusions (``EvalConfig.premise_conclusions``) are judged into the same rows, stored
# as their own unpartitioned table so a team's bench never mixes with the framework's own artefacts.
SCHEMAS["user_premise_verdicts"] = SCHEMAS["premise_verdicts"]

# One personality's method_scores rows across every method run so far (a per-personality read of a
# P x M table): same columns, stored per personality so comparing methods needs one file.
SCHEMAS["personality_scores"] = SCHEMAS["method_scores"]

# The metrics the leaderboard macro-averages, each with a bootstrap CI: the metric registry's.
LEADERBOARD_METRICS: tuple[str, ...] = MACRO_METRICS

SCHEMAS["sft_examples"] = pa.schema([pa.field(c, _S) for c in (
    "personality_id", "qa_id", "interview_id", "system", "user", "assistant")])
SCHEMAS["ps_stability"] = pa.schema(
    [pa.field("personality_id", _S), pa.field("judge", _S), pa.field("alignment", _F),
     pa.field("n_traits", _I), pa.field("invalid", _I)]
    + [pa.field(f"{side}_{t}", _S) for side in ("train", "test")
       for t in ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")]
)

# The curation's steps (``curation/step.py``): one row per manifest row of the personality (one with an empty
# ``file`` when it has none); nested values as JSON text; on every row, what the step added for the personality.
_CURATION_ADDED = [pa.field("refused", _S), pa.field("problems", _S), pa.field("warnings", _S), pa.field("calls", _I)]
SCHEMAS["transcript_turns"] = pa.schema(
    [pa.field(c, _S) for c in ("personality_id", "file", "date", "row", "format", "removed", "turns", "excluded")]
    + _CURATION_ADDED)
SCHEMAS["speaker_turns"] = pa.schema(
    [pa.field(c, _S) for c in ("personality_id", "file", "attributions")] + [pa.field("roles", _LS), pa.field("excluded", _S)]
    + _CURATION_ADDED)
SCHEMAS["transcript_quality"] = pa.schema(
    [pa.field(c, _S) for c in ("personality_id", "file")] + [pa.field("quality_kept", _B)]
    + [pa.field(c, _S) for c in ("quality_kind", "quality_reason", "review_decision", "review_reason")]
    + [pa.field("kept", _B), pa.field("kind", _S), pa.field("reason", _S)] + _CURATION_ADDED)
SCHEMAS["qa_pairs"] = pa.schema([pa.field(c, _S) for c in ("personality_id", "file", "pairs")] + _CURATION_ADDED)
SCHEMAS["qa_tags"] = pa.schema(
    [pa.field(c, _S) for c in ("personality_id", "file", "tags", "category", "category_reason")] + _CURATION_ADDED)
# The curation's last step: one row per manifest row of the personality, kept or excluded with the reason, and
# whether its document was written (else why not).
SCHEMAS["prepared_input"] = pa.schema(
    [pa.field(c, _S) for c in ("personality_id", "file", "sha256", "date", "format")]
    + [pa.field("turns", _I), pa.field("kept", _B)]
    + [pa.field(c, _S) for c in ("kind", "reason")]
    + [pa.field("pairs", _I), pa.field("removed", _S), pa.field("written", _B)]
    + [pa.field(c, _S) for c in ("refused", "problems")]
)

SCHEMAS["leaderboard"] = _schema([(n, _KIND_TYPES[k]) for n, k in LEADERBOARD_FIELDS])

KEY_COLUMNS: dict[str, tuple[str, ...]] = {
    **{name: ("personality_id", "file") for name in (
        "transcript_turns", "speaker_turns", "transcript_quality", "qa_pairs", "qa_tags", "prepared_input")},
    "heldout_split": ("personality_id", "qa_id"),
    "fact_summary": ("personality_id",),
    "atomic_items": ("personality_id", "qa_id"),
    "mcq_items": ("personality_id", "item_id"),
    "reference_personality": ("personality_id", "judge", "trait", "vote_index"),
    "training_personality": ("personality_id", "judge", "trait", "vote_index"),
    "sft_examples": ("personality_id", "qa_id"),
    "ps_stability": ("personality_id", "judge"),
    "generations": ("personality_id", "method", "qa_id"),
    "content_similarity": ("personality_id", "method", "judge", "qa_id"),
    "factual_consistency": ("personality_id", "method", "judge", "qa_id"),
    "generated_personality": ("personality_id", "method", "judge", "trait", "vote_index"),
    "mcq_answers": ("personality_id", "method", "n_options", "item_id"),
    "method_scores": ("personality_id", "method", "judge"),
    "personality_scores": ("personality_id", "method", "judge"),
    "premise_verdicts": ("personality_id", "artifact_kind", "conclusion_id"),
    "user_premise_verdicts": ("conclusion_id",),
    "leaderboard": ("method", "judge", "metric", "view"),
}
"""Columns that identify a row; a table never holds two rows with the same key."""

PER_METHOD: frozenset[str] = frozenset({
    "generations", "content_similarity", "factual_consistency", "generated_personality", "mcq_answers",
    "method_scores",
})
"""Tables partitioned by personality and method (P x M); the others are per personality, or global."""


def schema_of(name: str) -> pa.Schema:
    """The schema of table ``name``; ``KeyError`` names the known tables."""
    try:
        return SCHEMAS[name]
    except KeyError:
        raise KeyError(f"unknown table {name!r}; known: {sorted(SCHEMAS)}") from None


def to_table(df: pd.DataFrame, name: str) -> pa.Table:
    """Convert ``df`` to Arrow under the table's schema, in schema column order.

    Raises:
        ValueError: a column is missing or unexpected, or a value does not fit its type; the
            message names the table and column so a wrong frame never becomes a wrong file.
    """
    schema = schema_of(name)
    missing = [c for c in schema.names if c not in df.columns]
    extra = [c for c in df.columns if c not in schema.names]
    if missing or extra:
        raise ValueError(f"table {name!r}: missing columns {missing}, unexpected columns {extra}")
    arrays = []
    for fld in schema:
        col = df[fld.name]
        try:
            arrays.append(pa.Array.from_pandas(_prepare(col, fld.type), type=fld.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise ValueError(f"table {name!r}, column {fld.name!r}: {exc}") from exc
    return pa.Table.from_arrays(arrays, schema=schema)


def _prepare(col: pd.Series, typ: pa.DataType) -> pd.Series | list:
    if pa.types.is_list(typ):
        # Tuples, numpy arrays (what Parquet round trips give back) and lists all become lists.
        conv = float if pa.types.is_floating(typ.value_type) else str
        return [None if v is None or (isinstance(v, float) and v != v) else [conv(x) for x in v] for v in col]
    if pa.types.is_integer(typ) and col.dtype.kind == "f":
        return [None if v != v else int(v) for v in col]
    if pa.types.is_string(typ) and col.dtype == object:
        return [None if v is None or (isinstance(v, float) and v != v) else v for v in col]
    return col


def empty_frame(name: str) -> pd.DataFrame:
    """A zero-row frame with the table's columns and dtypes, for partitions with nothing to hold."""
    return schema_of(name).empty_table().to_pandas()


def from_table(table: pa.Table) -> pd.DataFrame:
    """Arrow -> pandas with list columns as Python lists, so frames compare the same before and after a write."""
    df = table.to_pandas()
    for fld in table.schema:
        if pa.types.is_list(fld.type):
            df[fld.name] = [None if v is None else list(v) for v in df[fld.name]]
    return df


def conform(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """``df`` round-tripped through the schema: the exact dtypes a reader of the Parquet file will see."""
    return from_table(to_table(df, name))


def concat_table(name: str, frames) -> pd.DataFrame:
    """Partitions of table ``name`` as one frame with its schema (the empty table when none has rows).

    A partition may come as its Arrow table (read back from its file: ``runner.ON_DISK``); then every
    partition is joined in Arrow and converted to pandas once."""
    frames = [f for f in frames if f is not None and (f.num_rows if isinstance(f, pa.Table) else not f.empty)]
    if not frames:
        return empty_frame(name)
    if any(isinstance(f, pa.Table) for f in frames):
        tables = [f if isinstance(f, pa.Table) else to_table(f, name) for f in frames]
        return from_table(pa.concat_tables(tables, promote_options="permissive").cast(schema_of(name)))
    return conform(pd.concat(frames, ignore_index=True), name)
