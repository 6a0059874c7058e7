"""The whole graph without Dagster (the step table run by ``runner.run_evaluation``): tables, Parquet layout, leaderboard, and the real offline gateway."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from fakes import ScriptedGateway

from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.factories import make_gateway
from interviewsim_core.pipeline.runner import TABLE_STEPS, run_evaluation, stored_inputs
from interviewsim_core.pipeline.steps import BY_NAME, Cell
from interviewsim_core.pipeline.storage import partition_path, read_frame
from interviewsim_core.pipeline.tables import KEY_COLUMNS, LEADERBOARD_METRICS, PER_METHOD, SCHEMAS

PIDS = ["SYN_AUERLUND", "SYN_KAVANEK"]
METHODS = ("simple", "chrono-5", "hybrid-2-2")


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("direct")
    # Scripted (non-offline) judges and a retrieval method: the offline embedder must be chosen explicitly.
    cfg = EvalConfig(data_root=root, methods=METHODS, embedding_model="offline/hashing",
                     judges=({"model": "scripted/a", "label": "judge-a"}, {"model": "scripted/b", "label": "judge-b"}))
    gw = ScriptedGateway()
    lines: list[str] = []
    tables = run_evaluation(cfg, gateway=gw, personalities=PIDS, progress=lines.append)
    return cfg, gw, tables, lines


def test_returns_every_table_with_its_schema_and_unique_keys(run):
    _, gw, tables, lines = run
    assert list(tables) == list(TABLE_STEPS)
    for name, df in tables.items():
        assert list(df.columns) == SCHEMAS[name].names, name
        assert not df.duplicated(list(KEY_COLUMNS[name])).any(), name
    # One gateway batch per wave, across all steps and partitions ready in it: (1) builders, reference PS,
    # generations; (2) MCQ items, judgments, premise pass 1; (3) MCQ answering, premise pass 2.
    assert gw.batches == 3
    assert [line.split(":")[0] for line in lines if line.startswith("wave")] == ["wave 1", "wave 2", "wave 3"]


def test_row_counts(run, splits):
    _, _, t, _ = run
    n_test = sum(len(splits[p].test_pairs) for p in PIDS)
    n_judges, n_methods = 2, len(METHODS)
    assert len(t["generations"]) == n_test * n_methods
    assert len(t["content_similarity"]) == len(t["factual_consistency"]) == n_test * n_methods * n_judges
    assert len(t["reference_personality"]) == len(PIDS) * 5 * 3 * n_judges
    assert len(t["generated_personality"]) == len(PIDS) * n_methods * 5 * 3 * n_judges
    assert len(t["mcq_items"]) == n_test * 2 and len(t["mcq_answers"]) == n_test * 2 * n_methods
    assert len(t["method_scores"]) == len(PIDS) * n_methods * n_judges
    # per view (common, all-valid): 3 judged metrics per judge + 4 judge-independent MCQ metrics, per method
    assert len(t["leaderboard"]) == 2 * n_methods * (3 * n_judges + 4)
    assert len(t["fact_summary"]) == len(PIDS)


def test_parquet_layout_matches_returned_tables(run):
    cfg, _, t, _ = run
    root = cfg.data_root
    for name, df in t.items():
        if name in ("leaderboard", "user_premise_verdicts"):
            back = read_frame(partition_path(root, name))
        elif name in PER_METHOD:
            back = pd.concat([read_frame(partition_path(root, name, p, m)) for p in PIDS for m in METHODS])
        else:
            back = pd.concat([read_frame(partition_path(root, name, p)) for p in PIDS])
        keys = list(KEY_COLUMNS[name])
        a = df.sort_values(keys).reset_index(drop=True)
        b = back.sort_values(keys).reset_index(drop=True)
        pd.testing.assert_frame_equal(a, b, check_dtype=False, obj=name)
    leftovers = [f for _, _, fs in os.walk(root) for f in fs if f.endswith(".tmp")]
    assert leftovers == []


def test_leaderboard_macro_averages_recomputed(run):
    _, _, t, _ = run
    scores, board = t["method_scores"], t["leaderboard"]
    assert set(board["view"]) == {"common", "all_valid"}
    for rec in board[board["view"] == "all_valid"].to_dict("records"):
        judge = rec["judge"] if isinstance(rec["judge"], str) else scores["judge"].min()
        rows = scores[(scores.method == rec["method"]) & (scores.judge == judge)]
        vals = [v for v in rows[rec["metric"]] if not np.isnan(v)]
        assert rec["n_personalities"] == len(vals) == len(PIDS)
        assert rec["value"] == pytest.approx(sum(vals) / len(vals))
        assert rec["ci_low"] <= rec["value"] + 1e-12 and rec["value"] <= rec["ci_high"] + 1e-12
        assert rec["metric"] in LEADERBOARD_METRICS and rec["embedding_model"] == "offline/hashing"
    # Every output valid: the common set is every cell, so both views agree.
    common = board[board["view"] == "common"].reset_index(drop=True)
    valid = board[board["view"] == "all_valid"].reset_index(drop=True)
    assert common["value"].tolist() == pytest.approx(valid["value"].tolist(), nan_ok=True)
    assert (common["coverage"] == 1.0).all() and not common["below_coverage"].any()


def test_unknown_personality_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="NOBODY"):
        run_evaluation(EvalConfig(data_root=tmp_path), gateway=ScriptedGateway(), personalities=["NOBODY"])


def test_real_gateway_offline_model_and_cache(tmp_path):
    """The real gateway and the offline litellm provider; a re-run is served from the cache."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    cfg = EvalConfig(data_root=tmp_path, methods=("memory-3",), mcq_options=(3,))
    gw = make_gateway(cfg)
    t = run_evaluation(cfg, gateway=gw, personalities=PIDS[:1])
    assert gw.stats.calls_made > 0
    for name in ("fact_summary", "atomic_items", "mcq_items", "generations", "content_similarity",
                 "factual_consistency", "reference_personality", "generated_personality", "mcq_answers"):
        assert len(t[name]) and (t[name]["status"] == "ok").all(), name
        assert t[name]["model"].eq("offline/extractive").all()
    assert t["method_scores"][["cs_mean", "contradiction_ratio", "ps_alignment", "mcq3_accuracy"]].notna().all().all()
    assert t["method_scores"]["mcq4_accuracy"].isna().all()  # no 4-option run configured
    gw2 = make_gateway(cfg)
    t2 = run_evaluation(cfg, gateway=gw2, personalities=PIDS[:1], write=False)
    assert gw2.stats.calls_made == 0
    assert t2["generations"]["cache_hit"].all()
    pd.testing.assert_frame_equal(t["method_scores"].drop(columns=[]), t2["method_scores"], check_dtype=False)


def test_embedder_choice_follows_config():
    from interviewsim_core.embeddings import HashingEmbedder
    from interviewsim_core.factories import make_embedder

    assert isinstance(make_embedder(EvalConfig()), HashingEmbedder)
    remote = make_embedder(EvalConfig(embedding_model="openai/text-embedding-3-small",
                                      api_base="http://127.0.0.1:9/v1"))
    assert not isinstance(remote, HashingEmbedder) and "text-embedding-3-small" in remote.name


def test_every_row_leads_to_the_prompt_it_sent(tmp_path):
    """The audit trail: a table row's cache_key, through `interviewsim cache show`, gives back the very
    messages the gateway sent for it (rebuilt from the packed prompt store)."""
    import json

    from typer.testing import CliRunner

    from interviewsim_cli import app
    from interviewsim_core.pipeline.generation import plan_generations
    from interviewsim_core.pipeline.runner import load_splits

    cfg = EvalConfig(data_root=tmp_path, methods=("chrono-5",), mcq_options=(3,))
    t = run_evaluation(cfg, gateway=make_gateway(cfg), personalities=PIDS[:1])
    for name in ("generations", "content_similarity", "mcq_answers", "premise_verdicts"):
        col = "pass1_cache_key" if name == "premise_verdicts" else "cache_key"
        assert t[name][col].notna().all() and t[name][col].str.fullmatch("[0-9a-f]{64}").all(), name
    row = t["generations"].iloc[0]
    planned = {p.row["qa_id"]: p for p in plan_generations(load_splits(cfg, PIDS[:1])[PIDS[0]], "chrono-5",
                                                              cfg.effective_generator)}
    sent = [dict(m) for m in planned[row["qa_id"]].request.messages]
    out = CliRunner().invoke(app, ["cache", "show", row["cache_key"], "--cache", str(cfg.effective_cache_path),
                                   "--json"])
    assert out.exit_code == 0, out.output
    shown = json.loads(out.output)
    assert [dict(m) for m in shown["messages"]] == sent and shown["raw"] == row["raw_output"]


def test_stored_inputs_reads_what_the_run_wrote_and_names_a_missing_one(run, tmp_path):
    """A partition's inputs read back from the data root (how a run records what the action's worker made) are
    what the run computed it from; a required input not written is an error naming it, an optional one is left out."""
    cfg, _gw, tables, _lines = run
    step, person = BY_NAME["personality_scores"], PIDS[0]
    got = stored_inputs(cfg, step, Cell(person), PIDS, list(METHODS))
    assert sorted(got["method_scores"]) == sorted(METHODS)
    mine = tables["method_scores"][tables["method_scores"]["personality_id"] == person]
    assert sorted(pd.concat(got["method_scores"].values())["method"]) == sorted(mine["method"])
    empty = cfg.model_copy(update={"data_root": tmp_path})
    assert stored_inputs(empty, step, Cell(person), PIDS, list(METHODS)) == {"method_scores": {}}  # optional
    with pytest.raises(FileNotFoundError, match=f"content_similarity reads generations {person}/simple"):
        stored_inputs(empty, BY_NAME["content_similarity"], Cell(person, "simple"), PIDS, list(METHODS))
