"""The fake OpenAI server, plus the Files and Batch endpoints, for testing batch mode offline.

Implements the part of OpenAI's Batch API a client uses: ``POST /v1/files`` (multipart upload,
purpose ``batch``), ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``.
A batch answers each line with the same scripted reply the chat endpoint gives, after
``polls_to_finish`` status reads, so a client's polling loop is exercised. ``expire_fraction``
makes a batch end ``expired`` with only that share of its lines answered, the rest listed in the
error file with code ``batch_expired``, as OpenAI does when a 24 h window runs out.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

from .testing import FakeOpenAIServer, FakeServerConfig, key_rejection, targeted

__all__ = ["BatchBehaviour", "FakeBatchServer"]


@dataclass
class BatchBehaviour:
    polls_to_finish: int = 1
    """``GET /v1/batches/{id}`` answers ``in_progress`` this many times before the final status."""
    expire_fraction: float = 0.0
    """Share of lines left unanswered (status ``expired``); 0 completes every line."""
    failed_line_every: int = 0
    """Every n-th line gets a 500 response line (a per-request failure inside a completed batch)."""


class FakeBatchServer(FakeOpenAIServer):
    """``FakeOpenAIServer`` with in-memory files and batches (see the module docstring)."""

    def __init__(self, config: FakeServerConfig | None = None, behaviour: BatchBehaviour | None = None,
                 port: int = 0):
        super().__init__(config, port)
        self.behaviour = behaviour or BatchBehaviour()
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_creates = 0
        self._ids = itertools.count(1)
        self._block = threading.Lock()

    async def _dispatch(self, method: str, path: str, headers: dict[str, str], body: bytes):
        route = path.split("?", 1)[0].rstrip("/")
        if self.config.reject_key and route.startswith(("/v1/files", "/v1/batches")) and targeted(self.config, path):
            return self._record(path, headers, body, key_rejection(headers))
        if route == "/v1/files" and method == "POST":
            return self._record(path, headers, body, self._upload(headers, body))
        if route.startswith("/v1/files/") and route.endswith("/content") and method == "GET":
            fid = route.split("/")[3]
            return self._record(path, headers, body, (200, {}, self.files[fid]) if fid in self.files
                                else (404, {}, {"error": {"message": f"no file {fid}"}}))
        if route == "/v1/batches" and method == "POST":
            return self._record(path, headers, body, self._create(json.loads(body or b"{}")))
        if route.startswith("/v1/batches/") and method == "GET":
            return self._record(path, headers, body, self._retrieve(route.split("/")[3]))
        return await super()._dispatch(method, path, headers, body)

    def _record(self, path: str, headers: dict[str, str], body: bytes, answer: tuple) -> tuple:
        with self._lock:
            self._c.requests += 1
            self._c.by_path[path] = self._c.by_path.get(path, 0) + 1
            self._c.log.append({"t": time.monotonic(), "path": path, "headers": headers,
                                "body": body[:2000].decode("utf-8", "replace"), "status": answer[0]})
        return answer

    def _new_id(self, prefix: str) -> str:
        with self._block:
            return f"{prefix}-{next(self._ids)}"

    def _upload(self, headers: dict[str, str], body: bytes) -> tuple:
        msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {headers.get('content-type', '')}\r\n\r\n".encode() + body)
        content = None
        for part in msg.iter_parts():
            if part.get_param("name", header="content-disposition") == "file":
                content = part.get_payload(decode=True)
        if content is None:
            return 400, {}, {"error": {"message": "multipart upload without a 'file' part"}}
        fid = self._new_id("file")
        self.files[fid] = content
        return 200, {}, {"id": fid, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                         "filename": "input.jsonl", "purpose": "batch", "status": "processed"}

    def _create(self, req: dict[str, Any]) -> tuple:
        fid = req.get("input_file_id")
        if fid not in self.files:
            return 400, {}, {"error": {"message": f"unknown input_file_id {fid!r}"}}
        bid = self._new_id("batch")
        lines = [json.loads(line) for line in self.files[fid].decode("utf-8").splitlines() if line.strip()]
        self.batch_creates += 1
        self.batches[bid] = {"id": bid, "object": "batch", "endpoint": req.get("endpoint"),
                             "input_file_id": fid, "completion_window": req.get("completion_window", "24h"),
                             "status": "validating", "created_at": int(time.time()), "polls": 0,
                             "output_file_id": None, "error_file_id": None, "_lines": lines,
                             "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        return 200, {}, self._public(self.batches[bid])

    @staticmethod
    def _public(batch: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in batch.items() if not k.startswith("_") and k != "polls"}

    def _retrieve(self, bid: str) -> tuple:
        batch = self.batches.get(bid)
        if batch is None:
            return 404, {}, {"error": {"message": f"no batch {bid}"}}
        batch["polls"] += 1
        if batch["status"] in ("validating", "in_progress"):
            if batch["polls"] <= self.behaviour.polls_to_finish:
                batch["status"] = "in_progress"
            else:
                self._finish(batch)
        return 200, {}, self._public(batch)

    def _finish(self, batch: dict[str, Any]) -> None:
        lines = batch["_lines"]
        n_answered = len(lines) - int(len(lines) * self.behaviour.expire_fraction)
        out, err = [], []
        for i, line in enumerate(lines):
            cid = line["custom_id"]
            if i >= n_answered:
                err.append({"id": f"req-{i}", "custom_id": cid, "response": None,
                            "error": {"code": "batch_expired", "message": "not processed before the window ended"}})
                continue
            every = self.behaviour.failed_line_every
            if every and (i + 1) % every == 0:
                out.append({"id": f"req-{i}", "custom_id": cid, "error": None,
                            "response": {"status_code": 500, "body": {"error": {"message": "server error (fake)"}}}})
                continue
            body = self._chat(line["body"], malformed=False)
            out.append({"id": f"req-{i}", "custom_id": cid, "error": None,
                        "response": {"status_code": 200, "request_id": f"r{i}", "body": body}})
        completed = sum(1 for o in out if o["response"]["status_code"] == 200)
        batch["request_counts"] = {"total": len(lines), "completed": completed, "failed": len(lines) - completed}
        batch["status"] = "expired" if n_answered < len(lines) else "completed"
        if out:
            fid = self._new_id("file")
            self.files[fid] = "".join(json.dumps(o) + "\n" for o in out).encode()
            batch["output_file_id"] = fid
        if err:
            fid = self._new_id("file")
            self.files[fid] = "".join(json.dumps(e) + "\n" for e in err).encode()
            batch["error_file_id"] = fid
