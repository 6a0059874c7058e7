"""The judges: Content Similarity, Factual Consistency and Personality Similarity (both sides).

Every judgment row names its judge; a judge's invalid outputs stay rows with status 'invalid' and
their raw text, and are counted by ``scoring.py``, never turned into a score. Generations that
themselves failed have no text to judge and get no judgment rows (``metrics/scores.py`` counts
them per judge as failed or invalid from the generation's status).
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ..contracts import content_similarity, factual_consistency, personality
from ..llm.types import ModelConfig
from ..split import HeldOutSplit
from .calls import CallRunner, PlannedCall, Results, assemble, contract_request, run_calls
from .config import DEFAULT_PS_VOTE_TEMPERATURE, PSVoteSampling

PS_VOTES = personality.N_VOTES

PS_VOTE_TEMPERATURE = DEFAULT_PS_VOTE_TEMPERATURE
"""Default sampling temperature of the PS votes (``EvalConfig.ps_vote_temperature``, where the reason is)."""


def vote_model(judge: ModelConfig, vote: int, sampling: PSVoteSampling | None = None) -> ModelConfig:
    """The judge as it is asked for PS vote ``vote`` under ``sampling`` (default: the configured default)."""
    return (sampling or PSVoteSampling()).vote_model(judge, vote)


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    return df[df["status"] == "ok"]


# ---- Personality Similarity -------------------------------------------------------------------

def _plan_votes(table: str, base: dict, responses: Sequence[str], judges: Sequence[ModelConfig],
                key_prefix: tuple, sampling: PSVoteSampling | None) -> list[PlannedCall]:
    if not responses:
        return []  # the contract needs a non-empty collection; nothing to rate is not a rating
    out = []
    for judge in judges:
        for trait in personality.TRAITS:
            messages = personality.build_messages(trait, list(responses))
            for vote in range(PS_VOTES):
                model = vote_model(judge, vote, sampling)
                row = {**base, "judge": judge.name, "trait": trait, "vote_index": vote,
                       "vote_temperature": model.temperature}
                req = contract_request(personality, messages, item_id=f"{trait}#{vote}", sample_index=vote)
                out.append(PlannedCall((table, *key_prefix, judge.name, trait, vote), model, req, row))
    return out


def _ps_payload(v) -> dict:
    return {"rate": v.rate, "justification": v.justification}


def plan_reference_personality(split: HeldOutSplit, judges: Sequence[ModelConfig],
                               sampling: PSVoteSampling | None = None) -> list[PlannedCall]:
    """5 traits x 3 votes per judge over the held-out responses (the reference side)."""
    pid = split.personality_id
    return _plan_votes("reference_personality", {"personality_id": pid},
                       [p.response for p in split.test_pairs], judges, (pid,), sampling)


def assemble_reference_personality(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("reference_personality", planned, results, _ps_payload)


def judge_reference_personality(split: HeldOutSplit, judges: Sequence[ModelConfig], gw: CallRunner,
                                sampling: PSVoteSampling | None = None) -> pd.DataFrame:
    """The ``reference_personality`` table of one personality."""
    planned = plan_reference_personality(split, judges, sampling)
    return assemble_reference_personality(planned, run_calls(gw, planned))


def training_responses(split: HeldOutSplit, max_responses: int | None = None) -> list[str]:
    """The training responses the stability check rates: the latest ``max_responses`` of them.

    Default (``None``): as many as the held-out side has, so both profiles rest on the same volume
    of evidence (a profile read from 1,000 answers is not comparable to one read from 200), taken
    from the most recent training interviews, the ones closest in time to the held-out ones. It
    also bounds the prompt: all of a prolific person's training answers may not fit a context window.
    """
    pairs = list(split.train_pairs)
    n = len(split.test_pairs) if max_responses is None else max_responses
    return [p.response for p in pairs[-n:]] if n > 0 else []


def plan_training_personality(split: HeldOutSplit, judges: Sequence[ModelConfig],
                              max_responses: int | None = None,
                              sampling: PSVoteSampling | None = None) -> list[PlannedCall]:
    """5 traits x 3 votes per judge over training responses: the PS judge stability check (paper 3.3)."""
    pid = split.personality_id
    return _plan_votes("training_personality", {"personality_id": pid},
                       training_responses(split, max_responses), judges, (pid,), sampling)


def assemble_training_personality(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("training_personality", planned, results, _ps_payload)


def plan_generated_personality(generations_df: pd.DataFrame, judges: Sequence[ModelConfig],
                               sampling: PSVoteSampling | None = None) -> list[PlannedCall]:
    """5 traits x 3 votes per judge over one method's valid generations, per (personality, method)."""
    out: list[PlannedCall] = []
    for (pid, method), grp in _ok(generations_df).groupby(["personality_id", "method"], sort=True):
        out += _plan_votes("generated_personality", {"personality_id": pid, "method": method},
                           list(grp["generated"]), judges, (pid, method), sampling)
    return out


def assemble_generated_personality(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("generated_personality", planned, results, _ps_payload)


def judge_generated_personality(generations_df: pd.DataFrame, judges: Sequence[ModelConfig],
                                gw: CallRunner, sampling: PSVoteSampling | None = None) -> pd.DataFrame:
    """The ``generated_personality`` table for the (personality, method) partitions in ``generations_df``."""
    planned = plan_generated_personality(generations_df, judges, sampling)
    return assemble_generated_personality(planned, run_calls(gw, planned))


# ---- Content Similarity -----------------------------------------------------------------------

def plan_content_similarity(split: HeldOutSplit, generations_df: pd.DataFrame,
                            judges: Sequence[ModelConfig]) -> list[PlannedCall]:
    """One call per judge and valid generation: the held-out reference against the candidate."""
    pid = split.personality_id
    reference = {p.qa_id: p.response for p in split.test_pairs}
    gens = _ok(generations_df[generations_df["personality_id"] == pid])
    out = []
    for judge in judges:
        for rec in gens.itertuples(index=False):
            messages = content_similarity.build_messages(reference[rec.qa_id], rec.generated)
            row = {"personality_id": pid, "method": rec.method, "judge": judge.name, "qa_id": rec.qa_id}
            out.append(PlannedCall(("content_similarity", pid, rec.method, judge.name, rec.qa_id), judge,
                                   contract_request(content_similarity, messages, item_id=rec.qa_id), row))
    return out


def assemble_content_similarity(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("content_similarity", planned, results,
                    lambda v: {"score": v.score, "explanation": v.explanation})


def judge_content_similarity(split: HeldOutSplit, generations_df: pd.DataFrame, judges: Sequence[ModelConfig],
                             gw: CallRunner) -> pd.DataFrame:
    """The ``content_similarity`` table for the generations given (any number of methods)."""
    planned = plan_content_similarity(split, generations_df, judges)
    return assemble_content_similarity(planned, run_calls(gw, planned))


# ---- Factual Consistency ----------------------------------------------------------------------

def plan_factual_consistency(fact_summary_df: pd.DataFrame, generations_df: pd.DataFrame,
                             judges: Sequence[ModelConfig]) -> list[PlannedCall]:
    """One call per judge and valid generation against that personality's fact summary.

    A personality whose fact summary is invalid has nothing to check against, so it gets no FC
    rows; the summary's own row records why.
    """
    summaries = {r.personality_id: r.summary for r in _ok(fact_summary_df).itertuples(index=False)}
    out = []
    for judge in judges:
        for rec in _ok(generations_df).itertuples(index=False):
            summary = summaries.get(rec.personality_id)
            if summary is None:
                continue
            messages = factual_consistency.build_messages(summary, rec.generated)
            row = {"personality_id": rec.personality_id, "method": rec.method, "judge": judge.name,
                   "qa_id": rec.qa_id}
            key = ("factual_consistency", rec.personality_id, rec.method, judge.name, rec.qa_id)
            out.append(PlannedCall(key, judge, contract_request(factual_consistency, messages, item_id=rec.qa_id),
                                   row))
    return out


def assemble_factual_consistency(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("factual_consistency", planned, results,
                    lambda v: {"label": v.label, "explanation": v.explanation})


def judge_factual_consistency(fact_summary_df: pd.DataFrame, generations_df: pd.DataFrame,
                              judges: Sequence[ModelConfig], gw: CallRunner) -> pd.DataFrame:
    """The ``factual_consistency`` table for the generations given."""
    planned = plan_factual_consistency(fact_summary_df, generations_df, judges)
    return assemble_factual_consistency(planned, run_calls(gw, planned))
