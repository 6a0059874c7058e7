"""Typed errors shared by every layer.

Each subclasses a built-in so existing ``except ValueError`` / ``except RuntimeError``
clauses keep working; each exists because a caller needs to tell it apart.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One broken rule in one input file, located by a JSON path such as ``$.interviews[2].sequence``."""

    file: str
    path: str
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.path}: [{self.rule}] {self.message}"


class InputValidationError(ValueError):
    """Raised when a corpus breaks INPUT_SCHEMA.md; carries every problem found, not just the first.

    Callers must write nothing when they catch this: a half-written corpus run is worse than none.
    """

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        lines = [f"{len(self.problems)} problem(s) in the input:"] + [f"  - {p}" for p in self.problems]
        super().__init__("\n".join(lines))


class SplitError(ValueError):
    """Raised when a personality cannot be split chronologically (fewer than two interviews)."""


class ContractParseError(ValueError):
    """A model output that breaks its prompt contract.

    Keeps the raw text so the output can be audited and re-parsed later; never coerced to a score.
    """

    def __init__(self, contract: str, reason: str, raw: str):
        self.contract = contract
        self.reason = reason
        self.raw = raw
        super().__init__(f"{contract}: {reason}")


class GatewayError(RuntimeError):
    """A model call that failed after the retry policy gave up (transport, rate limit, server error)."""

    def __init__(self, message: str, *, status_code: int | None = None, retryable: bool = False):
        self.status_code = status_code
        self.retryable = retryable
        super().__init__(message)


class ConfigError(ValueError):
    """A configuration value (method name, model role, CLI flag) that cannot be used."""
