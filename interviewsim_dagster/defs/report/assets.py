"""The ``report`` asset: report.html + report.json of whatever the evaluation has produced so far.

Why it reads the data root instead of taking each table as a Dagster input: the report is a
function of every table of the run (eleven of them, per personality and per personality x method),
and core's ``build_report`` already reads exactly the IO manager's layout and turns an absent table
into a "not run" section. Loading the same files through the IO manager (eleven inputs with
``AllPartitionMapping`` and ``ALLOW_MISSING``) would repeat core's loading here for the same result,
and ``interviewsim report`` would then build its report by a different path than the UI's.

The graph still says what the report reflects: it depends, without loading, on ``leaderboard`` and
on every ``premise_verdicts`` partition, the two sinks every other table flows into. So the UI
draws it downstream of everything, shows it stale when either changes, and ``AFTER_ANY_UPSTREAM_CONTENT_CHANGE`` (the
global assets' convention) re-materialises it after they update.
"""

from pathlib import Path

import dagster as dg

from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.report import ReportData, ReportPaths, build_report, leaderboard_markdown, write_report
from interviewsim_core.report.build import HTML_NAME, JSON_NAME

from ...resources import EvalConfigResource, configured_embedder
from ..evaluate.automation import AFTER_ANY_UPSTREAM_CONTENT_CHANGE

GROUP = "report"
REPORT_DIR = "report"


def report_paths(data_root: Path | str) -> ReportPaths:
    """Where the report asset writes (``<data_root>/report/``): one place, so the CLI can point at it."""
    out = Path(data_root) / REPORT_DIR
    return ReportPaths(html=out / HTML_NAME, json=out / JSON_NAME)


def report_metadata(data: ReportData, paths: ReportPaths) -> dict[str, object]:
    """What the UI shows for a report: where it is, which sections ran (and why not), the leaderboard."""
    sections = data.sections.values()
    rows = ["| section | status | note |", "|---|---|---|"]
    for s in sections:
        note = s.note.replace("|", "\\|") if s.status != "ok" else ""
        rows.append(f"| {s.title} | {s.status} | {note} |")
    return {
        "html": dg.MetadataValue.path(str(paths.html)),
        "json": dg.MetadataValue.path(str(paths.json)),
        "sections_ok": sum(1 for s in sections if s.status == "ok"),
        "sections_not_run": sorted(s.key for s in sections if s.status != "ok"),
        "section_status": dg.MetadataValue.md("\n".join(rows)),
        "leaderboard": dg.MetadataValue.md(leaderboard_markdown(data)),
        "n_personalities": int(data.meta.get("n_personalities", 0)),
        "methods": list(data.meta.get("methods", [])),
        "judges": list(data.meta.get("judges", [])),
    }


def build_assets(cfg: EvalConfig) -> list[dg.AssetsDefinition]:
    @dg.asset(
        group_name=GROUP,
        deps=[
            dg.AssetDep("leaderboard"),
            dg.AssetDep("premise_verdicts", partition_mapping=dg.AllPartitionMapping()),
        ],
        kinds={"html", "json"},
        automation_condition=AFTER_ANY_UPSTREAM_CONTENT_CHANGE,
        description="One self-contained HTML report and a JSON of the same numbers: the leaderboard, the "
        "paper's analyses and the premise audit, from every table under the data root (absent ones: not run).",
    )
    def report(context: dg.AssetExecutionContext, eval_config: EvalConfigResource) -> dg.MaterializeResult:
        run_cfg = eval_config.get()
        # The configured embedder and methods, so the report measures overlap with the model the run
        # retrieves with and leaves out tables of methods dropped from the config since.
        data = build_report(
            run_cfg.data_root,
            categories_csv=run_cfg.categories_csv,
            embedder=configured_embedder(run_cfg.embedding_model, run_cfg.effective_embedding_api_base),
            methods=run_cfg.methods,
            seed=run_cfg.seed,
        )
        target = report_paths(run_cfg.data_root)
        paths = write_report(run_cfg.data_root, target.html.parent, report_data=data)
        context.log.info(f"report written to {paths.html}")
        return dg.MaterializeResult(metadata=report_metadata(data, paths))

    return [report]
