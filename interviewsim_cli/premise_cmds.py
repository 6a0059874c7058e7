"""``interviewsim premise FILE``: bench your own memory deriver with seed 002's premise judge.

Reads a JSONL file of ``{conclusion, peer_id, window: [{speaker, time, text}], conclusion_id}``
records, validates every line before anything runs (all problems listed, exit 1), judges each
conclusion with both passes through the gateway (offline model unless ``--judge`` names one),
writes ``premise_verdicts.parquet`` and ``premise_label_clusters.parquet`` under ``--out``, and
prints the headline numbers, the failure-attribution split first.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["register", "run_premise"]

CACHE_NAME = "llm_cache.sqlite"
VERDICTS_NAME = "premise_verdicts.parquet"
CLUSTERS_NAME = "premise_label_clusters.parquet"


def _write_clusters(df, path: Path) -> None:
    """Atomic Parquet write of the label-cluster table."""
    import pyarrow as pa

    from interviewsim_core.atomic_files import atomic_write
    from interviewsim_core.pipeline.storage import parquet_write

    schema = pa.schema([
        ("rank", pa.int64()), ("representative", pa.string()), ("size", pa.int64()),
        ("n_conclusions", pa.int64()), ("members", pa.list_(pa.string())), ("examples", pa.list_(pa.string())),
    ])
    table = pa.Table.from_pylist(df.to_dict(orient="records"), schema=schema)
    atomic_write(path, lambda fh: parquet_write(table, fh))


def run_premise(file: Path, judge: str, api_base: str | None, out: Path, gateway=None, embedder=None) -> dict:
    """Validate, judge, write; returns the summary printed by the command (``--json`` shape).

    Args:
        gateway: a ready gateway (tests); by default one with a SQLite cache under ``out``.
        embedder: clusters the missing-information labels; ``HashingEmbedder`` when None.

    Raises:
        InputValidationError: the JSONL file is invalid (nothing is judged or written).
    """
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.storage import write_frame
    from interviewsim_core.premise import headline, judge_conclusions, label_cluster_table, load_user_conclusions

    conclusions = load_user_conclusions(file)
    model = ModelConfig(model=judge, api_base=api_base)
    if gateway is None:
        from interviewsim_core.factories import gateway_at

        with gateway_at(out / CACHE_NAME) as own:
            df = judge_conclusions(conclusions, model, own)
    else:
        df = judge_conclusions(conclusions, model, gateway)
    clusters = label_cluster_table(df, embedder)
    verdicts_path = write_frame(df, "premise_verdicts", out / VERDICTS_NAME)
    clusters_path = out / CLUSTERS_NAME
    _write_clusters(clusters, clusters_path)
    head = headline(df)
    return {
        "judge": model.name,
        "n_conclusions": len(df),
        **head.to_dict(),
        "label_clusters": clusters.head(10).to_dict(orient="records"),
        "outputs": {"verdicts": str(verdicts_path), "label_clusters": str(clusters_path)},
        "_text": head.to_text(),
    }


def register(app: typer.Typer) -> None:
    from interviewsim_core.pipeline.config import OFFLINE_EMBEDDING, OFFLINE_MODEL

    @app.command("premise")
    def premise(
        file: Annotated[Path, typer.Argument(help="JSONL of {conclusion, peer_id, window, conclusion_id} records.")],
        judge: Annotated[str, typer.Option("--judge", help="litellm model string of the premise judge.")] = OFFLINE_MODEL,
        api_base: Annotated[Optional[str], typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
        out: Annotated[Path, typer.Option("--out", help="Directory for the Parquet outputs and the LLM cache.")] = Path("premise_out"),
        as_json: Annotated[bool, typer.Option("--json", help="Print the headline metrics as JSON.")] = False,
        embedding_model: Annotated[str, typer.Option(
            "--embedding-model", help="Embedder that clusters the missing-information labels: offline/hashing "
            "or a litellm embedding model.")] = OFFLINE_EMBEDDING,
        embedding_api_base: Annotated[Optional[str], typer.Option(
            "--embedding-api-base", help="Base URL of the embedding server (default: --api-base).")] = None,
    ) -> None:
        """Judge your own conclusions with the two-pass premise-usability judge (seed 002)."""
        from interviewsim_core.errors import ConfigError, InputValidationError

        from .report_cmds import embedder_for

        try:
            embedder = embedder_for(embedding_model, embedding_api_base, fallback_api_base=api_base)
        except ConfigError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        try:
            summary = run_premise(file, judge, api_base, out, embedder=embedder)
        except InputValidationError as exc:
            typer.echo(str(exc), err=True)
            raise typer.Exit(1) from None
        text = summary.pop("_text")
        if as_json:
            typer.echo(json.dumps(summary, indent=2, ensure_ascii=False, default=str))
            return
        typer.echo(text)
        clusters = summary["label_clusters"]
        if clusters:
            typer.echo("Top label clusters:")
            for c in clusters:
                typer.echo(f"  {c['rank']:>2}. {c['representative']} ({c['size']}): {', '.join(c['members'][:4])}")
        typer.echo(f"Wrote {summary['outputs']['verdicts']} and {summary['outputs']['label_clusters']}")
        sys.stdout.flush()
