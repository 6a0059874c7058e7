"""Declarative automation: named, labelled conditions, reused by every asset (never written inline).

The rule is "spend only what was asked" (issue 19). What the automation sensor launches:

- ``RESCORE``: judgment assets (and the judged aggregates) of partitions that were **materialised
  before** and whose judge identity changed since (``code_version_changed`` on the tick that sees
  the change; every ``rescore_cron`` tick catches partitions still stale from a change the daemon
  missed). A partition never materialised is never re-scored; generations never carry it, so a judge
  change never regenerates a response.
- ``AFTER_UPSTREAM_UPDATE``: the steps that call no model (per-personality scores, the leaderboard,
  the report, PS stability, the fine-tuning export) after a dependency's data version changed (a
  re-score). They cost nothing and keep the aggregates true to what was run; an identical re-run of
  their upstream keeps its (logical) data version and launches nothing.
- ``FILL_NEW`` only with ``automation_fill_new: true`` (off by default): a newly missing partition of
  a model step (a newly registered personality, a method added to the config) whose upstream is
  complete. Such runs pass the budget gate like any other.

What it never launches: a model call for a partition nobody materialised or requested, a re-run after
an upstream re-materialisation (the old "upstream content changed" trigger launched 5,901 partitions
after a one-method CLI run), anything on the first tick after deploy.

The sensor evaluating these starts RUNNING (``definitions.py``), so the promise above holds as shipped.
"""

from __future__ import annotations

import dagster as dg

AC = dg.AutomationCondition

AUTOMATION_SENSOR = "interviewsim_automation"
"""The sensor evaluating these conditions (``definitions.py``); its runs carry it as ``dagster/sensor_name``."""

IDLE = (~AC.any_deps_in_progress() & ~AC.in_progress()).with_label(
    "nothing upstream or of its own in progress (a backfill until Dagster marks it done)")
"""Why an aggregate is "Not requested" while it shows "Unsynced" during a re-score: it waits for the whole
re-score (one refresh, not one per partition landed); the backfill counts until the backfill daemon marks it
done, up to 30 s after its last run (docs/USER_GUIDE.md, "Where the UI shows it")."""

UPSTREAM_READY = (~AC.any_deps_missing() & IDLE).with_label("upstream complete and idle")

UPSTREAM_UPDATED = AC.any_deps_match(AC.data_version_changed()).with_label(
    "an upstream partition's data version changed")
"""Data versions are Dagster's logical ones (``versioning``): an identical re-run keeps them, a judge change
(code version) changes them, so an aggregate is refreshed when what it reads changed, never twice for nothing."""

UPDATE_PENDING = UPSTREAM_UPDATED.since_last_handled().with_label("an upstream update not refreshed yet")
"""Labelled so the Automation tab names it beside ``IDLE``: pending but not idle reads as "waiting", not as "nothing to do"."""

AFTER_UPSTREAM_UPDATE = (UPDATE_PENDING & IDLE).with_label(
    "no model call: refresh after an upstream update (missing upstream allowed)")

AFTER_COMPLETE_UPSTREAM_UPDATE = (UPDATE_PENDING & UPSTREAM_READY).with_label(
    "no model call: refresh after an upstream update")

FILL_NEW = (AC.newly_missing().since_last_handled() & UPSTREAM_READY).with_label(
    "new partition (automation_fill_new: true)")

JUDGE_CHANGED = AC.code_version_changed().with_label("judge identity changed")

STALE_SINCE_JUDGE_CHANGE = AC.code_version_changed().since(AC.newly_requested() | AC.newly_updated()).with_label(
    "judge changed after this partition was scored"
)


def _missed(cron: str) -> dg.AutomationCondition:
    return (AC.cron_tick_passed(cron) & STALE_SINCE_JUDGE_CHANGE).with_label(f"cron tick {cron} and still stale")


def rescore_on_judge_change(cron: str, base: dg.AutomationCondition | None = None) -> dg.AutomationCondition:
    """Re-materialise judged partitions that exist when their judge changes, or on ``cron`` if that was missed;
    ``base`` (another trigger of the same asset) joins with ``|``."""
    rescore = ((JUDGE_CHANGED | _missed(cron)) & ~AC.missing() & UPSTREAM_READY).with_label(
        f"re-score materialised partitions on judge change, and at {cron}"
    )
    return rescore if base is None else (rescore | base).with_label(f"{rescore.get_label()}; or {base.get_label()}")


def fill_new(enabled: bool) -> dg.AutomationCondition | None:
    """``FILL_NEW`` when the configuration opts in, else nothing."""
    return FILL_NEW if enabled else None


def catch_up_at(cron: str, base: dg.AutomationCondition) -> dg.AutomationCondition:
    """``base``, plus a re-run at ``cron`` of partitions still stale from a judge change (free aggregates)."""
    catch_up = (_missed(cron) & ~AC.missing() & IDLE).with_label(f"re-score at {cron} if still stale")
    return (base | catch_up).with_label(f"{base.get_label()}; re-score at {cron} if still stale")
