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
    again.close()
    cache.close()  # packs what it left loose
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM loose").fetchone()[0] == 0
        stored = sum(len(b) for (b,) in conn.execute("SELECT data FROM packs"))
        index = 20 * conn.execute("SELECT COUNT(*) FROM packed").fetchone()[0]
        refs = sum(len(m) for (m,) in conn.execute("SELECT messages FROM calls"))
    verbatim = sum(len(json.dumps(m)) for m in sent.values())
    assert stored + index + refs < verbatim / 20  # 40 prompts sharing one 100-pair context
    assert [SqliteCache(path).get(k).messages for k in sent] == list(sent.values())


def test_rows_of_older_caches_with_verbatim_messages_still_read(tmp_path):
    path = tmp_path / "old.sqlite"
    SqliteCache(path).close()
    msgs = [{"role": "user", "content": "hello"}]
    with sqlite3.connect(path) as conn:
        # The columns an older cache had (cached_prompt_tokens came later, with a default).
        conn.execute("INSERT INTO calls (key, model, contract, raw, messages, prompt_tokens, completion_tokens, "
                     "cost_usd, created) VALUES ('old', 'm', 'c', 'raw', ?, 1, 2, 0.0, 0.0)", (json.dumps(msgs),))
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


def _pair(i: int, n: int) -> str:
    return (f"question {i} about the harvest of year {1900 + i}?\n"
            f"we brought the wheat in before the rain in {1900 + i}, said the person number {i % n}.")


def test_packs_store_text_repeated_under_other_wrappers_once(tmp_path):
    """The same pairs numbered and wrapped differently in each prompt (no shared chunk): packed with
    long-range compression they cost a fraction of the chunks deflated one by one (the old layout)."""
    import zlib

    path = tmp_path / "c.sqlite"
    cache = SqliteCache(path)
    sent = {}
    for q in range(30):
        ctx = "\n".join(f"[{j + q}] {_pair(j + 7 * q, 9)}" for j in range(60))  # a sliding, renumbered window
        sent[f"k{q}"] = ({"role": "user", "content": f"Context:\n{ctx}\nNew question: {q}?"},)
        cache.put(f"k{q}", CachedEntry(raw="a", messages=sent[f"k{q}"]))
    with sqlite3.connect(path) as conn:
        loose = [bytes(d) for (d,) in conn.execute("SELECT data FROM loose")]
    assert loose  # not packed yet: under COMPACT_AFTER
    deflated = sum(len(zlib.compress(d, 6)) for d in loose)
    assert cache.compact() == sum(map(len, loose))
    with sqlite3.connect(path) as conn:
        packed = sum(len(d) for (d,) in conn.execute("SELECT data FROM packs"))
        assert conn.execute("SELECT COUNT(*) FROM loose").fetchone()[0] == 0
    assert packed < deflated / 3
    for key, messages in sent.items():
        assert cache.get(key).messages == messages
    assert cache.compact() == 0  # nothing left loose


def test_packs_grow_split_and_skip_chunks_already_packed(tmp_path, monkeypatch):
    from interviewsim_core.llm import prompt_store

    monkeypatch.setattr(prompt_store, "PACK_MAX", 4000)
    path = tmp_path / "c.sqlite"
    cache = SqliteCache(path)
    sent = {}
    for q in range(40):
        text = "\n".join(_pair(q * 10 + j, 5) * 3 for j in range(4))
        sent[f"k{q}"] = ({"role": "system", "content": "same system text " * 30}, {"role": "user", "content": text})
        cache.put(f"k{q}", CachedEntry(raw="a", messages=sent[f"k{q}"]))
        if q % 7 == 0:
            cache.compact()  # small compactions extend the newest pack
    cache.compact()
    other = SqliteCache(path)  # another process re-sends chunks that are already packed
    other.put("again", CachedEntry(raw="a", messages=sent["k3"]))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM loose").fetchone()[0] > 0
    other.compact()
    with sqlite3.connect(path) as conn:
        sizes = [s for (s,) in conn.execute("SELECT size FROM packs ORDER BY id")]
        counts = conn.execute("SELECT COUNT(*), COUNT(DISTINCT hash) FROM packed").fetchone()
        total = conn.execute("SELECT SUM(size) FROM packed").fetchone()[0]
    assert len(sizes) > 3 and max(sizes) <= 4000 and sum(sizes) == total  # no chunk stored twice
    assert counts[0] == counts[1]
    for key, messages in {**sent, "again": sent["k3"]}.items():
        assert other.get(key).messages == messages


def test_a_killed_writer_leaves_loose_chunks_that_read_and_pack_later(tmp_path):
    path = tmp_path / "c.sqlite"
    msgs = ({"role": "user", "content": _context(50)},)
    cache = SqliteCache(path)
    cache.put("k", CachedEntry(raw="a", messages=msgs))
    cache._conn.close()  # the process dies: no close(), no exit handler
    cache._conn = None
    cache._unpacked = 0
    reader = SqliteCache(path)
    assert reader.get("k").messages == msgs  # read from loose
    reader.close()
    from interviewsim_cli import app

    out = CliRunner().invoke(app, ["cache", "compact", "--cache", str(path)])
    assert out.exit_code == 0 and "packed 0 KB" not in out.output, out.output
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM loose").fetchone()[0] == 0
    assert SqliteCache(path).get("k").messages == msgs  # read from its pack


def test_caches_written_before_packs_still_read(tmp_path):
    """An old cache: chunks deflated one by one in ``blobs``, groups raw; new rows beside them."""
    import hashlib
    import zlib

    from interviewsim_core.llm import prompt_store

    path = tmp_path / "old.sqlite"
    msgs = ({"role": "system", "content": "sys"}, {"role": "user", "content": _context(80)})
    recipe, items = prompt_store.encode_messages(msgs, set())
    with sqlite3.connect(path) as conn:
        conn.executescript("""
            CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, contract TEXT NOT NULL, raw TEXT NOT NULL,
                messages TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,
                cost_usd REAL NOT NULL, created REAL NOT NULL);
            CREATE TABLE blobs (hash BLOB PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;""")
        groups = 0
        for h, data in items:
            is_chunk = hashlib.sha256(data).digest()[:12] == h
            groups += not is_chunk
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            conn.execute("INSERT INTO blobs VALUES (?, ?)", (h, c.compress(data) + c.flush() if is_chunk else data))
        assert groups  # the old layout's id groups are covered too
        conn.execute("INSERT INTO calls VALUES ('old', 'm', 'c', 'raw', ?, 1, 2, 0.0, 0.0)", (recipe,))
    cache = SqliteCache(path)
    assert cache.get("old").messages == msgs
    cache.put("new", CachedEntry(raw="b", messages=msgs + ({"role": "user", "content": "more"},)))
    cache.close()
    again = SqliteCache(path)
    assert again.get("old").messages == msgs and again.get("new").messages[:2] == msgs


def test_keys_are_stored_as_32_bytes_and_text_keys_of_older_caches_still_read(tmp_path):
    import hashlib

    new_key, old_key = hashlib.sha256(b"new").hexdigest(), hashlib.sha256(b"old").hexdigest()
    path = tmp_path / "c.sqlite"
    cache = SqliteCache(path)
    cache.put(new_key, CachedEntry(raw="fresh", messages=({"role": "user", "content": "q"},)))
    cache.put("not-a-hash", CachedEntry(raw="other"))
    with sqlite3.connect(path) as conn:
        stored = dict(conn.execute("SELECT typeof(key), length(key) FROM calls WHERE raw = 'fresh'").fetchall())
        assert stored == {"blob": 32} and conn.execute("PRAGMA user_version").fetchone()[0] == 2
    assert cache.get(new_key).raw == "fresh" and cache.get("not-a-hash").raw == "other"
    assert cache.keys() == sorted([new_key, "not-a-hash"])
    assert cache.keys_with_prefix(new_key[:7]) == [new_key] and cache.keys_with_prefix("not-") == ["not-a-hash"]
    assert cache.get(old_key) is None

    old = tmp_path / "old.sqlite"  # a cache written before 32-byte keys: text keys, user_version 0
    with sqlite3.connect(old) as conn:
        conn.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, contract TEXT NOT NULL, "
                     "raw TEXT NOT NULL, messages TEXT NOT NULL, prompt_tokens INTEGER NOT NULL, "
                     "completion_tokens INTEGER NOT NULL, cost_usd REAL NOT NULL, created REAL NOT NULL)")
        conn.execute("INSERT INTO calls VALUES (?, 'm', 'c', 'kept', '[]', 1, 2, 0.5, 0.0)", (old_key,))
    legacy = SqliteCache(old)
    assert legacy.get(old_key).raw == "kept" and legacy.get_answer(old_key).cost_usd == 0.5
    legacy.put(new_key, CachedEntry(raw="fresh"))  # new rows of an old file get the short key
    assert legacy.get(new_key).raw == "fresh" and legacy.keys() == sorted([old_key, new_key])
    assert legacy.keys_with_prefix(old_key[:6]) == [old_key]
    with sqlite3.connect(old) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0


def _writer(path: str, worker: int, n: int) -> None:
    cache = SqliteCache(path)
    for q in range(n):
        shared = "\n".join(_pair(j + q, 7) for j in range(30))  # overlaps the other writers' prompts
        msgs = ({"role": "user", "content": f"{shared}\nworker {worker} question {q}?"},)
        cache.put(f"w{worker}-{q}", CachedEntry(raw=f"{worker}/{q}", messages=msgs))
    cache.close()


def test_processes_writing_and_compacting_at_once_lose_nothing(tmp_path, monkeypatch):
    import multiprocessing

    from interviewsim_core.llm import cache as cache_module

    monkeypatch.setattr(cache_module, "COMPACT_AFTER", 3000)  # compact every few puts, in every process
    path = str(tmp_path / "c.sqlite")
    SqliteCache(path).close()
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(path, w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    reader = SqliteCache(path)
    for w in range(3):
        for q in range(40):
            shared = "\n".join(_pair(j + q, 7) for j in range(30))
            got = reader.get(f"w{w}-{q}")
            assert got.raw == f"{w}/{q}" and got.messages[0]["content"] == f"{shared}\nworker {w} question {q}?"
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM loose").fetchone()[0] == 0  # each closed: all packed
        assert conn.execute("SELECT COUNT(*) FROM packed").fetchone()[0] == conn.execute(
            "SELECT COUNT(DISTINCT hash) FROM packed").fetchone()[0]
        assert conn.execute("SELECT SUM(size) FROM packs").fetchone()[0] == conn.execute(
            "SELECT SUM(size) FROM packed").fetchone()[0]  # no chunk packed twice


def test_a_process_that_exits_without_closing_its_cache_packs_its_chunks(tmp_path):
    """The runner does not close its gateway: the exit handler packs what the process left loose."""
    import subprocess
    import sys
    import textwrap

    path = tmp_path / "c.sqlite"
    script = textwrap.dedent(f"""
        from interviewsim_core.llm.cache import CachedEntry, SqliteCache
        cache = SqliteCache({str(path)!r})
        cache.put("k", CachedEntry(raw="a", messages=({{"role": "user", "content": "x" * 5000 + "y" * 300}},)))
    """)
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM loose").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM packed").fetchone()[0] > 0
    assert SqliteCache(path).get("k").messages[0]["content"] == "x" * 5000 + "y" * 300


def _beside(path) -> set[str]:
    """What lies beside the cache file in its folder (the log, its index, the reserve, journals)."""
    return {p.name for p in path.parent.iterdir()} - {path.name}


def test_a_process_that_exits_with_its_cache_open_leaves_no_log_index_or_reserve(tmp_path):
    """Issue 45: ``interviewsim run``'s worker and the runner end with their process's gateway open. On 20
    paper-shaped personalities that left a 7 MB write-ahead log and the 1 MB reserve beside the 17 MB
    file; the exit handler now closes the cache: the log checkpointed into the file, nothing left beside it."""
    import subprocess
    import sys
    import textwrap

    path = tmp_path / "c.sqlite"
    script = textwrap.dedent(f"""
        from interviewsim_core.factories import process_gateway
        cache = process_gateway({str(path)!r}).cache
        for i in range(50):
            cache.put(f"k{{i}}", CachedEntry(raw="a" * 500, messages=({{"role": "user", "content": f"q{{i}} " * 400}},)))
        assert (cache.path.parent / "c.sqlite-wal").exists() and (cache.path.parent / "c.sqlite.reserve").exists()
        import gc
        gc.freeze()  # as the worker ends: its heap is never collected, so nothing closes the connection by chance
    """).replace("from interviewsim_core.factories", "from interviewsim_core.llm.cache import CachedEntry\nfrom "
                 "interviewsim_core.factories")
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert _beside(path) == set()
    assert len(SqliteCache(path)) == 50  # every answer in the file itself


def test_close_checkpoints_and_the_last_connection_leaves_nothing_beside_the_file(tmp_path):
    path = tmp_path / "c.sqlite"
    first, second = SqliteCache(path), SqliteCache(path)
    for i in range(20):
        first.put(f"k{i}", CachedEntry(raw="b" * 400, messages=({"role": "user", "content": f"p{i} " * 300},)))
    first.close()  # another connection is open: its log (truncated to nothing) and the reserve stay
    assert (tmp_path / "c.sqlite-wal").stat().st_size == 0 and (tmp_path / "c.sqlite.reserve").exists()
    second.close()
    assert _beside(path) == set()
    again = SqliteCache(path)  # opened again: the reserve is made again
    assert len(again) == 20 and (tmp_path / "c.sqlite.reserve").exists()
    again.close()
    assert _beside(path) == set()
