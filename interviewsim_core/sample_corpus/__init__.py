"""The synthetic sample corpus shipped with the package: six fictional people, written for this project.

It lives inside the package (not under ``tests/``) so that ``make demo``, the CLI and a notebook
can run an evaluation on any machine without the real corpus beside the repo; its
``prepared_input.json`` files are package data. README.md in this folder says what is in it
and why it is shaped the way it is.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["SAMPLE_CORPUS_DIR"]

#: The corpus folder to hand to ``load_corpus``: one sub-folder per personality.
SAMPLE_CORPUS_DIR = Path(__file__).parent
