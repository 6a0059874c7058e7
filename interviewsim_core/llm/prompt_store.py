"""How the cache stores prompts: deduplicated, packed with long-range compression, rebuilt exactly.

A 3-million-call run repeats the same context blocks in thousands of prompts (a personality's
chrono context in every one of its questions, a retrieved example for several questions, a
held-out response quoted by several judges). Each message is cut into chunks at content-defined
line boundaries (``split_text``), every distinct chunk is stored once under its 96-bit hash, and
a call row keeps only a compact recipe: per message its role and its chunk ids, long id lists
themselves grouped and stored once. ``decode_messages`` rebuilds the exact messages.

Deduplication alone leaves most of the text: the same training pair, response or quote recurs
inside *different* chunks (another numbering, another wrapper line, another neighbour), and a
chunk deflated on its own cannot see the others. So chunks go through two stages:

- ``loose``: a call's new chunks, written raw in the call's own transaction (durable at once,
  nothing compressed on the call's path);
- ``packs``: ``compact`` moves loose chunks into packs of up to ``PACK_MAX`` raw bytes compressed as
  one zstd frame (pyarrow's codec), and indexes each chunk by (pack, start, size) in ``packed``.
  zstd's window spans the pack, so a chunk that repeats text of any earlier chunk of the pack costs
  a few bytes: on ``bench_scale --quick`` 3.5 MB of chunks and id groups take 0.48 MB (deflated one by
  one: 2.2 MB).
  The newest pack keeps growing (re-compressed with the new chunks) until it is full. Reading one
  prompt decompresses the packs it touches (~1 ms per MB); only audits read prompts (the gateway's
  hits read the answer row alone).

Compaction is one write transaction (SQLite serialises two processes that try at once; the
second finds nothing left to pack), so a killed process leaves either the loose rows or the
pack, never a chunk in neither. Caches written before packs (table ``blobs``: chunks deflated one
by one) still read; their rows stay where they are.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["COMPACT_AFTER", "PACK_MAX", "PROMPT_TABLES", "compact", "decode_messages", "deflate", "encode_messages",
           "inflate", "pack_raw", "rebuild_messages", "split_text", "unpack_raw"]

PROMPT_TABLES = """
CREATE TABLE IF NOT EXISTS blobs (
    hash BLOB PRIMARY KEY,
    data BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS loose (
    hash BLOB PRIMARY KEY,
    data BLOB NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS packs (
    id INTEGER PRIMARY KEY,
    size INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS packed (
    hash BLOB PRIMARY KEY,
    pack INTEGER NOT NULL,
    start INTEGER NOT NULL,
    size INTEGER NOT NULL
) WITHOUT ROWID;
"""
"""``blobs``: chunks of caches written before packs (each raw-deflated) and their id groups (read
only). ``loose``: new chunks and groups, raw, until ``compact`` packs them. ``packs``: zstd frames
of concatenated chunks (``size`` = raw bytes). ``packed``: where each packed chunk or group lives."""

_HASH_BYTES = 12  # 96-bit chunk ids: no collision in any realistic number of chunks
_GROUP_OVER, _GROUP_MASK, _GROUP_MAX = 8, 7, 64
_RECIPE_V1 = b"\x01"  # first byte of a chunked row; older rows hold the messages as JSON text
# A line ends a chunk when it is long (a response, an example) or, past 256 characters, when its
# hash says so; chunks never exceed 4096 characters.
_LONG_LINE, _CHUNK_MIN, _CHUNK_MAX, _CHUNK_MASK = 160, 256, 4096, 3
PACK_MAX = 4 << 20
"""Raw bytes per pack: zstd finds repeats anywhere in it, and an audit decompresses it in ~3 ms."""
COMPACT_AFTER = 512 << 10
"""A process packs the loose chunks once it has written this many raw bytes of them (and when its
cache closes or the process exits), so a pack is re-compressed about PACK_MAX / this = 8 times as it fills."""
_COMPACT_MOST = 8 * PACK_MAX
"""At most this many raw bytes per compaction (memory and write-lock time stay bounded)."""
_PACK_LEVEL = 9  # the lowest level whose window spans a pack (4 MB; level 6: 2 MB); 19: -7% bytes at 35x the CPU


def split_text(text: str) -> list[str]:
    """Cut ``text`` into chunks at content-defined line boundaries; ``"".join`` gives it back.

    Boundaries depend only on the line that ends a chunk (and the chunk's size so far), so the
    same run of lines is cut the same way wherever it appears: a chrono context repeated in every
    question of a personality, a training example retrieved for several questions, a held-out
    response quoted by several judges, each become the same chunks, stored once.
    """
    if len(text) <= _CHUNK_MIN:
        return [text]
    out, cur, size = [], [], 0
    for line in text.splitlines(keepends=True):
        cur.append(line)
        size += len(line)
        if (len(line) >= _LONG_LINE or size >= _CHUNK_MAX
                or (size >= _CHUNK_MIN and zlib.crc32(line.encode("utf-8")) & _CHUNK_MASK == 0)):
            out.append("".join(cur))
            cur, size = [], 0
    if cur:
        out.append("".join(cur))
    return out


def pack_raw(raw: str) -> str | bytes:
    """Long outputs are stored deflated (a BLOB); short ones stay plain text (readable in sqlite3)."""
    data = raw.encode("utf-8")
    if len(data) < 128:
        return raw
    packed = _deflate(data)
    return packed if len(packed) < len(data) else raw


def unpack_raw(stored: str | bytes) -> str:
    return stored if isinstance(stored, str) else _inflate(stored).decode("utf-8")


def _group(hashes: list[bytes]) -> list[list[bytes]]:
    """Content-defined groups of chunk ids (a group ends after an id whose first byte says so)."""
    out, cur = [], []
    for h in hashes:
        cur.append(h)
        if h[0] & _GROUP_MASK == 0 or len(cur) >= _GROUP_MAX:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _deflate(data: bytes) -> bytes:
    c = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate: no per-chunk header or checksum
    return c.compress(data) + c.flush()


def _inflate(data: bytes) -> bytes:
    return zlib.decompress(data, -15)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_varint(buf: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return n, pos


def decode_messages(conn: sqlite3.Connection, stored: str | bytes) -> tuple[dict[str, str], ...]:
    """The messages of a row: a chunk recipe (bytes) or the verbatim JSON list of older caches.

    Call it inside one read transaction with the row's read: a compaction between the lookups
    could otherwise move a chunk from ``loose`` to ``packs`` behind the reader's back.
    """
    if isinstance(stored, str):
        return tuple(json.loads(stored))
    return rebuild_messages(bytes(stored), lambda ids, group: _fetch(conn, ids, old_deflated=not group))


def rebuild_messages(recipe: bytes, fetch: Callable[[set[bytes], bool], Mapping[bytes, bytes]]) -> tuple[dict[str, str], ...]:
    """The exact messages of a recipe made by ``encode_messages``, whatever stores the chunks.

    ``fetch(ids, group)`` returns the raw bytes of those chunk ids (``group`` False) or id groups
    (``group`` True); a missing id is a ``KeyError``. The SQLite cache fetches from its packs, the
    shared caches (``shared_cache.py``) from their chunk tables.
    """
    plan: list[tuple[str, int, list[bytes]]] = []
    pos = len(_RECIPE_V1)
    while pos < len(recipe):
        n, pos = _read_varint(recipe, pos)
        role = recipe[pos:pos + n].decode("utf-8")
        mode = recipe[pos + n]
        count, pos = _read_varint(recipe, pos + n + 1)
        plan.append((role, mode, _ids(recipe[pos:pos + count * _HASH_BYTES])))
        pos += count * _HASH_BYTES
    group_ids = {h for _, mode, hs in plan if mode == 1 for h in hs}
    groups = _complete(fetch(group_ids, True), group_ids) if group_ids else {}
    plan = [(role, 0, [c for g in hs for c in _ids(groups[g])] if mode == 1 else hs) for role, mode, hs in plan]
    chunk_ids = {h for _, _, hs in plan for h in hs}
    texts = {h: b.decode("utf-8") for h, b in _complete(fetch(chunk_ids, False), chunk_ids).items()}
    return tuple({"role": role, "content": "".join(texts[h] for h in hs)} for role, _, hs in plan)


def _complete(found: Mapping[bytes, bytes], ids: set[bytes]) -> Mapping[bytes, bytes]:
    missing = [h.hex() for h in ids if h not in found]
    if missing:
        raise KeyError(f"cache row refers to missing prompt chunks {missing[:3]}")
    return found


def deflate(data: bytes) -> bytes:
    """One chunk compressed on its own (the shared caches' chunk tables, which have no packs)."""
    return _deflate(data)


def inflate(data: bytes) -> bytes:
    return _inflate(data)


def _ids(buf: bytes) -> list[bytes]:
    return [buf[i:i + _HASH_BYTES] for i in range(0, len(buf), _HASH_BYTES)]


def _fetch(conn: sqlite3.Connection, ids: set[bytes], *, old_deflated: bool = True) -> dict[bytes, bytes]:
    """The raw bytes of chunks (or id groups): from their pack, else ``loose``, else the old ``blobs``
    table (whose chunks are deflated one by one, ``old_deflated``; its id groups are not)."""
    found: dict[bytes, bytes] = {}
    where: dict[int, list[tuple[bytes, int, int]]] = {}
    for part in _batches(sorted(ids), 500):
        marks = ",".join("?" * len(part))
        for h, pack, start, size in conn.execute(
                f"SELECT hash, pack, start, size FROM packed WHERE hash IN ({marks})", part):
            where.setdefault(int(pack), []).append((bytes(h), int(start), int(size)))
    for pack, items in where.items():
        body = _unpack(conn, pack)
        for h, start, size in items:
            found[h] = body[start:start + size]
    for table, deflated in (("loose", False), ("blobs", old_deflated)):
        rest = sorted(ids - found.keys())
        for part in _batches(rest, 500):
            marks = ",".join("?" * len(part))
            for h, blob in conn.execute(f"SELECT hash, data FROM {table} WHERE hash IN ({marks})", part):
                found[bytes(h)] = _inflate(bytes(blob)) if deflated else bytes(blob)
    return found


def _codec() -> Any:
    import pyarrow as pa  # a dependency anyway (Parquet); imported here so the cache module stays light

    return pa.Codec("zstd", compression_level=_PACK_LEVEL)


def _unpack(conn: sqlite3.Connection, pack: int) -> bytes:
    row = conn.execute("SELECT size, data FROM packs WHERE id = ?", (pack,)).fetchone()
    if row is None:
        raise KeyError(f"cache refers to a missing prompt pack {pack}")
    size, data = row
    return _codec().decompress(bytes(data), decompressed_size=int(size), asbytes=True) if size else b""


def encode_messages(messages: Sequence[Mapping[str, Any]], known: set[bytes]) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """(a row's compact recipe of chunk ids per message, the raw chunks and id groups to insert).

    ``known`` holds ids already stored by this process (they are not sent again); the caller adds
    the returned ids to it once the row is committed. The items go to ``loose`` (``compact`` packs them).
    """
    chunks: list[tuple[bytes, bytes]] = []
    seen: set[bytes] = set()
    recipe = bytearray(_RECIPE_V1)
    for m in messages:
        role = str(m.get("role") or "").encode("utf-8")
        hashes = []
        for part in split_text(str(m.get("content") or "")):
            data = part.encode("utf-8")
            h = hashlib.sha256(data).digest()[:_HASH_BYTES]
            hashes.append(h)
            if h not in known and h not in seen:
                seen.add(h)
                chunks.append((h, data))
        mode = 0
        if len(hashes) > _GROUP_OVER:
            # A long list of chunk ids is itself cut into content-defined groups stored once:
            # a repeated context then costs a few group ids per call, not one id per chunk.
            mode, grouped = 1, []
            for group in _group(hashes):
                body = b"".join(group)
                g = hashlib.sha256(b"group:" + body).digest()[:_HASH_BYTES]
                grouped.append(g)
                if g not in known and g not in seen:
                    seen.add(g)
                    chunks.append((g, body))
            hashes = grouped
        recipe += _varint(len(role)) + role + bytes([mode]) + _varint(len(hashes)) + b"".join(hashes)
    return bytes(recipe), chunks


def compact(conn: sqlite3.Connection) -> int:
    """Move the loose chunks (up to 32 MB) into packs, in one write transaction; returns raw bytes packed.

    Chunks already packed (another process stored the same chunk, or a resumed run re-sent it) are
    dropped from ``loose`` without a second copy. The newest pack is extended while it has room
    (decompressed, appended to, compressed again), so a compaction of a few chunks does not leave a
    small pack that compresses badly. Raises ``sqlite3.Error`` (after rolling back) when it cannot write.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        rows, size = [], 0
        for h, d in conn.execute("SELECT hash, data FROM loose"):
            rows.append((bytes(h), bytes(d)))
            size += len(d)
            if size >= _COMPACT_MOST:  # a pile left by killed writers is packed over several calls
                break
        if not rows:
            conn.execute("COMMIT")
            return 0
        have: set[bytes] = set()
        for part in _batches([h for h, _ in rows], 500):
            marks = ",".join("?" * len(part))
            have.update(bytes(h) for (h,) in conn.execute(f"SELECT hash FROM packed WHERE hash IN ({marks})", part))
        fresh = [(h, d) for h, d in rows if h not in have]
        last = conn.execute("SELECT id, size FROM packs ORDER BY id DESC LIMIT 1").fetchone() if fresh else None
        pack, body = (int(last[0]), bytearray()) if last else (0, bytearray())
        if last and int(last[1]) < PACK_MAX:
            body += _unpack(conn, pack)  # the newest pack has room: extend it
        else:
            pack += 1
        index: list[tuple[bytes, int, int, int]] = []
        packed, grown = 0, False
        for h, data in fresh:
            if body and len(body) + len(data) > PACK_MAX:
                if grown:
                    _write_pack(conn, pack, body)
                pack, body, grown = pack + 1, bytearray(), False
            index.append((h, pack, len(body), len(data)))
            body += data
            packed += len(data)
            grown = True
        if grown:
            _write_pack(conn, pack, body)
        if index:
            conn.executemany("INSERT OR IGNORE INTO packed (hash, pack, start, size) VALUES (?, ?, ?, ?)", index)
        conn.executemany("DELETE FROM loose WHERE hash = ?", [(h,) for h, _ in rows])
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        raise
    return packed


def _write_pack(conn: sqlite3.Connection, pack: int, body: bytearray) -> None:
    data = _codec().compress(bytes(body), asbytes=True)
    conn.execute("INSERT OR REPLACE INTO packs (id, size, data) VALUES (?, ?, ?)", (pack, len(body), data))


def _batches(items: list[Any], n: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]
