"""Suite-wide rules.

Two targets share this suite (issue 30: `make test` within 20 minutes on two cores, nothing dropped):
``make test`` runs the fast tests on pytest-xdist workers, ``make test-integration`` the suites that
start a real ``dagster dev``, a browser or long chains of subprocess runs. Which test belongs where is
decided here, by marker and by path, so a test file never has to say it (``integration`` below).
Under xdist each worker gets its own ``DAGSTER_HOME``, so no two workers share an instance database.

Tests that read ``../shared`` (the real corpus, the seeds) skip on a checkout without it, which is
convenient on a laptop; on CI (``CI=true``), where shared/ is always laid beside the clone, such a
skip would hide a broken path, so it is reported as a failure instead.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytest_plugins = ["leftover_processes"]  # the session fails naming any process it leaves behind

_SHARED_MARKERS = ("shared corpus", "shared seeds", "shared/")

_TESTS = Path(__file__).resolve().parent
# Markers that already mean "long or needs a real server/browser": every test carrying one is integration.
_INTEGRATION_MARKERS = ("slow", "browser")
# Files (relative to tests/) whose tests are integration although not every test in them is marked: they
# drive a real `dagster dev` or the CLI in subprocesses for tens of seconds per test.
_INTEGRATION_FILES = frozenset({
    "dagster/test_ui_routes.py",
    "dagster/test_ui_scope.py",
    "dagster/test_ui_lifecycle.py",
    "dagster/test_echoed_key_ui.py",
    "dagster/test_cli_interrupt.py",
    "report_browser/test_report_browser.py",
    "view/test_view_browser.py",
    "view/test_curation_browser.py",
})


def _is_integration(item: pytest.Item) -> bool:
    if any(item.get_closest_marker(m) for m in _INTEGRATION_MARKERS):
        return True
    try:
        rel = Path(str(item.path)).resolve().relative_to(_TESTS).as_posix()
    except ValueError:
        return False
    return rel in _INTEGRATION_FILES


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Mark the integration tests before ``-m`` selects (tryfirst: pytest's own selection runs after)."""
    for item in items:
        if _is_integration(item):
            item.add_marker(pytest.mark.integration)


def pytest_configure(config):
    """One DAGSTER_HOME per xdist worker: tests that rely on the environment's instance (the Makefile's
    ``.dagster_home``) would otherwise share one SQLite run storage across processes and see each
    other's runs."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        home = tempfile.mkdtemp(prefix=f"interviewsim-dagster-home-{worker}-")
        os.environ["DAGSTER_HOME"] = home
        config._interviewsim_worker_home = home


def pytest_unconfigure(config):
    home = getattr(config, "_interviewsim_worker_home", None)
    if home:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def _interviewsim_environment_restored():
    """``INTERVIEWSIM_*`` variables as they were before each test. A command run in process can set one for
    the children it starts (``interviewsim ui`` sets ``INTERVIEWSIM_CONFIG`` for ``dagster dev``); left set,
    it configures every later test of the same worker (a run then read another test's corpus)."""
    before = {k: v for k, v in os.environ.items() if k.startswith("INTERVIEWSIM_")}
    yield
    for key in [k for k in os.environ if k.startswith("INTERVIEWSIM_") and k not in before]:
        del os.environ[key]
    os.environ.update(before)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI", "").lower() in ("1", "true", "yes") and report.skipped:
        reason = str(report.longrepr)
        if any(m in reason for m in _SHARED_MARKERS):
            report.outcome = "failed"
            report.longrepr = f"shared/ data is required on CI but was skipped: {reason}"


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 2 MB tmpfs of its own, unmounted after the test: a real ENOSPC (CI runs as root; skipped
    elsewhere, with the reason)."""
    import os
    import subprocess

    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mnt)], capture_output=True).returncode:
        pytest.skip("mount -t tmpfs failed (no CAP_SYS_ADMIN in this container)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
