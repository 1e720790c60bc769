"""Progress and closing statistics in TLC's console vocabulary.

An engine hands a :class:`ProgressSnapshot` (plain numbers) to the ``progress`` callable of its
options every few seconds; :class:`ProgressPrinter` is the callable that writes TLC-style lines to
stderr. :func:`final_statistics_lines` turns a finished run's :class:`~explorer.results.Statistics`
into TLC's closing lines, which the text report reuses. People grep for these phrases ("states
generated", "distinct states found", "states left on queue"), so they are TLC's; only the time is
given in seconds since the start rather than as a date, and numbers carry thousands separators.
"""

from __future__ import annotations

import sys
from typing import TextIO

import attrs

from explorer.results import Statistics


@attrs.frozen
class ProgressSnapshot:
    """Where a running search is: ``depth`` counts the initial states as depth 1 (TLC's convention);
    ``queue`` is the number of distinct states found whose successors are not computed yet."""

    seconds: float
    depth: int
    generated: int
    distinct: int
    queue: int


class ProgressPrinter:
    """Writes ``Progress(7) at 12.3s: 123,456 states generated (10,050 s/min), 45,678 distinct
    states found, 1,234 states left on queue.`` for each snapshot.

    The rate is generated states per minute since the previous snapshot, as TLC prints it.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._previous: ProgressSnapshot | None = None

    def __call__(self, snapshot: ProgressSnapshot) -> None:
        previous = self._previous
        self._previous = snapshot
        since = snapshot.seconds - (previous.seconds if previous else 0.0)
        delta = snapshot.generated - (previous.generated if previous else 0)
        per_minute = round(delta * 60 / since) if since > 0 else 0
        stream = self._stream if self._stream is not None else sys.stderr
        print(
            f"Progress({snapshot.depth}) at {snapshot.seconds:.1f}s: "
            f"{snapshot.generated:,} states generated ({per_minute:,} s/min), "
            f"{snapshot.distinct:,} distinct states found, "
            f"{snapshot.queue:,} states left on queue.",
            file=stream,
            flush=True,
        )


def final_statistics_lines(stats: Statistics) -> list[str]:
    """TLC's closing lines for a finished run (counts, depth, collision estimate, speed)."""
    return [
        f"{stats.generated:,} states generated, {stats.distinct:,} distinct states found, "
        f"{stats.queue:,} states left on queue.",
        f"The depth of the complete state graph search is {stats.depth}.",
        f"The probability of a fingerprint collision (calculated, optimistic): {stats.collision_probability:.1E}",
        f"Finished in {stats.seconds:.1f}s: {stats.states_per_second:,.0f} distinct states per second.",
    ]
