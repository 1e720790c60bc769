"""The port of the TLA+ toy controller does exactly TLC's work (the benchmark's "same work, same numbers")."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
from pathlib import Path

import pytest
from toy_models.kafka_controller_toy import (
    MC,
    MC_STUCK,
    NONE,
    KafkaControllerToy,
    OfflinePartition,
    OnlinePartition,
    ToyConfig,
    ToyState,
)

from explorer.bfs import run_bfs
from explorer.replay import replay_states
from explorer.results import ExplorationResult, Outcome

#: TLC on MC.cfg (bench/tla/README.md): successors generated per action (-coverage).
TLC_GENERATED_PER_ACTION = {
    "CreateTopic": 210,
    "InitialElection": 8_758,
    "BrokerFailure": 112_456,
    "BrokerStartup": 87_235,
    "ElectLeader": 9_947,
    "IsrShrink": 8_829,
    "IsrExpand": 12_578,
    "StartDeleteTopic": 15_501,
    "DeletionSucceeded": 257_808,
    "RetryIneligible": 98_586,
    "CompleteDeletion": 2_107,
}


@pytest.fixture(scope="module")
def mc_result() -> ExplorationResult:
    return run_bfs(KafkaControllerToy(MC))


def test_mc_matches_tlc_counts(mc_result: ExplorationResult) -> None:
    """MC.cfg: 168,927 distinct states, 614,016 generated (incl. the initial state), depth 28, as TLC."""
    stats = mc_result.stats
    assert (stats.distinct, stats.generated, stats.depth) == (168_927, 614_016, 28)
    assert stats.queue == 0


def test_mc_matches_tlc_coverage(mc_result: ExplorationResult) -> None:
    """MC.cfg: successors generated per action are TLC's -coverage numbers."""
    assert {a.name: a.generated for a in mc_result.stats.actions} == TLC_GENERATED_PER_ACTION
    assert sum(a.distinct for a in mc_result.stats.actions) == mc_result.stats.distinct - 1


def test_mc_invariants_and_epoch_monotonic_hold(mc_result: ExplorationResult) -> None:
    """The five invariants and EpochMonotonic hold on MC.cfg."""
    assert mc_result.outcome is Outcome.OK
    assert mc_result.discoveries == ()
    assert mc_result.never_found == ()


def test_stuck_offline_has_a_four_step_counterexample(mc_result: ExplorationResult) -> None:
    """MC_stuck.cfg: NeverStuckOffline fails with a shortest trace of 4 steps, after the level is finished."""
    result = run_bfs(KafkaControllerToy(MC_STUCK))
    assert result.outcome is Outcome.VIOLATION
    [violation] = result.violations
    assert violation.property == "NeverStuckOffline"
    assert violation.trace_length == 4
    # The search stops after finishing depth 4, with depth 5 generated: the distinct states known
    # after level 4 of the complete MC search (TLC stops at once and reports 87).
    assert result.stats.distinct == mc_result.stats.levels[4].distinct_total == 452
    assert result.stats.depth == 5


def take(model: KafkaControllerToy, state: ToyState, action: str) -> ToyState:
    """The successor of ``state`` by the enabled action described as ``action`` (``BrokerFailure(b1)``)."""
    [chosen] = [a for a in model.actions(state) if model.describe_action(a) == action]
    successor = model.next_state(state, chosen)
    assert successor is not None
    return successor


def walk(model: KafkaControllerToy, *actions: str) -> ToyState:
    [state] = model.init_states()
    for action in actions:
        state = take(model, state, action)
    return state


def test_initial_election_chooses_the_first_live_replica() -> None:
    """InitialElection(p1) with b1 down makes b2 (the next in p1's assignment) leader, ISR = live replicas."""
    model = KafkaControllerToy(MC)
    state = walk(model, "BrokerFailure(b1)", "CreateTopic", "InitialElection(p1)")
    assert state.leader[0] == 2
    assert model.broker_names(state.isr[0]) == ["b2", "b3"]
    assert state.pstate[0] == OnlinePartition


def test_elect_leader_has_one_successor_per_isr_choice() -> None:
    """ElectLeader(p1) offers one action per live, online ISR member, as TLC's \\E b \\in isr[p]."""
    model = KafkaControllerToy(MC)
    state = walk(model, "CreateTopic", "InitialElection(p1)", "BrokerFailure(b1)")
    assert state.pstate[0] == OfflinePartition and state.leader[0] == NONE
    elections = [model.describe_action(a) for a in model.actions(state) if a.name == "ElectLeader"]
    assert elections == ["ElectLeader(p1, b2)", "ElectLeader(p1, b3)"]


def test_broker_failure_keeps_the_last_isr_member() -> None:
    """The controller removes a dead broker from the ISR unless it is the last member."""
    model = KafkaControllerToy(MC)
    state = walk(model, "CreateTopic", "InitialElection(p2)", "IsrShrink(p2, b3)", "BrokerFailure(b2)")
    assert model.broker_names(state.isr[1]) == ["b2"]
    assert state.pstate[1] == OfflinePartition


def test_states_survive_encode_and_decode() -> None:
    """decode(encode(s)) == s along a counterexample, so Spark workers can ship toy states."""
    model = KafkaControllerToy(MC_STUCK)
    [violation] = run_bfs(model).violations
    for state in replay_states(model, violation.path, violation.action_indices):
        assert model.decode(model.encode(state)) == state


def test_unknown_invariant_is_rejected() -> None:
    """A config naming an invariant the toy does not have is refused, listing the known ones."""
    with pytest.raises(ValueError, match="unknown invariants \\['Typo'\\]"):
        ToyConfig(assignment=((1,),), invariants=("Typo",))


# ---- the TLA+ specification shipped in bench/tla ---------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
TLA_DIR = ROOT / "bench" / "tla"


def test_the_tla_specification_and_its_configs_ship_in_the_checkout() -> None:
    """bench/run.py reads the TLA+ toy from bench/tla in the checkout, which holds the specification, the MC and
    MC3 modules and the three configs; no file of the benchmarks or the toy port names a path of another machine."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    bench_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_run)
    assert bench_run.TOY_SPEC_DIR == TLA_DIR
    for name in ("KafkaControllerToy.tla", "MC.tla", "MC3.tla", "MC.cfg", "MC3.cfg", "MC_stuck.cfg"):
        assert (TLA_DIR / name).is_file(), name
    sources = [*(ROOT / "bench").rglob("*.py"), *(ROOT / "tests" / "toy_models").glob("*.py"),
               *(ROOT / "bench").rglob("*.md")]
    assert [str(p) for p in sources if re.search(r"(?<![\w.])/(work|home|Users)/", p.read_text())] == []


def run_tlc(config: str, module: str, scratch: Path) -> str:
    """TLC's output on ``bench/tla``'s ``config`` with one worker, run in a scratch copy of the folder."""
    jar = os.environ.get("KMC_TLA2TOOLS")
    if not jar:
        pytest.skip("set KMC_TLA2TOOLS to tla2tools.jar (bench/tla/README.md) to run TLC")
    for path in TLA_DIR.iterdir():
        (scratch / path.name).write_text(path.read_text())
    done = subprocess.run(["java", "-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", "1", "-deadlock",
                           "-coverage", "60", "-metadir", str(scratch / "states"), "-config", config, module],
                          cwd=scratch, capture_output=True, text=True, timeout=1800, check=False)
    return done.stdout


def tlc_counts(output: str) -> tuple[int, int]:
    """(distinct states, states generated) of TLC's last statistics line."""
    [*_, (generated, distinct)] = re.findall(r"([\d,]+) states generated, ([\d,]+) distinct states found", output)
    return int(distinct.replace(",", "")), int(generated.replace(",", ""))


@pytest.mark.slow
def test_tlc_on_bench_tla_mc_does_the_ports_work(mc_result: ExplorationResult, tmp_path: Path) -> None:
    """TLC on bench/tla's MC.cfg finds no error and the port's distinct states, states generated, depth and
    successors generated per action."""
    output = run_tlc("MC.cfg", "MC.tla", tmp_path)
    assert "Model checking completed. No error has been found." in output
    stats = mc_result.stats
    assert tlc_counts(output) == (stats.distinct, stats.generated)
    assert f"The depth of the complete state graph search is {stats.depth}." in output
    final_coverage = output[output.rindex("<Init line"):]
    per_action = {name: int(generated)
                  for name, generated in re.findall(r"<(\w+) line .*?>: \d+:(\d+)", final_coverage)}
    assert {name: per_action[name] for name in TLC_GENERATED_PER_ACTION} == {
        a.name: a.generated for a in stats.actions}


@pytest.mark.slow
def test_tlc_on_bench_tla_mc_stuck_finds_the_ports_four_step_trace(tmp_path: Path) -> None:
    """TLC on bench/tla's MC_stuck.cfg finds NeverStuckOffline violated by a 4-step trace, as the port does."""
    output = run_tlc("MC_stuck.cfg", "MC.tla", tmp_path)
    assert "Invariant NeverStuckOffline is violated." in output
    steps = re.findall(r"^State \d+: <(\w+) line", output, re.MULTILINE)
    assert steps == ["CreateTopic", "InitialElection", "BrokerFailure", "BrokerFailure"]
    [violation] = run_bfs(KafkaControllerToy(MC_STUCK)).violations
    assert violation.trace_length == len(steps) == 4
