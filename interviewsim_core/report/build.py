"""Build the report from a data root (or from tables in memory) and write report.html + report.json.

Every section is computed independently and degrades to an explicit "not run" note when its
inputs are absent, so a partial run (one method, no premise, one judge) still gets a report.
"""

from __future__ import annotations

import math

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

import pandas as pd

from ..atomic_files import atomic_write_text
from ..dataroot import as_root
from ..embeddings import Embedder
from ..errors import GatewayError
from ..metrics.human_agreement import human_agreement, load_human_labels
from ..metrics.leaderboard import DEFAULT_COVERAGE_THRESHOLD, empty_reason
from ..metrics.ps_stability import PAPER_STABILITY, stability_summary
from ..metrics.registry import family
from ..pipeline.expected import bad_outputs, valid_inputs_reason
from ..pipeline.tables import empty_frame
from . import agreement, breakdowns, cost, generators, leaderboard, mcq_analyses, overlap, paired
from .validity import validity_table
from .catalog import order_methods, readable
from .loading import REPORT_TABLES, load_tables, read_asset
from .model import ReportData, Section

__all__ = ["ReportPaths", "build_report", "write_report", "leaderboard_markdown"]

HTML_NAME = "report.html"
JSON_NAME = "report.json"


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    json: Path


def _not_run(key: str, title: str, note: str) -> Section:
    return Section(key, title, "not_run", note)


def _not_run_reason(table: str, tables: dict[str, pd.DataFrame] | None) -> str | None:
    """"not run: 0 valid fact summaries (1 invalid of 1)" when ``table``'s step had no valid input, or None."""
    why = valid_inputs_reason(table, tables) if tables is not None else None
    return f"not run: {why}" if why else None


def _outputs_reason(df: pd.DataFrame, family_key: str, tables: dict[str, pd.DataFrame] | None = None) -> str:
    """Why a judgment table gives nothing to analyse, with counts ("0 valid FC judgments (38 of 38 invalid)").

    An empty table whose step had no valid input (FC after an invalid fact summary) says that input.
    """
    fam = family(family_key)
    if df.empty:
        return f"No {fam.source} table: {_not_run_reason(fam.source, tables) or 'not run'}."
    st = df["status"].value_counts()
    n_ok, inv, fail = int(st.get("ok", 0)), int(st.get("invalid", 0)), int(st.get("failed", 0))
    reason = empty_reason(fam, len(df), n_ok, inv, fail, len(df) - n_ok - inv - fail)
    return (reason or f"{n_ok} of {len(df)} {fam.noun} valid") + "."


def _unique(df: pd.DataFrame, col: str) -> list[str]:
    return sorted(str(v) for v in df[col].dropna().unique()) if col in df.columns and not df.empty else []


def _meta(tables: dict[str, pd.DataFrame], data_root: Path | None, title: str | None,
          coverage_threshold: float, first_label: str) -> dict:
    ms, heldout = tables["method_scores"], tables["heldout_split"]
    people = sorted(set(_unique(heldout, "personality_id")) | set(_unique(ms, "personality_id")))
    cs = tables["content_similarity"]
    judge_models = ({str(j): sorted(g["model"].dropna().unique().tolist()) for j, g in cs.groupby("judge")}
                    if not cs.empty else {})
    for j in _unique(ms, "judge"):
        judge_models.setdefault(j, [])
    builders = sorted(set(_unique(tables["fact_summary"], "model")) | set(_unique(tables["mcq_items"], "model")))
    n_test = int((heldout["partition"] == "test").sum()) if not heldout.empty else 0
    n_train = int((heldout["partition"] == "train").sum()) if not heldout.empty else 0
    # Every status column of every table, as the run summary counts them (pipeline.expected).
    invalid = sum(bad_outputs(t)[0] for t in tables.values())
    return {
        "title": title or (f"InterviewSim report: {data_root.name}" if data_root else "InterviewSim report"),
        "data_root": str(data_root) if data_root else None,
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "personalities": people,
        "n_personalities": len(people),
        "n_heldout_questions": n_test,
        "n_training_pairs": n_train,
        "methods": order_methods(set(_unique(ms, "method")) | set(_unique(tables["generations"], "method"))),
        "judges": sorted(judge_models),
        "judge_models": judge_models,
        "generator_models": _unique(tables["generations"], "model"),
        # The generators that have a method key (issue 44): the first (plain keys) first.
        "generators": generators.generators_in(set(_unique(ms, "method")) | set(_unique(tables["generations"], "method")),
                                               first_label),
        # Retrieval methods' numbers depend on it: recorded on every method_scores row.
        "embedding_models": [e for e in _unique(ms, "embedding_model") if e],
        "coverage_threshold": coverage_threshold,
        "builder_models": builders,
        "mcq_options": sorted(int(n) for n in tables["mcq_answers"]["n_options"].dropna().unique())
        if not tables["mcq_answers"].empty else [],
        "rows": {name: int(len(t)) for name, t in tables.items()},
        "invalid_or_failed_outputs": invalid,
        "ps_vote_sampling": _ps_vote_sampling(tables),
    }


def _ps_vote_sampling(tables: dict[str, pd.DataFrame]) -> str:
    """How the PS votes were sampled, read from the vote rows (votes per trait and side, temperatures)."""
    votes = [t for t in (tables["reference_personality"], tables["generated_personality"]) if not t.empty]
    if not votes:
        return "not run"
    rows = pd.concat(votes, ignore_index=True)
    n = int(rows["vote_index"].max()) + 1
    temps = sorted({"provider default" if pd.isna(v) else f"{float(v):g}"
                    for v in rows.get("vote_temperature", pd.Series([float("nan")]))})
    return f"{n} votes per trait and side, temperature {', '.join(temps)}"


def _leaderboard_section(ms: pd.DataFrame, seed: int, threshold: float,
                         first_label: str | None) -> tuple[Section, pd.DataFrame]:
    """``first_label``: the first generator's label when the study has several (the rows then carry ``generator``
    and ``base_method``), else None (a one-generator leaderboard stays as it was)."""
    title = "Leaderboard (macro averages over personalities)"
    if ms.empty:
        return _not_run("leaderboard", title, "No method_scores table: the evaluation has not run."), ms
    board = leaderboard.leaderboard(ms, seed=seed, coverage_threshold=threshold,
                                    method_order=order_methods(ms["method"]))
    if first_label is not None:
        board = generators.with_generators(board, first_label)
    note = (f"Per judge, methods are compared on the same cells: the held-out questions (CS, FC), "
            f"personalities (PS) and MCQ items that every method with at least {threshold:.0%} coverage has a "
            f"valid value for (the paper's identical test sets). Per-personality values averaged with equal weight "
            f"per personality, 95% percentile bootstrap intervals over personalities; never averaged across judges. "
            f"Best per judge in bold; a method under the coverage threshold is flagged and never marked best. "
            f"MCQ is exact-match and judge-independent; a malformed MCQ answer scores 0 / -0.5 (seed 000). "
            f"Empty cells say why."
            + (" Several generators: every generator's methods are rows (the first generator's keys are the plain "
               "method names, another's <label>/<method>), on the same common cells, best over all of them; the "
               "calibration methods are shared." if first_label is not None else ""))
    return Section("leaderboard", title, "ok", note,
                   {"leaderboard": board, "coverage": leaderboard.coverage_table(board)}), board


def _calibration_section(board: pd.DataFrame, t: dict[str, pd.DataFrame], root) -> Section:
    from . import calibration as cal
    from ..strategies.calibration import CALIBRATION_METHODS

    title = "Calibration: normalised scores and judge audits"
    if board.empty and t["generations"].empty:
        return _not_run("calibration", title, "No leaderboard and no generations: the evaluation has not run.")
    gens, fc = t["generations"], t["factual_consistency"]
    if root is not None and "generated" not in gens.columns and not gens.empty:
        gens = cal.read_lengths(root)  # lengths, not texts
    if root is not None and "explanation" not in fc.columns and not fc.empty:
        fc = cal.read_reference_contradictions(root)

    ran = sorted(set(t["generations"]["method"].astype(str)) & set(CALIBRATION_METHODS)) \
        if not t["generations"].empty else []
    corr, adjusted = cal.length_audit(t["content_similarity"], gens)
    selfpref = cal.self_preference(pd.concat([t["content_similarity"], t["factual_consistency"]], ignore_index=True)
                                   if not t["content_similarity"].empty else t["content_similarity"], t["generations"])
    tables = {"normalised": cal.normalised_table(board), "length_correlation": corr, "length_adjusted": adjusted,
              "self_preference": selfpref, "reference_contradictions": cal.reference_contradictions(fc)}
    how = ("normalised = (method - floor) / (ceiling - floor) per judge and metric, ceiling = reference (the "
           "person's own held-out answer), floor = copy-nearest (the nearest training answer) or, without it, "
           "other-person; 0 = floor, 1 = ceiling; 95% bootstrap over personalities; all_valid cells. "
           "Undefined values say why (a calibration not run, or ceiling = floor). docs/CALIBRATION.md.")
    note = (f"Calibration methods run: {', '.join(ran) if ran else 'none (add reference and copy-nearest to methods)'}. "
            + how + " " + cal.self_preference_note(selfpref)
            + f" Contradictions of the reference (each a fact-summary or judge error): "
              f"{len(tables['reference_contradictions'])}.")
    return Section("calibration", title, "ok", note, tables)


def _validation_section(root) -> Section:
    """The paper's human validation figures from every study under the data root (``validation``)."""
    from ..validation import list_studies, load_labels, load_study, validation_figures

    title = "Human validation (the paper's protocol)"
    studies = list_studies(root) if root is not None and isinstance(root, Path) else []
    if not studies:
        return _not_run("human_validation", title, "No study under <data_root>/studies: create one in the explorer "
                        "(Studies page) to run the paper's protocol (docs/CALIBRATION.md).")
    frames, counts = [], []
    for sid in studies:
        study = load_study(root, sid)
        labels = load_labels(root, study)
        frames.append(validation_figures(study, labels).assign(study_id=sid))
        counts.append(f"{sid}: {len(study.tasks)} tasks, {len(labels)} label rows")
    df = pd.concat(frames, ignore_index=True)
    note = ("Per study (" + "; ".join(counts) + "). Count / n with a 95% Wilson interval (kappas: bootstrap over "
            "tasks). Final label: the two reviewers' shared answer or the adjudication; CS ordering: a human Tie "
            "counts as not agreeing with the judge's order. docs/CALIBRATION.md.")
    return Section("human_validation", title, "ok", note, {"validation_figures": df})


def _paired_section(ms: pd.DataFrame, pairs: Sequence[tuple[str, str]] | None, seed: int) -> Section:
    title = "Paired tests between methods"
    if ms.empty:
        return _not_run("paired_tests", title, "No method_scores table: the evaluation has not run.")
    df = paired.paired_tests(ms, pairs=pairs, seed=seed)
    if df.empty:
        return _not_run("paired_tests", title, "None of the default comparisons (each method vs. simple, "
                        "chrono-1000 vs. memory-100, chrono-100/500/1000, wiki-long vs. wiki) has both methods run.")
    note = ("Difference a - b of per-personality values, each over the questions (or MCQ items) both methods have "
            "a valid value for, paired over personalities; two-sided sign-flip "
            "permutation test (exact enumeration up to 20 non-zero differences, Monte Carlo above). With few "
            "personalities no p-value can be small. " + HOLM_NOTE)
    return Section("paired_tests", title, "ok", note, {"paired_tests": df})


HOLM_NOTE = ("p (Holm): Holm's step-down adjustment over the table's tests of each judge and metric, which keeps "
             "the chance of any false p < 0.05 among them at 5%; bold rows have p (Holm) < 0.05.")
"""How every paired-tests table's ``p_holm`` is made (``paired.with_holm``), said under each."""


GENERATORS_HOWTO = ("add generators with `generators:` in the config (a list of models; the first keeps the plain "
                    "method names) or `--generators A,B` on `interviewsim run`")


def _generators_section(ms: pd.DataFrame, board: pd.DataFrame, gens: list[str], first_label: str,
                        seed: int) -> Section:
    title = "Generators: each model simulating the personality, method by method"
    if len(gens) < 2:
        what = f"one generator ({gens[0]})" if gens else "no generator"
        return _not_run("generators", title, f"Comparing generators needs at least two; this study has {what}: "
                        f"{GENERATORS_HOWTO}.")
    if board.empty:
        return _not_run("generators", title, "No method_scores table: the evaluation has not run.")
    note = (f"Generators {', '.join(gens)} (the first, {first_label}, has the plain method names). Values are the "
            "leaderboard's (common cells, per judge; MCQ judge-independent), the calibration methods left out: they "
            "are shared, and every generator is normalised against the same ones (Calibration section). Paired "
            "tests: for each method, each other generator against the first on the same personalities and cells "
            "(a - b: the other minus the first), the sign-flip permutation test of the method tests. " + HOLM_NOTE
            + " The plot: Content Similarity against Contradiction Ratio per judge, one point per generator and "
              "method (up and to the left is better).")
    return Section("generators", title, "ok", note, {
        "by_generator": generators.generator_table(board),
        "paired_generators": generators.generator_paired_tests(ms, first_label, seed=seed)},
        extra={"generators": gens, "first_generator": first_label})


def _agreement_section(tables: dict[str, pd.DataFrame], judges: list[str]) -> Section:
    title = "Agreement between judges"
    if len(judges) < 2:
        what = f"only one judge ({judges[0]})" if judges else "no judge"
        return _not_run("judge_agreement", title, f"Judge agreement needs at least two judges; this run has {what}.")
    df = agreement.judge_agreement(tables)
    note = ("Items both judges judged validly. FC: Cohen's kappa (3-way and Contradiction vs. not); CS: linearly "
            "weighted kappa over 1-5 and Spearman; PS: modal trait levels, weighted kappa over Low<Neutral<High.")
    return Section("judge_agreement", title, "ok", note, {"judge_agreement": df})


HUMAN_LABELS_HOWTO = ("optional CSV with columns personality_id, method, qa_id, metric, value; metrics cs, fc, "
                      "mcq_item_valid; `interviewsim report --human-labels FILE` or `human_labels_csv` in the config")


def _human_section(tables: dict[str, pd.DataFrame], labels: pd.DataFrame | None, source: str | None) -> Section:
    title = "Judge agreement with human labels"
    if labels is None:
        return _not_run("human_agreement", title, f"No human labels file given ({HUMAN_LABELS_HOWTO}).")
    if labels.empty:
        return _not_run("human_agreement", title, f"The human labels file {source} has no label rows.")
    df = human_agreement(labels, tables)
    # A kappa or Spearman over matched items can still be undefined: say so instead of a bare dash.
    undefined = df["value"].isna() & (df["n"] > 0) & (df["note"] == "")
    df.loc[undefined, "note"] = ("undefined: the human labels or the judge's values do not vary over the "
                                 "matched items")
    counts = labels["metric"].value_counts()
    have = ", ".join(f"{int(counts[m])} {m}" for m in ("cs", "fc", "mcq_item_valid") if m in counts)
    note = (f"Each judge against the human labels of {source} ({have} labels), on the labelled items the judge "
            "judged validly (n). CS: linearly weighted kappa over 1-5 and Spearman; FC: Cohen's kappa, 3-way and "
            "Contradiction vs. not; MCQ item validity: precision, the share of the pipeline's valid items "
            "(builder model in the judge column) that a person also found valid. The paper validated its "
            "judges this way (section 3.3).")
    return Section("human_agreement", title, "ok", note, {"human_agreement": df}, extra={"labels_file": source})


def _stability_section(tables: dict[str, pd.DataFrame], seed: int) -> Section:
    title = "PS judge stability"
    per = tables["ps_stability"]
    if per.empty:
        return _not_run("ps_stability", title, (
            "No ps_stability table: the PS judge stability check (paper 3.3) has not run. Enable it with "
            "`ps_stability: true` in the config (or INTERVIEWSIM_PS_STABILITY=true); it costs 15 judge calls "
            "per personality and judge over the training answers."))
    summary = stability_summary(per, seed=seed)
    summary = summary.assign(reason=[
        "" if r.n_personalities else
        f"undefined for all {r.n_undefined} personalities (a trait lacks three valid votes on a side)"
        for r in summary.itertuples()])
    note = (f"Per judge, each personality's Big Five profile inferred from its training answers and from its "
            f"held-out answers, aligned with the seed's ordinal formula (the PS metric's); mean over personalities "
            f"with a 95% percentile bootstrap interval. The paper reports {PAPER_STABILITY:.1%} over 100 "
            f"personalities (section 3.3): a judge far below it gives one person different profiles depending on "
            f"which interviews it reads, and its PS column measures little. n undefined: personalities with a "
            f"trait lacking three valid votes on a side (never a partial profile).")
    return Section("ps_stability", title, "ok", note, {"summary": summary, "per_personality": per},
                   extra={"paper_alignment": PAPER_STABILITY})


def _tag_section(tables: dict[str, pd.DataFrame]) -> Section:
    title = "Contradiction ratio by question tag"
    df = breakdowns.by_tag(tables)
    if df.empty:
        why = ("No heldout_split table: no question tags." if tables["heldout_split"].empty
               else _outputs_reason(tables["factual_consistency"], "fc", tables))
        return _not_run("tag_breakdown", title, why)
    return Section("tag_breakdown", title, "ok", "Pooled over judged answers; a question with several tags counts "
                   "under each.", {"by_tag": df})


def _category_section(tables: dict[str, pd.DataFrame], categories_csv: Path | None, root) -> Section:
    """By category: from the given categories file, else from the data root's own curation (``qa_tags``)."""
    title = "Contradiction ratio by personality category"
    if categories_csv is not None:
        cats, source = breakdowns.load_categories(categories_csv), "the categories file"
    else:
        cats = breakdowns.categories_from_tags(read_asset(root, "qa_tags") if root is not None else pd.DataFrame())
        source = "the data root's curation (qa_tags)"
    if cats.empty:
        return _not_run("category_breakdown", title, "No personality categories: the data root holds no curation "
                        "that tagged them (qa_tags) and no categories file was given (a CSV with columns "
                        "personality_id, category, e.g. a curated corpus's categories.csv: `interviewsim report "
                        "--categories FILE`).")
    df = breakdowns.by_category(tables, cats)
    if df.empty:
        return _not_run("category_breakdown", title, f"No valid FC judgment for the personalities in {source}: "
                        + _outputs_reason(tables["factual_consistency"], "fc", tables))
    known = set(cats["personality_id"])
    unlisted = sorted(set(tables["method_scores"].get("personality_id", [])) - known)
    note = (f"Pooled over judged answers; categories from {source}."
            + (f" Without a category there: {', '.join(unlisted)}." if unlisted else ""))
    return Section("category_breakdown", title, "ok", note, {"by_category": df})


def _mcq_section(tables: dict[str, pd.DataFrame]) -> Section:
    title = "MCQ diagnostics"
    answers = tables["mcq_answers"]
    scored = answers[answers["reward"].notna()] if not answers.empty else answers
    if scored.empty:
        return _not_run("mcq", title, _mcq_empty_reason(tables["mcq_items"], answers, tables.get("atomic_items")))
    n_train = mcq_analyses.training_pairs_per_personality(tables["heldout_split"])
    if n_train.empty:
        n_train = tables["method_scores"].drop_duplicates("personality_id").set_index("personality_id")[
            "n_train_pairs"] if not tables["method_scores"].empty else n_train
    return Section("mcq", title, "ok", "Pooled over answered items; judge-independent.", {
        "prediction_distribution": mcq_analyses.prediction_distribution(answers),
        "accuracy_by_position": mcq_analyses.accuracy_by_position(answers),
        "length_bias": mcq_analyses.length_bias(answers, tables["mcq_items"]),
        "training_groups": mcq_analyses.training_groups(answers, n_train),
    })


def _mcq_empty_reason(items: pd.DataFrame, answers: pd.DataFrame, atomic: pd.DataFrame | None = None) -> str:
    """Why there is no MCQ answer to analyse: no items, items all invalid/failed, answers all failed, or not run.

    No MCQ item at all because every atomic item was invalid is said as such, not counted as invalid
    MCQ items (issue 22: "12 of 12 invalid 3-option items" where no MCQ item was ever generated).
    """
    if items.empty and answers.empty:
        why = _not_run_reason("mcq_items", {"atomic_items": atomic} if atomic is not None else None)
        if why and atomic is not None and not atomic.empty:
            return f"No MCQ item was generated ({why}): MCQ building and answering had nothing to work on."
        return "No mcq_items and no mcq_answers table: MCQ building and answering have not run."
    parts = []
    for n_opt in sorted(set(items.get("n_options", pd.Series(dtype=int)).dropna().astype(int))
                        | set(answers.get("n_options", pd.Series(dtype=int)).dropna().astype(int))):
        fam = family(f"mcq{n_opt}")
        it = items[items["n_options"] == n_opt] if not items.empty else items
        an = answers[answers["n_options"] == n_opt] if not answers.empty else answers
        st = it["status"].value_counts() if not it.empty else pd.Series(dtype=int)
        failed_answers = int((an["status"] == "failed").sum()) if not an.empty else 0
        expected = max(len(it), len(an))
        not_run = max(0, expected - int(st.get("invalid", 0)) - int(st.get("failed", 0)) - failed_answers)
        parts.append(empty_reason(fam, expected, 0, int(st.get("invalid", 0)),
                                  int(st.get("failed", 0)) + failed_answers, not_run))
    return "; ".join(parts) + "."


def _ablation_section(board: pd.DataFrame) -> Section:
    title = "Memory ablation (relevance 10/50/100 vs. random 100)"
    df = breakdowns.memory_ablation(leaderboard.view_rows(board, "common"))
    if df.empty:
        return _not_run("memory_ablation", title, "Needs at least two of random-100, memory-10, memory-50, "
                        "memory-100 to have run.")
    return Section("memory_ablation", title, "ok", "Leaderboard rows of the ablation methods; best in bold.",
                   {"memory_ablation": df})


def _cost_section(tables: dict[str, pd.DataFrame]) -> Section:
    title = "Context size and cost per method"
    df = cost.cost_per_method(tables)
    if df.empty:
        return _not_run("cost", title, "No generations table: nothing to measure.")
    return Section("cost", title, "ok", "Measured from the call columns; tokens are recorded on cache hits too. "
                   "Costs from the provider price map (zero for the offline model).", {"cost": df})


def _validity_section(tables: dict[str, pd.DataFrame]) -> Section:
    title = "Output validity per contract and constraint"
    df = validity_table(tables)
    if df.empty:
        return _not_run("validity", title, "No model-call table: nothing to count.")
    return Section("validity", title, "ok", "Valid (ok) outputs of each prompt contract, by the constraint sent "
                   "(json_schema, json_object, grammar or off; llm/constraints.py). Truncated: replies cut at "
                   "their max_tokens cap, counted among the invalid ones when they broke the format.",
                   {"validity": df})


def _overlap_section(tables: dict[str, pd.DataFrame], embedder: Embedder | None) -> Section:
    title = "Train-test topical overlap"
    heldout = tables["heldout_split"]
    if heldout.empty:
        return _not_run("overlap", title, "No heldout_split table.")
    try:
        q = overlap.question_overlap(heldout, embedder)
    except GatewayError as exc:  # the embedding model failed: this section only, the report is still written
        return Section("overlap", title, "failed", f"The embedding model failed, so no similarity could be "
                       f"computed: {exc}")
    strata = overlap.overlap_strata(tables, q)
    if q["best_similarity"].notna().sum() == 0:
        return _not_run("overlap", title, "No personality has both training and held-out questions.")
    name = getattr(embedder, "name", None) or "HashingEmbedder (offline default)"
    summary = pd.DataFrame([{
        "embedder": name, "n_questions": int(q["best_similarity"].notna().sum()),
        "mean_best_similarity": float(q["best_similarity"].mean()),
        "median_best_similarity": float(q["best_similarity"].median()),
        "share_above_0_8": float((q["best_similarity"] > 0.8).mean()),
    }])
    text = heldout[heldout["partition"] == "test"][["personality_id", "qa_id", "question"]]
    closest = (q.dropna(subset=["best_similarity"]).merge(text, on=["personality_id", "qa_id"], how="left")
               .sort_values("best_similarity", ascending=False, kind="stable").head(10).reset_index(drop=True))
    return Section("overlap", title, "ok", "Each held-out question's best cosine similarity to the same "
                   "personality's training questions; metrics recomputed per corpus-wide tercile.",
                   {"summary": summary, "strata": strata, "questions": q, "closest": closest})


def _premise_section(verdicts: pd.DataFrame, embedder: Embedder | None,
                     tables: dict[str, pd.DataFrame] | None = None) -> Section:
    title = "Premise usability of derived artefacts"
    if verdicts.empty:
        why = _not_run_reason("premise_verdicts", tables)
        return _not_run("premise", title, f"No premise verdict: the premise judge {why}." if why else
                        "No premise_verdicts table: the premise judge has not run.")
    from ..premise.clustering import label_cluster_table
    from ..premise.metrics import headline

    h = headline(verdicts)
    note = ("Failure attribution first (seed 002): where the information a FAILed conclusion lacks lives. "
            "Pass rate over PASS/FAIL verdicts; INVALID and ERROR counted beside it.")
    try:
        clusters = label_cluster_table(verdicts, embedder).head(15)
    except GatewayError as exc:  # only the label clusters need the embedder: the verdict numbers stand
        clusters = pd.DataFrame()
        note += f" Label clusters not computed: the embedding model failed: {exc}"
    if not clusters.empty:
        clusters = clusters.assign(members=clusters["members"].map(lambda m: "; ".join(m[:6])),
                                   examples=clusters["examples"].map(lambda e: " | ".join(e[:2])))
    return Section("premise", title, "ok", note, {
        "attribution_split": h.attribution, "overall": h.overall, "by_artifact_kind": h.by_kind,
        "by_personality": h.by_personality, "label_clusters": clusters},
        extra={"cross_check": h.cross_check.model_dump()})


def _only_methods(tables: dict[str, pd.DataFrame], methods: Sequence[str] | None) -> dict[str, pd.DataFrame]:
    """Drop rows of methods not asked for: a data root keeps the Parquet of methods since removed
    from the config, and they must not reappear in the leaderboard or the paired tests."""
    if methods is None:
        return tables
    keep = set(methods)
    return {n: (t[t["method"].isin(keep)].reset_index(drop=True) if "method" in t.columns else t)
            for n, t in tables.items()}


def build_report(
    data_root: Path | str | None = None,
    *,
    tables: dict[str, pd.DataFrame] | None = None,
    categories_csv: Path | str | None = None,
    human_labels_csv: Path | str | None = None,
    embedder: Embedder | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    methods: Sequence[str] | None = None,
    seed: int = 0,
    title: str | None = None,
    coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD,
    first_generator: str | None = None,
) -> ReportData:
    """Compute every section from the tables under ``data_root`` (or the given ``tables``).

    Args:
        tables: table name -> frame, e.g. ``run_evaluation``'s return value; missing names are
            read from ``data_root`` when given, else treated as not run.
        categories_csv: optional CSV (personality_id, category) for the category breakdown; without it,
            the categories the data root's curation gave (``qa_tags``), when it has them.
        human_labels_csv: optional CSV of human judgments (``metrics.human_agreement``) for the
            judge-vs-human agreement section.
        embedder: for the overlap analysis and the premise label clustering; ``HashingEmbedder``
            when None.
        pairs: method pairs to test; default ``paired.default_pairs``.
        methods: report only these methods (rows of any other method in any table are dropped);
            None keeps every method found.
        coverage_threshold: ``EvalConfig.coverage_threshold`` (see ``metrics.leaderboard``).
        first_generator: the study's first generator's label (``config.generator_label``), shown beside its
            plain method keys when the study has several generators; None: read from the generations table
            (``generators.first_generator``).

    Raises:
        ConfigError: the categories file is malformed.
        InputValidationError: the human labels file is malformed (every problem listed; nothing written).
    """
    # Read first: a bad labels file fails before any table is loaded or anything written.
    labels = load_human_labels(human_labels_csv) if human_labels_csv else None
    root = as_root(data_root) if data_root is not None else None
    given = dict(tables or {})
    missing = tuple(n for n in REPORT_TABLES if n not in given)
    if root is not None and missing:
        given.update(load_tables(root, missing))
    t = {n: (given[n] if n in given and given[n] is not None else empty_frame(n)) for n in REPORT_TABLES}
    t = _only_methods(t, methods)
    first_label = generators.first_generator(t["generations"], first_generator)
    meta = _meta(t, root, title, coverage_threshold, first_label)
    several = len(meta["generators"]) > 1
    lb, board = _leaderboard_section(t["method_scores"], seed, coverage_threshold, first_label if several else None)
    sections = [
        lb,
        _calibration_section(board, t, root),
        _validation_section(root),
        _paired_section(t["method_scores"], pairs, seed),
        _generators_section(t["method_scores"], board, meta["generators"], first_label, seed),
        _agreement_section(t, meta["judges"]),
        _human_section(t, labels, str(human_labels_csv) if human_labels_csv else None),
        _stability_section(t, seed),
        _tag_section(t),
        _category_section(t, Path(categories_csv) if categories_csv else None, root),
        _mcq_section(t),
        _ablation_section(board),
        _cost_section(t),
        _validity_section(t),
        _overlap_section(t, embedder),
        _premise_section(t["premise_verdicts"], embedder, t),
    ]
    return ReportData(meta=meta, sections={s.key: s for s in sections})


def leaderboard_markdown(report_data: ReportData, with_ci: bool = True) -> str:
    """The leaderboard (and the paired tests' results significant after Holm's adjustment, between methods and
    between generators) as markdown, for the Dagster leaderboard asset's metadata and the CLI."""
    sec = report_data.section("leaderboard")
    if sec.status != "ok":
        return f"_{sec.note}_"
    parts = [leaderboard.leaderboard_markdown_table(sec.tables["leaderboard"], with_ci=with_ci)]
    cal = report_data.sections.get("calibration")
    norm = cal.tables.get("normalised") if cal is not None else None
    if norm is not None and not norm.empty:
        parts.append("\n**Normalised scores** (0 = floor, 1 = ceiling; all_valid cells; docs/CALIBRATION.md)\n")
        several = "generator" in norm.columns
        parts.append(("| generator | method" if several else "| method")
                     + " | judge | metric | raw | normalised [95% CI] | floor | ceiling |\n|---|---|---|---|---|---|---|"
                     + "---|" * several)
        for r in norm.itertuples():
            judge = leaderboard.md_text(r.judge) if isinstance(r.judge, str) and r.judge else "(MCQ)"
            shown = (f"{r.normalised:.3f} [{r.norm_ci_low:.3f}, {r.norm_ci_high:.3f}]"
                     + (f" ({r.norm_ci_note})" if r.norm_ci_note else "") if not math.isnan(r.normalised)
                     else leaderboard.md_text(r.norm_reason or "undefined"))
            floor = f"{r.norm_floor} {r.floor_value:.3f}" if not math.isnan(r.floor_value) else r.norm_floor or "–"
            ceiling = f"{r.norm_ceiling} {r.ceiling_value:.3f}" if not math.isnan(r.ceiling_value) else r.norm_ceiling or "–"
            raw = "–" if math.isnan(r.value) else f"{r.value:.3f}"
            name = (f"{leaderboard.md_text(r.generator or 'shared')} | {leaderboard.md_text(r.base_method)}"
                    if several else leaderboard.md_text(r.method))
            parts.append(f"| {name} | {judge} | {r.metric} | {raw} | {shown} | "
                         f"{leaderboard.md_text(floor)} | {leaderboard.md_text(ceiling)} |")
    for key, table, heading in (("paired_tests", "paired_tests", "Paired tests"),
                                ("generators", "paired_generators", "Paired tests between generators")):
        sec = report_data.sections.get(key)
        if sec is not None and sec.status == "ok":
            parts += _significant_markdown(sec.tables[table], heading)
    return "\n".join(parts)


def _significant_markdown(tests: pd.DataFrame, heading: str) -> list[str]:
    """The tests of a paired-tests table with a Holm-adjusted p under 0.05 (``paired.with_holm``): the raw p of
    one test among many is not what to read a finding from."""
    sig = tests[tests["p_holm"] < 0.05]
    if not len(sig):
        return []
    out = [f"\n**{heading} with Holm-adjusted p < 0.05** (over each judge and metric's tests)\n",
           "| a | b | judge | metric | a - b | p | p (Holm) |\n|---|---|---|---|---|---|---|"]
    for r in sig.itertuples():
        # MCQ rows carry no judge (NaN in the frame, which is truthy): they are judge-independent.
        judge = leaderboard.md_text(r.judge) if isinstance(r.judge, str) and r.judge else "n/a (MCQ: judge-independent)"
        out.append(f"| {leaderboard.md_text(r.method_a)} | {leaderboard.md_text(r.method_b)} | {judge} | {r.metric} | "
                   f"{readable(r.mean_difference):+.4f} | {r.p_value:.4f} | {r.p_holm:.4f} |")
    return out


def write_report(
    data_root: Path | str,
    out_dir: Path | str | None = None,
    categories_csv: Path | str | None = None,
    embedder: Embedder | None = None,
    *,
    report_data: ReportData | None = None,
    methods: Sequence[str] | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    seed: int = 0,
    coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD,
) -> ReportPaths:
    """Build (unless ``report_data`` is given) and write ``report.html`` and ``report.json``.

    Args:
        out_dir: default ``<data_root>/report``.
        methods, pairs: as in ``build_report`` (ignored when ``report_data`` is given).

    Returns:
        Paths of the two files, both written atomically.
    """
    from .html import render_html

    data = report_data or build_report(data_root, categories_csv=categories_csv, embedder=embedder,
                                       methods=methods, pairs=pairs, seed=seed,
                                       coverage_threshold=coverage_threshold)
    out = as_root(out_dir) if out_dir is not None else as_root(data_root) / "report"
    json_path = atomic_write_text(out / JSON_NAME, json.dumps(data.to_dict(), indent=1, ensure_ascii=False))
    html_path = atomic_write_text(out / HTML_NAME, render_html(data))
    return ReportPaths(html=html_path, json=json_path)
