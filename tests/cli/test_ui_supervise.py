"""``interviewsim ui``'s supervisor: when the command has exited, so has every process below it.

The UI lifecycle test (tests/dagster/test_ui_lifecycle.py) checks this on a real ``dagster dev``,
where a killed code server sometimes still showed as running the instant the command returned (CI,
stop 38): the supervisor reaped ``dagster dev`` only, and the grandchildren it had killed died a
moment later. That is a race, so here it is made visible without timing: the supervisor runs under
a harness that is itself a subreaper, so any process of the tree the supervisor leaves behind is
re-parented to the harness, which then still has a child (running or a zombie) when the supervisor
has exited. The supervisor passes only if it has reaped the whole tree itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import signal, subprocess, sys, time
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # outlives the grace, as a stuck dagster dev would
    subprocess.Popen([sys.executable, "-c", "import sys, time; open(sys.argv[1], 'w').close(); time.sleep(600)",
                      sys.argv[1]])
    time.sleep(600)
""")

SUPERVISOR = textwrap.dedent("""
    import sys
    from pathlib import Path
    from interviewsim_cli.ui_cmds import supervise
    sys.exit(supervise([sys.executable, "-c", sys.argv[1], sys.argv[2]], env={}, cwd=Path("."), grace_s=0.2))
""")

HARNESS = textwrap.dedent("""
    import ctypes, os, subprocess, sys, time
    from pathlib import Path
    from interviewsim_cli.ui_cmds import PR_SET_CHILD_SUBREAPER
    assert ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    supervisor, child, ready, sig = sys.argv[1:5]
    sup = subprocess.Popen([sys.executable, "-c", supervisor, child, ready])
    deadline = time.monotonic() + 60
    while not Path(ready).exists():
        assert sup.poll() is None and time.monotonic() < deadline, "the tree did not start"
        time.sleep(0.02)
    sup.send_signal(int(sig))
    print("exit", sup.wait(timeout=30))
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
        print("left behind", "running" if pid == 0 else f"a zombie ({pid})")
    except ChildProcessError:
        print("left behind nothing")
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the subreaper is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_the_supervisor_reaps_its_whole_tree_before_it_exits(sig, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", HARNESS, SUPERVISOR, CHILD, str(tmp_path / "ready"), str(int(sig))],
                         env=env, capture_output=True, text=True, timeout=120, start_new_session=True)
    assert out.stdout.splitlines() == ["exit 0", "left behind nothing"], out.stdout + out.stderr
