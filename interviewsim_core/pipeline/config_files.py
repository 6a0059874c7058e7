"""Which configuration file the Dagster UI's code location loads, and whether the last CLI run used another.

Why one named file: the definitions (method partitions, judge code versions, pools, cron) are built
from the config at import time, so whatever file the UI loads decides what the UI shows and runs.
``interviewsim ui`` loads ``INTERVIEWSIM_CONFIG`` when the user set it, else ``$DAGSTER_HOME/``
``interviewsim.yaml`` (``UI_CONFIG``). ``interviewsim run`` writes ``UI_CONFIG`` only when it does
not exist yet (the first run) or when asked (``--save-ui-config``); it always records its own
config in ``LAST_RUN_CONFIG``, which the UI never loads but compares with, so a CLI run with other
flags never changes the UI's definitions behind the user's back, and the UI says that it differs.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

UI_CONFIG = "interviewsim.yaml"
"""Under ``DAGSTER_HOME``: the config ``interviewsim ui`` loads unless ``INTERVIEWSIM_CONFIG`` is set."""

LAST_RUN_CONFIG = "interviewsim_last_run.yaml"
"""Under ``DAGSTER_HOME``: the config of the latest ``interviewsim run``/``demo``; a record, never loaded by the UI."""


def last_run_note(cfg, home: str | Path | None = None) -> str | None:
    """A sentence for the UI when the latest CLI run used a configuration other than ``cfg``, else None.

    Compares the effective configurations (paths made absolute, defaults filled), so a file that
    spells the same settings differently is not reported as different.
    """
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline.config import EvalConfig

    home = home or os.environ.get("DAGSTER_HOME")
    if not home:
        return None
    record = Path(home) / LAST_RUN_CONFIG
    if not record.is_file():
        return None
    try:
        last = EvalConfig.load_resolved(env={"INTERVIEWSIM_CONFIG": str(record)})
    except ConfigError as exc:
        return f"The last `interviewsim run` recorded a config this UI cannot read ({record}): {exc}"
    mine, theirs = saved_form(cfg), saved_form(last)
    changed = sorted(k for k in mine.keys() | theirs.keys() if mine.get(k) != theirs.get(k))
    if not changed:
        return None
    return (f"The last `interviewsim run` used another configuration ({record}; differs in: "
            f"{', '.join(changed)}). This UI still runs its own; `interviewsim run --save-ui-config` "
            f"makes a run's config the UI's, then reload the code location.")


def saved_form(cfg) -> dict:
    """``cfg`` as written to disk for the UI: safe to keep there, and what two configs are compared on.

    A ``ModelConfig`` names the environment variable of its key (``api_key_env``), never the key;
    credentials in ``api_base`` URLs are redacted and ``extra_params`` entries named like
    credentials are dropped too, in case someone passed one there (such a judge then shows a
    different code version in the UI than in the run: the price of never writing a key to disk).
    """
    from interviewsim_core.llm.secrets import redact_config

    data = redact_config(cfg.model_dump(mode="json"))
    for role in ("generator", "builder", "premise_judge"):
        data[role] = _without_secrets(data[role])
    data["judges"] = [_without_secrets(j) for j in data["judges"]]
    return data


_SECRET_PARAM = re.compile(r"(^|_)(api_?key|key|secret|password|token|authorization)$", re.IGNORECASE)


def _without_secrets(model: dict) -> dict:
    extra = {k: v for k, v in (model.get("extra_params") or {}).items() if not _SECRET_PARAM.search(str(k))}
    return {**model, "extra_params": extra}
