"""``interviewsim curate``: transcripts + manifest -> a corpus of prepared_input.json (issue 31).

Offline by default (the deterministic offline model: no key, no network); ``--model`` names any
litellm model for the curation's four model steps. Every call goes through the gateway with its
SQLite cache under ``--out`` (hidden file), so a re-run costs nothing. Exit status (docs/TROUBLESHOOTING.md):
0 when a corpus was written, exclusions included (a transcript that is no dialogue, in which the person never
speaks, or that quality control or a reviewer set aside: counted per reason); 1 when an input problem was
found (every one printed, with file, row or line and rule: a manifest row, a file that cannot be read); each
refuses only its own row or file, the rest is written; 4 when no personality could be written; 2 for a usage
error. ``--compare REF`` prints the comparison with a reference corpus.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Optional

import typer

__all__ = ["register", "curate_command", "print_problems", "print_summary"]

CACHE_NAME = ".curation_cache.sqlite"


def curate_command(
    transcripts: Annotated[Path, typer.Option("--transcripts", help="Folder of transcripts (text, WebVTT, SRT, diarised JSON).")],
    manifest: Annotated[Path, typer.Option("--manifest", help=(
        "Manifest CSV or JSON, one row per transcript: file,personality_id,person_name,date[,title,addressed_as,"
        "aliases,source_url,profile_file,long_profile_file]; title is the transcript's title, addressed_as how its "
        "labels address the person ('The President'), both optional. E.g. "
        "'jimmy-carter/1980-09-18.txt,CARTER,Jimmy Carter,1980-09-18,News conference'."))],
    out: Annotated[Path, typer.Option("--out", help="Corpus folder to write (one sub-folder per personality).")],
    model: Annotated[Optional[str], typer.Option("--model", help="litellm model for the model steps; offline by default.")] = None,
    api_base: Annotated[Optional[str], typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")] = None,
    compare: Annotated[Optional[Path], typer.Option("--compare", help="A reference corpus to compare the result with.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the curation report as JSON.")] = False,
) -> None:
    """Curate transcripts into a corpus: ingest, attribute speakers, check quality, pair, tag, write."""
    from interviewsim_core.curation.compare import compare_corpora, format_table
    from interviewsim_core.curation.run import curate, report_of
    from interviewsim_core.factories import gateway_at
    from interviewsim_core.llm.types import ModelConfig
    from interviewsim_core.pipeline.config import OFFLINE_MODEL

    if not transcripts.is_dir():
        typer.echo(f"{transcripts}: $: [not-found] the transcripts folder does not exist", err=True)
        raise typer.Exit(code=2)
    cfg = ModelConfig(model=model or OFFLINE_MODEL, api_base=api_base)
    with gateway_at(out / CACHE_NAME) as gateway:
        outcome = curate(transcripts, manifest, gateway, cfg, out=out)
        gateway.raise_for_cache_errors()
    if as_json:
        typer.echo(json.dumps(report_of(outcome), indent=2, ensure_ascii=False))
    else:
        print_summary(outcome, cfg.name, out)
    if compare is not None:
        typer.echo(format_table(compare_corpora(outcome.documents, compare, outcome.excluded())))
    if outcome.problems:
        print_problems(outcome)
        raise typer.Exit(code=1)
    if not outcome.written:
        typer.echo("no personality could be written (see 'refused' above)", err=True)
        raise typer.Exit(code=4)


def print_summary(outcome, model_name: str, out: Path) -> None:
    """What a curation kept, wrote, excluded and refused, and its calls (``interviewsim curate``)."""
    table = outcome.table()
    kept = sum(r["kept"] for r in table)
    reviewed = sum(r["kind"] == "reviewed" for r in table)
    typer.echo(f"{len(table)} transcripts, {kept} kept by quality control and review ({reviewed} reviewed): "
               f"retention {kept / len(table):.1%}" if table else "no transcript")
    for pid, path in sorted(outcome.written.items()):
        doc = outcome.documents[pid]
        n = sum(len(i["qa_pairs"]) for i in doc["interviews"])
        cat = outcome.categories.get(pid, (None, ""))[0]
        typer.echo(f"  wrote {path}: {len(doc['interviews'])} interviews, {n} QA pairs, category {cat}")
    for r in table:
        if r["kind"] and not r["kept"]:
            typer.echo(f"  excluded {r['file']}: {r['kind']}: {r['reason']}")
    reasons = Counter(r["kind"] or "not reached" for r in table if not r["kept"])
    if reasons:
        typer.echo("excluded per reason: " + ", ".join(f"{k} {n}" for k, n in reasons.most_common()))
    labels = outcome.labels()
    for pid, p in outcome.personalities().items():
        why = ", ".join(f"{k} {n}" for k, n in p["excluded"].items()) or "none"
        typer.echo(f"  {pid}: {p['transcripts']} transcripts, {p['kept']} kept, excluded: {why}; {p['pairs']} QA pairs written")
        for lab in labels.get(pid, []):
            if lab["role"] == "person" or lab["decided_by"] != "rule":
                typer.echo(f"    label {lab['label']!r}: {lab['role']} by {lab['decided_by']}, {lab['turns']} turns "
                           f"in {lab['transcripts']} transcripts")
        rest = [x for x in labels.get(pid, []) if x["role"] != "person" and x["decided_by"] == "rule"]
        if rest:
            typer.echo(f"    {len(rest)} more labels placed by the rule as interviewer or other: "
                       f"{sum(x['turns'] for x in rest)} turns (all in curation_report.json)")
    for pid, why in sorted(outcome.refused.items()):
        typer.echo(f"  refused {pid}: {'; '.join(why[:3])}{' ...' if len(why) > 3 else ''}")
    for w in outcome.warnings:
        typer.echo(f"  warning: {w}")
    typer.echo(f"{outcome.calls} model calls planned ({model_name}); report: {out / 'curation_report.json'}")


def print_problems(outcome) -> None:
    """Every input problem, one line each, on stderr."""
    typer.echo(f"{len(outcome.problems)} problem(s):", err=True)
    for p in outcome.problems:
        typer.echo(f"  - {str(p).splitlines()[0]}", err=True)


def sample_transcripts_command(
    out: Annotated[Path, typer.Argument(help="Folder to write the raw transcripts and manifest.json into.")],
) -> None:
    """Write the synthetic sample's interviews as raw transcripts (text, WebVTT, SRT, diarised JSON) + a manifest."""
    from interviewsim_core.curation.sample_transcripts import write_sample_transcripts

    manifest = write_sample_transcripts(out)
    typer.echo(f"wrote {manifest}; curate with: interviewsim curate --transcripts {out} --manifest {manifest} --out CORPUS_DIR")


def review_command(
    corpus: Annotated[Path, typer.Argument(help="The curated corpus folder (--out of curate).")],
    file: Annotated[str, typer.Argument(help="The transcript, as the manifest names it.")],
    accept: Annotated[bool, typer.Option("--accept/--reject", help="Keep or exclude the transcript.")],
    reason: Annotated[str, typer.Option("--reason", help="Why (kept in review.csv and the curation report).")],
) -> None:
    """Record a reviewer's decision on one transcript; the next `interviewsim curate` honours it."""
    from interviewsim_core.curation.review import record_decision

    try:
        path = record_decision(corpus, file, "accept" if accept else "reject", reason)
    except ValueError as exc:
        typer.echo(f"usage: {exc}", err=True)
        raise typer.Exit(code=2) from None
    typer.echo(f"recorded in {path}; re-run `interviewsim curate` to apply it")


def register(app: typer.Typer) -> None:
    """Add ``curate``, ``curate-review`` and ``sample-transcripts`` to the ``interviewsim`` app."""
    app.command("curate")(curate_command)
    app.command("curate-review")(review_command)
    app.command("sample-transcripts")(sample_transcripts_command)
