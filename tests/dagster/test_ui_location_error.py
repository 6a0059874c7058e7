"""`interviewsim ui` says on its terminal when the code location fails to load, and why (issue 33: only
Dagster's Deployment page said so, and the asset catalog silently lost the location)."""

from __future__ import annotations

import pytest
from test_ui_lifecycle import ui_env
from ui_harness import DagsterUI

pytestmark = pytest.mark.slow


def test_a_location_that_fails_to_load_is_reported_with_its_reason(tiny_corpus, tmp_path):
    config = tmp_path / "interviewsim.yaml"
    # Real models and a retrieval method without embedding_model: the project's own ConfigError at load.
    config.write_text(f"corpus: {tiny_corpus}\ndata_root: {tmp_path / 'data'}\nmethods: [simple, memory-10]\n"
                      "generator: {model: openai/gpt-4.1}\njudges: [{model: openai/gpt-4o}]\n"
                      "builder: {model: openai/gpt-4.1}\npremise_judge: {model: openai/gpt-4.1}\n")
    ui = DagsterUI(ui_env(tmp_path, config), cwd=tmp_path, log=tmp_path / "ui.log")
    # The harness waits for a loaded location; here it waits for the terminal to say it failed.
    ui._location_loaded = lambda: "failed to load" in ui.output()
    with ui:
        out = ui.output()
    assert "error: code location 'interviewsim' failed to load" in out, out[-3000:]
    assert "retrieval method(s) memory-10 would rank training questions" in out, out[-3000:]
    assert "/locations (Deployment page)" in out


def test_a_loaded_location_is_said_loaded(tiny_corpus, tmp_path):
    config = tmp_path / "interviewsim.yaml"
    config.write_text(f"corpus: {tiny_corpus}\ndata_root: {tmp_path / 'data'}\nmethods: [simple]\n")
    ui = DagsterUI(ui_env(tmp_path, config), cwd=tmp_path, log=tmp_path / "ui.log")
    ui._location_loaded = lambda: "code location 'interviewsim' loaded" in ui.output()
    with ui:
        out = ui.output()
    assert "failed to load" not in out, out[-3000:]
