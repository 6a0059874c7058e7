"""The worker process's side (``interviewsim_core.pipeline.worker``): what it imports, and when."""

from __future__ import annotations

import subprocess
import sys


def _fresh(code: str) -> str:
    """Run ``code`` in a fresh interpreter (earlier tests' imports hide nothing) and return its output."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_worker_makes_its_calls_without_importing_dagster():
    """Everything the process imports before its job (its module, the scheduler, the transport) and
    while making it (the step table, the config, the gateway factory) leaves Dagster out."""
    out = _fresh("import sys\n"
                 "from interviewsim_core.pipeline import worker, runner, steps, config\n"
                 "from interviewsim_core.llm.transport import warm_up\n"
                 "from interviewsim_core import factories, loader, split\n"
                 "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dagster', 'interviewsim_dagster')))")
    assert out == "[]"


def test_the_late_imports_stop_when_the_job_arrives():
    out = _fresh("import sys\n"
                 "from interviewsim_core.pipeline import worker\n"
                 "class Pipe:\n"
                 "    def __init__(self, after): self.polls, self.after = 0, after\n"
                 "    def poll(self):\n"
                 "        self.polls += 1\n"
                 "        return self.polls > self.after\n"
                 "pipe = Pipe(0)\n"
                 "worker._import_while_waiting(pipe)\n"
                 "print(pipe.polls, 'scipy.stats' in sys.modules, 'matplotlib' in sys.modules)\n"
                 "pipe = Pipe(len(worker.LATE_IMPORTS))\n"
                 "worker._import_while_waiting(pipe)\n"
                 "print(pipe.polls, 'scipy.stats' in sys.modules, 'matplotlib' in sys.modules,\n"
                 "      'jinja2' in sys.modules, 'interviewsim_core.report.html' in sys.modules)")
    first, then = out.splitlines()
    assert first == "1 False False"  # the job was there: nothing imported, the job is taken at once
    assert then.split()[1:] == ["True", "True", "True", "True"]  # no job yet: every late import done


def test_the_worker_tells_the_command_its_progress_lines_and_no_line_per_personality(tmp_path):
    """The command prints what the worker sends as progress (issue 43): a line per personality done would be a
    thousand lines at the paper's scale; the last line counts every partition of the action as written."""
    from pathlib import Path

    from interviewsim_core.loader import index_corpus
    from interviewsim_core.pipeline import worker
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.runner import cells_of
    from interviewsim_core.pipeline.steps import steps_for

    sample = Path(worker.__file__).resolve().parents[1] / "sample_corpus"
    cfg = EvalConfig(corpus=sample, data_root=tmp_path, methods=("simple",))
    files = index_corpus(sample)
    pids = sorted(files)[:2]
    nodes = {s.name: [tuple(c) for c in cells_of(s, pids, ["simple"])] for s in steps_for(cfg)
             if not s.writes_files and not s.curation}
    said: list[tuple] = []
    worker._work(cfg.model_dump_json(), nodes, {p: files[p] for p in pids}, pids, ["simple"], lambda *m: said.append(m))
    lines = [m[1] for m in said if m[0] == "progress"]
    n = sum(len(cells) for cells in nodes.values())
    assert lines and lines[-1].startswith(f"done: {n} of {n} partitions written in "), lines
    assert all(line.startswith("progress: ") for line in lines[:-1]), lines
