"""Two configurations never write one data root at once: claims refuse, name the writer, and go with it (issue 33)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from interviewsim_core.errors import ConfigError
from interviewsim_core.pipeline.config import EvalConfig
from interviewsim_core.pipeline.data_root_claims import CLAIMS_DIR, claim, config_identity, live_claims


def _cfg(tmp_path, **overrides) -> EvalConfig:
    base = {"corpus": str(tmp_path / "corpus"), "data_root": str(tmp_path / "data")}
    return EvalConfig.load_resolved(env={}, overrides={**base, **overrides})


def test_identity_is_the_effective_configuration(tmp_path):
    a = _cfg(tmp_path)
    assert config_identity(a) == config_identity(_cfg(tmp_path))
    assert config_identity(a) != config_identity(_cfg(tmp_path, judges="offline/other-judge"))


def test_another_configuration_is_refused_while_one_writes_and_allowed_after(tmp_path):
    root = tmp_path / "data"
    with claim(root, "config-a", "`interviewsim run`") as mine:
        assert [c.config_id for c in live_claims(root)] == ["config-a"] and mine is not None
        with claim(root, "config-a", "Dagster run r1"):  # the same configuration: its own runs go on
            assert len(live_claims(root)) == 2
        with pytest.raises(ConfigError) as refused:
            with claim(str(root), "config-b", "Dagster run r2"):  # as the IO manager names it: a str
                pass
        assert "`interviewsim run` (configuration config-a" in str(refused.value)
        assert "another configuration" in str(refused.value)
    assert live_claims(root) == []
    with claim(root, "config-b", "Dagster run r3"):
        assert [c.config_id for c in live_claims(root)] == ["config-b"]
    assert not root.exists(), "a claim on a root that did not exist leaves nothing behind"


def test_a_claim_of_a_dead_process_is_removed_not_obeyed(tmp_path):
    root = tmp_path / "data"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    from interviewsim_core.processes import HOST

    (root / CLAIMS_DIR).mkdir(parents=True)
    stale = root / CLAIMS_DIR / f"{HOST}-{pid}-dead.json"
    stale.write_text(json.dumps({"config_id": "config-a", "host": HOST, "pid": pid, "started": 1.0,
                                 "writer": "killed run"}))
    with claim(root, "config-b", "Dagster run"):
        assert [c.config_id for c in live_claims(root)] == ["config-b"]
    assert not stale.exists()


def test_a_url_data_root_has_no_claim(tmp_path):
    with claim("s3://bucket/prefix", "config-a", "x") as held:
        assert held is None
