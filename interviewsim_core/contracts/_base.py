"""What every prompt-contract module provides, and the helpers they share.

A contract module reads top to bottom: docstring (what we ask and why) -> NAME, CONTRACT_VERSION,
PARSER_VERSION -> prompt template constants -> frozen ``Result`` -> ``build_messages(...)`` ->
``parse(raw, ...) -> Result`` which raises ``ContractParseError``. Contracts never call a model.

Bump CONTRACT_VERSION when a template's wording changes and PARSER_VERSION when the parser's
acceptance changes: both are part of a judge's identity, which decides what must be re-scored.
"""

from __future__ import annotations

from ..llm.types import Message  # the call boundary's type; contracts build lists of them

__all__ = ["Message"]
