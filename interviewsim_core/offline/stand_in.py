"""The offline model behind an HTTP server, standing in for a remote model (tests, benchmarks).

A remote model is sent only the prompt, never the contract name the gateway tells the in-process
offline provider; so this stand-in learns the contract from the template's own heading (each
contract's ``MARKER``, or the premise passes' opening words). It serves the fake OpenAI-compatible
server (``llm/testing.py``) in the tests and the scale benchmark; the product never uses it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["contract_of", "offline_reply"]


def contract_of(messages: Sequence[dict]) -> str:
    """The contract a prompt is for, read off its opening (each contract's ``MARKER``, or the premise passes'
    opening words): what a test counting a fake server's requests by kind reads too."""
    from ..contracts import REGISTRY, premise

    head = messages[0]["content"]
    if head.startswith(premise.PASS_1_BLIND_RECONSTRUCTION_PROMPT[:60]):
        return premise.PASS1_NAME
    if head.startswith(premise.PASS_2_SOURCE_VERIFICATION_PROMPT[:60]):
        return premise.PASS2_NAME
    markers = {name: getattr(c, "MARKER", None) for name, c in REGISTRY.items()}
    found = [(head.find(m), name) for name, m in markers.items() if m and m in head]
    return min(found)[1]


def offline_reply(messages: Sequence[dict], model: str | None = None) -> str:
    """The answer of ``offline/<model>`` (default the offline model) to ``messages``, with the contract read off
    the prompt."""
    from . import respond

    return respond(messages, contract_of(messages), model)
