"""``interviewsim premise FILE``: validation first, then judge, write Parquet, print headline."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
from typer.testing import CliRunner

from interviewsim_cli import app

RECORDS = [
    {"conclusion": "alice said she might move to Paris in 2027.", "peer_id": "alice", "conclusion_id": "c1",
     "window": [{"speaker": "alice", "time": "2026-07-02T10:00Z", "text": "I might move to Paris in 2027."}]},
    {"conclusion": "He likes it.", "peer_id": "bob", "conclusion_id": "c2",
     "window": [{"speaker": "bob", "time": "message 4", "text": "I like the new bakery on Elm Street."}]},
]


def _write(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


def test_invalid_file_lists_problems_and_writes_nothing(tmp_path):
    f = _write(tmp_path / "c.jsonl", [RECORDS[0], {**RECORDS[1], "conclusion_id": "c1", "x": 1}])
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["premise", str(f), "--out", str(out)])
    assert res.exit_code == 1
    assert "line 2" in res.stderr and "duplicate-id" in res.stderr and "unknown-field" in res.stderr
    assert not out.exists()


def test_offline_run_writes_parquet_and_prints_attribution_first(tmp_path):
    f = _write(tmp_path / "c.jsonl", RECORDS)
    out = tmp_path / "out"
    runner = CliRunner()
    res = runner.invoke(app, ["premise", str(f), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stdout.splitlines()[0].startswith("Failure attribution")
    verdicts = pq.read_table(out / "premise_verdicts.parquet").to_pandas()
    assert list(verdicts["conclusion_id"]) == ["c1", "c2"]
    assert set(verdicts["artifact_kind"]) == {"user"}
    assert verdicts.set_index("conclusion_id").loc["c2", "verdict"] == "FAIL"  # pronoun, vacuous object
    assert (out / "premise_label_clusters.parquet").exists()

    res = runner.invoke(app, ["premise", str(f), "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert list(summary)[:3] == ["judge", "n_conclusions", "attribution_split"]
    assert summary["n_conclusions"] == 2 and summary["overall"]["n"] == 2
    assert summary["cross_check"]["n_statements"] == 0  # user conclusions are not fact summaries


def test_embedding_flags_choose_the_label_clustering_embedder(tmp_path, monkeypatch):
    from interviewsim_core import factories
    from interviewsim_core.embeddings import HashingEmbedder

    asked, embedded = [], []

    class StandIn(HashingEmbedder):
        """Offline vectors under the configured model's name: no network in tests."""

        def __init__(self, model, api_base=None):
            super().__init__()
            asked.append((model, api_base))

        def embed(self, texts):
            embedded.extend(texts)
            return super().embed(texts)

    monkeypatch.setattr(factories, "embedder_from", StandIn)
    f = _write(tmp_path / "c.jsonl", RECORDS + [
        {"conclusion": "They changed it then.", "peer_id": "carol", "conclusion_id": "c3",
         "window": [{"speaker": "carol", "time": "message 9", "text": "We moved the launch to May."}]}])
    res = CliRunner().invoke(app, ["premise", str(f), "--out", str(tmp_path / "out"), "--api-base",
                                   "http://127.0.0.1:9/v1", "--embedding-model", "openai/text-embedding-3-small"])
    assert res.exit_code == 0, res.output
    # --embedding-api-base unset: the embedder falls back to --api-base, as EvalConfig does.
    assert asked == [("openai/text-embedding-3-small", "http://127.0.0.1:9/v1")]
    verdicts = pq.read_table(tmp_path / "out" / "premise_verdicts.parquet").to_pandas()
    forms = {lab for x in verdicts[verdicts.verdict == "FAIL"]["labels"] for lab in x}
    assert len(forms) >= 2 and embedded  # two or more labels: clustered with the chosen embedder
