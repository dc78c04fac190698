"""The ECMP hash unit against the golden ECMP model (golden.fabric.ecmp), bit for bit,
one flow per cycle, on both back ends; plus its parameter checks."""
import random

import pytest
from myhdl import ResetSignal, Signal, intbv

from cosim.sim import toolchain
from cosim.sim.pipeline import run_pipeline
from golden.fabric import ecmp
from hdl.fabric import collective_pkg as pkg
from hdl.fabric.ecmp_hash_unit import crc32_bits, ecmp_hash_unit

LATENCY = 2                 # cycles from a flow's entry to its output


def tuple_word(t):
    return int.from_bytes(ecmp.serialize(t), "big")


def random_tuples(rng, n):
    """Random 5-tuples plus the adversarial ones: all zero, all ones, single bits."""
    out = [ecmp.FlowTuple(0, 0, 0, 0, 0),
           ecmp.FlowTuple(0xFFFFFFFF, 0xFFFFFFFF, 0xFFFF, 0xFFFF, 0xFF)]
    for bit in range(0, 104, 13):
        out.append(ecmp.deserialize((1 << bit).to_bytes(13, "big")))
    while len(out) < n:
        out.append(ecmp.FlowTuple(rng.getrandbits(32), rng.getrandbits(32), rng.getrandbits(16),
                                  rng.getrandbits(16), rng.getrandbits(8)))
    return out[:n]


def run_hash_unit(backend, tuples, paths, mode, gaps=0.0, seed=0, trace=None):
    """Drive one flow per cycle (with random idle cycles at rate `gaps`); return
    [(flow index, hash, path)] in output order.  `trace` = (in, out) lists receive
    the rising-edge count at which each flow entered and left."""
    clk = Signal(bool(0))
    rst = ResetSignal(0, active=1, isasync=False)
    s_valid, m_valid = Signal(bool(0)), Signal(bool(0))
    s_tuple = Signal(intbv(0)[104:])
    s_user, m_user = Signal(intbv(0)[16:]), Signal(intbv(0)[16:])
    m_hash = Signal(intbv(0)[32:])
    m_path = Signal(intbv(0)[max(1, (paths - 1).bit_length()):])
    dut_factory = toolchain.select(ecmp_hash_unit, backend)

    def load(t):
        s_tuple.next = tuple_word(t)

    ports = (clk, rst, s_valid, s_tuple, s_user, m_valid, m_hash, m_path, m_user)
    got = run_pipeline(dut_factory, ports, dict(PATHS=paths, PATH_MODE=mode), clk, rst, s_valid, m_valid, tuples, load,
                       lambda: (int(m_hash), int(m_path)), backend,
                       LATENCY, in_tag=s_user, out_tag=m_user, gap_rate=gaps, seed=seed, stop_when_done=True)
    if trace is not None:
        trace[0].extend(c_in for *_, c_in, _ in got)
        trace[1].extend(c_out for *_, c_out in got)
    return [(tag, h, path) for (h, path), tag, _, _ in got]


def expected(tuples, paths, mode):
    out = []
    for i, t in enumerate(tuples):
        h = ecmp.flow_hash(t, "crc32")
        out.append((i & 0xFFFF, h, ecmp.select_path(h, paths, mode, 32)))
    return out


def test_elaboration_crc_matches_golden_definition():
    rng = random.Random(5)
    for t in random_tuples(rng, 200):
        assert crc32_bits(tuple_word(t), 104) == ecmp.crc32(ecmp.serialize(t))


@pytest.mark.parametrize("paths,mode", [(32, "mod"), (6, "mod"), (32, "mulhi"), (6, "mulhi"), (1, "mod")])
def test_hash_unit_bit_exact_small(backend, paths, mode):
    tuples = random_tuples(random.Random(paths * 7 + len(mode)), 300)
    got = run_hash_unit(backend, tuples, paths, mode, gaps=0.2, seed=3)
    assert got == expected(tuples, paths, mode)


@pytest.mark.slow      # 10 s; the batched stream test holds the same unit bit-exact over 2,000 flows
def test_hash_unit_bit_exact_10k_ring_flows_icarus():
    """10 000 flows, one per cycle, co-simulated: the golden model's own ring-flow
    5-tuples (RoCEv2 source-port entropy) plus random tuples, 32 paths, mod."""
    flows = ecmp.ring_flows(stripes=4)          # 4096 real collective 5-tuples
    tuples = list(flows.tuples()) + random_tuples(random.Random(9), 10_000 - len(flows))
    got = run_hash_unit("icarus", tuples, 32, "mod")
    assert got == expected(tuples, 32, "mod")


def test_hash_unit_bit_exact_10k_myhdl_mulhi():
    tuples = random_tuples(random.Random(10), 10_000)
    got = run_hash_unit("myhdl", tuples, 24, "mulhi")
    assert got == expected(tuples, 24, "mulhi")


def test_hash_unit_sustains_one_flow_per_cycle():
    """Back-to-back flows leave back to back, two cycles after they enter."""
    tuples = random_tuples(random.Random(2), 50)
    cycles_in, cycles_out = [], []
    got = run_hash_unit("myhdl", tuples, 32, "mod", trace=(cycles_in, cycles_out))
    assert [g[0] for g in got] == list(range(50))
    assert cycles_in == list(range(cycles_in[0], cycles_in[0] + 50))
    assert cycles_out == [c + 2 for c in cycles_in]


@pytest.mark.parametrize("kwargs,match", [
    (dict(PATHS=0), "PATHS"), (dict(PATHS=70000), "PATHS"), (dict(PATH_MODE="xor"), "PATH_MODE"),
    (dict(PATHS=64), "too narrow")])
def test_hash_unit_rejects_bad_parameters(kwargs, match):
    sig = lambda n: Signal(intbv(0)[n:]) if n > 1 else Signal(bool(0))
    with pytest.raises(ValueError, match=match):
        ecmp_hash_unit(sig(1), ResetSignal(0, active=1, isasync=False), sig(1), sig(104), sig(4),
                       sig(1), sig(32), sig(5), sig(4), **kwargs)
