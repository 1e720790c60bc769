"""Stopping a search early and safely: interrupts, the time limit, the memory budget.

A search stops at a *safe point*, never in the middle of writing a file: the local BFS looks at
its :class:`Limits` every few hundred states, the Spark BFS between the driver's batches and
between the jobs of a level (and a request to stop, or the time limit passing, cancels the running
job). Either engine then keeps what its last complete level
left on disk, so that the run can be resumed, and returns an INCONCLUSIVE result saying why
(:class:`explorer.results.StopCause` and one of the sentences below).

:class:`StopRequest` is how the outside world (the command line's SIGINT and SIGTERM handlers)
asks a running search to stop; the explorers never install signal handlers themselves.
"""

from __future__ import annotations

import ctypes
import functools
import os
import resource
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import cast

import attrs

from explorer.results import StopCause

#: Share of the machine's memory a local search may use by default (``--max-memory``).
DEFAULT_MEMORY_SHARE = 0.5


class StopRequest:
    """A request to stop a running search at its next safe point.

    :meth:`request` may be called from a signal handler or another thread: it records the first
    reason given and calls the listeners an engine registered (the Spark engine cancels its
    running job from one, so that a long level does not delay the stop).
    """

    def __init__(self) -> None:
        self._reason: str | None = None
        self._cause = StopCause.INTERRUPTED
        self._listeners: list[Callable[[], None]] = []
        self._lock = threading.Lock()

    @property
    def reason(self) -> str | None:
        """The sentence saying why the search must stop, or None while it may go on."""
        return self._reason

    @property
    def cause(self) -> StopCause:
        return self._cause

    def request(self, reason: str, cause: StopCause = StopCause.INTERRUPTED) -> None:
        with self._lock:
            if self._reason is not None:
                return
            self._reason, self._cause = reason, cause
            listeners = list(self._listeners)
        for listener in listeners:
            listener()

    @contextmanager
    def listening(self, listener: Callable[[], None]) -> Iterator[None]:
        """Call ``listener`` when a stop is requested while the ``with`` block runs (at once if it
        already was)."""
        with self._lock:
            self._listeners.append(listener)
            already = self._reason is not None
        if already:
            listener()
        try:
            yield
        finally:
            with self._lock:
                self._listeners.remove(listener)


@attrs.frozen
class Limits:
    """The budgets of one search besides its depth and state bounds.

    ``time_limit`` is in seconds of wall time from ``started`` (a ``time.monotonic()`` value: the
    command line sets it when the command starts, so that the limit counts everything this
    invocation does, a resumed run's checks of its files and Spark's start included; None counts
    from the start the engine gives :meth:`exceeded`). A resumed run gets a fresh limit.
    ``max_memory`` is in bytes of resident memory of this process; ``stop`` the outside request.
    """

    time_limit: float | None = None
    max_memory: int | None = None
    stop: StopRequest | None = attrs.field(default=None, eq=False)
    started: float | None = attrs.field(default=None, eq=False)

    def deadline(self, started: float) -> float | None:
        """The ``time.monotonic()`` value at which the time limit passes, or None without one."""
        if self.time_limit is None:
            return None
        return (self.started if self.started is not None else started) + self.time_limit

    def exceeded(self, started: float) -> tuple[StopCause, str] | None:
        """Why the search must stop now (``started`` is the engine's ``time.monotonic()`` start,
        used when the limits give none), or None."""
        if self.stop is not None and self.stop.reason is not None:
            return self.stop.cause, self.stop.reason
        deadline = self.deadline(started)
        if deadline is not None and self.time_limit is not None:
            now = time.monotonic()
            if now >= deadline:
                return StopCause.TIME_LIMIT, time_limit_reason(self.time_limit, now - (deadline - self.time_limit))
        if self.max_memory is not None:
            used = resident_memory()
            if used >= self.max_memory:
                return StopCause.MEMORY_BUDGET, memory_budget_reason(used, self.max_memory)
        return None


def time_limit_reason(limit: float, elapsed: float) -> str:
    """The stop of a search that reached its time limit, with the time it really ran (an engine
    stops at its next safe point, a moment after the limit passed)."""
    return f"time limit reached: stopped after {elapsed:.1f} s (time_limit={limit:g}s)"


def memory_budget_reason(used: int, budget: int) -> str:
    return (
        f"memory budget reached: resident memory {format_bytes(used)} is at or above "
        f"max_memory={format_bytes(budget)}"
    )


def interrupted_reason(signal_name: str) -> str:
    return f"interrupted by {signal_name}"


def resident_memory() -> int:
    """This process's resident memory in bytes (``/proc/self/statm``; the peak where there is none)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def release_free_memory() -> None:
    """Hand the memory the process freed back to the system where the C library can (glibc's ``malloc_trim``):
    the states of an expanded level are freed in pieces among what the search keeps, and without it the process
    keeps its peak level's pages resident to the end. Elsewhere nothing happens."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        return cast(Callable[[int], int], ctypes.CDLL(None).malloc_trim)
    except (OSError, AttributeError):
        return None


def machine_memory() -> tuple[int | None, int | None]:
    """The machine's total and available memory in bytes (``/proc/meminfo``), None where unknown."""
    values: dict[str, int] = {}
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                key, _, rest = line.partition(":")
                fields = rest.split()
                if fields and fields[0].isdigit():
                    values[key] = int(fields[0]) * 1024
    except OSError:
        pass
    total = values.get("MemTotal")
    if total is None:
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError):
            total = None
    return total, values.get("MemAvailable")


def default_memory_budget() -> int | None:
    """A share (:data:`DEFAULT_MEMORY_SHARE`) of the machine's physical memory, None when the machine
    does not say. It depends on the machine only, not on what other processes hold at the start, so
    that two runs on one machine report the same bounds."""
    total, _available = machine_memory()
    return None if total is None else int(total * DEFAULT_MEMORY_SHARE)


def format_bytes(count: int) -> str:
    """``count`` bytes as people read them: ``512 MiB``, ``3.2 GiB``."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            value = count / size
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{count} B"
