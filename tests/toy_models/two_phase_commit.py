"""Two-phase commit with ``R`` resource managers: Lamport's ``TwoPhase`` spec, as in Stateright's example.

A transaction manager (TM) and resource managers (RMs) exchange messages kept in a set that only
grows (messages are never lost or consumed). Actions, in this order, for each RM where bound:

* ``TmRcvPrepared(rm)``: the TM, still in ``init``, receives ``Prepared(rm)`` and records the RM;
* ``TmCommit``: the TM, in ``init`` with every RM prepared, commits and sends ``Commit``;
* ``TmAbort``: the TM, in ``init``, aborts and sends ``Abort``;
* ``RmPrepare(rm)``: a working RM prepares and sends ``Prepared(rm)``;
* ``RmChooseToAbort(rm)``: a working RM aborts on its own;
* ``RmRcvCommitMsg(rm)`` / ``RmRcvAbortMsg(rm)``: an RM receives the TM's decision.

As in the TLA+ spec, receiving a message already acted on is still enabled and yields a successor
equal to its state (``TmRcvPrepared`` of an RM already recorded, ``RmRcvCommitMsg`` of a committed
RM): such transitions count as generated. The state counts are pinned in ``tests/test_bfs.py``
against an independent enumeration.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import NamedTuple

from explorer.contract import Evidence, Property, PropertyKind

WORKING, PREPARED, COMMITTED, ABORTED = "working", "prepared", "committed", "aborted"
TM_INIT = "init"

COMMIT_MSG = ("Commit", -1)
ABORT_MSG = ("Abort", -1)


class TwoPhaseState(NamedTuple):
    rm_state: tuple[str, ...]
    tm_state: str
    tm_prepared: frozenset[int]
    msgs: frozenset[tuple[str, int]]  # ("Prepared", rm), COMMIT_MSG, ABORT_MSG


class TwoPhaseAction(NamedTuple):
    name: str
    rm: int = -1


class TwoPhaseCommit:
    """Two-phase commit with ``rms`` resource managers."""

    def __init__(self, rms: int = 3) -> None:
        if rms < 1:
            raise ValueError(f"two-phase commit needs at least one resource manager, got {rms}")
        self.rms = tuple(range(rms))

    def init_states(self) -> Sequence[TwoPhaseState]:
        return [TwoPhaseState((WORKING,) * len(self.rms), TM_INIT, frozenset(), frozenset())]

    def actions(self, s: TwoPhaseState) -> Sequence[TwoPhaseAction]:
        enabled = []
        if s.tm_state == TM_INIT:
            enabled += [TwoPhaseAction("TmRcvPrepared", rm) for rm in self.rms if ("Prepared", rm) in s.msgs]
            if len(s.tm_prepared) == len(self.rms):
                enabled.append(TwoPhaseAction("TmCommit"))
            enabled.append(TwoPhaseAction("TmAbort"))
        for rm in self.rms:
            if s.rm_state[rm] == WORKING:
                enabled += [TwoPhaseAction("RmPrepare", rm), TwoPhaseAction("RmChooseToAbort", rm)]
            if COMMIT_MSG in s.msgs:
                enabled.append(TwoPhaseAction("RmRcvCommitMsg", rm))
            if ABORT_MSG in s.msgs:
                enabled.append(TwoPhaseAction("RmRcvAbortMsg", rm))
        return enabled

    def next_state(self, s: TwoPhaseState, action: TwoPhaseAction) -> TwoPhaseState:
        name, rm = action
        if name == "TmRcvPrepared":
            return s._replace(tm_prepared=s.tm_prepared | {rm})
        if name == "TmCommit":
            return s._replace(tm_state=COMMITTED, msgs=s.msgs | {COMMIT_MSG})
        if name == "TmAbort":
            return s._replace(tm_state=ABORTED, msgs=s.msgs | {ABORT_MSG})
        if name == "RmPrepare":
            return s._replace(rm_state=_set(s.rm_state, rm, PREPARED), msgs=s.msgs | {("Prepared", rm)})
        if name == "RmChooseToAbort":
            return s._replace(rm_state=_set(s.rm_state, rm, ABORTED))
        if name == "RmRcvCommitMsg":
            return s._replace(rm_state=_set(s.rm_state, rm, COMMITTED))
        if name == "RmRcvAbortMsg":
            return s._replace(rm_state=_set(s.rm_state, rm, ABORTED))
        raise ValueError(f"unknown two-phase commit action {action}")

    def properties(self) -> Sequence[Property]:
        return [
            Property("consistent", PropertyKind.ALWAYS, "no RM committed while another aborted", _consistent),
            Property("commit_agreement", PropertyKind.SOMETIMES, "every RM committed", _all(COMMITTED)),
            Property("abort_agreement", PropertyKind.SOMETIMES, "every RM aborted", _all(ABORTED)),
            Property(
                "committed_stays_committed",
                PropertyKind.ACTION_ALWAYS,
                "a committed RM never leaves the committed state",
                _committed_stays_committed,
            ),
        ]

    def within_boundary(self, state: TwoPhaseState) -> bool:
        return True

    def encode(self, s: TwoPhaseState) -> bytes:
        # Sets are sorted: their iteration order is not canonical.
        return repr((s.rm_state, s.tm_state, sorted(s.tm_prepared), sorted(s.msgs))).encode()

    def decode(self, data: bytes) -> TwoPhaseState:
        rm_state, tm_state, prepared, msgs = ast.literal_eval(data.decode())
        return TwoPhaseState(tuple(rm_state), tm_state, frozenset(prepared), frozenset(map(tuple, msgs)))

    def action_name(self, action: TwoPhaseAction) -> str:
        return action.name

    def describe_action(self, action: TwoPhaseAction) -> str:
        return f"{action.name}(rm{action.rm})" if action.rm >= 0 else action.name

    def describe_state(self, s: TwoPhaseState) -> Sequence[str]:
        return [
            *(f"rm{rm}: {state}" for rm, state in enumerate(s.rm_state)),
            f"tm: {s.tm_state}",
            f"tm_prepared: {sorted(s.tm_prepared)}",
            f"msgs: {sorted(s.msgs)}",
        ]

    def describe_changes(self, prev: TwoPhaseState, next_: TwoPhaseState) -> Sequence[str]:
        before, after = self.describe_state(prev), self.describe_state(next_)
        return [f"{a} -> {b.split(': ', 1)[1]}" for a, b in zip(before, after, strict=True) if a != b]


def _set(values: tuple[str, ...], index: int, value: str) -> tuple[str, ...]:
    return (*values[:index], value, *values[index + 1 :])


def _consistent(s: TwoPhaseState) -> Evidence | None:
    if COMMITTED in s.rm_state and ABORTED in s.rm_state:
        return {"rm_state": list(s.rm_state)}
    return None


def _all(rm_state: str) -> Callable[[TwoPhaseState], Evidence | None]:
    def check(s: TwoPhaseState) -> Evidence | None:
        return {"rm_state": list(s.rm_state)} if all(r == rm_state for r in s.rm_state) else None

    return check


def _committed_stays_committed(prev: TwoPhaseState, action: TwoPhaseAction, next_: TwoPhaseState) -> Evidence | None:
    for rm, (before, after) in enumerate(zip(prev.rm_state, next_.rm_state, strict=True)):
        if before == COMMITTED and after != COMMITTED:
            return {"rm": rm, "now": after}
    return None
