"""A full disk (here: a file-size limit) must name its real error and keep the answers paid for."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

_PRELUDE = """
import resource, signal, sys
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
from interviewsim_core.llm.cache import CacheWriteError, CachedEntry, SqliteCache
cache = SqliteCache(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, 200_000))
"""


def _run(body: str, tmp_path: Path) -> list[str]:
    code = textwrap.dedent(_PRELUDE) + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "cache.sqlite")], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()


def test_cache_put_names_the_real_error_and_the_path(tmp_path):
    lines = _run("""
        try:
            for i in range(1000):
                cache.put(f"k{i}", CachedEntry(raw="x" * 5000, messages=({"role": "user", "content": "y" * 3000 + str(i)},)))
        except CacheWriteError as exc:
            print("CacheWriteError", exc)
        """, tmp_path)
    (line,) = lines
    assert line.startswith("CacheWriteError")
    assert str(tmp_path / "cache.sqlite") in line
    assert "disk I/O error" in line or "full" in line
    assert "cannot rollback" not in line


def test_gateway_keeps_answers_when_the_cache_cannot_be_written(tmp_path):
    lines = _run("""
        from interviewsim_core.contracts import content_similarity as cs
        from interviewsim_core.llm.gateway import Gateway
        from interviewsim_core.llm.types import CallRequest, ModelConfig
        reqs = [CallRequest(messages=tuple(cs.build_messages(f"reference {i} " + "word " * 800, f"candidate {i}")),
                            contract=cs.NAME, contract_version="v", parser=cs.parse) for i in range(80)]
        gw = Gateway(cache=cache)
        out = gw.run(ModelConfig(model="offline/extractive"), reqs)
        print(sorted({r.status for r in out}), all(r.error.startswith("not sent") for r in out if r.status == "failed"))
        print(gw.stats.cache_write_errors > 0, type(gw.cache_error).__name__)
        print(gw.cache_error)
        try:
            gw.raise_for_cache_errors()
        except CacheWriteError:
            print("raised")
        """, tmp_path)
    from interviewsim_core.llm.cache import cache_write_errors

    noted = cache_write_errors(tmp_path / "cache.sqlite", since=0.0)  # what the CLI reads after a run
    assert len(noted) == 1 and str(tmp_path / "cache.sqlite") in noted[0]
    assert cache_write_errors(tmp_path / "cache.sqlite", since=9e12) == []
    # The answers received are kept ("ok"); after the first failed write nothing more is sent (issue 20).
    assert lines[0] == "['failed', 'ok'] True"
    assert lines[1] == "True CacheWriteError"
    assert str(tmp_path / "cache.sqlite") in lines[2] and "cannot rollback" not in lines[2]
    assert lines[3] == "raised"


def test_cli_run_exits_non_zero_when_answers_were_not_cached(tmp_path, monkeypatch):
    """Every step succeeded and the tables are written, but a worker could not cache its answers:
    the command must say so and exit non-zero (a re-run would pay for them again)."""
    from types import SimpleNamespace

    import interviewsim_dagster.launch as launch
    from interviewsim_cli import run_cmds
    from interviewsim_core.llm.cache import CacheWriteError, SqliteCache
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.sample_corpus import SAMPLE_CORPUS_DIR

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    cfg = EvalConfig.load(env={}, overrides={"corpus": str(SAMPLE_CORPUS_DIR), "data_root": str(tmp_path / "out"),
                                             "generator": "offline/extractive", "judges": "offline/extractive",
                                             "builder": "offline/extractive", "premise_judge": "offline/extractive"})

    def fake_execute(defs, instance, specs, **kw):
        cache = SqliteCache(cfg.effective_cache_path)  # what a step's worker process would hold
        cache._record_write_error(CacheWriteError(cache.path, OSError(27, "File too large")))
        return [SimpleNamespace(success=True, checks_failed=[]) for _ in specs]

    monkeypatch.setattr(launch, "plan_runs", lambda *a, **k: ["one run"])
    monkeypatch.setattr(launch, "execute", fake_execute)
    from interviewsim_cli.outcome import EXIT_ENVIRONMENT

    assert run_cmds._materialise(cfg, None, None, None, False) == EXIT_ENVIRONMENT  # a path could not be written
    # and a clean run of the same shape exits 0 (an old note does not fail later runs)
    monkeypatch.setattr(launch, "execute",
                        lambda defs, instance, specs, **kw: [SimpleNamespace(success=True, checks_failed=[])])
    assert run_cmds._materialise(cfg, None, None, None, False) == 0
