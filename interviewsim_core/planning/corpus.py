"""The corpus read once, one document at a time, for the planner.

``loader.index_corpus`` then ``load_document`` would check every file twice (about 80 ms per
paper-sized personality each time); this checks each file once, hands it on while it is fresh and
forgets it. Every problem of every file is still listed, in one error at the end of the pass,
so a broken corpus gets no plan (whatever was planned before the error is dropped).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..errors import InputValidationError, Problem
from ..input_rules import check_file, personality_key
from ..loader import discover_documents, duplicate_personality
from ..schema import PreparedInput


def checked_documents(corpus: str | os.PathLike[str], seen: set[str] | None = None) -> Iterator[tuple[str, PreparedInput]]:
    """(personality id, document) of each valid file, in folder order; ``seen`` collects every id.

    Raises:
        InputValidationError: after the last file, with every problem found.
    """
    problems: list[Problem] = []
    owner: dict[str, tuple[str, object]] = {}
    for f in discover_documents(corpus):
        doc, pid, file_problems = check_file(f)
        problems.extend(file_problems)
        if pid is not None and pid.strip():
            key = personality_key(pid)
            if key in owner:
                problems.append(duplicate_personality(f, pid, *owner[key]))
                continue
            owner[key] = (pid, f)
            if seen is not None:
                seen.add(pid)
        if doc is not None and not problems:
            yield doc.personality_id, doc
    if problems:
        raise InputValidationError(problems)
