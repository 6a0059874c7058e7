"""Hypothesis strategies and small helpers shared by the contract tests (imported by name: the
tests directory is on sys.path under pytest's default import mode)."""

from __future__ import annotations

import json

from hypothesis import strategies as st

# Non-blank text without surrogates; JSON can carry anything else, including newlines and quotes.
any_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=60).filter(
    lambda s: s.strip() != ""
)
# One-line text for the line-oriented contracts (no line breaks of any kind).
line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=60
).filter(lambda s: s.strip() != "" and len(s.splitlines()) == 1)
blank_text = st.sampled_from(["", " ", "\n", "\t  \n"])


def fence(body: str, lang: str = "json") -> str:
    return f"```{lang}\n{body}\n```"


def dumps(obj: object) -> str:
    return json.dumps(obj)
