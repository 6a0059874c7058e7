"""Helpers shared by the Dagster tests: a tiny synthetic corpus, configs and a whole-graph run.

The corpus is written by the test (two fictional people, five short interviews each) so a whole
graph run with the offline model takes seconds, not minutes; the shipped sample is for the demo.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import yaml

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from interviewsim_dagster import launch  # noqa: E402
from interviewsim_core.pipeline.config import EvalConfig  # noqa: E402

PEOPLE = ("TINY_ALDER", "TINY_BRISK")
METHODS = "simple,chrono-100,memory-10"
TOPICS = ("the harbour ferry", "winter swimming", "the bakery on Quay Street", "rowing races", "lighthouse repairs")


def person_document(pid: str, n_interviews: int = 5, pairs: int = 3) -> dict:
    """A valid prepared_input.json: facts stated early and revisited later, so methods can differ."""
    interviews = []
    for i in range(n_interviews):
        qa = []
        for j in range(pairs):
            topic = TOPICS[(i + j) % len(TOPICS)]
            qa.append({
                "qa_id": f"{pid}_Q{i}_{j}",
                "question": f"What do you think about {topic} these days, interview {i}?",
                "response": f"I have always cared about {topic}. In year {2000 + i} I changed my mind about it "
                            f"because my neighbour {pid.title()} told me a story about {topic} and the tides.",
                "tags": ["Motivations and Values"] if j % 2 == 0 else [],
            })
        interviews.append({"interview_id": f"{pid}_I{i}", "sequence": i + 1, "qa_pairs": qa})
    return {
        "schema_version": "1.0",
        "personality_id": pid,
        "personality": {"profile": f"{pid} is a fictional harbour pilot.",
                        "long_profile": f"{pid} is a fictional harbour pilot who swims in winter and rows."},
        "interviews": interviews,
    }


def write_person(corpus: Path, pid: str, doc: dict | None = None) -> Path:
    d = corpus / pid
    d.mkdir(parents=True, exist_ok=True)
    path = d / "prepared_input.json"
    path.write_text(json.dumps(doc if doc is not None else person_document(pid)), encoding="utf-8")
    return path


def make_config(corpus: Path, data_root: Path, **overrides):
    base = {"corpus": str(corpus), "data_root": str(data_root), "methods": METHODS}
    base.update(overrides)
    return EvalConfig.load_resolved(env={}, overrides=base)


SAMPLE = Path(__file__).resolve().parents[2] / "interviewsim_core" / "sample_corpus"
OFFLINE = {"model": "offline/extractive"}


def offline_sample_config(tmp_path: Path, monkeypatch, **fields) -> Path:
    """A config file for ``interviewsim run`` on the shipped sample with the offline model everywhere, data under
    ``tmp_path/data``, DAGSTER_HOME ``tmp_path/home``, and none of the caller's ``INTERVIEWSIM_*`` variables that
    would override it; ``fields`` add to or replace the file's settings."""
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    for k in ("INTERVIEWSIM_CONFIG", "INTERVIEWSIM_METHODS", "INTERVIEWSIM_DATA_ROOT", "INTERVIEWSIM_CORPUS"):
        monkeypatch.delenv(k, raising=False)
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(yaml.safe_dump({"corpus": str(SAMPLE), "data_root": str(tmp_path / "data"), "generator": OFFLINE,
                                   "builder": OFFLINE, "premise_judge": OFFLINE, "judges": [OFFLINE], **fields}))
    return cfg


def run_everything(defs, instance, cfg, **kw) -> list[launch.RunOutcome]:
    launch.register_personalities(instance, str(cfg.corpus))
    specs = launch.plan_runs(defs, instance, cfg.methods, **kw)
    return launch.execute(defs, instance, specs, progress=lambda _m: None)


def automation_ticks(defs, instance, cursor: str | None, ticks: int = 2) -> tuple[dict[str, set[str]], str | None]:
    """What ``ticks`` evaluations of the automation conditions request, as non-empty {asset: partition keys}, and the
    cursor after them (the sensor's view: each tick sees what the one before requested)."""
    import dagster as dg

    requested: dict[str, set[str]] = {}
    for _ in range(ticks):
        result = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
        cursor = result.cursor
        for key in defs.resolve_asset_graph().get_all_asset_keys():
            requested.setdefault(key.to_user_string(), set()).update(map(str, result.get_requested_partitions(key)))
    return {k: v for k, v in requested.items() if v}, cursor


def read_until(proc: subprocess.Popen, marker: str) -> tuple[list[str], threading.Event, threading.Thread]:
    """Read ``proc``'s output in a thread: (the lines so far, set once a line holds ``marker``, the thread)."""
    lines: list[str] = []
    seen = threading.Event()

    def read() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line)
            if marker in line:
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return lines, seen, reader


CURATED = {"ADA": "Ada Quill", "BEN": "Ben Marsh"}
"""The curation fixtures' people (fictional): personality id -> the name in their transcripts."""


def write_transcripts(tmp_path: Path, interviews: int = 3) -> tuple[Path, Path]:
    """A transcripts folder (plain-text interviews, ``Name: text`` paragraphs) and its JSON manifest for
    ``CURATED``; every answer is long enough for the offline quality control to keep the interview."""
    folder = tmp_path / "transcripts"
    folder.mkdir(parents=True)
    rows = []
    for pid, person in CURATED.items():
        for i in range(interviews):
            turns = [("Interviewer", "Welcome back, and thank you for talking with us again today."),
                     (person, f"Thank you, it is good to be here for the {i + 1}th time in this studio.")]
            for j, topic in enumerate(TOPICS[:3]):
                turns += [("Interviewer", f"What do you think about {topic} this year?"),
                          (person, f"I have cared about {topic} since I was young, and in year {2000 + i} "
                                   f"I learned something new about it from a neighbour, number {j}.")]
            name = f"{pid.lower()}_{i}.txt"
            (folder / name).write_text("\n\n".join(f"{who}: {text}" for who, text in turns) + "\n", encoding="utf-8")
            rows.append({"file": name, "personality_id": pid, "person_name": person, "date": f"201{i}-03-0{i + 1}"})
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps(rows), encoding="utf-8")
    return folder, manifest


def curating_config(tmp_path: Path, **overrides):
    """A config whose graph starts with the curation of ``write_transcripts`` into ``tmp_path/corpus``."""
    folder, manifest = write_transcripts(tmp_path)
    return make_config(tmp_path / "corpus", tmp_path / "data", transcripts=str(folder), manifest=str(manifest),
                       methods="simple", **overrides)


def stale_resolver(instance, graph):
    """Dagster's stale-status resolver, what the asset graph, the catalog and GraphQL's ``staleStatus`` read.

    The one place the tests reach into Dagster's private modules: 1.13 has no public way to read a partition's
    stale status in process (GraphQL needs a running webserver). Returns the resolver and ``StaleStatus``."""
    from dagster._core.asset_graph_view.asset_graph_view import AssetGraphView, TemporalContext
    from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
    from dagster._time import get_current_datetime

    view = AssetGraphView(temporal_context=TemporalContext(effective_dt=get_current_datetime(), last_event_id=None),
                          instance=instance, asset_graph=graph)
    return CachingStaleStatusResolver(instance=instance, asset_graph=graph, loading_context=view), StaleStatus
