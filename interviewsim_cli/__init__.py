"""The ``interviewsim`` command line.

Lives outside ``interviewsim_core`` because some commands start Dagster, and core must never import
it. Each ``*_cmds.py`` module in this package contributes its commands through ``register(app)``;
they are discovered here so that adding a command never means editing a central list.
Heavy imports (dagster, litellm) happen inside command bodies so ``interviewsim --help`` stays fast.
"""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil

import typer

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

app = typer.Typer(
    name="interviewsim",
    help="Evaluate how well an LLM simulates a person against their held-out interviews.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_all() -> None:
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if mod.name.endswith("_cmds"):
            importlib.import_module(f"{__name__}.{mod.name}").register(app)


_register_all()


def main() -> None:
    try:
        app()
    finally:
        # The heap a command leaves (Dagster's definitions and modules above all) is only freed at exit: a
        # last cyclic collection over it took 0.9 s of ``interviewsim run``'s exit; frozen, the exit takes
        # 0.07 s. The atexit handlers (the cache's packing, the answer journal) run all the same.
        gc.freeze()
