"""How the cache stores prompts: deduplicated, compressed, and rebuilt exactly on demand.

A 3-million-call run repeats the same context blocks in thousands of prompts (a personality's
chrono context in every one of its questions, a retrieved example for several questions, a
held-out response quoted by several judges). Each message is cut into chunks at content-defined
line boundaries (``split_text``), every distinct chunk is stored once, raw-deflated, under its
96-bit hash in the ``blobs`` table, and a call row keeps only a compact recipe: per message its
role and its chunk ids, long id lists themselves grouped and stored once. ``decode_messages``
rebuilds the exact messages; rows of older caches (the messages as JSON text) still read.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zlib
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["decode_messages", "encode_messages", "pack_raw", "split_text", "unpack_raw"]

_HASH_BYTES = 12  # 96-bit chunk ids: no collision in any realistic number of chunks
_GROUP_OVER, _GROUP_MASK, _GROUP_MAX = 8, 7, 64
_RECIPE_V1 = b"\x01"  # first byte of a chunked row; older rows hold the messages as JSON text
# A line ends a chunk when it is long (a response, an example) or, past 256 characters, when its
# hash says so; chunks never exceed 4096 characters.
_LONG_LINE, _CHUNK_MIN, _CHUNK_MAX, _CHUNK_MASK = 160, 256, 4096, 3


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
    """The messages of a row: a chunk recipe (bytes) or the verbatim JSON list of older caches."""
    if isinstance(stored, str):
        return tuple(json.loads(stored))
    stored = bytes(stored)
    plan: list[tuple[str, int, list[bytes]]] = []
    pos = len(_RECIPE_V1)
    while pos < len(stored):
        n, pos = _read_varint(stored, pos)
        role = stored[pos:pos + n].decode("utf-8")
        mode = stored[pos + n]
        count, pos = _read_varint(stored, pos + n + 1)
        plan.append((role, mode, _ids(stored[pos:pos + count * _HASH_BYTES])))
        pos += count * _HASH_BYTES
    groups = _fetch(conn, {h for _, mode, hs in plan if mode == 1 for h in hs})
    plan = [(role, 0, [c for g in hs for c in _ids(groups[g])] if mode == 1 else hs) for role, mode, hs in plan]
    texts = {h: _inflate(b).decode("utf-8") for h, b in _fetch(conn, {h for _, _, hs in plan for h in hs}).items()}
    return tuple({"role": role, "content": "".join(texts[h] for h in hs)} for role, _, hs in plan)


def _ids(buf: bytes) -> list[bytes]:
    return [buf[i:i + _HASH_BYTES] for i in range(0, len(buf), _HASH_BYTES)]


def _fetch(conn: sqlite3.Connection, ids: set[bytes]) -> dict[bytes, bytes]:
    found: dict[bytes, bytes] = {}
    for part in _batches(sorted(ids), 500):
        marks = ",".join("?" * len(part))
        for h, blob in conn.execute(f"SELECT hash, data FROM blobs WHERE hash IN ({marks})", part):
            found[bytes(h)] = bytes(blob)
    missing = [h.hex() for h in ids if h not in found]
    if missing:
        raise KeyError(f"cache row refers to missing prompt chunks {missing[:3]}")
    return found


def encode_messages(messages: Sequence[Mapping[str, Any]], known: set[bytes]) -> tuple[bytes, list[tuple[bytes, bytes]]]:
    """(a row's compact recipe of chunk ids per message, the chunks to insert).

    ``known`` holds ids already stored by this process (they are not compressed or sent again);
    the caller adds the returned ids to it once the row is committed.
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
                chunks.append((h, _deflate(data)))
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


def _batches(items: list[Any], n: int) -> Iterable[list[Any]]:
    for i in range(0, len(items), n):
        yield items[i:i + n]
