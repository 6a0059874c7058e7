"""Declarative automation: named conditions, reused by every asset (never written inline).

- ``FOLLOW_UPSTREAM`` (Dagster's ``eager``): a partition runs when it is newly missing (a new
  personality was registered) or an upstream partition was updated. It ignores partitions already
  missing on the sensor's first tick, so deploying never launches a whole evaluation by itself.
- ``AFTER_ANY_UPSTREAM_UPDATE``: for assets that read whatever upstream partitions exist (the
  per-personality ``personality_scores``, the ``leaderboard``, the report). ``eager`` would block
  them while any upstream partition is missing, and on a partially run corpus (a method not run
  yet) some always is, so a re-score would never reach them. This fires once per upstream update,
  as soon as nothing upstream (and nothing of its own) is in progress; missing upstream partitions
  are read as absent (``ALLOW_MISSING``), not waited for.
- ``rescore_on_judge_change(cron)``: for judgment assets. ``code_version_changed()`` fires on the
  tick that sees a new judge identity (eager would not: nothing upstream changed). Because that is a
  one-tick event, a cron tick (``EvalConfig.rescore_cron``) also re-runs any partition whose code
  version changed after its last materialisation, for example when the daemon was down at the
  change. Only partitions that exist are re-scored, and only when their upstream is complete and
  idle. Generations never carry this condition: a judge change must not regenerate responses.

The sensor evaluating these starts RUNNING (``definitions.py``); Dagster's default is stopped, which
would silently switch the promise off.
"""

from __future__ import annotations

import dagster as dg

AC = dg.AutomationCondition

FOLLOW_UPSTREAM = AC.eager()

AFTER_ANY_UPSTREAM_UPDATE = (
    AC.any_deps_updated().since_last_handled() & ~AC.any_deps_in_progress() & ~AC.in_progress()
).with_label("upstream updated and idle (missing upstream allowed)")

UPSTREAM_READY = (~AC.any_deps_missing() & ~AC.any_deps_in_progress() & ~AC.in_progress()).with_label(
    "upstream complete and idle"
)

JUDGE_CHANGED = AC.code_version_changed().with_label("judge identity changed")

STALE_SINCE_JUDGE_CHANGE = AC.code_version_changed().since(AC.newly_requested() | AC.newly_updated()).with_label(
    "judge changed after this partition was scored"
)


def rescore_on_judge_change(cron: str) -> dg.AutomationCondition:
    """Re-materialise judged partitions when their judge changes, or on ``cron`` if that was missed."""
    missed = (AC.cron_tick_passed(cron) & STALE_SINCE_JUDGE_CHANGE).with_label(f"stale at cron tick {cron}")
    rescore = ((JUDGE_CHANGED | missed) & ~AC.missing() & UPSTREAM_READY).with_label("re-score on judge change")
    return rescore | FOLLOW_UPSTREAM
