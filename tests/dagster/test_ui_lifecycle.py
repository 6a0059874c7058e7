"""`interviewsim ui` starts without warnings a new user must learn to ignore and stops, children
included, within 10 s of Ctrl-C (SIGINT) or SIGTERM, even when started in the background."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest
from ui_harness import REPO, DagsterUI, alive, descendants

pytestmark = pytest.mark.slow


def ui_env(tmp_path: Path, config: Path) -> dict[str, str]:
    """A user's environment: their config file, a fresh instance, no stray INTERVIEWSIM_* variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INTERVIEWSIM_", "DAGSTER_"))}
    env.update(DAGSTER_HOME=str(tmp_path / "dagster_home"), INTERVIEWSIM_CONFIG=str(config),
               PYTHONPATH=str(REPO), LITELLM_LOCAL_MODEL_COST_MAP="True")
    return env


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ui_starts_quietly_and_stops_with_its_children(sig, tiny_corpus, tmp_path):
    config = tmp_path / "interviewsim.yaml"
    config.write_text(f"corpus: {tiny_corpus}\ndata_root: {tmp_path / 'data'}\nmethods: [simple]\n")
    # Started from the repo root, which holds the template dagster.yaml (the warning's trigger), with
    # SIGINT ignored, as a shell does for `interviewsim ui &`.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        ui = DagsterUI(ui_env(tmp_path, config), cwd=REPO, log=tmp_path / "ui.log")
        ui.start()
    finally:
        signal.signal(signal.SIGINT, previous)
    try:
        assert ui.should_show_nux() is False  # no "Join the Dagster community" dialog
        time.sleep(2)  # let the daemon and webserver finish their start-up logging
        children = descendants(ui.proc.pid)
        assert len(children) >= 3, children  # dagster dev, webserver, daemon (and the code server)
        seconds = ui.stop(sig)
        assert ui.proc.returncode == 0, ui.output()[-3000:]
        assert seconds < 10, f"stopping took {seconds:.1f} s"
        assert not alive(children), f"children left running: {alive(children)}"
    finally:
        ui.stop(signal.SIGKILL)
    out = ui.output()
    assert "SupersessionWarning" not in out and "dg dev" not in out, out[:3000]
    assert "Found a dagster instance configuration" not in out, out[:3000]
    assert "Traceback" not in out, out[-3000:]
