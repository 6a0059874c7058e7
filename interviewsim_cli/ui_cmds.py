"""``interviewsim ui``: ``dagster dev`` (webserver + daemon) on the project's workspace and instance.

Why a supervising parent and not ``exec``: ``dagster dev`` maps SIGTERM onto its SIGINT handler, so
when it starts with SIGINT ignored (any ``cmd &`` from a non-interactive shell) it ignores both and
leaves its webserver, daemon and code server running. Here ``dagster dev`` runs in its own process
group with the default SIGINT behaviour; Ctrl-C, SIGTERM or SIGHUP on this command asks it to shut
down (it stops its children over its own IPC) and whatever of the group is still alive after
``GRACE_S`` seconds is killed, so the command is gone, children included, within ten seconds.
"Children included" means when the command exits, not a moment later: on Linux this process is the
tree's subreaper (``_adopt_orphans``), so every member of the group, however deep, is re-parented to
it as its parent dies and is reaped here before the command returns (a killed code server could
otherwise still be tearing down its memory when the shell prompt is back).

Why the child's working directory is ``DAGSTER_HOME``: ``dagster dev`` warns on every start when the
folder it starts in holds a ``dagster.yaml`` other than the instance's, which is the case in the repo
root. Relative paths the user gave (``INTERVIEWSIM_*`` variables, the default ``data_out``) are
made absolute against the user's folder first, so they mean what they meant.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

import typer

from interviewsim_core.pipeline.config_files import LAST_RUN_CONFIG, UI_CONFIG

from .run_cmds import REPO_ROOT, ensure_dagster_home

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
    adopting = _adopt_orphans()
    try:
        # The handlers above are Python-level, so the child starts with SIGINT at its default
        # (not ignored) whatever this process inherited: dagster dev's shutdown handler works.
        proc = subprocess.Popen(list(args), env=dict(env), cwd=str(cwd), start_new_session=True)
        return _wait(proc) if adopting else proc.wait()
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


PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>


def _adopt_orphans() -> bool:
    """Make this process the subreaper of its descendants (Linux); False where that does not exist.

    Why: a process whose parent dies is re-parented to the nearest subreaper instead of init, so this
    process can wait for the whole group to be gone (``_kill_group``), not only for ``dagster dev``."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _wait(proc: subprocess.Popen) -> int:
    """Wait for ``proc``, reaping on the way any orphan re-parented here (none is left a zombie)."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode


def _kill_group(proc: subprocess.Popen, timeout_s: float = 5.0) -> None:
    """SIGKILL every process left in the child's group (children that outlived it included) and reap it:
    with ``_adopt_orphans`` every member, since each is this process's child once its parent is gone."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-proc.pid, os.WNOHANG)
        except ChildProcessError:  # no member of the group is (or will become) this process's child
            return
        if pid == 0:
            time.sleep(0.01)


def ui_config_path(env: Mapping[str, str], home: Path) -> tuple[Path | None, str]:
    """The one config file the UI loads, and why that one (``config_files`` says why there is one).

    ``INTERVIEWSIM_CONFIG`` when set; else ``<home>/interviewsim.yaml``. An instance from before that
    file existed has only the last run's record: it is copied once into ``interviewsim.yaml``, which
    from then on changes only when the user edits it or asks (``interviewsim run --save-ui-config``).
    """
    if env.get("INTERVIEWSIM_CONFIG"):
        return Path(env["INTERVIEWSIM_CONFIG"]), "INTERVIEWSIM_CONFIG, set by you"
    named = home / UI_CONFIG
    legacy = home / LAST_RUN_CONFIG
    if not named.is_file() and legacy.is_file():
        tmp = named.with_name(f".{named.name}.{os.getpid()}.tmp")
        shutil.copyfile(legacy, tmp)
        os.replace(tmp, named)
        return named, f"copied once from {legacy.name}; `interviewsim run` no longer rewrites it"
    if named.is_file():
        return named, "this instance's UI config; `interviewsim run --save-ui-config` replaces it"
    return None, "no config file yet: defaults and INTERVIEWSIM_* variables (the first `interviewsim run` writes one)"


AUTOMATION_FLAG_MUTATION = "mutation { setAutoMaterializePaused(paused: false) }"
"""Why ``interviewsim ui`` sends this once the webserver answers: the job and asset-group pages show
"Auto-materialize off" from Dagster's instance-wide switch of the pre-sensor automation daemon,
which is off until someone turns it on. With ``auto_materialize: use_sensors: true`` (dagster.yaml)
automation runs in the project's sensor and the daemon reads that switch only to seed sensors it
creates itself from a pre-sensor cursor (none here), so the switch decides nothing but the badge;
the badge then agrees with the shipped sensor, which starts running. Stopping the sensor
(Automation page) is how to stop automation; the badge does not follow that."""


LOCATIONS_QUERY = """{ workspaceOrError { ... on Workspace { locationEntries {
    name loadStatus locationOrLoadError { __typename ... on PythonError { message causes { message } } } } } } }"""


def _after_start(host: str, port: int, home: Path, timeout_s: float = 600.0) -> None:
    """Once our webserver answers (a daemon thread; gives up silently): send ``AUTOMATION_FLAG_MUTATION``,
    then say on this terminal whether each code location loaded (``_report_locations``).

    Only to a webserver serving this ``DAGSTER_HOME`` (its ``instance.info`` names the folder): if the
    port belongs to someone else's ``dagster dev``, its instance is left alone."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            info = _gql(host, port, "{ instance { info } }")["data"]["instance"]["info"] or ""
            if str(home) not in info:
                return
            _gql(host, port, AUTOMATION_FLAG_MUTATION)
            break
        except (OSError, ValueError, KeyError, TypeError):
            time.sleep(2)
    else:
        return
    _report_locations(host, port, deadline)


def _report_locations(host: str, port: int, deadline: float) -> None:
    """Print each code location's load outcome once it is known. Why: a location that fails to load (a
    ConfigError of the UI's config, say) shows only on Dagster's Deployment page, and the asset catalog
    silently loses its assets; the terminal that started the UI is where the user looks first."""
    while time.monotonic() < deadline:
        try:
            entries = _gql(host, port, LOCATIONS_QUERY)["data"]["workspaceOrError"]["locationEntries"] or []
        except (OSError, ValueError, KeyError, TypeError):
            entries = []
        if entries and all(e["loadStatus"] == "LOADED" for e in entries):
            for e in entries:
                loaded = e["locationOrLoadError"] or {}
                if loaded.get("__typename") == "PythonError":
                    # Dagster wraps the project's own error (its last cause) in "Error occurred during the
                    # loading of Dagster definitions"; the cause is the reason a user can act on.
                    causes = [c.get("message", "") for c in loaded.get("causes") or []]
                    reason = (causes[-1] if causes else loaded.get("message", "")).strip()
                    typer.echo(f"error: code location {e['name']!r} failed to load, so the UI shows none of its "
                               f"assets or jobs. Reason:\n{reason}\nFix the config ({os.environ.get('INTERVIEWSIM_CONFIG') or 'INTERVIEWSIM_* variables'}), "
                               f"then reload it on http://{host}:{port}/locations (Deployment page)", err=True)
                else:
                    typer.echo(f"code location {e['name']!r} loaded: http://{host}:{port}")
            return
        time.sleep(2)


def _gql(host: str, port: int, query: str) -> dict:
    req = urllib.request.Request(f"http://{host}:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def ui(
    host: str = typer.Option("127.0.0.1", "--host", "-h", help="Interface the webserver listens on."),
    port: int = typer.Option(3000, "--port", "-p", help="Webserver port."),
) -> None:
    """Start ``dagster dev`` (webserver + daemon) on the project's workspace and instance; Ctrl-C stops it."""
    from interviewsim_core.errors import ConfigError
    from interviewsim_core.pipeline.config import EvalConfig
    from interviewsim_core.pipeline.config_files import last_run_note

    home = ensure_dagster_home()
    config, why = ui_config_path(os.environ, home)
    if config is not None:
        os.environ["INTERVIEWSIM_CONFIG"] = str(config)
    typer.echo(f"UI config: {config or '(none)'} ({why})")
    try:
        note = last_run_note(EvalConfig.load_resolved(), home)
    except ConfigError:
        note = None  # the code location reports the bad config itself, in the UI
    if note:
        typer.echo(note)
    workspace = REPO_ROOT / "workspace.yaml"
    target = ["-w", str(workspace)] if workspace.is_file() else ["-m", "interviewsim_dagster.definitions"]
    dagster = Path(sys.executable).with_name("dagster")
    exe = str(dagster) if dagster.exists() else "dagster"
    # INFO for the webserver and daemon (Dagster's default, said so it stays). The runs they launch echo
    # their events through Dagster's default console logger at the instance's ``python_logs:
    # python_log_level`` (dagster.yaml: INFO; Dagster's own default, DEBUG, was half the terminal).
    args = [exe, "dev", *target, "-h", host, "-p", str(port), "--log-level", "info"]
    env = child_env(os.environ, Path.cwd())
    typer.echo(f"DAGSTER_HOME={home}")
    typer.echo(f"UI data root: {env.get('INTERVIEWSIM_DATA_ROOT') or 'from the config file'}")
    typer.echo(" ".join(args))
    local = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    threading.Thread(target=_after_start, args=(local, port, home), daemon=True).start()
    raise typer.Exit(supervise(args, env=env, cwd=home))


def register(app: typer.Typer) -> None:
    app.command("ui")(ui)

