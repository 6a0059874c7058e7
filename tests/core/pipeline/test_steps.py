"""Every step on the shipped sample through the scripted gateway: shapes, counts, invalid handling."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from fakes import Fail, ScriptedGateway, user_text, valid_reply

from interviewsim_core.contracts import personality
from interviewsim_core.contracts.mcq_generation import KINDS_BY_COUNT
from interviewsim_core.pipeline import references, generation, judges, mcq
from interviewsim_core.pipeline.calls import run_calls
from interviewsim_core.pipeline.scoring import score_method
from interviewsim_core.pipeline.split_tables import split_table
from interviewsim_core.pipeline.tables import SCHEMAS, to_table


def check_schema(df: pd.DataFrame, name: str) -> None:
    assert list(df.columns) == SCHEMAS[name].names
    to_table(df, name)  # every value fits its declared type


@pytest.fixture(scope="module")
def built(split, models):
    gw = ScriptedGateway()
    fact = references.build_fact_summary(split, models["builder"], gw)
    atomic = references.build_atomic_items(split, models["builder"], gw)
    items = references.build_mcq_items(split, atomic, models["builder"], gw, seed=3, option_counts=(3, 4))
    ref = judges.judge_reference_personality(split, models["judges"], gw)
    return {"fact": fact, "atomic": atomic, "items": items, "ref": ref}


def test_split_table(split):
    df = split_table(split)
    check_schema(df, "heldout_split")
    assert (df["partition"] == "test").sum() == len(split.test_pairs)
    assert (df["partition"] == "train").sum() == len(split.train_pairs)
    assert df["qa_id"].is_unique


def test_fact_summary_sees_only_this_personalitys_heldout_responses(split, splits, models):
    planned = references.plan_fact_summary(split, models["builder"])
    assert len(planned) == 1
    text = user_text(planned[0].request)
    for p in split.test_pairs:
        assert " ".join(p.response.split()) in text
    for p in split.train_pairs:
        assert " ".join(p.response.split()) not in text
    for other_id, other in splits.items():
        if other_id != split.personality_id:
            assert all(" ".join(p.response.split()) not in text for p in other.test_pairs)


def test_builder_tables(split, built, models):
    check_schema(built["fact"], "fact_summary")
    assert built["fact"]["source_qa_ids"].tolist() == [[p.qa_id for p in split.test_pairs]]
    check_schema(built["atomic"], "atomic_items")
    assert built["atomic"]["qa_id"].tolist() == [p.qa_id for p in split.test_pairs]
    items = built["items"]
    check_schema(items, "mcq_items")
    assert len(items) == 2 * len(split.test_pairs)  # one per held-out pair and option count
    assert sorted(items["item_id"]) == sorted(f"{p.qa_id}#{n}" for p in split.test_pairs for n in (3, 4))
    for rec in items.to_dict("records"):
        n = rec["n_options"]
        assert list(rec["labels"]) == list("ABCD"[:n])
        assert rec["kinds"][rec["labels"].index(rec["correct_label"])] == "correct"
        assert sorted(rec["kinds"]) == sorted(KINDS_BY_COUNT[n])  # roles kept through the shuffle
        assert rec["shuffle_seed"] == f"3:{rec['personality_id']}:{rec['item_id']}"
    again = references.build_mcq_items(split, built["atomic"], models["builder"],
                                     ScriptedGateway(), seed=3)
    assert again["correct_label"].tolist() == items["correct_label"].tolist()  # reproducible shuffle


def test_reference_personality_counts(split, built, models):
    ref = built["ref"]
    check_schema(ref, "reference_personality")
    assert len(ref) == len(personality.TRAITS) * 3 * len(models["judges"])
    counts = ref.groupby(["judge", "trait"])["vote_index"].apply(sorted)
    assert all(v == [0, 1, 2] for v in counts)


def test_ps_votes_are_distinct_samples(split, models):
    planned = judges.plan_reference_personality(split, models["judges"][:1])
    by_trait = {}
    for p in planned:
        by_trait.setdefault(p.row["trait"], []).append(p.request.sample_index)
    assert by_trait == {t: [0, 1, 2] for t in personality.TRAITS}


@pytest.mark.parametrize("method", ["simple", "wiki-long", "chrono-5", "memory-3", "hybrid-2-2", "random-3"])
def test_generations_one_per_heldout_question(split, models, embedder, method):
    gw = ScriptedGateway()
    df = generation.generate_responses(split, method, models["generator"], gw, embedder, seed=1)
    check_schema(df, "generations")
    assert df["qa_id"].tolist() == [p.qa_id for p in split.test_pairs]
    assert (df["status"] == "ok").all() and df["generated"].str.len().gt(0).all()
    assert set(df["method"]) == {method}
    train_ids = {p.qa_id for p in split.train_pairs}
    for ids, used in zip(df["context_qa_ids"], df["n_context_used"]):
        assert set(ids) <= train_ids and len(ids) == used
    assert df["prompt_tokens"].sum() == 10 * len(df)


def test_judgments_and_scores(split, built, models, embedder):
    gw = ScriptedGateway()
    gens = generation.generate_responses(split, "chrono-5", models["generator"], gw, embedder)
    cs = judges.judge_content_similarity(split, gens, models["judges"], gw)
    fc = judges.judge_factual_consistency(built["fact"], gens, models["judges"], gw)
    gp = judges.judge_generated_personality(gens, models["judges"], gw)
    answers = mcq.answer_mcqs(split, built["items"], "chrono-5", models["generator"], gw, embedder)
    for df, name in [(cs, "content_similarity"), (fc, "factual_consistency"), (gp, "generated_personality"),
                     (answers, "mcq_answers")]:
        check_schema(df, name)
    n, nj = len(split.test_pairs), len(models["judges"])
    assert len(cs) == len(fc) == n * nj and len(gp) == 5 * 3 * nj
    assert len(answers) == 2 * n
    n_groups = len({p.interview_id for p in split.test_pairs}) * 2
    answering = [r for _, r in gw.calls if r.contract == "mcq_answering"]
    assert len(answering) == n_groups  # one call per (held-out interview, option count)

    scores = score_method(split, "chrono-5", gens, cs, fc, built["ref"], gp, answers, models["judges"])
    check_schema(scores, "method_scores")
    assert scores["judge"].tolist() == ["judge-a", "judge-b"]
    for rec in scores.to_dict("records"):
        j = rec["judge"]
        assert rec["cs_mean"] == pytest.approx(cs[cs.judge == j]["score"].mean())
        labels = fc[fc.judge == j]["label"].tolist()
        assert rec["contradiction_ratio"] == pytest.approx(labels.count("Contradiction") / len(labels))
        ref_levels = _levels(built["ref"][built["ref"].judge == j])
        gen_levels = _levels(gp[gp.judge == j])
        dist = sum(abs(_M[ref_levels[t]] - _M[gen_levels[t]]) for t in personality.TRAITS)
        assert rec["ps_alignment"] == pytest.approx(1 - dist / 10)
        for k in (3, 4):
            sub = answers[answers.n_options == k]
            assert rec[f"mcq{k}_accuracy"] == pytest.approx(sub["correct"].mean())
            assert rec[f"mcq{k}_reward"] == pytest.approx(sub["reward"].mean())
        assert rec["n_test_questions"] == n and rec["n_train_pairs"] == len(split.train_pairs)
        assert rec["prompt_tokens"] == 10 * (n + n_groups + 2 * n + 15)
    # rewards follow the retained role, not the label position
    for rec in answers.to_dict("records"):
        expected = {"correct": 1.0, "opposite_negation": -1.0}.get(rec["chosen_kind"], -0.5)
        assert rec["reward"] == expected and rec["correct"] == (rec["chosen_label"] == rec["correct_label"])


_M = {"Low": 1, "Neutral": 2, "High": 3}


def _levels(votes: pd.DataFrame) -> dict[str, str]:
    out = {}
    for trait, grp in votes.groupby("trait"):
        rates = grp.sort_values("vote_index")["rate"].tolist()
        top = max(set(rates), key=rates.count)
        out[trait] = top if rates.count(top) > 1 else "Neutral"
    return out


def test_invalid_and_failed_outputs_are_rows_not_scores(split, built, models, embedder):
    broken_qa = split.test_pairs[0].qa_id

    def script(model, req):
        if req.contract == "content_similarity" and model.name == "judge-a" and req.item_id == broken_qa:
            return '{"score": 9, "explanation": "off the scale"}'
        if req.contract == "factual_consistency" and model.name == "judge-b":
            return Fail("HTTP 503 after retries")
        if req.contract == "personality" and model.name == "judge-a" and req.sample_index == 2:
            return "<rate>Medium</rate> <justification>x</justification>"
        if req.contract == "mcq_answering" and "#3" in req.item_id:
            return "I would pick A for all of them."
        return valid_reply(model, req)

    gw = ScriptedGateway(script=script)
    gens = generation.generate_responses(split, "simple", models["generator"], gw, embedder)
    cs = judges.judge_content_similarity(split, gens, models["judges"], gw)
    fc = judges.judge_factual_consistency(built["fact"], gens, models["judges"], gw)
    gp = judges.judge_generated_personality(gens, models["judges"], gw)
    answers = mcq.answer_mcqs(split, built["items"], "simple", models["generator"], gw, embedder)

    bad = cs[(cs.judge == "judge-a") & (cs.qa_id == broken_qa)].iloc[0]
    assert bad["status"] == "invalid" and pd.isna(bad["score"]) and json.loads(bad["raw_output"])["score"] == 9
    assert bad["parse_error"]
    failed = fc[fc.judge == "judge-b"]
    assert (failed["status"] == "failed").all() and failed["label"].isna().all() and failed["error"].notna().all()
    assert (gp[(gp.judge == "judge-a") & (gp.vote_index == 2)]["status"] == "invalid").all()
    three = answers[answers.n_options == 3]
    assert (three["status"] == "invalid").all() and (three["reward"] == -0.5).all() and (~three["correct"]).all()
    assert three["chosen_label"].isna().all() and (three["chosen_kind"] == "malformed").all()

    scores = score_method(split, "simple", gens, cs, fc, built["ref"], gp, answers, models["judges"])
    a, b = (scores[scores.judge == j].iloc[0] for j in ("judge-a", "judge-b"))
    ok_a = cs[(cs.judge == "judge-a") & (cs.status == "ok")]["score"]
    assert a["cs_invalid"] == 1 and a["cs_n"] == len(split.test_pairs) - 1
    assert a["cs_mean"] == pytest.approx(ok_a.mean())  # invalid left out, not counted as 0
    assert b["fc_failed"] == len(split.test_pairs) and b["fc_n"] == 0 and math.isnan(b["contradiction_ratio"])
    assert b["fc_invalid"] == 0 and b["fc_expected"] == len(split.test_pairs)
    assert a["ps_invalid"] == 5 and math.isnan(a["ps_alignment"])  # a trait short of 3 votes: unscored
    assert not math.isnan(b["ps_alignment"])
    # Malformed answers are scored as the seed says (-0.5) and counted, not dropped.
    assert a["mcq3_reward"] == -0.5 and a["mcq3_accuracy"] == 0.0 and a["mcq3_malformed"] == len(three)
    assert a["mcq3_n"] == len(three) and a["mcq3_failed"] == 0


def test_failed_mcq_group_is_unscored(split, built, models, embedder):
    gw = ScriptedGateway(script=lambda m, r: Fail("timeout") if r.contract == "mcq_answering" else valid_reply(m, r))
    answers = mcq.answer_mcqs(split, built["items"], "wiki", models["generator"], gw, embedder)
    assert (answers["status"] == "failed").all() and answers["reward"].isna().all()


def test_reask_recovers_and_tokens_sum_once_per_group(split, built, models, embedder):
    seen = set()

    def flaky(model, req):
        key = (req.item_id, req.contract)
        if req.contract == "mcq_answering" and key not in seen:
            seen.add(key)
            return "Q1 A"
        return valid_reply(model, req)

    gw = ScriptedGateway(script=flaky, max_reasks=1)
    answers = mcq.answer_mcqs(split, built["items"], "memory-3", models["generator"], gw, embedder)
    assert (answers["status"] == "ok").all() and (answers["attempts"] == 2).all()
    n_calls = sum(1 for _, r in gw.calls if r.contract == "mcq_answering")
    assert answers["prompt_tokens"].sum() == 10 * n_calls
    assert answers.groupby(["n_options", "interview_id"])["position"].apply(lambda s: list(s) == list(
        range(1, len(s) + 1))).all()


def test_invalid_upstream_items_are_skipped(split, built, models, embedder):
    atomic = built["atomic"].copy()
    atomic.loc[0, "status"] = "invalid"
    planned = references.plan_mcq_items(split, atomic, models["builder"], (3,))
    assert len(planned) == len(split.test_pairs) - 1
    fact = built["fact"].assign(status="invalid")
    gens = generation.generate_responses(split, "simple", models["generator"], ScriptedGateway(), embedder)
    assert judges.plan_factual_consistency(fact, gens, models["judges"]) == []


def test_plans_batch_into_one_gateway_call(splits, models, embedder):
    gw = ScriptedGateway()
    plans = {pid: generation.plan_generations(sp, "chrono-5", models["generator"], embedder)
             for pid, sp in list(splits.items())[:3]}
    results = run_calls(gw, [c for p in plans.values() for c in p])
    assert gw.batches == 1
    frames = [generation.assemble_generations(p, results) for p in plans.values()]
    assert [len(f) for f in frames] == [len(splits[pid].test_pairs) for pid in plans]
    with pytest.raises(ValueError, match="share the key"):
        run_calls(gw, plans[next(iter(plans))] * 2)
    with pytest.raises(KeyError, match="no result"):
        generation.assemble_generations(plans[next(iter(plans))], {})
