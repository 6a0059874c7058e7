"""Context limits known before a call is sent, and the server's context errors in the same words.

Why before sending: a Chrono-1000 prompt is about 175k tokens; sent to a model that reads 8k or
128k it costs a request (or a retry storm of them) to learn what the model's size already says.
``context_window_of`` gives the window (the model's ``context_window`` setting, else litellm's
bundled model info, read without importing litellm), ``prompt_tokens`` an estimate of a prompt's
size, and ``prompt_overflow`` the typed failure the gateway records without sending. The planner
can call the same two functions to flag such calls in a plan.

The estimate is characters / 4 (plus a few tokens per message), the usual size of English text in
BPE/SentencePiece tokenizers; it is an estimate, so the gateway refuses only a prompt that exceeds
the window by that estimate, and a server that still finds the prompt too long answers with an error
that ``context_overflow`` turns into the same failure text.
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Mapping, Sequence

from .types import ModelConfig

__all__ = ["CHARS_PER_TOKEN", "context_window_of", "prompt_tokens", "prompt_overflow", "context_overflow",
           "overflow_message"]

CHARS_PER_TOKEN = 4.0
TOKENS_PER_MESSAGE = 4
"""Role markers and separators a chat template adds around each message."""


def context_window_of(model: ModelConfig) -> int | None:
    """Tokens ``model`` reads at most: its ``context_window`` setting, else litellm's model info
    (``max_input_tokens``, else ``max_tokens``), else None (unknown: nothing is refused)."""
    if model.context_window is not None:
        return int(model.context_window)
    return _known_window(model.model)


@functools.lru_cache(maxsize=256)
def _known_window(model: str) -> int | None:
    from .transport import _bundled_prices  # noqa: PLC0415 - litellm's table, without importing litellm

    info = _bundled_prices()
    bare = model.split("/", 1)[1] if "/" in model else model
    for name in (model, bare):
        entry = info.get(name)
        if isinstance(entry, dict):
            window = entry.get("max_input_tokens") or entry.get("max_tokens")
            if isinstance(window, (int, float)) and window > 0:
                return int(window)
    return None


def prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """Estimated prompt size in tokens (see the module docstring for why an estimate)."""
    chars = sum(len(m.get("content") or "") for m in messages if isinstance(m.get("content"), str))
    return math.ceil(chars / CHARS_PER_TOKEN) + TOKENS_PER_MESSAGE * len(messages)


def overflow_message(n_tokens: int | None, window: int | None) -> str:
    n = "?" if n_tokens is None else str(n_tokens)
    m = "?" if window is None else str(window)
    return f"context window exceeded: prompt of {n} tokens exceeds the context window of {m}"


def prompt_overflow(model: ModelConfig, messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The typed failure text when ``messages`` do not fit ``model``'s known window, else None."""
    window = context_window_of(model)
    if window is None:
        return None
    n = prompt_tokens(messages)
    return overflow_message(n, window) if n > window else None


# What servers say when a prompt does not fit: llama-cpp-python ("Requested tokens (N) exceed context
# window of M"), OpenAI and vLLM ("maximum context length is M tokens ... resulted in / requested N
# tokens"), llama.cpp's server ("exceeds the available context size"), litellm's exception name.
_WINDOW_PATTERNS = (
    re.compile(r"Requested tokens \((?P<n>\d+)\) exceed context window of (?P<m>\d+)", re.I),
    re.compile(r"maximum context length is (?P<m>\d+) tokens.*?(?:resulted in|requested) (?P<n>\d+) tokens", re.I | re.S),
    re.compile(r"context (?:length|window|size)[^.]*exceed|exceeds? the (?:available )?context|ContextWindowExceeded"
               r"|context_length_exceeded", re.I),
)


def context_overflow(error_text: str, estimate: int | None = None) -> str | None:
    """The same typed failure text for a server's context-length error, else None.

    ``estimate``: the prompt's estimated size, used when the error does not say the size.
    """
    for pattern in _WINDOW_PATTERNS:
        m = pattern.search(error_text)
        if m is not None:
            groups = m.groupdict()
            n = int(groups["n"]) if groups.get("n") else estimate
            window = int(groups["m"]) if groups.get("m") else None
            return overflow_message(n, window)
    return None
