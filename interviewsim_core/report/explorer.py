"""The shell command that opens the results explorer, for the report's page and a run's asset metadata.

Its own module, below both ``build`` and ``html``: the rendered page prints it (``html``), a stage run's
metadata names it without importing ``html``'s jinja2 and matplotlib (about 1 s of ``interviewsim run``'s
CPU for one line of text), and ``build`` renders the page, so neither of the two may hold it for the other.
"""

from __future__ import annotations

import shlex

__all__ = ["explorer_command"]


def explorer_command(data_root: str | None) -> str:
    """The shell command that opens the results explorer (``interviewsim view``) on this data root.

    Spelled in core because the report (which must not import the web application) prints it;
    ``interviewsim_view.urls`` re-exports it for the CLI and Dagster metadata."""
    return f"interviewsim view --data-root {shlex.quote(str(data_root)) if data_root else 'DATA_ROOT'}"
