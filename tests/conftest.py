"""Suite-wide rules.

Tests that read ``../shared`` (the real corpus, the seeds) skip on a checkout without it, which is
convenient on a laptop; on CI (``CI=true``), where shared/ is always laid beside the clone, such a
skip would hide a broken path, so it is reported as a failure instead.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

pytest_plugins = ["leftover_processes"]  # the session fails naming any process it leaves behind

_SHARED_MARKERS = ("shared corpus", "shared seeds", "shared/")


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
