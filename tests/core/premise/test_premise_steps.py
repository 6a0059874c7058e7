"""The premise pipeline through the real Gateway against a scripted local model (127.0.0.1 only).

The scripted model is ``llm.testing.FakeOpenAIServer``: the gateway posts real HTTP requests, so
the tests inspect the exact prompts that left the process, and the re-ask path is the gateway's.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
from premise_fakes import pass1_obj, pass2_obj, tiny_split

from interviewsim_core.contracts import premise as c
from interviewsim_core.contracts.fact_summary import MARKER as FACT_SUMMARY_MARKER
from interviewsim_core.llm.gateway import Gateway
from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig, free_port
from interviewsim_core.llm.types import ModelConfig
from interviewsim_core.pipeline.storage import read_frame, write_frame
from interviewsim_core.pipeline.tables import schema_of
from interviewsim_core.premise.conclusions import NO_DATES_NOTE
from interviewsim_core.premise.steps import judge_conclusions, premise_verdicts_for

SUMMARY = "P1 spoke about Boston. P1 also plays tennis."


class Script:
    """Replies by pass and statement; ``bad1``/``bad2`` statements get garbage ``n`` times."""

    def __init__(self):
        self.bad1: dict[str, int] = {}
        self.bad2: dict[str, int] = {}

    def __call__(self, messages):
        first = messages[0]["content"]
        reasks = sum(1 for m in messages if m["role"] == "assistant")
        if first.startswith("You are evaluating"):
            statement = first.rpartition("Statement to evaluate: ")[2].strip()
            if reasks < self.bad1.get(statement, 0):
                return "Sure! The subject is P1."
            return json.dumps(pass1_obj(notes=statement))
        statement = first.rpartition("Conclusion under evaluation: ")[2].partition("\n\nBlind")[0].strip()
        if reasks < self.bad2.get(statement, 0):
            return json.dumps({**pass2_obj(), "interpretation": "match"})
        return json.dumps(pass2_obj())


@pytest.fixture
def server():
    script = Script()
    with FakeOpenAIServer(FakeServerConfig(reply=script)) as srv:
        srv.script = script
        yield srv


def _judge(srv, **over) -> ModelConfig:
    return ModelConfig(model="openai/premise-judge", api_base=srv.base_url, max_reasks=2, max_retries=0, **over)


def _frames(split):
    fs = pd.DataFrame([{"personality_id": "P1", "summary": SUMMARY, "explanation": "e",
                        "source_qa_ids": ["Q5a", "Q5b"], "status": "ok"}])
    ai = pd.DataFrame([{"personality_id": "P1", "qa_id": "Q5a", "interview_id": "I5", "sequence": 5,
                        "atomic_question": "Which city?", "atomic_answer": "Boston", "status": "ok"}])
    return fs, ai


def _bodies(srv):
    return [json.loads(e["body"]) for e in srv.log if e["path"].endswith("/chat/completions")]


def test_pass1_sees_only_the_statement_and_pass2_sees_everything(server):
    split = tiny_split()
    fs, ai = _frames(split)
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, ai, _judge(server), gw)
    assert list(df["conclusion"]) == ["P1 spoke about Boston.", "P1 also plays tennis.",
                                      'The answer to the question "Which city?" is "Boston".']
    assert list(df["verdict"]) == ["PASS"] * 3
    bodies = _bodies(server)
    pass1 = [b["messages"] for b in bodies if b["messages"][0]["content"].startswith("You are evaluating")]
    pass2 = [b["messages"] for b in bodies if b["messages"][0]["content"].startswith("You are grading")]
    assert len(pass1) == 3 and len(pass2) == 3
    # The gateway sends each pass concurrently: put the logged requests in the table's row order.
    statements = list(df["conclusion"])

    def row_of(msgs, marker: str) -> int:
        return next((i for i, st in enumerate(statements) if marker.format(st) in msgs[0]["content"]), len(statements))

    pass1.sort(key=lambda m: row_of(m, "{}"))
    pass2.sort(key=lambda m: row_of(m, "Conclusion under evaluation: {}\n"))
    window_texts = [p.question for p in split.test_pairs] + [p.response for p in split.test_pairs]
    # Requests arrive in whatever order the concurrent gateway sends them: match each to its statement.
    def pass1_of(statement: str) -> list:
        expected = [{"role": "user", "content": c.PASS_1_BLIND_RECONSTRUCTION_PROMPT.replace("{conclusion}", statement)}]
        found = [m for m in pass1 if m == expected]
        assert len(found) == 1, statement
        return found[0]

    def pass2_of(conclusion: str) -> list:
        found = [m for m in pass2 if f"Conclusion under evaluation: {conclusion}\n" in m[0]["content"]]
        assert len(found) == 1, conclusion
        return found[0]

    for statement in df["conclusion"]:
        text = pass1_of(statement)[0]["content"]
        for w in window_texts:
            assert w not in text
        for other in df["conclusion"]:
            assert other == statement or other not in text
        assert FACT_SUMMARY_MARKER not in text and SUMMARY not in text
    for row in df.itertuples():
        msgs = pass2_of(row.conclusion)
        assert len(msgs) == 1
        text = msgs[0]["content"]
        assert f"Blind reconstruction (pass 1 output): {row.pass1_json}\n" in text
        assert "Target peer: P1\n" in text
        assert NO_DATES_NOTE in text
    fact_window = pass2_of(df["conclusion"].iloc[0])[0]["content"]
    atomic_window = pass2_of(df["conclusion"].iloc[2])[0]["content"]
    # fact-summary window: the response of every held-out pair named in source_qa_ids, with its
    # interview and sequence, and no question (the fact-summary builder never saw one)
    for p in split.test_pairs:
        assert f"[time: interview {p.interview_id}, sequence {p.sequence}] P1: {p.response}" in fact_window
        assert p.question not in fact_window
    # atomic-item window: its own source pair only, question included (its builder saw the pair)
    assert "interviewer: Question 5a?" in atomic_window
    assert "Answer 5a about Boston." in atomic_window and "Answer 5b" not in atomic_window
    # no training pair is ever in a fact-summary window
    assert all(p.response not in fact_window for p in split.train_pairs)


def test_malformed_pass1_is_reasked_then_recorded_invalid_and_pass2_is_skipped(server):
    split = tiny_split()
    fs, ai = _frames(split)
    server.script.bad1["P1 spoke about Boston."] = 99
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, ai, _judge(server), gw)
    bad = df.iloc[0]
    assert bad["verdict"] == "INVALID" and bad["reasons"] == ["pass1_invalid"]
    assert bad["pass1_status"] == "invalid" and bad["pass1_attempts"] == 3
    assert bad["pass1_raw_output"] == "Sure! The subject is P1." and bad["pass1_parse_error"]
    assert pd.isna(bad["pass2_status"]) and pd.isna(bad["pass1_json"]) and pd.isna(bad["decontextuality_score"])
    pass2_statements = [b["messages"][0]["content"] for b in _bodies(server)
                        if b["messages"][0]["content"].startswith("You are grading")]
    assert len(pass2_statements) == 2
    assert all("Conclusion under evaluation: P1 spoke about Boston." not in t for t in pass2_statements)
    assert list(df["verdict"][1:]) == ["PASS", "PASS"]


def test_pass1_fixed_by_a_reask_counts_normally(server):
    split = tiny_split()
    fs, _ = _frames(split)
    server.script.bad1["P1 also plays tennis."] = 1
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, None, _judge(server), gw)
    row = df.iloc[1]
    assert row["pass1_status"] == "ok" and row["pass1_attempts"] == 2 and row["verdict"] == "PASS"
    reask = [b["messages"] for b in _bodies(server) if len(b["messages"]) == 3]
    assert reask and reask[0][1]["content"] == "Sure! The subject is P1."


def test_malformed_pass2_is_reasked_then_recorded_invalid(server):
    split = tiny_split()
    fs, _ = _frames(split)
    server.script.bad2["P1 spoke about Boston."] = 99
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, None, _judge(server), gw)
    bad = df.iloc[0]
    assert bad["verdict"] == "INVALID" and bad["reasons"] == ["pass2_invalid"]
    assert bad["pass1_status"] == "ok" and bad["pass2_status"] == "invalid" and bad["pass2_attempts"] == 3
    assert "interpretation must be one of" in bad["pass2_parse_error"]
    assert bad["decontextuality_score"] == 0.8 and bad["pass1_json"] and pd.isna(bad["pass2_json"])
    assert df.iloc[1]["verdict"] == "PASS"


def test_transport_failure_is_error_not_fail():
    split = tiny_split()
    fs, _ = _frames(split)
    judge = ModelConfig(model="openai/x", api_base=f"http://127.0.0.1:{free_port()}/v1", max_retries=0, timeout_s=5)
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, None, judge, gw)
    assert set(df["verdict"]) == {"ERROR"} and set(df["pass1_status"]) == {"failed"}
    assert df["pass1_error"].notna().all() and df["pass2_status"].isna().all()


def test_table_matches_schema_and_round_trips(server, tmp_path):
    split = tiny_split()
    fs, ai = _frames(split)
    server.script.bad1["P1 also plays tennis."] = 99
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, ai, _judge(server), gw)
    assert list(df.columns) == schema_of("premise_verdicts").names
    back = read_frame(write_frame(df, "premise_verdicts", tmp_path / "P1.parquet"))
    assert list(back["verdict"]) == list(df["verdict"])
    assert list(back["labels"]) == list(df["labels"])


def test_rows_whose_build_call_failed_are_not_judged_and_ids_must_be_unique(server):
    split = tiny_split()
    fs, ai = _frames(split)
    fs["status"] = "invalid"
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, ai, _judge(server), gw)
        assert list(df["artifact_kind"]) == ["atomic_item"]
        from interviewsim_core.premise.conclusions import atomic_item_conclusions

        twice = atomic_item_conclusions(split, ai) * 2
        with pytest.raises(ValueError, match="unique"):
            judge_conclusions(twice, _judge(server), gw)
        assert judge_conclusions([], _judge(server), gw).empty


def test_offline_model_end_to_end_through_litellm_with_label_clusters():
    from interviewsim_core.embeddings import HashingEmbedder
    from interviewsim_core.pipeline.config import OFFLINE_MODEL

    split = tiny_split()
    fs, ai = _frames(split)
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, ai, ModelConfig(model=OFFLINE_MODEL), gw, embedder=HashingEmbedder())
        again = premise_verdicts_for(split, fs, ai, ModelConfig(model=OFFLINE_MODEL), gw)
    assert set(df["pass1_status"]) == {"ok"} and set(df["pass2_status"]) == {"ok"}
    assert set(df["verdict"]) <= {"PASS", "FAIL"}
    pd.testing.assert_frame_equal(df, again)  # deterministic
    clusters = df.attrs["label_clusters"]
    assert list(clusters.columns) == ["rank", "representative", "size", "n_conclusions", "members", "examples"]


def test_each_pass_is_sent_its_schema_and_a_reply_cap(server):
    """Constrained output for the premise judge (issue 22): each pass sends the JSON schema of its
    result model (strict ``json_schema`` on an OpenAI-compatible server) and its own ``max_tokens``."""
    from interviewsim_core.llm.constraints import strict_json_schema
    from interviewsim_core.premise.steps import PASS1_MAX_TOKENS, PASS2_MAX_TOKENS

    split = tiny_split()
    fs, ai = _frames(split)
    with Gateway() as gw:
        df = premise_verdicts_for(split, fs, ai, _judge(server), gw)
    assert list(df["verdict"]) == ["PASS"] * 3  # the parsers accept what they accepted before
    expected = {"You are evaluating": (c.Pass1Result, PASS1_MAX_TOKENS),
                "You are grading": (c.Pass2Result, PASS2_MAX_TOKENS)}
    for body in _bodies(server):
        model, cap = next(v for k, v in expected.items() if body["messages"][0]["content"].startswith(k))
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
        assert fmt["json_schema"]["schema"] == strict_json_schema(model)
        assert body["max_tokens"] == cap
