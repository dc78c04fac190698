"""The golden node model: CONTROL semantics, every DATA validation rule, and
RESULT frames whose values agree with the array-level golden reduction."""
import random

import numpy as np
import pytest

from golden.node import protocol as P
from golden.node.node_model import NodeModel
from golden.reduce import reduce as golden_reduce

DTYPES = {P.FMT_INT8: np.uint8, P.FMT_FP16: np.uint16, P.FMT_BF16: np.uint16, P.FMT_FP32: np.uint32}


def stage(op=1, gen=1, policy=P.POLICY_KULISCH, in_fmt=P.FMT_FP32, res=P.FMT_FP32, mode=P.MODE_ALLREDUCE,
          count=64, contributors=0b11, recipients=0b11):
    return P.Stage(op, gen, policy, in_fmt, res, mode, count, contributors, recipients).encode()


def commit(op=1, gen=1):
    return P.Commit(op, gen).encode()


def responses(outs):
    return [(o.frame.ack, o.frame.reason) for o in outs if isinstance(o.frame, P.Response)]


def started(model, **kw):
    assert responses(model.receive(0, stage(**kw))) == [(True, P.OK)]
    assert responses(model.receive(1, commit(kw.get("op", 1), kw.get("gen", 1)))) == [(True, P.OK)]
    return model


def random_values(rng, fmt, n):
    """Finite, well-spread bit patterns (specials are covered by the arithmetic tests)."""
    w = P.ELEMENT_BITS[fmt]
    out = []
    while len(out) < n:
        v = rng.getrandbits(w)
        exp_ok = {P.FMT_INT8: True, P.FMT_FP16: (v >> 10) & 0x1F != 0x1F,
                  P.FMT_BF16: (v >> 7) & 0xFF != 0xFF, P.FMT_FP32: (v >> 23) & 0xFF != 0xFF}[fmt]
        if exp_ok:
            out.append(v)
    return out


def test_control_responses_and_reasons():
    m = NodeModel()
    assert responses(m.receive(0, commit())) == [(False, P.NO_STAGED)]
    assert responses(m.receive(0, stage(policy=2))) == [(False, P.BAD_POLICY)]
    assert responses(m.receive(0, stage(policy=P.POLICY_FP32_ARRIVAL, res=P.FMT_EXACT))) == [(False, P.BAD_FORMAT)]
    assert responses(m.receive(0, stage(res=6))) == [(False, P.BAD_FORMAT)]
    assert responses(m.receive(0, stage(count=0))) == [(False, P.BAD_COUNT)]
    assert responses(m.receive(0, stage(count=4097))) == [(False, P.BAD_COUNT)]
    assert responses(m.receive(0, stage(contributors=0))) == [(False, P.BAD_CONTRIBUTORS)]
    assert responses(m.receive(0, stage(mode=P.MODE_REDUCE, recipients=0b11))) == [(False, P.BAD_RECIPIENTS)]
    assert responses(m.receive(0, stage(recipients=0))) == [(False, P.BAD_RECIPIENTS)]
    bad_opcode = [P.set_field(commit()[0], "opcode", 5)]
    assert responses(m.receive(0, bad_opcode)) == [(False, P.BAD_OPCODE)]
    assert responses(m.receive(0, stage() + [0])) == [(False, P.BAD_LENGTH)]
    assert responses(m.receive(0, stage(op=4))) == [(True, P.OK)]
    assert responses(m.receive(0, commit(op=5))) == [(False, P.STAGED_MISMATCH)]
    assert responses(m.receive(0, commit(op=4, gen=2))) == [(False, P.STAGED_MISMATCH)]
    outs = m.receive(1, commit(op=4))
    assert responses(outs) == [(True, P.OK)] and all(o.port == 0 for o in outs)
    # responses echo the request
    r = outs[0].frame
    assert (r.op_id, r.generation, r.request_opcode) == (4, 1, P.OP_COMMIT)


def test_stage_while_active_then_commit_after_completion():
    m = started(NodeModel(), count=16, contributors=0b1)
    assert responses(m.receive(0, stage(op=2, count=16, contributors=0b1))) == [(True, P.OK)]
    assert responses(m.receive(0, commit(op=2))) == [(False, P.BUSY)]
    outs = m.receive(0, P.Data(1, 1, 0, P.FMT_FP32, 0, tuple(range(16))).encode())
    assert sorted(o.port for o in outs) == [0, 1]          # AllReduce to both ports
    assert responses(m.receive(0, commit(op=2))) == [(True, P.OK)]
    # the old operation's DATA is now refused, the new one accepted
    m.receive(0, P.Data(1, 1, 0, P.FMT_FP32, 0, tuple(range(16))).encode())
    assert m.counters[0]["dropped_wrong_op"] == 1


@pytest.mark.parametrize("reason,frame", [
    ("wrong_op", P.Data(9, 1, 0, P.FMT_FP32, 0, (0,) * 16)),
    ("stale_generation", P.Data(1, 2, 0, P.FMT_FP32, 0, (0,) * 16)),
    ("bad_contributor", P.Data(1, 1, 5, P.FMT_FP32, 0, (0,) * 16)),
    ("bad_format", P.Data(1, 1, 0, P.FMT_FP16, 0, (0,) * 16)),
    ("bad_range", P.Data(1, 1, 0, P.FMT_FP32, 8, (0,) * 16)),     # misaligned offset
    ("bad_range", P.Data(1, 1, 0, P.FMT_FP32, 48, (0,) * 32)),    # past E
    ("bad_range", P.Data(1, 1, 0, P.FMT_FP32, 0, (0,) * 8)),      # partial range not at the end
    ("bad_length", P.Data(1, 1, 0, P.FMT_FP32, 0, (0,) * 16, n=32)),  # header says more than TLAST gives
])
def test_each_malformed_frame_is_dropped_counted_and_harmless(reason, frame):
    rng = random.Random(3)
    m = started(NodeModel(), count=64)
    assert m.receive(1, frame.encode()) == []
    assert m.counters[1][f"dropped_{reason}"] == 1
    # the operation still completes with exactly the valid contributions
    data = np.array([random_values(rng, P.FMT_FP32, 64) for _ in range(2)], dtype=np.uint32)
    outs = []
    for c in range(2):
        outs += m.receive(c, P.Data(1, 1, c, P.FMT_FP32, 0, tuple(int(x) for x in data[c])).encode())
    want = golden_reduce("kulisch", "fp32", "fp32", data, impl="python").bits
    got = [v for o in outs if o.port == 0 for _, _, v in o.frame.elements()]
    assert got == [int(x) for x in want]


def test_duplicate_and_no_operation_and_too_long():
    m = NodeModel()
    m.receive(0, P.Data(1, 1, 0, P.FMT_FP32, 0, (0,) * 16).encode())
    assert m.counters[0]["dropped_no_operation"] == 1
    started(m, count=4096, contributors=0b11)
    m.receive(0, P.Data(1, 1, 0, P.FMT_FP32, 0, (0,) * 32).encode())
    m.receive(0, P.Data(1, 1, 0, P.FMT_FP32, 16, (0,) * 16).encode())
    assert m.counters[0]["dropped_duplicate"] == 1
    too_long = [P.Data(1, 1, 0, P.FMT_FP32, 64, (0,) * 16, n=4096).encode()[0]] + [0] * 257
    m.receive(0, too_long)
    assert m.counters[0]["dropped_too_long"] == 1
    assert m.counters[0]["data_accepted"] == 1


def test_unsupported_traffic_is_counted_only():
    m = started(NodeModel())
    assert m.receive(0, [0xF, 1, 2]) == [] and m.receive(1, P.Result(1, 1, 0, ((P.FMT_INT8, (1,)),)).encode()) == []
    assert m.counters[0]["unsupported"] == 1 and m.counters[1]["unsupported"] == 1


@pytest.mark.parametrize("policy", ["kulisch", "fp32-arrival"])
@pytest.mark.parametrize("in_fmt", [P.FMT_INT8, P.FMT_FP16, P.FMT_BF16, P.FMT_FP32])
def test_result_values_match_array_reduction(policy, in_fmt):
    """Contributors split their vectors into frames of different sizes over both ports;
    every RESULT element equals golden.reduce on the C x E array (admission order = row order)."""
    rng = random.Random(in_fmt * 10 + len(policy))
    e, contributors = 300, 3
    data = np.array([random_values(rng, in_fmt, e) for _ in range(contributors)], dtype=DTYPES[in_fmt])
    code = P.POLICY_KULISCH if policy == "kulisch" else P.POLICY_FP32_ARRIVAL
    for res in (P.FMT_INT8, P.FMT_FP16, P.FMT_BF16, P.FMT_FP32, P.FMT_AUTO) + ((P.FMT_EXACT,) if policy == "kulisch" else ()):
        m = started(NodeModel(), policy=code, in_fmt=in_fmt, res=res, count=e, contributors=0b111)
        outs = []
        for c in range(contributors):
            cuts = sorted({0, e} | {16 * rng.randint(1, e // 16) for _ in range(2)})
            for lo, hi in zip(cuts, cuts[1:]):
                frame = P.Data(1, 1, c, in_fmt, lo, tuple(int(x) for x in data[c, lo:hi]))
                outs += m.receive(c % 2, frame.encode())
        results = sorted((o.frame for o in outs if o.port == 1), key=lambda r: r.offset)
        assert [r.offset for r in results] == [0, 256]
        got = [v for r in results for _, _, v in r.elements()]
        name = P.FORMAT_NAMES[res]
        want = golden_reduce(policy, P.FORMAT_NAMES[in_fmt], name, data, impl="python")
        if res == P.FMT_EXACT:
            # the exact sum: the signed 320-bit state (limbs sign-extended) plus its wraps
            limbs = want.bits
            states = [sum(int(l) << (64 * k) for k, l in enumerate(row)) & ((1 << 320) - 1) for row in limbs]
            sums = [(s - (1 << 320) if s >> 319 else s) + (int(w) << 320) for s, w in zip(states, want.wraps)]
            assert got == [(t, int(f)) for t, f in zip(sums, want.flags)]
        else:
            assert got == [int(x) for x in want.bits]
        if res == P.FMT_AUTO:
            tile_fmts = [P.FORMAT_CODES[f] if isinstance(f, str) else int(f) for f in want.auto_formats]
            # groups are joined runs of tiles: expand back to one format per tile
            got_fmts = []
            for r in results:
                for f, v in r.groups:
                    got_fmts += [f] * -(-len(v) // 16)
            assert got_fmts == tile_fmts
            for r in results:   # adjacent groups always differ (uniform tiles were joined)
                fmts = [f for f, _ in r.groups]
                assert all(a != b for a, b in zip(fmts, fmts[1:]))


def test_reduce_goes_to_one_port_and_counts_ranges():
    m = started(NodeModel(), mode=P.MODE_REDUCE, recipients=0b10, count=40, contributors=0b1)
    outs = m.receive(0, P.Data(1, 1, 0, P.FMT_FP32, 0, tuple(range(40))).encode())
    assert [o.port for o in outs] == [1]
    assert m.node_counters["ranges_completed"] == 3
    assert outs[0].frame.count == 40


def abort(op=1, gen=1):
    return P.Abort(op, gen).encode()


def data(contributor, offset, n, op=1, gen=1, fmt=P.FMT_FP32, value=0x3F800000):
    return P.Data(op, gen, contributor, fmt, offset, (value,) * n).encode()


def test_an_operation_ends_at_the_admission_that_completes_its_last_range():
    """docs/protocol.md, "Operation lifetime": from the completing admission on, the next
    COMMIT is ACKed, DATA of the ended operation is no_operation and ABORT is NOT_OPEN."""
    m = started(NodeModel(), count=32, contributors=0b11)
    m.receive(0, stage(op=2, gen=9, count=16, contributors=0b1))
    m.receive(0, data(0, 0, 32))
    assert responses(m.receive(1, commit(2, 9))) == [(False, P.BUSY)]       # contributor 1 still owes
    outs = m.receive(1, data(1, 0, 32))                                     # completes the operation
    assert {o.frame.offset for o in outs if isinstance(o.frame, P.Result)} == {0}
    assert responses(m.receive(0, abort(1, 1))) == [(False, P.NOT_OPEN)]
    m.receive(1, data(1, 0, 16))
    assert m.counters[1]["dropped_no_operation"] == 1
    assert responses(m.receive(1, commit(2, 9))) == [(True, P.OK)]


def test_abort_ends_the_open_operation_and_keeps_the_completed_blocks():
    m = started(NodeModel(), count=512, contributors=0b11)
    outs = m.receive(0, data(0, 0, 256)) + m.receive(1, data(1, 0, 256))     # block 0 complete
    assert [o.frame.offset for o in outs if isinstance(o.frame, P.Result)] == [0, 0]   # both ports
    m.receive(0, data(0, 256, 256))                                         # block 1 half done
    assert responses(m.receive(1, abort(1, 2))) == [(False, P.ACTIVE_MISMATCH)]
    assert responses(m.receive(1, abort(2, 1))) == [(False, P.ACTIVE_MISMATCH)]
    assert responses(m.receive(1, abort(1, 1))) == [(True, P.OK)]
    assert responses(m.receive(1, abort(1, 1))) == [(False, P.NOT_OPEN)]
    assert m.receive(1, data(1, 256, 256)) == []                            # never completes block 1
    assert m.counters[1]["dropped_no_operation"] == 1
    # the staged slot is untouched; the next operation starts from nothing
    assert responses(m.receive(0, stage(op=3, gen=3, count=512, contributors=0b1))) == [(True, P.OK)]
    assert responses(m.receive(0, commit(3, 3))) == [(True, P.OK)]
    outs = m.receive(0, data(0, 256, 256, op=3, gen=3, value=0x40000000))
    res = [o.frame for o in outs if isinstance(o.frame, P.Result)]
    assert res and all(v == 0x40000000 for r in res for _, _, v in r.elements())


def test_abort_nacks_without_an_operation_and_after_a_reset():
    m = NodeModel()
    assert responses(m.receive(0, abort())) == [(False, P.NOT_OPEN)]
    started(m)
    m.reset()
    assert responses(m.receive(0, abort())) == [(False, P.NOT_OPEN)]
    assert responses(m.receive(0, abort() + [0])) == [(False, P.BAD_LENGTH)]
