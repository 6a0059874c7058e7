"""One study per data root: the configuration a data root's results come from, recorded when it is first written.

Why (issue 45): with the UI up on one configuration, an ``interviewsim run --methods simple,wiki`` with another
judge on the same data root re-judged two methods, the UI's automation kept the other twelve on the old judge,
and ``leaderboard.parquet`` mixed two judges with nothing saying so. The claims (``data_root_claims``) only keep
two configurations from writing *at the same time*; this module keeps them from writing one data root at all.

``<data_root>/study.json`` holds, per **aspect** that changes results (each model role with its prompt and
parser versions and the settings that change its rows, ``steps.model_version``; each generator after the first;
the retrieval embedder), what
it is shown as and its identity, and the methods written so far. Every writer enters the study before it
writes (``enter``): the first one records it; one whose aspects all match extends it (new methods and
personalities are more of the same study, not a change); one that differs in any aspect is refused with one
line naming the difference and the way on. The one change allowed is a **re-score** (``rescore=True``: only
the judges differ, and the writer re-judges everything judged so far; the UI's automation does that after a
judge change in its configuration): the record then takes the new judges.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel, ConfigDict

from ..atomic_files import atomic_write_text
from ..dataroot import as_root, exists
from ..errors import ConfigError
from .config import EvalConfig, generator_label
from .data_root_claims import Claim, claim, config_identity
from .steps import STEPS, Role, model_version, models_for

STUDY_FILE = "study.json"
JUDGES = "judges"
"""The one aspect a re-score may change."""


class Aspect(BaseModel):
    """One thing that changes results: how a reader knows it, and its identity (compared, never shown)."""

    model_config = ConfigDict(frozen=True)

    shown: str
    identity: str


class Study(BaseModel):
    """What a data root's results come from (``study.json``)."""

    model_config = ConfigDict(frozen=True)

    aspects: dict[str, Aspect]
    methods: tuple[str, ...] = ()
    """Every method written so far (sorted): adding one extends the study."""
    recorded: str = ""
    """When the record was last written (UTC, ISO 8601)."""


class StudyMismatch(ConfigError):
    """A writer whose configuration is not the data root's study; the message is one line (``refusal``)."""


def study_of(cfg: EvalConfig, methods=None) -> Study:
    """The study ``cfg`` writes: each model role's identity over every step of that role (enabled or not, so
    switching an optional table on is not a change), the retrieval embedder, and ``methods`` (default: the
    configured ones)."""
    aspects: dict[str, Aspect] = {}
    for role in Role:
        steps = [s for s in STEPS if role in s.roles]
        models = models_for(cfg, role)
        settings: dict[str, object] = {}
        for s in steps:
            settings.update(s.version_settings(cfg))
        contracts = sorted({c for s in steps for c in s.contracts})
        name = role.value.replace("_", " ")
        aspects[name] = Aspect(shown=", ".join(m.name for m in models),
                               identity=model_version(models, contracts, **settings))
        if role is Role.GENERATOR:  # each other generator is an aspect of its own: adding one extends the study
            for g in cfg.effective_generators[1:]:
                aspects[f"generator {generator_label(g)}"] = Aspect(
                    shown=g.name, identity=model_version([g], contracts, **settings))
    embedding = cfg.effective_embedding
    aspects["embedding model"] = Aspect(shown=embedding.name, identity=_digest(embedding.identity()))
    return Study(aspects=aspects, methods=tuple(sorted(str(m) for m in (methods or cfg.methods))))


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def differences(recorded: Study, current: Study) -> dict[str, str]:
    """Each aspect ``current`` changes -> "<aspect> <recorded> -> <current>" (the same name: another setting
    or prompt version)."""
    out: dict[str, str] = {}
    for name in sorted(set(recorded.aspects) | set(current.aspects)):
        was, now = recorded.aspects.get(name), current.aspects.get(name)
        if was is None or now is None or was.identity == now.identity:
            continue  # an aspect one side does not know (an older record) is not a difference
        out[name] = (f"{name} {was.shown} -> {now.shown}" if was.shown != now.shown
                     else f"{name} {now.shown} with another setting or prompt version")
    return out


def refusal(data_root, diffs: list[str]) -> str:
    """The one line a refused writer shows: the difference, and what to do instead."""
    return (f"data root {data_root} holds a study of another configuration ({'; '.join(diffs)}): one data root "
            "holds one study, so this configuration does not write it: use another --data-root, or run with "
            "the study's settings (a command that re-judges the whole study with new judges, --rescore, "
            "does not exist yet)")


def path_of(data_root):
    return as_root(data_root) / STUDY_FILE


def read(data_root) -> Study | None:
    """The data root's study, or None when nothing recorded one yet (a new data root, or one written before it)."""
    path = path_of(data_root)
    return Study.model_validate_json(path.read_text()) if exists(path) else None


def mismatch(data_root, current: Study, *, rescore: bool = False) -> str | None:
    """The refusal (one line) a writer of ``current`` gets on ``data_root``, or None when it may write there."""
    recorded = read(data_root)
    diffs = differences(recorded, current) if recorded is not None else {}
    if not diffs or (rescore and set(diffs) == {JUDGES}):
        return None
    return refusal(data_root, list(diffs.values()))


def enter(data_root, current: Study, *, rescore: bool = False) -> Study:
    """Check that a writer of ``current`` (``study_of`` its configuration) belongs to ``data_root``'s study, and
    record it: the study when there is none, new methods, and with ``rescore`` a change of the judges alone.
    Returns the study as recorded now.

    Raises:
        StudyMismatch: ``current`` differs from the study in an aspect (for ``rescore``, in one besides the judges).
    """
    refused = mismatch(data_root, current, rescore=rescore)
    if refused is not None:
        raise StudyMismatch(refused)
    recorded = read(data_root)
    if recorded is not None:
        methods = tuple(sorted(set(recorded.methods) | set(current.methods)))
        aspects = {**recorded.aspects, **current.aspects}  # a generator this run does not name stays in the study
        if methods == recorded.methods and recorded.aspects == aspects:
            return recorded
        current = current.model_copy(update={"methods": methods, "aspects": aspects})
    current = current.model_copy(update={"recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    atomic_write_text(path_of(data_root), current.model_dump_json(indent=2))
    return current


@contextmanager
def writing(cfg: EvalConfig, methods, writer: str) -> Iterator[Claim | None]:
    """What a command holds while it writes ``cfg.data_root``: the claim (no other configuration writes at the
    same time) and the study (no other configuration wrote it before).

    Raises:
        ConfigError: a live writer of another configuration (``data_root_claims``), or ``StudyMismatch``.
    """
    with claim(cfg.data_root, config_identity(cfg), writer) as held:
        enter(cfg.data_root, study_of(cfg, methods))
        yield held
