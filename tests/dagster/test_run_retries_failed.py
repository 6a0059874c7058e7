"""Issue 20: `interviewsim run` (no `--force`) retries the failed calls of partitions written with `failed` rows.

Such a partition used to count as up to date (``freshness.is_up_to_date``), so the calls that got no
answer were never asked again without `--force` (the direct runner's rerun retries them). The fake
server answers ~25% of request bodies 401 in the first run (not retried: those rows are `failed`),
then every request. The second run must send the failed calls again and no call that had been
answered (new calls appear: those that follow a call that failed); a third run finds everything up
to date and sends nothing. Before, the second run sent nothing.
"""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from pathlib import Path

from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core" / "pipeline"))
from fakes import offline_reply  # noqa: E402

from interviewsim_core.llm.testing import FakeOpenAIServer, FakeServerConfig  # noqa: E402


def _digest(entry: dict) -> str:
    return hashlib.sha256(entry["path"].encode() + entry["body"].encode()).hexdigest()


def _run(tmp_path: Path, corpus: Path, base: str) -> tuple[int, str]:
    from interviewsim_cli import app

    model = "openai/fake-model"
    result = CliRunner().invoke(app, ["run", "--corpus", str(corpus), "--data-root", str(tmp_path / "data"),
                                      "--methods", "simple", "--generator", model, "--judges", model,
                                      "--builder", model, "--premise-judge", model, "--api-base", base, "--yes"])
    return result.exit_code, result.output


def test_a_rerun_sends_again_only_the_calls_that_failed(tiny_corpus, tmp_path, monkeypatch):
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    for k in ("INTERVIEWSIM_CONFIG", "INTERVIEWSIM_METHODS", "INTERVIEWSIM_DATA_ROOT", "INTERVIEWSIM_CORPUS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    with FakeOpenAIServer(FakeServerConfig(reply=offline_reply, reject_key_rate=0.25)) as srv:
        code, out = _run(tmp_path, tiny_corpus, srv.base_url)
        first = list(srv.log)
        failed = Counter(_digest(e) for e in first if e.get("status") == 401)
        answered = {_digest(e) for e in first if e.get("status") == 200}
        assert failed and answered, out
        srv.config.reject_key_rate = 0.0
        code2, out2 = _run(tmp_path, tiny_corpus, srv.base_url)
        second = srv.log[len(first):]
        code3, out3 = _run(tmp_path, tiny_corpus, srv.base_url)
        third = srv.log[len(first) + len(second):]
    assert code2 == 0, out2
    sent_again = Counter(_digest(e) for e in second)
    print(f"\nfirst run: {len(first)} requests, {sum(failed.values())} failed (401); second run: {len(second)} "
          f"requests, {sum(sent_again[d] for d in failed)} of them the failed calls; third run: {len(third)}")
    # Every failed call is asked again unless its own prompt changed with the retry of an earlier
    # one (an MCQ item whose distractors failed is dropped, so the questions batched with it differ).
    retried = sum(1 for d in failed if sent_again[d])
    assert retried >= len(failed) // 2, (retried, len(failed))
    assert not answered & set(sent_again), "an answered call was sent again"
    assert code3 == 0 and third == [], out3  # now every partition is up to date
