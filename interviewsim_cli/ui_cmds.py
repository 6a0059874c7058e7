"""``interviewsim ui``: ``dagster dev`` (webserver + daemon) on the project's workspace and instance.

Why a supervising parent and not ``exec``: ``dagster dev`` maps SIGTERM onto its SIGINT handler, so
when it starts with SIGINT ignored (any ``cmd &`` from a non-interactive shell) it ignores both and
leaves its webserver, daemon and code server running. Here ``dagster dev`` runs in its own process
group with the default SIGINT behaviour; Ctrl-C, SIGTERM or SIGHUP on this command asks it to shut
down (it stops its children over its own IPC) and whatever of the group is still alive after
``GRACE_S`` seconds is killed, so the command is gone, children included, within ten seconds.

Why the child's working directory is ``DAGSTER_HOME``: ``dagster dev`` warns on every start when the
folder it starts in holds a ``dagster.yaml`` other than the instance's, which is the case in the repo
root. Relative paths the user gave (``INTERVIEWSIM_*`` variables, the default ``data_out``) are
made absolute against the user's folder first, so they mean what they meant.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import typer

from .run_cmds import LAST_RUN_CONFIG, REPO_ROOT, ensure_dagster_home

GRACE_S = 7.0
"""How long ``dagster dev`` gets to stop its services before its process group is killed."""

QUIET_WARNINGS = "ignore:Function `dev_command` is superseded"
"""``PYTHONWARNINGS`` entry hiding ``SupersessionWarning: ... Use 'dg dev' instead``: ``dg`` is a separate
package; ``dagster dev`` is the supported command of the installed Dagster and works as documented."""

_PATH_VARS = ("CONFIG", "CORPUS", "DATA_ROOT", "CACHE_PATH", "PREMISE_CONCLUSIONS", "CATEGORIES_CSV")


class _Stop(Exception):
    """Raised by the signal handler to leave the wait for the child."""


def child_env(env: Mapping[str, str], cwd: Path) -> dict[str, str]:
    """``env`` for ``dagster dev`` started in another folder: user paths made absolute, the warning muted.

    ``data_root`` defaults to ``data_out`` relative to the working directory; unless a variable or
    the config file sets it, it is pinned here to ``<cwd>/data_out`` so UI runs write where
    ``interviewsim run`` from the same folder does.
    """
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline.config import ENV_PREFIX, EvalConfig

    out = dict(env)
    for name in _PATH_VARS:
        value = out.get(ENV_PREFIX + name)
        if value and not Path(value).expanduser().is_absolute():
            out[ENV_PREFIX + name] = str((cwd / Path(value).expanduser()).resolve())
    try:
        pinned = "data_root" in EvalConfig.load(env=out).model_fields_set
    except ConfigError:
        pinned = True  # the code location reports the bad config itself, in the UI
    if not pinned:
        out[ENV_PREFIX + "DATA_ROOT"] = str((cwd / "data_out").resolve())
    warnings = out.get("PYTHONWARNINGS", "")
    out["PYTHONWARNINGS"] = f"{warnings},{QUIET_WARNINGS}" if warnings else QUIET_WARNINGS
    return out


def supervise(args: Sequence[str], env: Mapping[str, str], cwd: Path, grace_s: float = GRACE_S) -> int:
    """Run ``args`` in a new process group until it exits or this process is told to stop.

    On SIGINT/SIGTERM/SIGHUP: SIGINT to the child (``dagster dev``'s clean shutdown), then SIGKILL to
    whatever of its group outlives ``grace_s``. Returns the child's exit code, 0 after a requested stop.
    """

    def _raise(signum, _frame):
        raise _Stop(signum)

    previous = {s: signal.signal(s, _raise) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    proc = None
    try:
        # The handlers above are Python-level, so the child starts with SIGINT at its default
        # (not ignored) whatever this process inherited: dagster dev's shutdown handler works.
        proc = subprocess.Popen(list(args), env=dict(env), cwd=str(cwd), start_new_session=True)
        return proc.wait()
    except _Stop:
        for s in previous:  # a second Ctrl-C must not interrupt the shutdown below
            signal.signal(s, signal.SIG_IGN)
        if proc is not None:
            _interrupt(proc)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        return 0
    finally:
        if proc is not None:
            _kill_group(proc)
        for s, handler in previous.items():
            signal.signal(s, handler)


def _interrupt(proc: subprocess.Popen) -> None:
    try:
        proc.send_signal(signal.SIGINT)
    except ProcessLookupError:
        pass


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL every process left in the child's group (children that outlived it included), then reap it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


def ui(
    host: str = typer.Option("127.0.0.1", "--host", "-h", help="Interface the webserver listens on."),
    port: int = typer.Option(3000, "--port", "-p", help="Webserver port."),
) -> None:
    """Start ``dagster dev`` (webserver + daemon) on the project's workspace and instance; Ctrl-C stops it."""
    home = ensure_dagster_home()
    last_run = home / LAST_RUN_CONFIG
    if os.environ.get("INTERVIEWSIM_CONFIG"):
        typer.echo(f"UI config: {os.environ['INTERVIEWSIM_CONFIG']} (INTERVIEWSIM_CONFIG, set by you)")
    elif last_run.is_file():
        os.environ["INTERVIEWSIM_CONFIG"] = str(last_run)
        typer.echo(f"UI config: {last_run} (the last `interviewsim run`; set INTERVIEWSIM_CONFIG to override)")
    else:
        typer.echo("UI config: defaults and INTERVIEWSIM_* variables (no `interviewsim run` on this instance yet)")
    workspace = REPO_ROOT / "workspace.yaml"
    target = ["-w", str(workspace)] if workspace.is_file() else ["-m", "interviewsim_dagster.definitions"]
    dagster = Path(sys.executable).with_name("dagster")
    exe = str(dagster) if dagster.exists() else "dagster"
    args = [exe, "dev", *target, "-h", host, "-p", str(port)]
    env = child_env(os.environ, Path.cwd())
    typer.echo(f"DAGSTER_HOME={home}")
    typer.echo(f"UI data root: {env.get('INTERVIEWSIM_DATA_ROOT') or 'from the config file'}")
    typer.echo(" ".join(args))
    raise typer.Exit(supervise(args, env=env, cwd=home))


def register(app: typer.Typer) -> None:
    app.command("ui")(ui)

