"""One tiny offline run shared by the explorer tests (about 20 s of CPU), and a real
``interviewsim view`` server over it, started on a free loopback port and stopped by pid."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .corpus import GENERATORS, TWO_GENERATOR_METHODS, build_data_root


BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run"]


@contextmanager
def browser_page(width: int = 1300, console: bool = False) -> Iterator[tuple[Any, list[str]]]:
    """A page of Debian's headless Chromium (never a downloaded browser; the test is skipped without it) and
    the list its uncaught script errors (and, with ``console``, its console errors) go to, which each browser
    test asserts empty.
    The browser is closed however the test ends."""
    from playwright.sync_api import sync_playwright

    from report_browser.test_report_browser import _chromium

    chromium = _chromium()
    errors: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=BROWSER_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("pageerror", lambda e: errors.append(str(e)))
            if console:
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            yield page, errors
        finally:
            browser.close()


@pytest.fixture(scope="session")
def view_root(tmp_path_factory) -> Path:
    return build_data_root(tmp_path_factory.mktemp("view_run"))


@pytest.fixture(scope="session")
def two_generator_root(tmp_path_factory) -> Path:
    """The same corpus run by a two-generator study (issue 44): ``simple`` and ``warm/simple``, ..., one ``reference``."""
    return build_data_root(tmp_path_factory.mktemp("view_run_two"), GENERATORS, TWO_GENERATOR_METHODS)


def start_server(data_root: str | None, labels: Path | None, *extra: str, probe: str = "/labels") -> tuple[subprocess.Popen, str]:
    """``interviewsim view`` (``data_root`` None: ``extra`` gives ``--corpus``), ready once ``probe`` answers."""
    from interviewsim_core.llm.testing import free_port

    port = free_port()
    exe = Path(sys.executable).with_name("interviewsim")
    root = ["--data-root", data_root, "--labels", str(labels)] if data_root is not None else []
    cmd = [str(exe) if exe.exists() else shutil.which("interviewsim") or "interviewsim", "view", *root,
           "--port", str(port), *extra]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"})
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"interviewsim view exited {proc.returncode}: {proc.stdout.read()}")
        try:
            urllib.request.urlopen(base + probe, timeout=2).read()
            return proc, base
        except OSError:
            time.sleep(0.2)
    stop(proc)
    raise RuntimeError("interviewsim view did not answer within 60 s")


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture()
def two_generator_server(two_generator_root, tmp_path) -> Iterator[str]:
    proc, base = start_server(str(two_generator_root), tmp_path / "labels" / "human_labels.csv")
    try:
        yield base
    finally:
        stop(proc)


@pytest.fixture()
def server(view_root, tmp_path) -> Iterator[tuple[str, Path]]:
    labels = tmp_path / "labels" / "human_labels.csv"
    proc, base = start_server(str(view_root), labels)
    try:
        yield base, labels
    finally:
        stop(proc)
