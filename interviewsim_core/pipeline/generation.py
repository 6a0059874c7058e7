"""Generation: one simulated response per held-out question per method.

The prompt gets the held-out question's text and the strategy's context, selected from training
pairs only (``strategies.select_contexts`` takes (qa_id, text) and checks every example is a
training pair). Nothing built from held-out responses is an input of this module.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pandas as pd

from ..contracts import generation
from ..embeddings import Embedder, EmbeddingCache
from ..errors import GatewayError
from ..llm.types import ModelConfig
from ..split import HeldOutSplit
from ..strategies import CONTEXT_OK, MethodSpec, resolve_method, select_contexts
from .calls import CallRunner, PlannedCall, Results, assemble, contract_request, run_calls


def plan_generations(
    split: HeldOutSplit,
    method: MethodSpec | str,
    generator: ModelConfig,
    embedder: Embedder | None = None,
    seed: int = 0,
    *,
    train_embeddings: np.ndarray | None = None,
    embedding_cache: EmbeddingCache | None = None,
    retrieval_error: str | None = None,
    peer: HeldOutSplit | None = None,
) -> list[PlannedCall]:
    """One generation call per held-out question of ``split`` under ``method``.

    A calibration method (``strategies.calibration``) is planned by ``plan_calibration`` instead:
    no prompt, the candidate given at planning, nothing sent.

    Args:
        embedder: needed by retrieval and hybrid methods only.
        seed: the run seed (random selection).
        train_embeddings / embedding_cache: share one embedding pass of the training questions
            across methods (see ``strategies.retrieval.train_question_matrix``).
        retrieval_error: the embedder already failed for this personality (``steps``): every
            call is planned failed with it. An embedder that fails here does the same.
    """
    spec = resolve_method(method)
    if spec.is_calibration:
        return plan_calibration(split, spec, generator, embedder, train_embeddings=train_embeddings,
                                embedding_cache=embedding_cache, retrieval_error=retrieval_error, peer=peer)
    pid = split.personality_id
    generator = generator.for_personality(pid)  # one adapter per person when the model is a template
    questions = [(p.qa_id, p.question) for p in split.test_pairs]
    if retrieval_error is None:
        try:
            contexts = select_contexts(split, spec, questions, embedder, seed,
                                       train_embeddings=train_embeddings, cache=embedding_cache)
        except GatewayError as exc:
            retrieval_error = str(exc)
    if retrieval_error is not None:
        failure = unretrieved(spec.name, retrieval_error)
        return [PlannedCall(("generations", pid, spec.name, p.qa_id), generator,
                            contract_request(generation, (), item_id=p.qa_id),
                            {"personality_id": pid, "method": spec.name, "qa_id": p.qa_id,
                             "interview_id": p.interview_id, "question": p.question, "strategy": spec.strategy,
                             "n_context_requested": None, "n_context_used": None, "context_qa_ids": [],
                             "context_chars": None, "context_state": None}, failure)
                for p in split.test_pairs]
    out = []
    # Strategies that ignore the question (Chrono-m, the profiles) hand every question the same
    # context object: render it (and list its ids) once, not once per question (issue 13).
    # ``contexts`` holds every ctx alive, so an id is not reused within this loop.
    uses = Counter(id(ctx) for ctx in contexts)
    shared: dict[int, tuple[Any, tuple[str, ...]]] = {}
    for p, ctx in zip(split.test_pairs, contexts, strict=True):
        if uses[id(ctx)] == 1:
            messages, qa_ids = generation.build_messages(pid, p.question, ctx), ctx.qa_ids
        else:
            if id(ctx) not in shared:
                shared[id(ctx)] = (generation.messages_builder(pid, ctx), ctx.qa_ids)
            build, qa_ids = shared[id(ctx)]
            messages = build(p.question)
        row = {
            "personality_id": pid, "method": spec.name, "qa_id": p.qa_id, "interview_id": p.interview_id,
            "question": p.question, "strategy": spec.strategy, "n_context_requested": ctx.n_requested,
            "n_context_used": ctx.n_used, "context_qa_ids": list(qa_ids),
            # Context characters in the prompt (profile or example pairs) and ok/truncated/blank_profile.
            "context_chars": ctx.context_chars, "context_state": ctx.state,
        }
        out.append(PlannedCall(("generations", pid, spec.name, p.qa_id), generator,
                               contract_request(generation, messages, item_id=p.qa_id), row))
    return out


def plan_calibration(
    split: HeldOutSplit,
    spec: MethodSpec,
    generator: ModelConfig,
    embedder: Embedder | None = None,
    *,
    train_embeddings: np.ndarray | None = None,
    embedding_cache: EmbeddingCache | None = None,
    retrieval_error: str | None = None,
    peer: HeldOutSplit | None = None,
) -> list[PlannedCall]:
    """The rows of a calibration method: each candidate built without a model (``calibration.candidates``).

    Every planned call has an empty prompt and its candidate as ``given``: nothing is sent, so no
    generation prompt exists for a held-out response to reach (the reference *is* the held-out
    response, as the judges' candidate, never as a generator's input). ``context_qa_ids`` names the
    pair the candidate was copied from (the held-out pair itself, a training pair, or the peer's).
    """
    from ..strategies import SelectionInputs
    from ..strategies.calibration import candidates

    pid = split.personality_id
    picked: list[tuple[str | None, list[str], str | None]]
    if retrieval_error is None:
        try:
            picked = candidates(split, spec, SelectionInputs(embedder=embedder, train_embeddings=train_embeddings,
                                                             cache=embedding_cache), peer)
        except GatewayError as exc:
            retrieval_error = str(exc)
    if retrieval_error is not None:
        picked = [(None, [], None)] * len(split.test_pairs)
    out = []
    for p, (text, source, why) in zip(split.test_pairs, picked, strict=True):
        failure = unretrieved(spec.name, retrieval_error) if retrieval_error is not None else \
            (f"not sent: {spec.name}: {why}" if text is None else None)
        row = {"personality_id": pid, "method": spec.name, "qa_id": p.qa_id, "interview_id": p.interview_id,
               "question": p.question, "strategy": spec.strategy, "n_context_requested": 0, "n_context_used": 0,
               "context_qa_ids": list(source), "context_chars": 0, "context_state": CONTEXT_OK}
        given = generation.Result(response=text) if failure is None else None
        out.append(PlannedCall(("generations", pid, spec.name, p.qa_id), generator,
                               contract_request(generation, (), item_id=p.qa_id), row, failure, given))
    return out


def unretrieved(method: str, error: str) -> str:
    """The error of a row whose method could not retrieve its context: the embedder's own (redacted) error."""
    return f"not sent: {method} could not retrieve its context (the embedder failed): {error}"


def assemble_generations(planned: list[PlannedCall], results: Results) -> pd.DataFrame:
    return assemble("generations", planned, results, lambda v: {"generated": v.response})


def generate_responses(
    split: HeldOutSplit,
    method: MethodSpec | str,
    generator: ModelConfig,
    gw: CallRunner,
    embedder: Embedder | None = None,
    seed: int = 0,
    *,
    train_embeddings: np.ndarray | None = None,
    embedding_cache: EmbeddingCache | None = None,
) -> pd.DataFrame:
    """The ``generations`` table of one (personality, method) partition."""
    planned = plan_generations(split, method, generator, embedder, seed,
                               train_embeddings=train_embeddings, embedding_cache=embedding_cache)
    return assemble_generations(planned, run_calls(gw, planned))
