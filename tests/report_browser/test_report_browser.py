"""Open the report in headless Chromium (Debian's package) through the DevTools protocol: no
console error, no uncaught exception, no network request, and a screenshot of the page.

Fails when CI=true and Chromium is missing (CI installs it); skips locally only without it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytestmark = pytest.mark.browser

CHROMIUM_NAMES = ("chromium", "chromium-browser")


def _chromium() -> str:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
        if path:
            return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("CI=true but chromium is not installed (the test step must install Debian's chromium)")
    pytest.skip("chromium not installed (set CI=true to make this a failure)")


class DevTools:
    """A minimal CDP client over one page target: send commands, collect events."""

    def __init__(self, ws_url: str):
        from websockets.sync.client import connect

        self.ws = connect(ws_url, max_size=None, open_timeout=30)
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, timeout: float = 60.0) -> dict:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 60.0) -> dict:
        for ev in self.events:
            if ev.get("method") == method:
                return ev
        deadline = time.monotonic() + timeout
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            self.events.append(msg)
            if msg.get("method") == method:
                return msg

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                self.events.append(json.loads(self.ws.recv(timeout=max(0.05, deadline - time.monotonic()))))
            except TimeoutError:
                return

    def close(self) -> None:
        self.ws.close()


def open_in_chromium(html: Path, tmp: Path, screenshot: Path, expressions: dict[str, str] | None = None) -> dict:
    """Load ``html`` and return the console errors, exceptions, log errors and non-file requests, plus
    the value of each JavaScript expression in ``expressions`` (evaluated after load)."""
    exe = _chromium()
    proc = subprocess.Popen(
        [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-extensions", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         f"--user-data-dir={tmp / 'profile'}", "--window-size=1280,2000", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        port = None
        deadline = time.monotonic() + 60
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {proc.returncode}")
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
        assert port, "chromium did not report its DevTools port"
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30).read())
        page = next(t for t in targets if t.get("type") == "page")
        cdp = DevTools(page["webSocketDebuggerUrl"])
        try:
            for domain in ("Runtime", "Log", "Page", "Network"):
                cdp.send(f"{domain}.enable")
            cdp.send("Emulation.setDeviceMetricsOverride",
                     {"width": 1280, "height": 2000, "deviceScaleFactor": 1, "mobile": False})
            cdp.send("Page.navigate", {"url": html.resolve().as_uri()})
            cdp.wait_for("Page.loadEventFired")
            cdp.drain(1.0)
            shot = cdp.send("Page.captureScreenshot", {"format": "png"})
            import base64

            screenshot.write_bytes(base64.b64decode(shot["data"]))
            title = cdp.send("Runtime.evaluate", {"expression": "document.title", "returnByValue": True})
            n_img = cdp.send("Runtime.evaluate", {
                "expression": "Array.from(document.images).filter(i => i.complete && i.naturalWidth > 0).length",
                "returnByValue": True})
            evaluated = {k: cdp.send("Runtime.evaluate", {"expression": e, "returnByValue": True})["result"].get("value")
                         for k, e in (expressions or {}).items()}
        finally:
            cdp.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    ev = cdp.events
    return {
        "console_errors": [e["params"] for e in ev if e.get("method") == "Runtime.consoleAPICalled"
                           and e["params"].get("type") in ("error", "assert", "warning")],
        "exceptions": [e["params"] for e in ev if e.get("method") == "Runtime.exceptionThrown"],
        "log_errors": [e["params"]["entry"] for e in ev if e.get("method") == "Log.entryAdded"
                       and e["params"]["entry"].get("level") == "error"],
        "requests": [e["params"]["request"]["url"] for e in ev if e.get("method") == "Network.requestWillBeSent"],
        "title": title["result"].get("value"),
        "loaded_images": n_img["result"].get("value"),
        "evaluated": evaluated,
    }


def _synthetic_tables(question_text: str = "question about topic {k} again", judges=("judge-a", "judge-b"),
                      tags=("Social Identity", "Motivations and Values", "Identity Narrative",
                            "Psychological Traits")) -> dict[str, pd.DataFrame]:
    """Enough of a run for every plot: 4 personalities x 3 methods x 2 judges, with tags and MCQ."""
    import pyarrow as pa

    from interviewsim_core.pipeline.tables import schema_of

    rng = np.random.default_rng(7)
    methods, people = ("simple", "chrono-100", "memory-100"), ("P1", "P2", "P3", "P4")
    split, gens, cs, fc, ans, scores = [], [], [], [], [], []
    for pi, pid in enumerate(people):
        for k in range(10 + 5 * pi):
            split.append({"personality_id": pid, "qa_id": f"{pid}-tr{k}", "partition": "train", "order": k,
                          "question": f"question about topic {k % 7} and theme {k}", "tags": [tags[k % len(tags)]]})
        for k in range(6):
            split.append({"personality_id": pid, "qa_id": f"{pid}-te{k}", "partition": "test", "order": 100 + k,
                          "question": question_text.format(k=k), "tags": [tags[k % len(tags)]]})
            for mi, m in enumerate(methods):
                gens.append({"personality_id": pid, "method": m, "qa_id": f"{pid}-te{k}", "n_context_used": 100 * mi,
                             "prompt_tokens": 80 + 1500 * mi, "completion_tokens": 30, "cost_usd": 1e-4 * (1 + 10 * mi),
                             "cache_hit": False})
                for j in judges:
                    cs.append({"personality_id": pid, "method": m, "judge": j, "qa_id": f"{pid}-te{k}",
                               "score": int(rng.integers(1, 6)), "status": "ok", "model": j,
                               "prompt_tokens": 50, "completion_tokens": 10, "cost_usd": 1e-5})
                    fc.append({"personality_id": pid, "method": m, "judge": j, "qa_id": f"{pid}-te{k}",
                               "label": rng.choice(["Entailment", "Neutral", "Contradiction"]), "status": "ok",
                               "prompt_tokens": 50, "completion_tokens": 10, "cost_usd": 1e-5})
                for n in (3, 4):
                    labels = "ABCD"[:n]
                    kind = rng.choice(["correct", "opposite_negation", "near_miss"])
                    ans.append({"personality_id": pid, "method": m, "n_options": n, "item_id": f"{pid}-te{k}#{n}",
                                "qa_id": f"{pid}-te{k}", "correct_label": labels[k % n], "chosen_kind": kind,
                                "correct": kind == "correct", "status": "ok",
                                "reward": {"correct": 1.0, "opposite_negation": -1.0}.get(kind, -0.5),
                                "prompt_tokens": 100, "completion_tokens": 5, "cost_usd": 1e-5})
        for mi, m in enumerate(methods):
            for j in judges:
                row = {f.name: (0 if pa.types.is_integer(f.type) or pa.types.is_floating(f.type) else None)
                       for f in schema_of("method_scores")}
                row.update({"personality_id": pid, "method": m, "judge": j, "cs_mean": 2 + mi * 0.4 + rng.random(),
                            "contradiction_ratio": 0.2 - 0.05 * mi + 0.05 * rng.random(),
                            "ps_alignment": 0.7 + 0.05 * rng.random(), "mcq3_accuracy": 0.8 + 0.05 * mi,
                            "mcq3_reward": 0.6 + 0.05 * mi, "mcq4_accuracy": 0.75, "mcq4_reward": 0.5,
                            "n_train_pairs": 10 + 5 * pi, "cost_usd": 0.0})
                scores.append(row)
    return {"heldout_split": pd.DataFrame(split), "generations": pd.DataFrame(gens),
            "content_similarity": pd.DataFrame(cs), "factual_consistency": pd.DataFrame(fc),
            "mcq_answers": pd.DataFrame(ans), "method_scores": pd.DataFrame(scores)}


def test_report_opens_without_console_errors(tmp_path):
    from interviewsim_core.report import build_report, write_report

    data = build_report(tables=_synthetic_tables(), title="Browser check")
    paths = write_report(tmp_path, tmp_path / "report", report_data=data)
    shot = tmp_path / "report.png"
    seen = open_in_chromium(paths.html, tmp_path, shot)
    assert seen["title"] == "Browser check"
    assert seen["exceptions"] == [] and seen["console_errors"] == [] and seen["log_errors"] == []
    assert all(u.startswith(("file:", "data:")) for u in seen["requests"]), seen["requests"]
    assert seen["loaded_images"] >= 4  # metrics, tag breakdown, MCQ distribution, frontier (+ overlap)
    png = shot.read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 50_000
    keep = os.environ.get("REPORT_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")


def test_the_check_catches_a_console_error(tmp_path):
    """The detector itself works: a page with a script error and a console.error is caught."""
    page = tmp_path / "bad.html"
    page.write_text("<!DOCTYPE html><html><head><title>bad</title></head><body>x"
                    "<script>console.error('boom'); undefinedFunction();</script></body></html>")
    seen = open_in_chromium(page, tmp_path, tmp_path / "bad.png")
    assert seen["console_errors"] and seen["exceptions"]


XSS = "<script>window.__pwned = 1; console.error('xss')</script>"


def test_user_text_is_escaped_and_inert(tmp_path):
    """Hostile text in a question, a tag, a judge label and the title is shown as text, never run."""
    from interviewsim_core.report import build_report, write_report

    tables = _synthetic_tables(question_text=XSS + " topic {k}", judges=("<b onmouseover=alert(1)>j</b>",),
                               tags=("<img src=x onerror=\"window.__pwned=2\">", "plain"))
    data = build_report(tables=tables, title="<script>window.__pwned=3</script>")
    paths = write_report(tmp_path, tmp_path / "report", report_data=data)
    html = paths.html.read_text()
    assert "<script" not in html and "&lt;script&gt;window.__pwned = 1" in html
    seen = open_in_chromium(paths.html, tmp_path, tmp_path / "xss.png", expressions={
        "pwned": "typeof window.__pwned", "scripts": "document.scripts.length",
        "imgs_with_handler": "document.querySelectorAll('[onerror],[onmouseover]').length",
        "question_shown": "document.body.textContent.includes(\"window.__pwned = 1\")",
        "title": "document.title"})
    assert seen["exceptions"] == [] and seen["console_errors"] == [] and seen["log_errors"] == []
    assert all(u.startswith(("file:", "data:")) for u in seen["requests"]), seen["requests"]
    ev = seen["evaluated"]
    assert ev["pwned"] == "undefined" and ev["scripts"] == 0 and ev["imgs_with_handler"] == 0
    assert ev["question_shown"] is True and ev["title"] == "<script>window.__pwned=3</script>"
