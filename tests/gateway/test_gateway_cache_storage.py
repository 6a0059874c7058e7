"""Prompts are stored deduplicated and compressed, and every prompt reads back exactly as sent."""

from __future__ import annotations

import json
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from interviewsim_core.llm.cache import CachedEntry, SqliteCache
from interviewsim_core.llm.prompt_store import split_text as _split_text


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=5000))
@settings(max_examples=200, deadline=None)
def test_chunking_gives_the_text_back(text):
    assert "".join(_split_text(text)) == text


def _context(n: int) -> str:
    return "Training examples (earlier interviews of this person):\n" + "\n".join(
        f"Training example question: question number {i} about the harvest?\n"
        f"Training example response: answer {i}, we brought the wheat in before the rain, every single year."
        for i in range(n))


def test_round_trip_and_shared_context_is_stored_once(tmp_path):
    path = tmp_path / "c.sqlite"
    cache = SqliteCache(path)
    ctx = _context(100)
    sent = {}
    for q in range(40):
        messages = ({"role": "system", "content": "## task\nSpeak as P1.\r\nWeird \u2028 separators\x1c kept."},
                    {"role": "user", "content": f"{ctx}\n\nNew question: question {q}?\nReturn response text only."})
        cache.put(f"k{q}", CachedEntry(raw=f"answer {q}", messages=messages, model="m", contract="generation"))
        sent[f"k{q}"] = messages
    again = SqliteCache(path)
    for key, messages in sent.items():
        assert again.get(key).messages == messages  # byte-exact prompt read back
        assert again.prompt_of(key) == messages
    with sqlite3.connect(path) as conn:
        stored = sum(len(b) for (b,) in conn.execute("SELECT data FROM blobs"))
        refs = sum(len(m) for (m,) in conn.execute("SELECT messages FROM calls"))
    verbatim = sum(len(json.dumps(m)) for m in sent.values())
    assert stored + refs < verbatim / 20  # 40 prompts sharing one 100-pair context


def test_rows_of_older_caches_with_verbatim_messages_still_read(tmp_path):
    path = tmp_path / "old.sqlite"
    SqliteCache(path).close()
    msgs = [{"role": "user", "content": "hello"}]
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO calls VALUES ('old', 'm', 'c', 'raw', ?, 1, 2, 0.0, 0.0)", (json.dumps(msgs),))
    assert SqliteCache(path).get("old").messages == tuple(msgs)


def test_cache_show_prints_the_prompt(tmp_path):
    from interviewsim_cli import app

    path = tmp_path / "c.sqlite"
    msgs = ({"role": "system", "content": "sys text"}, {"role": "user", "content": _context(30) + "\nNew question: why?"})
    SqliteCache(path).put("abcdef123", CachedEntry(raw="because", messages=msgs, model="m", contract="generation"))
    out = CliRunner().invoke(app, ["cache", "show", "abcdef", "--cache", str(path), "--json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["messages"] == list(msgs) and doc["raw"] == "because" and doc["key"] == "abcdef123"
    missing = CliRunner().invoke(app, ["cache", "show", "zzz", "--cache", str(path)])
    assert missing.exit_code == 1


_messages = st.lists(st.fixed_dictionaries({
    "role": st.sampled_from(["system", "user", "assistant"]),
    "content": st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=3000)
    | st.lists(st.text(max_size=300), max_size=40).map("\n".join),
}), min_size=0, max_size=4)


def test_any_prompt_reads_back_exactly(tmp_path_factory):
    cache = SqliteCache(tmp_path_factory.mktemp("rt") / "c.sqlite")
    counter = iter(range(10**9))

    @given(messages=_messages, raw=st.text(max_size=2000))
    @settings(max_examples=150, deadline=None)
    def check(messages, raw):
        key = f"k{next(counter)}"
        cache.put(key, CachedEntry(raw=raw, messages=tuple(messages)))
        got = cache.get(key)
        assert got.messages == tuple(messages) and got.raw == raw
        assert cache.get_answer(key).raw == raw

    check()
