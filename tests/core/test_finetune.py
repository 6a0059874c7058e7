"""SFT export: training pairs only, chat format, the Simple prompt's system message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interviewsim_core.contracts import generation
from interviewsim_core.finetune import ALL_PERSONALITIES_FILE, sft_jsonl, sft_records, write_sft_files
from interviewsim_core.loader import load_corpus
from interviewsim_core.split import split_personality

SAMPLE = Path(__file__).resolve().parents[2] / "interviewsim_core" / "sample_corpus"


@pytest.fixture(scope="module")
def splits():
    return [split_personality(d) for d in load_corpus(SAMPLE)]


def test_one_record_per_training_pair_and_never_a_heldout_one(splits):
    for sp in splits:
        recs = sft_records(sp)
        assert [r.qa_id for r in recs] == [p.qa_id for p in sp.train_pairs]
        held_ids = {p.qa_id for p in sp.test_pairs}
        held_texts = {p.response for p in sp.test_pairs}
        assert not held_ids & {r.qa_id for r in recs}
        blob = sft_jsonl(recs)
        # No held-out response appears anywhere in the file (not only not as a whole record).
        assert not [t for t in held_texts if t in blob]


def test_chat_format_and_system_prompt_matches_the_simple_generation_prompt(splits):
    sp = splits[0]
    rec = sft_records(sp)[0]
    chat = rec.to_chat()
    assert list(chat) == ["messages"]
    assert [m["role"] for m in chat["messages"]] == ["system", "user", "assistant"]
    first = sp.train_pairs[0]
    assert chat["messages"][1]["content"] == first.question
    assert chat["messages"][2]["content"] == first.response
    simple = generation.build_messages(sp.personality_id, "any question?", None)
    assert chat["messages"][0]["content"] == simple[0]["content"]


def test_written_files_per_personality_and_all(tmp_path, splits):
    written = write_sft_files(splits, tmp_path)
    assert set(written) == {sp.personality_id for sp in splits} | {ALL_PERSONALITIES_FILE}
    total = 0
    for sp in splits:
        lines = written[sp.personality_id].read_text(encoding="utf-8").splitlines()
        assert len(lines) == len(sp.train_pairs)
        assert all(json.loads(line)["messages"][0]["role"] == "system" for line in lines)
        total += len(lines)
    assert len(written[ALL_PERSONALITIES_FILE].read_text(encoding="utf-8").splitlines()) == total
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temp files


def test_runner_exports_jsonl_when_asked_and_no_heldout_text_reaches_it(tmp_path, splits):
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import run_evaluation

    cfg = EvalConfig(data_root=tmp_path, methods=("simple",), finetune_export=True)
    tables = run_evaluation(cfg)
    out = tmp_path / "finetune"
    files = sorted(p.name for p in out.glob("*.jsonl"))
    assert ALL_PERSONALITIES_FILE in files and len(files) == len(splits) + 1
    blob = "".join(p.read_text(encoding="utf-8") for p in out.glob("*.jsonl"))
    held = [p.response for sp in splits for p in sp.test_pairs]
    assert not [h for h in held if h in blob]
    assert len(tables["sft_examples"]) == sum(len(sp.train_pairs) for sp in splits)
