"""cocotb tests of the exported PRISM node (run by tests/node/test_cocotb_client.py through
cocotb's runner; never imported by pytest's collection).

Each test is meant to run in a simulation of its own (the runner selects one per
run), so every test starts from power-on.  Settings come from the environment:
PRISM_COCOTB_CASE (power_on: "POLICY:FORMAT"), PRISM_COCOTB_SEED,
PRISM_COCOTB_KULISCH_W (the width the node was exported with),
PRISM_COCOTB_OPS (operations of the random back-pressure test).
"""
import itertools
import os

import cocotb
from cocotb.triggers import ClockCycles

import prism_reference as R
import prism_wire as W
from node_bench import NodeBench, patterns, special_patterns

SEED = int(os.environ.get("PRISM_COCOTB_SEED", "1"))
KULISCH_W = int(os.environ.get("PRISM_COCOTB_KULISCH_W", "320"))
CAPACITY = int(os.environ.get("PRISM_COCOTB_CAPACITY", "4096"))


async def bench(dut, salt=0, reset=True):
    return await NodeBench.create(dut, reset=reset, seed=SEED * 1000 + salt, capacity=CAPACITY,
                                  kulisch_w=KULISCH_W)


def mixed_vector(rng, fmt, n):
    """n patterns whose 16-element tiles cycle through integer, short-fraction and wide values."""
    styles = ("int", "half", "wide")
    out = []
    for t in range(0, n, W.RANGE):
        out += patterns(rng, fmt, min(W.RANGE, n - t), styles[(t // W.RANGE) % 3])
    return out


# ---------------------------------------------------------------------------------------------
@cocotb.test()
async def power_on_first_operation(dut):
    """The first operation after power-on (no reset at all): every policy x result format, one
    per simulation (PRISM_COCOTB_CASE).  E = 40 (two whole ranges and a partial one), two
    contributors on the two receive ports, AllReduce to both transmit ports."""
    policy_name, fmt_name = os.environ["PRISM_COCOTB_CASE"].split(":")
    policy = {v: k for k, v in W.POLICIES.items()}[policy_name]
    out_fmt = {v: k for k, v in W.FORMATS.items()}[fmt_name]
    in_fmt = W.INPUT_FORMATS[(policy * 6 + out_fmt) % 4]
    b = await bench(dut, salt=policy * 8 + out_fmt, reset=False)
    op = await b.start_operation(1, 1, policy, in_fmt, out_fmt, 40, 0b11, 0b11)
    b.contribute(op, {c: mixed_vector(b.rng, in_fmt, 40) for c in (0, 1)})
    await b.wait_idle(max_cycles=4000)
    b.check(check_w=out_fmt == W.EXACT)
    await b.check_counters()


# ---------------------------------------------------------------------------------------------
E_MENU = (1, 15, 16, 17, 40, 100, 255, 256, 257, 300)


def random_operation(rng):
    policy = rng.choice((W.KULISCH_FIXED, W.FP32_ARRIVAL))
    outs = (W.INT8, W.FP16, W.BF16, W.FP32, W.AUTO) + ((W.EXACT,) if policy == W.KULISCH_FIXED else ())
    n_contrib = rng.randint(1, 8)
    contributors = sum(1 << c for c in rng.sample(range(8), n_contrib))
    mode = rng.choice((W.REDUCE, W.ALLREDUCE))
    recipients = rng.choice((1, 2)) if mode == W.REDUCE else rng.choice((1, 2, 3))
    return dict(policy=policy, in_fmt=rng.choice(W.INPUT_FORMATS), out_fmt=rng.choice(outs),
                count=rng.choice(E_MENU), contributors=contributors, recipients=recipients, mode=mode)


@cocotb.test()
async def backpressure_operations(dut):
    """Random operations (policies, formats, E, 1-8 contributors on random ports, frames cut at
    random multiples of 16, Reduce and AllReduce) with random pauses on all four streams and
    long transmit stalls; every RESULT frame, response and counter checked."""
    b = await bench(dut, salt=100)
    b.set_pauses(source=0.3, sink=0.4, stall_every=300, stall_cycles=80)
    for i in range(int(os.environ.get("PRISM_COCOTB_OPS", "4"))):
        spec = random_operation(b.rng)
        op = await b.start_operation(10 + i, b.rng.getrandbits(16), port=b.rng.randint(0, 1), **spec)
        b.log.info("operation %d: %s", i, op)
        ports = {c: b.rng.randint(0, 1) for c in op.members}
        values = {}
        for c in op.members:
            values[c] = mixed_vector(b.rng, op.in_fmt, op.count)
            if op.in_fmt != W.INT8 and b.rng.random() < 0.5:       # a special now and then
                sp = special_patterns(op.in_fmt)
                values[c][b.rng.randrange(op.count)] = sp[b.rng.choice(list(sp))]
        b.contribute(op, values, port_of=ports.get, cut=W.RANGE * b.rng.randint(1, 8))
        await b.wait_idle()
        b.check()
    await b.check_counters()


# ---------------------------------------------------------------------------------------------
@cocotb.test()
async def control_requests(dut):
    """STAGE/COMMIT answers: every NACK reason, which reason wins when several checks fail,
    NACKs change nothing, STAGE replaces a staged operation, BAD_LENGTH before everything,
    BAD_OPCODE; requests on both receive ports (answers on TX port 0)."""
    b = await bench(dut, salt=200)
    K, F = W.KULISCH_FIXED, W.FP32_ARRIVAL
    ok = dict(policy=K, in_fmt=W.FP16, out_fmt=W.FP32, count=40, contributors=0b101, recipients=0b01)

    def st(op_id=1, gen=1, mode=W.ALLREDUCE, **kw):
        a = {**ok, **kw}
        return W.stage(op_id, gen, a["policy"], a["in_fmt"], a["out_fmt"], a["count"], a["contributors"],
                       a["recipients"], mode)

    async def expect(frame, reason, port=0):
        r = await b.request(frame, port)
        assert r.reason_name == reason, f"answered {r}, expected {reason}"

    await expect(W.commit(1, 1), "NO_STAGED")
    await expect(st(policy=2), "BAD_POLICY")
    await expect(st(policy=3, count=0, contributors=0), "BAD_POLICY", port=1)
    await expect(st(out_fmt=6), "BAD_FORMAT")
    await expect(st(out_fmt=7), "BAD_FORMAT", port=1)
    await expect(st(policy=F, out_fmt=W.EXACT), "BAD_FORMAT")
    await expect(st(policy=F, out_fmt=W.EXACT, count=0, recipients=0), "BAD_FORMAT")
    await expect(st(count=0), "BAD_COUNT")
    await expect(st(count=CAPACITY + 1), "BAD_COUNT")
    await expect(st(count=8191, contributors=0), "BAD_COUNT", port=1)
    await expect(st(contributors=0), "BAD_CONTRIBUTORS")
    await expect(st(contributors=0, recipients=0), "BAD_CONTRIBUTORS")
    await expect(st(recipients=0), "BAD_RECIPIENTS")
    await expect(st(recipients=0b11, mode=W.REDUCE), "BAD_RECIPIENTS", port=1)
    await expect(W.commit(1, 1), "NO_STAGED")              # NACKed STAGEs staged nothing
    # lengths first, whatever the opcode
    await expect(st() + [0], "BAD_LENGTH")
    await expect(W.commit(1, 1) + [0, 0], "BAD_LENGTH", port=1)
    await expect(W.control(0, 1, 1) + [0], "BAD_LENGTH")
    for opcode in (0, 4, 7, W.OP_ACK, W.OP_NACK, 15):
        await expect(W.control(opcode, 2, 3), "BAD_OPCODE", port=opcode % 2)
    # a NACK leaves the staged operation in place; STAGE replaces it
    await expect(st(5, 7), "OK")
    await expect(st(6, 1, count=0), "BAD_COUNT")
    await expect(W.commit(5, 8), "STAGED_MISMATCH")
    await expect(W.commit(6, 7), "STAGED_MISMATCH", port=1)
    await expect(W.commit(6, 1), "STAGED_MISMATCH")         # the NACKed STAGE staged nothing
    await expect(st(9, 1, count=32, contributors=0b1), "OK")
    await expect(W.commit(5, 7), "STAGED_MISMATCH")         # replaced
    await expect(W.commit(9, 1), "OK")
    op9 = b.model.active
    # while operation 9 is open: STAGE is allowed, COMMIT is BUSY, a mismatch wins over BUSY
    await expect(st(10, 2, in_fmt=W.INT8, out_fmt=W.AUTO, count=17, contributors=0b10, recipients=0b10,
                    mode=W.REDUCE), "OK", port=1)
    await expect(W.commit(10, 2), "BUSY")
    await expect(W.commit(10, 3), "STAGED_MISMATCH", port=1)
    await expect(W.commit(10, 2) + [0], "BAD_LENGTH")
    await expect(W.commit(10, 2), "BUSY", port=1)
    b.contribute(op9, {0: mixed_vector(b.rng, op9.in_fmt, op9.count)})
    await b.wait_idle()
    b.check()
    await expect(W.commit(10, 2), "OK")                    # the BUSY NACKs left it staged
    op10 = b.model.active
    b.contribute(op10, {1: mixed_vector(b.rng, op10.in_fmt, op10.count)})
    await b.wait_idle()
    await expect(W.commit(10, 2), "NO_STAGED")
    b.check()
    await b.check_counters()
    reasons = {r.reason_name for r in b.model.responses}
    missing = {"OK", "BAD_OPCODE", "BAD_POLICY", "BAD_FORMAT", "BAD_COUNT", "BAD_CONTRIBUTORS", "BAD_RECIPIENTS",
               "NO_STAGED", "STAGED_MISMATCH", "BUSY", "BAD_LENGTH"} - reasons
    assert not missing, f"reasons not exercised: {missing}"


# ---------------------------------------------------------------------------------------------
@cocotb.test()
async def data_drops(dut):
    """Every DATA drop reason, the first failing rule naming it, on both receive ports; unsupported
    classes (a RESULT frame among them); dropped frames change nothing: the operation completes
    bit-exact afterwards."""
    b = await bench(dut, salt=300)
    fmt = W.FP16
    vec = {c: mixed_vector(b.rng, fmt, 40) for c in (0, 2)}

    def d(c=0, off=0, n=16, op_id=20, gen=3, f=fmt, payload=None):
        pats = (vec.get(c, vec[0]) + [0] * 64)[off:off + n] if f == fmt else [0] * n
        return W.data(op_id, gen, c, f, off, pats, payload_beats=payload)

    async def settle():
        await b.wait_sent()
        await ClockCycles(b.dut.clk, 60)

    b.send(1, d())                                          # no operation yet
    b.send(0, [0x0])                                        # unsupported classes
    b.send(1, [0x4, 1, 2])
    b.send(0, [0xF])
    b.send(1, [W.CLASS_RESULT | 7 << 8, 0])                 # a RESULT frame: a SINGLE node does not relay
    await settle()
    await b.start_operation(20, 3, W.KULISCH_FIXED, fmt, W.FP32, 40, 0b101, 0b01)
    for port in (0, 1):
        for frame in (d(op_id=21), d(gen=2), d(c=1), d(f=W.BF16), d(off=8), d(n=0, payload=[]), d(off=32, n=16),
                      d(off=0, n=20), d(off=48, n=16), d(n=16, payload=[0, 0]), d(n=32, payload=[]),
                      d(op_id=21, f=W.BF16), d(c=1, off=8), d(off=8, payload=[]),
                      d(n=16, payload=[0] * 257)):                       # 258 beats: too long
            b.send(port, frame)
    await settle()
    b.send(0, d(c=0, off=0, n=16))                          # admitted
    await settle()
    b.send(1, d(c=0, off=0, n=32))                          # overlaps range 0: duplicate
    b.send(0, d(c=0, off=0, n=16))                          # exact duplicate
    await settle()
    b.send(0, d(c=0, off=16, n=24))
    b.send(1, d(c=2, off=0, n=40))
    await b.wait_idle()
    b.send(1, d(c=2, off=0, n=16))                          # the operation has ended
    b.send(0, d(c=0, off=16, n=16))
    await settle()
    b.check()
    await b.check_counters()
    for port in (0, 1):
        seen = {k[1] for k, v in b.model.counters.items() if isinstance(k, tuple) and k[0] == port and v}
        missing = (set(W.DROP_REASONS) | {"unsupported"}) - seen
        assert not missing, f"receive port {port}: not exercised: {sorted(missing)}"


# ---------------------------------------------------------------------------------------------
@cocotb.test()
async def abort_requests(dut):
    """ABORT: NOT_OPEN and ACTIVE_MISMATCH; an ABORT ends the open operation (later DATA dropped
    as no_operation, completed blocks still sent, the rest never); the next operation on the
    same ranges starts from empty accumulators; a contributor that never sends is ended by
    ABORT; the staged slot is untouched."""
    b = await bench(dut, salt=400)
    await b.request(W.abort(30, 1))                         # nothing open: NOT_OPEN
    fmt = W.FP32
    op = await b.start_operation(30, 1, W.FP32_ARRIVAL, fmt, W.FP32, 300, 0b11, 0b11)
    await b.request(W.abort(30, 2))
    await b.request(W.abort(31, 1), port=1)
    v = {c: mixed_vector(b.rng, fmt, 300) for c in (0, 1)}
    b.send(0, W.data(30, 1, 0, fmt, 0, v[0]))
    b.send(1, W.data(30, 1, 1, fmt, 0, v[1][:256]))        # block 0 completes, block 1 waits for contributor 1
    await b.wait_counter((0, "admitted"), 1)
    await b.wait_counter((1, "admitted"), 1)
    r = await b.request(W.abort(30, 1))
    assert r.ack, f"ABORT of the open operation answered {r}"
    b.send(1, W.data(30, 1, 1, fmt, 256, v[1][256:]))      # after the ABORT: no_operation
    await b.wait_idle()
    await b.request(W.abort(30, 1))                         # ended: NOT_OPEN
    b.check()
    assert [e.block for e in b.model.results if e.op is op] == [0]
    # the same ranges again: block 1 must hold only the new operation's sums
    op2 = await b.start_operation(30, 1, W.FP32_ARRIVAL, fmt, W.FP32, 300, 0b11, 0b11)
    b.contribute(op2, {c: mixed_vector(b.rng, fmt, 300) for c in (0, 1)})
    await b.wait_idle()
    b.check()
    # a contributor that never sends: COMMIT is BUSY until an ABORT; ABORT leaves the staged slot alone
    op3 = await b.start_operation(32, 5, W.KULISCH_FIXED, W.INT8, W.EXACT, 64, 0b1001, 0b10, mode=W.REDUCE)
    b.send(0, W.data(32, 5, 0, W.INT8, 0, patterns(b.rng, W.INT8, 64, "int")))
    await b.request(W.stage(33, 1, W.KULISCH_FIXED, W.INT8, W.INT8, 64, 0b1, 0b01))
    r = await b.request(W.commit(33, 1))
    assert r.reason_name == "BUSY", f"COMMIT while contributor 3 never sends answered {r}"
    r = await b.request(W.abort(32, 5), port=1)
    assert r.ack, f"ABORT answered {r}"
    r = await b.request(W.commit(33, 1))
    assert r.ack, f"COMMIT after the ABORT answered {r}"
    op4 = b.model.active
    b.contribute(op4, {0: patterns(b.rng, W.INT8, 64, "int")})
    await b.wait_idle()
    b.check()
    assert not [e for e in b.model.results if e.op is op3]
    await b.check_counters()


# ---------------------------------------------------------------------------------------------
@cocotb.test()
async def end_window(dut):
    """Requests inside the end window: right after the admission that ends an operation, while
    its RESULT frames drain (with long transmit stalls, then without): DATA of the ended
    operation is dropped (no_operation), its ABORT is NOT_OPEN, and a COMMIT succeeds (held
    until the drain is over)."""
    b = await bench(dut, salt=500)
    for rnd, stall in enumerate((True, False)):
        if stall:
            b.set_pauses(source=0.0, sink=0.85, stall_every=50, stall_cycles=200)
        else:
            b.clear_pauses()
        a_id, n_id = 40 + 2 * rnd, 41 + 2 * rnd
        await b.start_operation(a_id, 1, W.KULISCH_FIXED, W.INT8, W.FP32, 300, 0b11, 0b11)
        va = {c: mixed_vector(b.rng, W.INT8, 300) for c in (0, 1)}
        vn = {c: mixed_vector(b.rng, W.FP16, 64) for c in (0, 1)}
        await b.request(W.stage(n_id, 1, W.FP32_ARRIVAL, W.FP16, W.AUTO, 64, 0b11, 0b01))
        # everything on port 0, back to back: the processing order is the sending order
        b.send(0, W.data(a_id, 1, 0, W.INT8, 0, va[0]))
        b.send(0, W.data(a_id, 1, 1, W.INT8, 0, va[1]))            # ends operation A
        b.send(0, W.data(a_id, 1, 0, W.INT8, 0, va[0][:16]))       # A ended: no_operation
        b.send(0, W.abort(a_id, 1))                                  # NOT_OPEN
        b.send(0, W.commit(a_id, 1))                                 # the staged one is N: STAGED_MISMATCH
        b.send(0, W.stage(n_id, 1, W.FP32_ARRIVAL, W.FP16, W.AUTO, 64, 0b11, 0b01))   # replaces, ACK
        b.send(0, W.commit(n_id, 1))                                 # ACK, held until A has drained
        b.send(0, W.data(n_id, 1, 0, W.FP16, 0, vn[0]))
        await b.wait_sent()
        await b.wait_responses()                                     # the held COMMIT has been answered
        b.send(1, W.data(n_id, 1, 1, W.FP16, 0, vn[1]))            # after the COMMIT was answered
        await b.wait_idle(max_cycles=60000)
        b.check()
    await b.check_counters()


# ---------------------------------------------------------------------------------------------
async def _reset_phases(dut, policy, salt):
    """A reset in every phase, each followed by a bit-exact operation on the same ranges (same
    op_id and generation, so nothing of the interrupted operation may survive):
    mid-DATA (a frame cut: truncated), after an admission before completion, right after the
    admission that completes every range (completion and read-out running), and while RESULT
    frames are sent under transmit back-pressure."""
    b = await bench(dut, salt=salt)
    fmt = W.FP32
    out = W.FP32                       # one rounding of the whole sum: any leftover term shows
    E = 48

    async def fresh_operation(check_after=True):
        op = await b.start_operation(7, 9, policy, fmt, out, E, 0b11, 0b11)
        b.contribute(op, {c: mixed_vector(b.rng, fmt, E) for c in (0, 1)})
        await b.wait_idle()
        if check_after:
            b.check()

    async def admitted(port):
        return await b.read_counter(W.counter_select(port, "admitted"))

    # 1. mid-DATA: a 4-beat frame paused after its second beat
    b.label = "reset mid-DATA"
    op = await b.start_operation(7, 9, policy, fmt, out, E, 0b11, 0b11)
    def two_beats_then_stop():
        while len(b.in_partial[0]) < 2:
            yield False
        while True:
            yield True

    b.src[0].set_pause_generator(two_beats_then_stop())
    b.send(0, W.data(7, 9, 0, fmt, 0, mixed_vector(b.rng, fmt, E)))
    await b.wait_until(lambda: len(b.in_partial[0]) >= 2, "two beats of the frame accepted")
    await b.reset()
    b.clear_pauses()
    await fresh_operation()
    # 2. after an admission, before completion: at once, and once the frame has been accumulated
    for settle in (0, 400):
        b.label = f"reset {settle} cycles after an admission, before completion"
        op = await b.start_operation(7, 9, policy, fmt, out, E, 0b11, 0b11)
        n0 = await admitted(0)
        b.send(0, W.data(7, 9, 0, fmt, 0, [R.round_exact(fmt, R.Fraction(1))] * E))
        await b.wait_counter((0, "admitted"), n0 + 1)
        await ClockCycles(b.dut.clk, settle)
        await b.reset()
        await fresh_operation()
    # 3. right after the admission that completes every range
    b.label = "reset right after the admission that completes the operation"
    op = await b.start_operation(7, 9, policy, fmt, out, E, 0b11, 0b11)
    n0, n1 = await admitted(0), await admitted(1)
    b.contribute(op, {c: mixed_vector(b.rng, fmt, E) for c in (0, 1)})
    await b.wait_counter((0, "admitted"), n0 + 1)
    await b.wait_counter((1, "admitted"), n1 + 1)
    await b.reset()
    await fresh_operation()
    # 4. while RESULT frames are sent, transmit ports stalled
    b.label = "reset while RESULT frames are sent"
    op = await b.start_operation(7, 9, policy, fmt, out, 300, 0b11, 0b11)
    for s in b.sink:
        s.set_pause_generator(itertools.cycle([False, True, True, True]))
    b.contribute(op, {c: mixed_vector(b.rng, fmt, 300) for c in (0, 1)})
    await b.wait_until(lambda: any(b.out_partial.values()), "a RESULT frame partly sent")
    await b.reset()
    b.clear_pauses()
    E = 300
    await fresh_operation()
    b.label = "counters after the resets"
    await b.check_counters()
    assert sum(b.model.counters[(p, "truncated")] for p in (0, 1)) >= 1, "no frame was cut by the reset"
    assert sum(b.tx_cut.values()) >= 1, "no RESULT frame was cut by the reset"


@cocotb.test()
async def reset_phases_kulisch(dut):
    await _reset_phases(dut, W.KULISCH_FIXED, 600)


@cocotb.test()
async def reset_phases_fp32_arrival(dut):
    await _reset_phases(dut, W.FP32_ARRIVAL, 700)


# ---------------------------------------------------------------------------------------------
@cocotb.test()
async def exact_sums(dut):
    """EXACT results rebuilt into the full sum sigma from bits [507:0], W from the RESULT header:
    sums near the largest finite inputs from 8 contributors (a 280-bit accumulator overflows,
    a 320-bit one does not), cancellation, subnormals, specials; the header's W field on every
    result format."""
    b = await bench(dut, salt=800)
    rng = b.rng
    fmax = 0x7F7FFFFF
    sp = special_patterns(W.FP32)
    E = 64
    values = {c: [0] * E for c in range(8)}
    for c in range(8):
        for i in range(16):                    # tile 0: large magnitudes, same sign per element
            values[c][i] = (fmax - rng.randrange(1 << 20)) | ((i % 2) << 31)
        for i in range(16, 32):                # tile 1: specials in some contributions
            values[c][i] = patterns(rng, W.FP32, 1, "wide")[0]
        values[c][48:] = patterns(rng, W.FP32, 16, "wide")
    for i in range(32, 48):                    # tile 2: subnormals, half of them cancelling exactly
        x = rng.getrandbits(23)
        for c in range(8):
            values[c][i] = (x | (c % 2) << 31) if i % 2 else rng.getrandbits(23) | rng.getrandbits(1) << 31
    for i, kinds in zip(range(16, 32), [["nan"], ["+inf"], ["-inf"], ["+inf", "-inf"], ["+inf", "+inf"],
                                         ["nan", "+inf"], ["-0"], ["-0", "-0"]] * 2):
        for c, k in enumerate(kinds):
            values[(c + i) % 8][i] = sp[k]
    for i in range(40, 48):                    # every contribution -0
        for c in range(8):
            values[c][i] = sp["-0"]
    op = await b.start_operation(50, 1, W.KULISCH_FIXED, W.FP32, W.EXACT, E, 0xFF, 0b11)
    b.contribute(op, values, port_of=lambda c: c % 2, cut=16)
    await b.wait_idle()
    b.check(check_w=True)
    got = [W.decode_result(f) for f in b.observed(0, W.CLASS_RESULT)]
    assert got and all(r.kulisch_w == KULISCH_W for r in got)
    sums = [v for r in got for v in r.groups[0].values]
    wrapped = [v for v in sums if v.overflow]
    if KULISCH_W == 280:
        assert wrapped, "the 280-bit test needs sums that overflow the accumulator"
    # sigma = accumulator + wraps * 2^W; |sigma| < 2^280, so a 280-bit accumulator wraps at most once
    wraps = {(v.sigma - v.accumulator(KULISCH_W)) >> KULISCH_W for v in sums}
    assert wraps <= ({-1, 0, 1} if KULISCH_W == 280 else {0}), f"wrap counts {sorted(wraps)}"
    for fmt in (W.FP16, W.AUTO, W.INT8):       # the header's W on the other formats too
        op = await b.start_operation(51 + fmt, 1, W.KULISCH_FIXED, W.FP32, fmt, E, 0b11, 0b01)
        b.contribute(op, {c: values[c] for c in (0, 1)})
        await b.wait_idle()
        b.check(check_w=True)
    await b.check_counters()
