"""The model's hot modules compiled with mypyc beside the same modules interpreted: build time, CPU seconds and
the same search on both.

Copies the project's tracked files twice into a scratch directory, applies to both copies the few edits mypyc
needs (:data:`PATCHES`; the project's sources are left as they are), compiles the chosen modules with mypyc in
one copy, then runs the same search in each copy in turn, each in a process of its own, and prints the CPU
seconds (user + system, the OS's accounting of the finished process) of every run and the ratio compiled/pure
pair by pair. Two searches:

* ``explore`` (default): ``kmc explore SCENARIO --engine local --max-states N`` (the engine, the properties,
  the model, the codec); the two copies must find the same distinct and generated counts and the same
  discoveries (their traces' fingerprints), else exit 1.
* ``bfs``: a plain breadth-first loop over the model's ``next_state`` and codec (no engine, no properties) with
  ``--memo-entries`` as the transition memos' bound (0: every step taken in full); the two copies must give the
  same digest of every state's encoding in the order found, else exit 1.

    python bench/mypyc_trial.py [--modules GROUP ...] [--states 60000] [--rounds 3] [--search explore|bfs]
        [--memo-entries N] [--keep DIR]

Needs gcc and the Python headers (mypyc is in the test extra). Figures and what stands in the way of shipping a
compiled build: the project README's performance section.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The modules mypyc compiles, by group (``--modules``); the codec's and the step's generated functions
#: (``schema.define_functions``) stay interpreted whatever is compiled.
GROUPS = {
    "codec": ["model/zk/state/codec.py"],
    "step": ["model/zk/state/step.py"],
    "memo": ["model/zk/transition_memo.py", "model/zk/kafka_model.py"],
    "environment": ["model/zk/actions.py", "model/zk/environment/environment.py",
                    "model/zk/environment/partition_leader.py"],
    "engine": ["explorer/expand.py", "invariants/kafka_properties.py"],
}

#: (file, text, replacement): what mypyc needs and the interpreter does not. A class attribute read through the
#: class is declared ClassVar; a local first assigned None is annotated; an attrs field's default is typed Any,
#: because mypyc checks the value assigned in a class body against the default's static type and attrs.field
#: returns its own marker object at run time; Step stays a Python class (native_class=False), because its thawed
#: fields are descriptors set on the class after it is made and kept in the instance's __dict__.
PATCHES = [
    ("model/zk/transition_memo.py", "from __future__ import annotations\n",
     "from __future__ import annotations\n\nfrom typing import ClassVar, cast\n"),
    ("model/zk/transition_memo.py", "    kinds = frozenset((ActionKind.BrokerApplyRequest,",
     "    kinds: ClassVar[frozenset[ActionKind]] = frozenset((ActionKind.BrokerApplyRequest,"),
    ("model/zk/transition_memo.py", "    kinds = frozenset((ActionKind.ControllerProcessEvent,",
     "    kinds: ClassVar[frozenset[ActionKind]] = frozenset((ActionKind.ControllerProcessEvent,"),
    ("model/zk/transition_memo.py", "        broker = None\n", "        broker: BrokerState | None = None\n"),
    ("model/zk/transition_memo.py", "attrs.field(default=(), eq=False, repr=False)",
     "attrs.field(default=cast(Any, ()), eq=False, repr=False)"),
    ("explorer/expand.py", "from __future__ import annotations\n",
     "from __future__ import annotations\n\nfrom typing import cast\n"),
    ("explorer/expand.py", "attrs.field(default=None, eq=False)", "attrs.field(default=cast(Any, None), eq=False)"),
    ("model/zk/state/step.py", "\nclass Step:\n",
     "\nfrom mypy_extensions import mypyc_attr\n\n\n@mypyc_attr(native_class=False)\nclass Step:\n"),
]


def copy_tree(dest: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for name in filter(None, files.decode().split("\0")):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    for name, text, replacement in PATCHES:
        path = dest / name
        content = path.read_text()
        if text not in content:
            raise SystemExit(f"{name} no longer holds {text.strip()!r}: update PATCHES in {Path(__file__).name}")
        path.write_text(content.replace(text, replacement, 1))
    shutil.copy2(Path(__file__), dest / "bench" / Path(__file__).name)  # the bfs search's child, tracked or not


def run(command: list[str], cwd: Path) -> tuple[float, float, bytes]:
    """Wall and CPU seconds (user + system) of the finished process, and what it printed."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=subprocess.DEVNULL,
                                   env={**os.environ, "PYTHONPATH": str(cwd)})
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - start
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, out.read()


def child_bfs(scenario_name: str, states: int, memo_entries: int) -> None:
    """The ``bfs`` search, in the copy this process imports from: prints its counts and digest as JSON."""
    from kmc.compose import resolve_scenario
    from model.zk.kafka_model import KafkaControllerModel

    model = KafkaControllerModel(resolve_scenario(scenario_name), memo_entries=memo_entries)
    digest = hashlib.sha256()
    seen: set[bytes] = set()
    frontier: deque[bytes] = deque()
    for state in model.init_states():
        data = model.encode(state)
        if data not in seen:
            seen.add(data)
            frontier.append(data)
            digest.update(data)
    generated = 0
    while frontier and len(seen) < states:
        state = model.decode(frontier.popleft())
        for action in model.actions(state):
            child = model.next_state(state, action)
            if child is None:
                continue
            generated += 1
            data = model.encode(child)
            if data not in seen:
                seen.add(data)
                frontier.append(data)
                digest.update(data)
    compiled = sorted(name for name, module in sys.modules.items()
                      if name.split(".")[0] in ("model", "explorer", "invariants")
                      and str(getattr(module, "__file__", "")).endswith(".so"))
    print(json.dumps({"distinct": len(seen), "generated": generated, "digest": digest.hexdigest(),
                      "compiled": compiled}))


def outcome(search: str, output: bytes) -> object:
    """What both copies must agree on."""
    result = json.loads(output)
    if search == "bfs":
        return result["distinct"], result["generated"], result["digest"]
    stats = result["statistics"]
    return (stats["distinct"], stats["generated"], stats["depth"],
            sorted((d["property"], tuple(d.get("fingerprints", ()))) for d in result["discoveries"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="+", choices=sorted(GROUPS), default=sorted(GROUPS))
    parser.add_argument("--scenario", default="default")
    parser.add_argument("--states", type=int, default=60_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--search", choices=("explore", "bfs"), default="explore")
    parser.add_argument("--memo-entries", type=int, default=1 << 15)
    parser.add_argument("--keep", type=Path, help="build in this directory and keep it (default: a temporary one)")
    parser.add_argument("--child-bfs", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_bfs:
        child_bfs(args.scenario, args.states, args.memo_entries)
        return

    scratch = args.keep or Path(tempfile.mkdtemp(prefix="kmc-mypyc-"))
    trees = {"pure": scratch / "pure", "compiled": scratch / "compiled"}
    for tree in trees.values():
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        copy_tree(tree)
    modules = [m for group in args.modules for m in GROUPS[group]]
    wall, cpu, output = run([sys.executable, "-m", "mypyc", *modules], trees["compiled"])
    built = [p for p in trees["compiled"].glob("**/*.so") if "build" not in p.relative_to(trees["compiled"]).parts]
    print(f"mypyc {len(modules)} modules: {wall:.1f} s wall, {cpu:.1f} s CPU, {len(built)} extension files")
    if not built:
        raise SystemExit(output.decode(errors="replace")[-3000:])

    if args.search == "bfs":
        command = [sys.executable, "bench/mypyc_trial.py", "--child-bfs", "--scenario", args.scenario,
                   "--states", str(args.states), "--memo-entries", str(args.memo_entries)]
    else:
        command = [sys.executable, "-m", "kmc", "explore", args.scenario, "--engine", "local", "--max-states",
                   str(args.states), "--no-progress", "--format", "json", "--out", str(scratch / "runs")]
    cpu_s: dict[str, list[float]] = {"pure": [], "compiled": []}
    results: dict[str, object] = {}
    for round_ in range(args.rounds + 1):  # round 0 warms the file cache and is not counted
        for name, tree in trees.items():
            wall, cpu, output = run(command, tree)
            result = outcome(args.search, output)
            if results.setdefault(name, result) != result:
                raise SystemExit(f"{name}: a run gave another result than the first")
            if round_:
                cpu_s[name].append(cpu)
                print(f"round {round_} {name:9} {cpu:7.2f} CPU s {wall:7.2f} wall s")
    if results["pure"] != results["compiled"]:
        print("compiled and pure differ:", results["compiled"], results["pure"])
        raise SystemExit(1)
    ratios = [c / p for c, p in zip(cpu_s["compiled"], cpu_s["pure"], strict=True)]
    print(f"{args.search}, {args.scenario}, {args.states} states, modules {' '.join(args.modules)}: "
          f"pure {statistics.median(cpu_s['pure']):.2f} CPU s, compiled {statistics.median(cpu_s['compiled']):.2f}; "
          f"compiled/pure pair by pair {' '.join(f'{r:.3f}' for r in ratios)} (median "
          f"{statistics.median(ratios):.3f}); same counts and {'digest' if args.search == 'bfs' else 'discoveries'}")
    if not args.keep:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
