"""Lists of ids (personalities, partition keys) as a person reads them: a short list whole, a long one
summarised in a line, with where to find all of it.

Why: at the paper's scale (1,000 personalities) ``interviewsim register`` printed one line of 10 KB,
and a command warning once per id printed a thousand lines. A list of up to ``WHOLE_UP_TO`` ids is
still printed whole (the ids are the news); a longer one gives its count, its first and last id and
where the whole list is (a file the command wrote, a manifest, a command), so nothing is hidden.
The first and last are joined by ``...``, which no personality id holds (``input_rules``: Dagster
lists partition keys with it), so the line cannot be misread as one id.
"""

from __future__ import annotations

from collections.abc import Sequence

WHOLE_UP_TO = 10
"""The longest list printed whole."""


def fits_whole(ids: Sequence[str]) -> bool:
    """Whether ``ids`` is short enough to print whole (a command printing one line per id keeps doing so)."""
    return len(ids) <= WHOLE_UP_TO


def summarise_ids(ids: Sequence[str], where: str) -> str:
    """``A, B, C`` for a short list (``none`` when empty); else ``A ... Z (all 1,000: <where>)``.

    ``where`` names the place holding the whole list; it is only said of a long one.
    """
    if fits_whole(ids):
        return ", ".join(ids) or "none"
    return f"{ids[0]} ... {ids[-1]} (all {len(ids):,}: {where})"

