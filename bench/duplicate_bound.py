"""The bound on making duplicate successors cheap: the local search when a transition to a state already generated costs
nothing, beside the search as it is.

Most of what the Kafka model's search generates it has generated before: on the default scenario 898,707 transitions
reach 326,744 distinct states, so about two transitions in three make a successor, encode it, hash it and check the
transition properties on it only for the engine to find its fingerprint among the states already seen. Every lever
that makes such a duplicate cheaper (a state of part numbers, a fingerprint worked out from the parent's and the
step's, a transition check decided from the step's effect) is bounded by the search in which a duplicate costs
nothing at all. This measures that search. It runs the scenario's local breadth-first search once as it is and records,
for every action of every state expanded, in the order the search takes them, the successor's fingerprint and the
length of its bytes (``record``). Then each search below runs in a fresh process with the same engine
(``explorer.bfs``), whose expansion knows from the record, before it takes an action, whether the successor was
generated before in the run (its fingerprint among those of the states generated so far):

``free``
    a duplicate is a row with its recorded fingerprint and no step at all: no ``next_state``, no encoding, no hash, no
    transition check;
``keyed``
    a duplicate takes ``next_state`` with the memos' effects not applied: a memo's hit finds its effect (the key worked
    out from the state, the look-ups) and hands the state back; a miss, and a step no memo covers, is taken in full;
``stepped``
    a duplicate takes ``next_state`` (the memos' hit, or the step in full on a miss), and nothing after it;
``checked``
    a duplicate takes ``next_state`` and the transition checks, but is not encoded or hashed.

Every successor first generated is made, encoded, hashed and checked as the search does, and its fingerprint must be the
recorded one (else exit 1: the record is out of step); the distinct and generated counts must be the recorded run's
(else exit 1). A duplicate's row carries the bytes of the same state when the level made them, else bytes of the
recorded length (never kept: the engine drops a row whose state was visited), so that the engine de-duplicates at the
same moments as in the recorded run and expands each level's states in the same order (the order of a level's
packed blocks depends on when de-duplications ran). The expansion's own look-ups (the record, the fingerprints
generated so far, the level's new states) are charged to the bound's searches, not to the search as it is.

    python bench/duplicate_bound.py [--scenario default] [--rounds 2]

CPU seconds of each whole search, the searches alternating round by round, medians printed, and what a duplicate costs
as it is, split into finding its effect, applying it, the transition checks and the encoding with its hash. Figures:
docs/performance.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from array import array
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from explorer import bfs  # noqa: E402
from explorer.expand import ActionNames, BatchExpansion, Finding, PropertySet, _by_trigger, expand_batch  # noqa: E402
from explorer.fingerprint import fingerprint_array  # noqa: E402
from kmc import compose  # noqa: E402
from model.zk import transition_memo  # noqa: E402

#: The searches with an oracle, in the order each round runs them (the search as it is, ``as-is``, first).
BOUNDED = ("free", "keyed", "stepped", "checked")
SEARCHES = ("as-is", *BOUNDED)
FINGERPRINT_BITS = 64
NO_SUCCESSOR = -1  # the recorded length of an action that gave no successor


class Record:
    """Each action's successor, in the order the search took them: its fingerprint (8 bytes each, in ``digests``) and
    the length of its bytes (``NO_SUCCESSOR`` when the action gave none)."""

    def __init__(self) -> None:
        self.digests = bytearray()
        self.lengths = array("i")

    def dump(self, path: Path) -> None:
        path.write_bytes(pickle.dumps((bytes(self.digests), self.lengths)))

    @classmethod
    def load(cls, path: Path) -> Record:
        record = cls()
        digests, record.lengths = pickle.loads(path.read_bytes())
        record.digests = bytearray(digests)
        return record

    def entries(self) -> Iterator[tuple[bytes, int]]:
        digests = bytes(self.digests)
        for index, length in enumerate(self.lengths):
            yield digests[index * 8 : index * 8 + 8], length


class _Recording:
    """The model, with each successor's fingerprint and length recorded as ``next_state`` gives it (its bytes are
    worked out once more here: the recorded search is not timed)."""

    def __init__(self, model: Any, record: Record) -> None:
        self._model = model
        self._record = record

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def next_state(self, state: Any, action: Any) -> Any:
        child = self._model.next_state(state, action)
        if child is None:
            self._record.digests += bytes(8)
            self._record.lengths.append(NO_SUCCESSOR)
        else:
            data = self._model.encode(child)
            self._record.digests += hashlib.blake2b(data, digest_size=FINGERPRINT_BITS // 8).digest()
            self._record.lengths.append(len(data))
        return child


def _effects_applied_unless(bounded: _Bounded) -> None:
    """Each memo's ``_apply`` handing back the state it is given while ``bounded.key_only`` (a hit then costs what
    finding its effect costs), else applying the effect; a situation's first step (``_watched_step``, which applies the
    effect it stores to check it) is taken as it is."""
    for memo in (transition_memo.BrokerStepMemo, transition_memo.ControllerStepMemo,
                 transition_memo.EnvironmentStepMemo):
        apply = memo.__dict__["_apply"]
        if isinstance(apply, staticmethod):
            def static(*args: Any, apply: Any = apply.__func__) -> Any:
                return args[0] if bounded.key_only else apply(*args)

            memo._apply = staticmethod(static)  # type: ignore[method-assign,assignment]
        else:
            def method(self: Any, *args: Any, apply: Any = apply) -> Any:
                return args[0] if bounded.key_only else apply(self, *args)

            memo._apply = method  # type: ignore[method-assign]

        def watched(self: Any, *args: Any, step: Any = memo.__dict__["_watched_step"]) -> Any:
            key_only, bounded.key_only = bounded.key_only, False
            try:
                return step(self, *args)
            finally:
                bounded.key_only = key_only

        memo._watched_step = watched  # type: ignore[method-assign]


class OutOfStep(Exception):
    """The search made a successor other than the recorded one."""


class _Bounded:
    """The expansion of :func:`explorer.expand.expand_batch` with the record as its oracle (see the module docstring):
    the state properties are checked by ``expand_batch`` itself; the actions are taken here."""

    def __init__(self, search: str, record: Record, initial: Iterable[bytes]) -> None:
        self.search = search
        self.entries = record.entries()
        self.seen: set[bytes] = set(initial)
        self.level_new: dict[bytes, tuple[bytes, Any]] = {}
        self.pads: dict[int, tuple[bytes, Any]] = {}
        self.duplicates = 0
        self.key_only = False  # the memos' effects not applied (``keyed``: :func:`_effects_applied_unless`)

    def expand_batch(self, model: Any, states: Iterable[Any], properties: PropertySet, names: ActionNames, *,
                     generate: bool = True, skip: frozenset[str] = frozenset(), fingerprint_bits: int = 64,
                     keep_children: bool = False) -> BatchExpansion:
        states = list(states)
        checked = expand_batch(model, states, properties, names, generate=False, skip=skip,
                               fingerprint_bits=fingerprint_bits)
        if not generate:
            return checked
        on_transition = _by_trigger(tuple(p for p in properties.on_transition if p.name not in skip))
        rank = {p.name: i for i, p in enumerate(properties.on_state + properties.on_transition)}
        search, seen, level_new, pads, entries = self.search, self.seen, self.level_new, self.pads, self.entries
        encode, next_state, action_name = model.encode, model.next_state, model.action_name
        data: list[bytes] = []
        digests: list[bytes] = []
        codes = array("i")
        children: list[Any] | None = [] if keep_children else None
        parents = array("i")
        indices = array("i")
        findings = list(checked.findings)
        for position, state in enumerate(states):
            if not model.within_boundary(state):
                continue
            for index, action in enumerate(model.actions(state)):
                digest, length = next(entries)
                if length == NO_SUCCESSOR:
                    if search != "free" and next_state(state, action) is not None:
                        raise OutOfStep(f"{action!r} of state {position} gave a successor; the record has none")
                    continue
                if digest in seen:
                    self.duplicates += 1
                    first = level_new.get(digest)
                    if first is None:
                        first = pads.get(length)
                        if first is None:
                            first = pads[length] = (bytes(length), None)
                    if search == "keyed":
                        self.key_only = True
                        next_state(state, action)
                        self.key_only = False
                    elif search != "free":
                        child = next_state(state, action)
                        if search == "checked":
                            findings += self._checked(on_transition, rank, state, action, child, position, index,
                                                      digest)
                    encoded, child = first
                else:
                    child = next_state(state, action)
                    encoded = encode(child)
                    if hashlib.blake2b(encoded, digest_size=fingerprint_bits // 8).digest() != digest:
                        raise OutOfStep(f"{action!r} of state {position} made another successor than the record's")
                    seen.add(digest)
                    level_new[digest] = (encoded, child)
                    findings += self._checked(on_transition, rank, state, action, child, position, index, digest)
                data.append(encoded)
                digests.append(digest)
                codes.append(names[action_name(action)])
                parents.append(position)
                indices.append(index)
                if children is not None:
                    children.append(child)
        return BatchExpansion(child_fingerprints=fingerprint_array(digests, fingerprint_bits),
                              parents=np.frombuffer(parents, dtype=np.int32),
                              action_indices=np.frombuffer(indices, dtype=np.int32),
                              action_codes=np.frombuffer(codes, dtype=np.int32), data=data,
                              findings=tuple(findings), children=children)

    @staticmethod
    def _checked(groups: Any, rank: dict[str, int], state: Any, action: Any, child: Any, position: int, index: int,
                 digest: bytes) -> list[tuple[int, Finding]]:
        found = [(prop, evidence) for trigger, props in groups if trigger is None or trigger(state, action, child)
                 for prop in props if (evidence := prop.check(state, action, child)) is not None]
        found.sort(key=lambda f: rank[f[0].name])
        child_fp = int.from_bytes(digest, "little", signed=True)
        return [(position, Finding(prop.name, evidence, index, child_fp)) for prop, evidence in found]


def child(search: str, scenario: str, record_path: Path) -> None:
    """One search in this process, its figures as one JSON line on stdout (``record``: the search as it is,
    recorded)."""
    model = compose.factory_for(compose.resolve_scenario(scenario))()
    figures: dict[str, Any] = {}
    if search == "record":
        record = Record()
        searched: Any = _Recording(model, record)
    else:
        searched = model
    if search in BOUNDED:
        bounded = _Bounded(search, Record.load(record_path),
                           (hashlib.blake2b(model.encode(s), digest_size=FINGERPRINT_BITS // 8).digest()
                            for s in model.init_states()))
        bfs.expand_batch = bounded.expand_batch
        expand_level = bfs._Search._expand_level

        def level(self: Any, *args: Any, **kwargs: Any) -> Any:
            bounded.level_new.clear()
            return expand_level(self, *args, **kwargs)

        bfs._Search._expand_level = level  # type: ignore[method-assign]
        if search == "keyed":
            _effects_applied_unless(bounded)
    started = time.process_time()
    try:
        result = bfs.run_bfs(searched)
    except OutOfStep as e:
        print(json.dumps({"error": f"the record is out of step: {e}"}))
        return
    figures["cpu_seconds"] = time.process_time() - started
    stats = result.stats
    figures.update(distinct=stats.distinct, generated=stats.generated, initial=len(model.init_states()),
                   outcome=result.outcome.value)
    if search == "record":
        record.dump(record_path)
    if search in BOUNDED:
        figures["duplicates"] = bounded.duplicates
    print(json.dumps(figures))


def _run(search: str, scenario: str, record_path: Path) -> dict[str, Any]:
    command = [sys.executable, str(Path(__file__).resolve()), "--child", search, scenario, str(record_path)]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{search} on {scenario} failed:\n{out.stderr[-2000:]}")
    figures: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", default="default", help="a scenario name or file (default: default)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], args.child[1], Path(args.child[2]))
        return 0
    if args.rounds < 1:
        parser.error(f"--rounds {args.rounds}: give a positive number of rounds")
    with tempfile.TemporaryDirectory(prefix="kmc-duplicate-bound-") as scratch:
        record_path = Path(scratch) / "record"
        recorded = _run("record", args.scenario, record_path)
        seconds: dict[str, list[float]] = {search: [] for search in SEARCHES}
        duplicates = 0
        for _ in range(args.rounds):
            for search in SEARCHES:
                figures = _run(search, args.scenario, record_path)
                if "error" in figures:
                    print(f"{search}: {figures['error']}")
                    return 1
                if (figures["distinct"], figures["generated"]) != (recorded["distinct"], recorded["generated"]):
                    print(f"{search}: {figures['distinct']} distinct and {figures['generated']} generated, the record "
                          f"{recorded['distinct']} and {recorded['generated']}")
                    return 1
                seconds[search].append(figures["cpu_seconds"])
                duplicates = figures.get("duplicates", duplicates)
    medians = {search: statistics.median(values) for search, values in seconds.items()}
    # The engine counts the initial states as generated, as TLC does.
    transitions = recorded["generated"] - recorded["initial"]
    print(f"{args.scenario}: {recorded['distinct']:,} distinct states, {transitions:,} transitions, "
          f"{duplicates:,} of them to a state generated before")
    for search in SEARCHES:
        rounds = ", ".join(f"{t:.2f}" for t in seconds[search])
        print(f"{search:>8}: {medians[search]:.2f} s CPU, {medians['as-is'] / medians[search]:.2f}x (rounds: {rounds})")
    per = 1e6 / max(duplicates, 1)
    key = medians["keyed"] - medians["free"]
    built = medians["stepped"] - medians["keyed"]
    checks = medians["checked"] - medians["stepped"]
    encoding = medians["as-is"] - medians["checked"]
    print(f"a duplicate as it is: {(medians['as-is'] - medians['free']) * per:.1f} us (the step "
          f"{(key + built) * per:.1f}: finding its effect {key * per:.1f}, applying it {built * per:.1f}; "
          f"the transition checks {checks * per:.1f}; encoding and hashing {encoding * per:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
