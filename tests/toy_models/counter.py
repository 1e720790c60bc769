"""Two counters, each from 0 to ``n``, incremented one at a time: numbers you can work out by hand.

States are pairs ``(x, y)``; the actions of a state are ``IncX`` then ``IncY``, each enabled while
its counter is below ``n``. So there are ``(n+1)²`` distinct states, ``2·n·(n+1)`` transitions
(plus the initial state: ``1 + 2·n·(n+1)`` states generated, TLC's count) and ``2n+1`` BFS levels;
the states at depth ``d`` are those with ``x + y = d``.

Properties (by name):

* ``sum_below_limit`` (always, only with ``sum_limit``): ``x + y < sum_limit``; the shortest
  violation is ``sum_limit`` steps long.
* ``inc_x_while_y_below_limit`` (action always, only with ``inc_x_y_limit``): ``IncX`` is not taken
  in a state where ``y >= inc_x_y_limit``; the shortest violation is ``inc_x_y_limit + 1`` steps.
* ``x_reaches_n`` (sometimes): first found at depth ``n``.
* ``corner_by_inc_y`` (action sometimes): an ``IncY`` into ``(n, n)``; first found at depth ``2n``.
* ``y_exceeds_n`` (sometimes): never satisfied, so reported as never found.
"""

from __future__ import annotations

from collections.abc import Sequence

from explorer.contract import Evidence, Property, PropertyKind

Counters = tuple[int, int]

INC_X = "IncX"
INC_Y = "IncY"


class Counter:
    """The two-counter model; see the module docstring for its numbers."""

    def __init__(self, n: int = 3, *, sum_limit: int | None = None, inc_x_y_limit: int | None = None) -> None:
        if not 0 <= n <= 255:
            raise ValueError(f"n must be between 0 and 255 (one byte per counter), got {n}")
        self.n = n
        self.sum_limit = sum_limit
        self.inc_x_y_limit = inc_x_y_limit

    def init_states(self) -> Sequence[Counters]:
        return [(0, 0)]

    def actions(self, state: Counters) -> Sequence[str]:
        x, y = state
        return [a for a, enabled in ((INC_X, x < self.n), (INC_Y, y < self.n)) if enabled]

    def next_state(self, state: Counters, action: str) -> Counters | None:
        x, y = state
        return (x + 1, y) if action == INC_X else (x, y + 1)

    def properties(self) -> Sequence[Property]:
        selected = []
        if self.sum_limit is not None:
            selected.append(
                Property("sum_below_limit", PropertyKind.ALWAYS, "x + y stays below the limit", self._sum_below)
            )
        if self.inc_x_y_limit is not None:
            selected.append(
                Property(
                    "inc_x_while_y_below_limit",
                    PropertyKind.ACTION_ALWAYS,
                    "IncX is only taken while y is below the limit",
                    self._inc_x_while_y_below,
                )
            )
        selected += [
            Property("x_reaches_n", PropertyKind.SOMETIMES, "x reaches n", self._x_reaches_n),
            Property("corner_by_inc_y", PropertyKind.ACTION_SOMETIMES, "IncY reaches (n, n)", self._corner_by_inc_y),
            Property("y_exceeds_n", PropertyKind.SOMETIMES, "y exceeds n (impossible)", self._y_exceeds_n),
        ]
        return selected

    def within_boundary(self, state: Counters) -> bool:
        return True

    def encode(self, state: Counters) -> bytes:
        return bytes(state)

    def decode(self, data: bytes) -> Counters:
        return (data[0], data[1])

    def action_name(self, action: str) -> str:
        return action

    def describe_action(self, action: str) -> str:
        return action

    def describe_changes(self, prev: Counters, next_: Counters) -> Sequence[str]:
        return [f"{name}: {a} -> {b}" for name, a, b in zip("xy", prev, next_, strict=True) if a != b]

    def describe_state(self, state: Counters) -> Sequence[str]:
        return [f"x = {state[0]}", f"y = {state[1]}"]

    def _sum_below(self, state: Counters) -> Evidence | None:
        assert self.sum_limit is not None
        x, y = state
        return None if x + y < self.sum_limit else {"x": x, "y": y, "limit": self.sum_limit}

    def _inc_x_while_y_below(self, prev: Counters, action: str, next_: Counters) -> Evidence | None:
        assert self.inc_x_y_limit is not None
        if action == INC_X and prev[1] >= self.inc_x_y_limit:
            return {"y": prev[1], "limit": self.inc_x_y_limit}
        return None

    def _x_reaches_n(self, state: Counters) -> Evidence | None:
        return {"x": state[0]} if state[0] == self.n else None

    def _corner_by_inc_y(self, prev: Counters, action: str, next_: Counters) -> Evidence | None:
        return {"corner": list(next_)} if action == INC_Y and next_ == (self.n, self.n) else None

    def _y_exceeds_n(self, state: Counters) -> Evidence | None:
        return {"y": state[1]} if state[1] > self.n else None
