"""The local-server profile (``interviewsim run --local``): settings for one model server on this machine.

Why a profile: a one-slot server (llama.cpp, llama-cpp-python) answers one request at a time and a
small model on a CPU takes minutes per reply. With the defaults meant for a hosted API (16 calls in
flight per model, 120 s timeout, 6 retries) the requests only queue at the server, time out while
queued, and the retries keep it busy with replies nobody reads (issue 22, run 1). The profile is the
same as ``deploy/local_model/interviewsim-local.yaml`` (a test keeps the two equal), for a user who
names their models on the command line instead of in a file.

It fills in only what the config left unset, so a value in a config file, the environment or a flag
always wins: ``concurrency`` 1, ``api_base`` the launcher's default address, and for every model role
``timeout_s``/``max_retries``/``max_reasks``. ``max_tokens`` stays unset on purpose: each contract then
sends its own cap, sized to its output. ``context_window`` is not guessed (it is the server's
``n_ctx``): set it in the config so over-long prompts fail before they are sent.
"""

from __future__ import annotations

from typing import Any

from ..llm.types import ModelConfig
from .config import EvalConfig

LOCAL_API_BASE = "http://127.0.0.1:8088/v1"
"""Where ``deploy/local_model/serve_llama.py`` listens in docs/USER_GUIDE.md, "Local model"."""

LOCAL_CONCURRENCY = 1
LOCAL_MODEL_SETTINGS: dict[str, Any] = {"timeout_s": 900.0, "max_retries": 1, "max_reasks": 1}
"""Per model: a reply may take minutes (timeout), a retry of a slow server rarely helps (one), and a
re-ask of a tiny model mostly repeats its answer (one)."""

_ROLES = ("generator", "builder", "premise_judge")


def _local_model(model: ModelConfig) -> ModelConfig:
    if model.model.startswith("offline/"):
        return model  # the offline model makes no request: nothing to pace
    unset = {k: v for k, v in LOCAL_MODEL_SETTINGS.items() if k not in model.model_fields_set}
    return model.model_copy(update=unset) if unset else model


def apply_local_profile(cfg: EvalConfig) -> EvalConfig:
    """``cfg`` with the local-server profile filled in wherever it left a setting unset."""
    update: dict[str, Any] = {role: _local_model(getattr(cfg, role)) for role in _ROLES}
    update["judges"] = tuple(_local_model(j) for j in cfg.judges)
    if cfg.concurrency is None:
        update["concurrency"] = LOCAL_CONCURRENCY
    if cfg.api_base is None:
        update["api_base"] = LOCAL_API_BASE
    return cfg.model_copy(update=update)
