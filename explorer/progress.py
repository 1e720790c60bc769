"""Progress and closing statistics in TLC's console vocabulary.

An engine hands a :class:`ProgressSnapshot` (plain numbers) to the ``progress`` callable of its
options every few seconds; :class:`ProgressPrinter` is the callable that writes TLC-style lines to
stderr, and :class:`RichProgress` the live ``rich`` display used on a terminal (the same numbers,
redrawn in place; :func:`progress_for` picks one). :func:`final_statistics_lines` turns a finished
run's :class:`~explorer.results.Statistics` into TLC's closing lines, which the text report
reuses. People grep for these phrases ("states generated", "distinct states found", "states left
on queue"), so they are TLC's; only the time is given in seconds since the start rather than as a
date, and numbers carry thousands separators.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, TextIO

import attrs

from explorer.results import Statistics
from explorer.stopping import format_bytes


@attrs.frozen
class ProgressSnapshot:
    """Where a running search is: ``depth`` counts the initial states as depth 1 (TLC's convention);
    ``queue`` is the number of distinct states found whose successors are not computed yet.

    Within a long level: ``level_done`` of ``level_size`` units (``level_unit``: the level's
    ``"states"`` expanded so far, or the ``"tasks"`` of its Spark job finished so far). ``memory``
    is the resident memory of the searching process and ``max_memory`` its budget
    (``--max-memory``; None without one). ``phase`` names what the engine waits for when it is not
    expanding states (``"starting Spark"``), empty otherwise."""

    seconds: float
    depth: int
    generated: int
    distinct: int
    queue: int
    level_done: int | None = None
    level_size: int | None = None
    level_unit: str = "states"
    memory: int | None = None
    max_memory: int | None = None
    phase: str = ""

    def within_level(self) -> str:
        """``1,024 of 4,096 states (25%)`` of the level in progress, or "" when not known."""
        if self.level_done is None or not self.level_size:
            return ""
        share = 100 * self.level_done / self.level_size
        return f"{self.level_done:,} of {self.level_size:,} {self.level_unit} ({share:.0f}%)"

    def memory_used(self) -> str:
        """``1.2 GiB of 8.0 GiB`` (against the budget), ``1.2 GiB`` without one, "" when not known."""
        if self.memory is None:
            return ""
        budget = f" of {format_bytes(self.max_memory)}" if self.max_memory is not None else ""
        return f"{format_bytes(self.memory)}{budget}"


class ProgressPrinter:
    """Writes ``Progress(7) at 12.3s: 123,456 states generated (10,050 s/min), 45,678 distinct
    states found, 1,234 states left on queue.`` for each snapshot.

    The rate is generated states per minute since the previous snapshot, as TLC prints it, where the count moves
    with each snapshot (the local engine counts as it expands). A Spark job counts the transitions of its level when
    it ends: while its tasks run (``level_unit`` "tasks") the line says the count waits for the level's end instead
    of a rate of 0, and the line after the level gives the rate since the count last moved, over the level's time,
    not over the seconds since the previous line.
    """

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._counted = (0.0, 0)  # (seconds, generated) when the count last moved
        self._phase = ""
        self._lock = threading.Lock()  # an engine may report from a thread watching a Spark job

    def __call__(self, snapshot: ProgressSnapshot) -> None:
        with self._lock:
            self._print(snapshot)

    def _print(self, snapshot: ProgressSnapshot) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        if snapshot.phase:  # once per phase, not a Progress line: the counts have not moved
            if snapshot.phase != self._phase:
                print(f"{snapshot.phase[0].upper()}{snapshot.phase[1:]} at {snapshot.seconds:.1f}s.", file=stream,
                      flush=True)
            self._phase = snapshot.phase
            return
        self._phase = ""
        counted_at, counted = self._counted
        delta = snapshot.generated - counted
        if delta:
            since = snapshot.seconds - counted_at
            rate = f"{round(delta * 60 / since) if since > 0 else 0:,} s/min"
            self._counted = (snapshot.seconds, snapshot.generated)
        elif snapshot.level_unit == "tasks":
            rate = "counted when the level ends"
        else:
            rate = "0 s/min"
            self._counted = (snapshot.seconds, snapshot.generated)
        within = snapshot.within_level()
        memory = snapshot.memory_used()
        print(
            f"Progress({snapshot.depth}) at {snapshot.seconds:.1f}s: "
            f"{snapshot.generated:,} states generated ({rate}), "
            f"{snapshot.distinct:,} distinct states found, "
            f"{snapshot.queue:,} states left on queue."
            + (f" Level {snapshot.depth}: {within}." if within else "")
            + (f" Memory: {memory}." if memory else ""),
            file=stream,
            flush=True,
        )


class RichProgress:
    """A live display of a running search on a terminal (``rich``): depth, states generated,
    distinct states, states left on queue, the rate and the time, redrawn in place at most every
    ``refresh_seconds``. Call :meth:`close` at the end; the last numbers stay on the screen."""

    def __init__(self, console: Any = None, refresh_seconds: float = 0.25) -> None:
        from rich.console import Console
        from rich.live import Live

        self._console = console if console is not None else Console(stderr=True)
        self._live = Live(console=self._console, auto_refresh=False, transient=False)
        self._refresh_seconds = refresh_seconds
        self._previous: ProgressSnapshot | None = None
        self._last_draw = float("-inf")
        self._started = False
        self._lock = threading.Lock()  # an engine may report from a thread watching a Spark job

    def __call__(self, snapshot: ProgressSnapshot) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self._last_draw < self._refresh_seconds and not snapshot.phase:
                self._previous = snapshot  # drawn by the next call or by close()
                return
            self._draw(snapshot)
            self._last_draw = now

    def _draw(self, snapshot: ProgressSnapshot) -> None:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        if not self._started:
            self._live.start()
            self._started = True
        rate = snapshot.distinct / snapshot.seconds if snapshot.seconds > 0 else 0.0
        title = "kmc: breadth-first search" + (f": {snapshot.phase}…" if snapshot.phase else "")
        # Label and value pairs, two a line: TLC's words, and it fits an 80-column terminal.
        pairs = [("depth", f"{snapshot.depth}"), ("time", f"{snapshot.seconds:.1f}s"),
                 ("states generated", f"{snapshot.generated:,}"), ("distinct states", f"{snapshot.distinct:,}"),
                 ("left on queue", f"{snapshot.queue:,}"), ("distinct/s", f"{rate:,.0f}")]
        table = Table.grid(padding=(0, 2))
        table.title, table.title_justify = title, "left"
        for justify in ("left", "right", "left", "right"):
            table.add_column(justify=justify, no_wrap=True)
        for i in range(0, len(pairs), 2):
            table.add_row(*pairs[i], *pairs[i + 1])
        # The level in progress and the memory on lines of their own (longer values).
        lines = []
        within, memory = snapshot.within_level(), snapshot.memory_used()
        if within:
            lines.append(f"level {snapshot.depth}: {within} done")
        if memory:
            lines.append(f"memory: {memory}" + (" (--max-memory)" if snapshot.max_memory is not None else ""))
        self._live.update(Group(table, *(Text(line) for line in lines)), refresh=True)
        self._previous = snapshot

    def close(self) -> None:
        with self._lock:
            if self._previous is not None:
                self._draw(self._previous)
            if self._started:
                self._live.stop()
                self._started = False


def progress_for(stream: TextIO | None = None, *, live: bool = True) -> ProgressPrinter | RichProgress:
    """The progress display for ``stream`` (stderr by default): the live ``rich`` display when
    ``stream`` is a terminal and ``live`` (``kmc explore --no-progress`` turns it off), TLC-style
    lines otherwise."""
    stream = stream if stream is not None else sys.stderr
    if live and stream.isatty():
        from rich.console import Console

        return RichProgress(Console(file=stream))
    return ProgressPrinter(stream)


def final_statistics_lines(stats: Statistics, *, complete: bool = True, exhaustive: bool = True) -> list[str]:
    """TLC's closing lines for a finished run (counts, depth, collision estimate, speed); a search
    that stopped early (``complete`` False) is not called complete, and a sampling explorer's run
    (``exhaustive`` False: random walks, Hypothesis) is not called a search of the state graph."""
    if not exhaustive:
        return [
            f"{stats.generated:,} states generated, {stats.distinct:,} distinct states visited "
            "(sampled by walks: not an exhaustive search).",
            f"The longest walk had {max(stats.depth - 1, 0)} steps.",
            f"The probability of a fingerprint collision (calculated, optimistic): {stats.collision_probability:.1E}",
            f"Finished in {stats.seconds:.1f}s: {stats.states_per_second:,.0f} distinct states per second.",
        ]
    depth = (
        f"The depth of the complete state graph search is {stats.depth}."
        if complete
        else f"The depth reached before the search stopped is {stats.depth} (the search is incomplete)."
    )
    return [
        f"{stats.generated:,} states generated, {stats.distinct:,} distinct states found, "
        f"{stats.queue:,} states left on queue.",
        depth,
        f"The probability of a fingerprint collision (calculated, optimistic): {stats.collision_probability:.1E}",
        f"Finished in {stats.seconds:.1f}s: {stats.states_per_second:,.0f} distinct states per second.",
    ]
