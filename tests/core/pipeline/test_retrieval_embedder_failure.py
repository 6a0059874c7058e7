"""Issue 20: a failing retrieval embedder fails the retrieval method's rows only; the other methods complete.

One run, ``simple`` and ``memory-10``, against a fake provider whose embedding endpoint answers 401
repeating the key (chat answers). Before, the embedding error raised out of the generation planner
and the run ended without any method's generations; now ``memory-10``'s generation and MCQ-answer
rows are ``failed`` (nothing sent, the embedder's redacted error kept) and ``simple`` is complete.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import offline_reply

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.runner import run_evaluation
from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

KEY = "sk-GREPME-embedder-401-5c0e"
KEY_VAR = "INTERVIEWSIM_TEST_EMBED_KEY"


@pytest.mark.slow
def test_a_failing_embedder_fails_only_the_retrieval_method(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_VAR, KEY)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "SYN_AUERLUND").symlink_to(SAMPLE_CORPUS_DIR / "SYN_AUERLUND", target_is_directory=True)
    with FakeOpenAIServer(FakeServerConfig(reply=offline_reply, reject_key=True, fault_paths=("/embeddings",))) as srv:
        chat = ModelConfig(model="openai/fake-model", api_base=srv.base_url, api_key_env=KEY_VAR)
        embed = ModelConfig(model="openai/fake-embed", api_base=srv.base_url, api_key_env=KEY_VAR, max_retries=0)
        cfg = EvalConfig(corpus=corpus, data_root=tmp_path / "data", methods=("simple", "memory-10"),
                         generator=chat, judges=(chat,), builder=chat, premise_judge=chat, embedding_model=embed)
        tables = run_evaluation(cfg)
        embedding_requests = [e for e in srv.log if e["path"].endswith("/embeddings")]
    assert embedding_requests and {e["status"] for e in embedding_requests} == {401}
    gens = tables["generations"]
    simple, memory = gens[gens["method"] == "simple"], gens[gens["method"] == "memory-10"]
    assert len(simple) == len(memory) > 0
    assert set(simple["status"]) == {"ok"}
    assert set(memory["status"]) == {"failed"}
    assert memory["error"].str.startswith("not sent: memory-10 could not retrieve its context").all()
    assert not memory["error"].str.contains(KEY).any() and memory["error"].str.contains("401").all()
    assert (memory["prompt_tokens"] == 0).all() and (memory["cost_usd"] == 0).all()
    mcq = tables["mcq_answers"]
    assert set(mcq[mcq["method"] == "simple"]["status"]) == {"ok"}
    assert set(mcq[mcq["method"] == "memory-10"]["status"]) == {"failed"}
    judged = tables["content_similarity"]
    assert set(judged[judged["method"] == "simple"]["status"]) == {"ok"}
    assert (tmp_path / "data" / "generations").exists()
    assert not [p for p in (tmp_path / "data").rglob("*") if p.is_file() and KEY.encode() in p.read_bytes()]
