"""Is the process that left something behind still alive? One answer for every owner record.

Three things record their owner as (host, pid) and must tell a live owner from a dead one: a
cache lease (``llm/cache.py``, ``llm/shared_cache.py``), a temp file of an atomic write
(``atomic_files.py``) and a run executed in process (``interviewsim_dagster/slots.py``). Only a
process of this host can be checked; an owner elsewhere is someone else's to judge (a lease's
expiry, a temp file's age, Dagster's run monitoring).
"""

from __future__ import annotations

import os
import socket

__all__ = ["HOST", "pid_alive", "owner_gone"]

HOST = socket.gethostname()


def pid_alive(pid: int) -> bool:
    """True while a process with ``pid`` exists on this host (someone else's live process included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_gone(host: str, pid: int) -> bool:
    """True only when the owner is a process of this host that no longer exists."""
    return host == HOST and not pid_alive(pid)
