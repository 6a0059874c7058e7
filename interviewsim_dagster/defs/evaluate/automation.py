"""Declarative automation: named, labelled conditions, reused by every asset (never written inline).

What the automation sensor launches, and what it never does:

- ``FOLLOW_UPSTREAM``: a partition runs when it is newly **missing** (a personality registered, a
  method added to the config) or when the **content** of an upstream partition it reads changed:
  upstream data versions are content hashes (``versioning``), so an upstream re-materialised with
  identical rows (a backfill, ``interviewsim run`` of a neighbouring method) launches nothing.
  Dagster's ``eager`` follows every upstream materialisation instead, which turned a one-method
  backfill into a re-run of every method. Partitions already missing on the sensor's first tick
  are left alone, so deploying never launches a whole evaluation by itself.
- ``AFTER_ANY_UPSTREAM_CONTENT_CHANGE``: for assets that read whatever upstream partitions exist
  (``personality_scores``, the ``leaderboard``, the report); ``FOLLOW_UPSTREAM`` would wait for
  every upstream partition, and on a partially run corpus some are always missing. Missing
  upstream partitions are read as absent (``ALLOW_MISSING``).
- ``rescore_on_judge_change(cron)``: judgment assets and ``method_scores``. ``code_version_changed()``
  fires on the tick that sees a new judge identity; because that is a one-tick event, every cron tick
  (``EvalConfig.rescore_cron``) also re-runs partitions whose code version changed after their last
  materialisation (the daemon was down at the change). Only partitions that exist are re-scored,
  when their upstream is complete and idle. Generations never carry it: a judge change must not
  regenerate responses. ``catch_up_at(cron)`` is the same cron path for the per-personality and
  global aggregates, whose code versions include the judges so they show as stale too.

The sensor evaluating these starts RUNNING (``definitions.py``); Dagster's default is stopped, which
would silently switch the promise off.
"""

from __future__ import annotations

import dagster as dg

AC = dg.AutomationCondition

UPSTREAM_CONTENT_CHANGED = AC.any_deps_match(AC.data_version_changed()).with_label("upstream content changed")

IDLE = (~AC.any_deps_in_progress() & ~AC.in_progress()).with_label("nothing upstream or of its own in progress")

UPSTREAM_READY = (~AC.any_deps_missing() & IDLE).with_label("upstream complete and idle")

FOLLOW_UPSTREAM = (
    (AC.newly_missing().with_label("newly missing") | UPSTREAM_CONTENT_CHANGED).since_last_handled() & UPSTREAM_READY
).with_label("new partition, or upstream content changed")

AFTER_ANY_UPSTREAM_CONTENT_CHANGE = (UPSTREAM_CONTENT_CHANGED.since_last_handled() & IDLE).with_label(
    "upstream content changed (missing upstream allowed)"
)

JUDGE_CHANGED = AC.code_version_changed().with_label("judge identity changed")

STALE_SINCE_JUDGE_CHANGE = AC.code_version_changed().since(AC.newly_requested() | AC.newly_updated()).with_label(
    "judge changed after this partition was scored"
)


def _missed(cron: str) -> dg.AutomationCondition:
    return (AC.cron_tick_passed(cron) & STALE_SINCE_JUDGE_CHANGE).with_label(f"cron tick {cron} and still stale")


def rescore_on_judge_change(cron: str) -> dg.AutomationCondition:
    """Re-materialise judged partitions when their judge changes, or on ``cron`` if that was missed."""
    rescore = ((JUDGE_CHANGED | _missed(cron)) & ~AC.missing() & UPSTREAM_READY).with_label(
        f"re-score on judge change, and at {cron}"
    )
    return (rescore | FOLLOW_UPSTREAM).with_label(f"re-score on judge change (and at {cron}), or follow upstream")


def catch_up_at(cron: str, base: dg.AutomationCondition) -> dg.AutomationCondition:
    """``base``, plus a re-run at ``cron`` of partitions still stale from a judge change."""
    catch_up = (_missed(cron) & ~AC.missing() & IDLE).with_label(f"re-score at {cron} if still stale")
    return (base | catch_up).with_label(f"{base.get_label()}; re-score at {cron} if still stale")
