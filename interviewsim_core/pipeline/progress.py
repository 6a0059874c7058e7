"""The progress line of a run: partitions written out of the run's total, calls per second, time left.

Why: at the paper's scale a run takes hours, and a person watching it asks how far it is, how fast it
goes and when it ends. The first two are counted: the partitions are the run's own (one per step and
cell it makes, known before its first call, so the total does not grow as personalities are admitted),
the rate is the calls answered since the run started. The time left is the one estimate, and the line
says how it is made ("at this rate"): the partitions left at the rate partitions were written so far,
the mean over the whole run, so it moves little from line to line. It assumes the partitions left cost
what the written ones did on average, which holds once a few personalities are through (each brings
the same mix of steps), so it is said only once a share of the run is written (``RATE_AFTER``). At 12
personalities of the paper's shape (offline model) it said 3 min 15 s after 10 s for 3 min 05 s, then ran
up to 30% short mid-run (1 min 07 s for 1 min 33 s): the last partitions cost more than the mean.
"""

from __future__ import annotations

from collections.abc import Mapping


def duration(seconds: float) -> str:
    """``45 s``, ``2 min 05 s``, ``1 h 23 min``: as precise as a person reads a duration of that length."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


RATE_AFTER = 0.02
"""The share of the run's partitions written before the time left is said. A rate over fewer is noise: the
first partitions are a personality's cheapest (its split) and the run's start-up is in their time (2 of
151 partitions written in 4 s said 4 min 34 s left; the run ended 12 s later)."""


def time_left_s(done: int, total: int, elapsed_s: float) -> float | None:
    """Seconds until ``total`` partitions at the rate ``done`` took ``elapsed_s``; None while there is no rate
    (fewer than ``RATE_AFTER`` of them written, at least one)."""
    if done <= 0 or done < RATE_AFTER * total or elapsed_s <= 0:
        return None
    return (total - done) * elapsed_s / done


def progress_line(counts: Mapping[str, Mapping[str, float]], done: int, total: int, elapsed_s: float,
                  final: bool = False) -> str:
    """One line: ``progress: 120 of 5,000 partitions written in 2 min 05 s, 27.4 calls/s (...); about 1 h 25 min left``.

    ``counts``: per step, the calls ``answered``, ``cached``, ``invalid``, ``failed`` and ``cost_usd`` so far
    (``runner.PROGRESS_FIELDS``), summed here: the line stays one line whatever the number of steps.
    ``final``: the run ended, ``done`` when every partition was written, else ``stopped`` (a failure or an
    interrupt), and no time left.
    """
    def total_of(field: str) -> float:
        return sum(c.get(field, 0) for c in counts.values())

    answered = int(total_of("answered"))
    rate = answered / elapsed_s if elapsed_s > 0 else 0.0
    head = ("done" if done >= total else "stopped") if final else "progress"
    line = (f"{head}: {done:,} of {total:,} partitions written in {duration(elapsed_s)}, {rate:,.1f} calls/s "
            f"({answered:,} calls answered, {int(total_of('cached')):,} of them from the cache; "
            f"{int(total_of('invalid')):,} invalid, {int(total_of('failed')):,} failed; "
            f"${total_of('cost_usd'):.4f} so far)")
    left = None if final else time_left_s(done, total, elapsed_s)
    return line if left is None else f"{line}; about {duration(left)} left at this rate"
