"""The 34 collective-fabric properties (groups A-F), checked every cycle by
collective_conformance_monitor inside hdl.fabric.collective_fabric.

* The correct fabric holds all 34 on every back end over a scenario that
  exercises every antecedent (and a second configuration: 6 paths, mulhi).
* For every property, the fabric built with that property's test fault
  (cosim/fabric/faults.py: an edit of the converted Verilog, named by the id)
  fires exactly that property: in the Icarus co-simulation of the faulted
  Verilog, driven by the MyHDL test bench, and then in batched Icarus
  (`iverilog -g2012`, native vvp), which replays that run's inputs cycle by
  cycle and must produce every output port -- hence every property's first
  failing cycle and failure count -- identically.
* The correct design's replay also runs under `-g2005`; under Verilator (one
  build) it and the 34 faults (one build each) are in the slow set -- the default
  run builds the fabric with Verilator once, in test_fabric_collision.py.
"""
import functools

import pytest
from myhdl import Signal, intbv

from cosim.fabric.fabric_properties import (BY_ID, PROPERTIES, FabricConfig, decode, fabric_signals, replay_batched,
                                     run_fabric)
from cosim.fabric.faults import FABRIC_FAULTS
from cosim.sim.faults import FaultNotInMyHDL
from hdl.common.wiring import bundle
from hdl.fabric import collective_pkg as pkg
from hdl.fabric.collective_fabric import collective_fabric

IDS = [p.id for p in PROPERTIES]


@functools.lru_cache(maxsize=None)
def fabric(backend, fault=""):
    return run_fabric(backend, fault)


def test_property_table_is_the_seeds():
    groups = {}
    for p in PROPERTIES:
        groups.setdefault(p.id[0], []).append(int(p.id[1:]))
    assert {g: len(v) for g, v in groups.items()} == {"A": 6, "B": 6, "C": 6, "D": 6, "E": 5, "F": 5}
    assert all(v == list(range(1, len(v) + 1)) for v in groups.values())
    assert [p.bit for p in PROPERTIES] == list(range(34))
    assert set(FABRIC_FAULTS) == set(IDS)                # every property has a test fault
    assert all(FABRIC_FAULTS[p.id].block == p.fault_block for p in PROPERTIES)
    assert decode((1 << 0) | (1 << 33)) == ["A1", "F5"]
    assert pkg.COLLECTIVE_REDUCTION == pkg.RED_MIN          # A5's static half; the monitor checks the port


def test_correct_fabric_holds_every_property(backend):
    run = fabric(backend)
    assert run.fired == set() and run.seen == []
    # the scenario reached the antecedents: more flows than paths, ends, several collectives
    assert run.placements > 2 * FabricConfig().paths and run.flow_ends > 20 and run.ring_runs >= 3


def test_correct_fabric_holds_with_mulhi_and_six_paths():
    run = run_fabric("myhdl", "", FabricConfig(paths=6, path_mode="mulhi", seed=5, members=5, stripes=2))
    assert run.fired == set() and run.placements > 12


@pytest.mark.parametrize("pid", IDS)
def test_fault_fires_exactly_its_property(pid):
    """In the Icarus co-simulation (a fault exists only as Verilog), then that run replayed in
    batched Icarus: one test, so the co-simulated run is made once."""
    ref = fabric("icarus", pid)
    assert ref.fired == {pid}, f"{pid} ({BY_ID[pid].statement}) fault fired {sorted(ref.fired)}"
    assert ref.seen == [pid]
    run = replay_batched(ref, pid, simulator="icarus", generation="2012")
    assert run.fired == {pid} and run.seen == [pid]
    assert (run.first_cycle, run.counts) == (ref.first_cycle, ref.counts)
    assert run.outputs == ref.outputs                      # every port, every cycle


@pytest.mark.parametrize("simulator,generation", [
    ("icarus", "2005"), ("icarus", "2012"),
    # one Verilator build of the fabric is in the default run (test_fabric_collision.py, RATES="paths")
    pytest.param("verilator", "", marks=pytest.mark.slow)])
def test_correct_fabric_replayed_batched(simulator, generation):
    ref = fabric("myhdl")
    run = replay_batched(ref, "", simulator=simulator, generation=generation or "2012")
    assert run.fired == set() and run.outputs == ref.outputs


@pytest.mark.slow
@pytest.mark.parametrize("pid", IDS)
def test_fault_fires_exactly_its_property_verilator(pid):
    ref = fabric("icarus", pid)
    run = replay_batched(ref, pid, simulator="verilator")
    assert run.fired == {pid} and run.outputs == ref.outputs


def test_a_faulted_fabric_does_not_run_in_myhdl():
    with pytest.raises(FaultNotInMyHDL, match="exists only"):
        run_fabric("myhdl", "A1")


def test_fabric_rejects_an_unknown_rates_mode_and_width():
    ports = fabric_signals(FabricConfig())
    with pytest.raises(ValueError, match="RATES"):
        collective_fabric(**bundle(collective_fabric, ports), RATES="random")
    ports["conn_path"] = Signal(intbv(0)[5:])
    with pytest.raises(ValueError, match="conn_path"):
        collective_fabric(**bundle(collective_fabric, ports))
