"""One stored model output (``CachedEntry``): what the cache keeps and the answer journal records.

Its own module, below both: the cache replays its journals when it opens (``answer_journal.replay``), so
the journal, which writes and reads these entries, must not import the cache to name them.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

__all__ = ["CachedEntry"]


@dataclass(frozen=True)
class CachedEntry:
    """One stored model output: the raw text plus what it cost and the prompt it answered (for audit)."""

    raw: str
    messages: tuple[dict[str, str], ...] = ()
    model: str = ""
    contract: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    created: float = field(default_factory=time.time)
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those the provider served from its prefix cache."""
