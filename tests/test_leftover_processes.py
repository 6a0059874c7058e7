"""The session-end check finds a process the tests left, even re-parented into a session of its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from leftover_processes import MARKER, leftovers


def test_an_orphan_in_its_own_session_is_found_and_a_finished_child_is_not():
    assert os.environ.get(MARKER) == str(os.getpid()), "the plugin did not mark this session"
    subprocess.run([sys.executable, "-c", "pass"], check=True)  # finished: nothing left
    # A grandchild in a new session whose parent exits at once: re-parented, no longer below pytest (its
    # output elsewhere, or this very wait would hang on the pipe it holds, as issue 33's did).
    parent = subprocess.run([sys.executable, "-c", "import subprocess, sys; print(subprocess.Popen("
                             "['sleep', '60'], start_new_session=True, stdout=subprocess.DEVNULL, "
                             "stderr=subprocess.DEVNULL).pid)"], capture_output=True, text=True, check=True)
    orphan = int(parent.stdout)
    try:
        deadline = time.monotonic() + 10
        while orphan not in {p.pid for p in leftovers(os.getpid())} and time.monotonic() < deadline:
            time.sleep(0.2)
        found = {p.pid: p for p in leftovers(os.getpid())}
        assert orphan in found and "sleep 60" in found[orphan].command
    finally:
        os.kill(orphan, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while orphan in {p.pid for p in leftovers(os.getpid())} and time.monotonic() < deadline:
        time.sleep(0.2)
    assert orphan not in {p.pid for p in leftovers(os.getpid())}
