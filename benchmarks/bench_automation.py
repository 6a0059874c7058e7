"""Issue 19's figure: what automation spends after a CLI run beside a running UI.

The issue's scenario, as a user meets it: ``interviewsim ui`` running (webserver + daemon, the
automation sensor on as shipped, every configured method in the UI's configuration), then
``interviewsim run --methods simple`` on a corpus of small personalities (5 interviews x 2 pairs)
that nothing had materialised before. Before issue 19 the next tick launched every method's
``generations`` and everything downstream (5,901 partitions in 57 runs at 100 personalities).

Printed, against a local fake model server that records every request:
- the CLI run's requests, beside what ``interviewsim plan --methods simple`` said it would send at most
  (the plan cannot know which answers will coincide and make identical judge prompts, sent once);
- the requests the server saw over the next three finished sensor ticks after the command returned,
  and the runs of a model-calling step the sensor launched since the command started (target: 0 and
  0: PASS/FAIL); the sensor's runs of steps that call no model (scores, leaderboard, report, refreshed
  as the command's partitions land) are listed beside, with whether they started during the command.

Usage: ``python -m benchmarks.bench_automation [--personalities 100]``; ``--quick`` is 8 personalities.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
TICKS = 3


def _env(work: Path, config: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(work / "dagster_home"), INTERVIEWSIM_CONFIG=str(config), PYTHONPATH=str(REPO),
               LITELLM_LOCAL_MODEL_COST_MAP="True", BENCH_FAKE_KEY="sk-bench-fake")
    (work / "dagster_home").mkdir(exist_ok=True)
    return env


def _cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess:
    exe = str(Path(sys.executable).with_name("interviewsim"))
    return subprocess.run([exe, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=7200)


def measure(n: int, work: Path) -> dict:
    from benchmarks.bench_plan import small_corpus
    from interviewsim_dagster.definitions import AUTOMATION_SENSOR
    from tests.dagster.ui_harness import DagsterUI, FakeModelServer, wait_for

    corpus = small_corpus(work / "corpus", n)
    config = work / "interviewsim.yaml"
    with FakeModelServer(work) as server:
        model = {"model": "openai/fake-model", "api_base": server.base_url, "api_key_env": "BENCH_FAKE_KEY"}
        # Every method configured (the default set): the UI knows all of them; the command asks for one.
        config.write_text(json.dumps({"corpus": str(corpus), "data_root": str(work / "data"), "generator": model,
                                      "judges": [model], "builder": model, "premise_judge": model,
                                      "embedding_model": "offline/hashing"}))
        env = _env(work, config)
        planned = json.loads(_cli(env, work, "plan", "--config", str(config), "--methods", "simple", "--json").stdout)
        reg = _cli(env, work, "register", "--corpus", str(corpus))
        assert reg.returncode == 0, reg.stdout[-2000:] + reg.stderr[-2000:]
        with DagsterUI(env, cwd=work, log=work / "ui.log") as ui:
            ui.set_sensor_running(AUTOMATION_SENSOR, True)  # as shipped; explicit so the figure never rests on a default
            before = len(server.requests())
            t0 = time.time()
            run = _cli(env, work, "run", "--config", str(config), "--methods", "simple", "--yes")
            done = time.time()
            assert run.returncode in (0, 5, 6), run.stdout[-3000:] + run.stderr[-3000:]
            cli_calls = len(server.requests()) - before
            wait_for(f"{TICKS} sensor ticks", lambda: len(ui.finished_ticks_after(AUTOMATION_SENSOR, done)) >= TICKS,
                     60 * 30, every_s=2)
            ticks = sorted(ui.finished_ticks_after(AUTOMATION_SENSOR, done), key=lambda t: t["timestamp"])[:TICKS]
            after = len(server.requests()) - before - cli_calls
            by_sensor = [r for r in ui.runs() if r["creationTime"] >= t0
                         and r["tags"].get("dagster/sensor_name") == AUTOMATION_SENSOR]
    from interviewsim_core.pipeline.steps import STEPS

    model_steps = {s.name for s in STEPS if s.plan is not None}
    calling = [r for r in by_sensor if set(r["assets"]) & model_steps]
    free = [f"{'+'.join(r['assets'])} ({'during' if r['creationTime'] < done else 'after'} the command)"
            for r in sorted(by_sensor, key=lambda r: r["creationTime"]) if r not in calling]
    return {"personalities": n, "cli_s": round(done - t0, 1), "cli_calls": cli_calls,
            "planned_to_send": int(planned["totals"]["to_send"]), "calls_after": after,
            "sensor_runs": len(calling), "free_runs": free,
            "tick_runs": sum(len(t["runIds"] or []) for t in ticks),
            "ticks_span_s": round(ticks[-1]["timestamp"] - ticks[0]["timestamp"], 1) if ticks else 0.0}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--personalities", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="8 personalities")
    ap.add_argument("--work", type=Path, default=None, help="keep the work folder here")
    args = ap.parse_args(argv)
    n = 8 if args.quick else args.personalities
    with tempfile.TemporaryDirectory(prefix="bench_automation_") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        r = measure(n, work)
    ok = r["calls_after"] == 0 and r["sensor_runs"] == 0
    print(f"automation beside a CLI run: {n} small personalities, UI config = every method, "
          f"`interviewsim run --methods simple`")
    print(f"  the command: {r['cli_calls']:,} requests in {r['cli_s']} s; its plan said at most {r['planned_to_send']:,} to "
          "send (a bound: answers that coincide make identical judge prompts, which are sent once)")
    print(f"  next {TICKS} sensor ticks ({r['ticks_span_s']} s): {r['calls_after']:,} requests; the sensor launched "
          f"{r['sensor_runs']} run(s) of a model step since the command started (target 0 and 0): {'PASS' if ok else 'FAIL'}")
    print(f"  and {len(r['free_runs'])} run(s) of steps that call no model (aggregates refreshed as their inputs "
          f"appeared): {', '.join(r['free_runs']) or 'none'}")


if __name__ == "__main__":
    main()
