"""A cocotb test of a PRISM node with the kit's verification component (cosim.cocotb_vip).

run.py starts it through cocotb's runner; to use the component in a bench of your own, copy
this file: build a PrismNodeEnv around the design, send frames, wait, check.  Settings come
from the environment (run.py sets them):

PRISM_VIP_KULISCH_W   the design's KULISCH_W (320 or 280; every RESULT header carries it)
PRISM_VIP_CAPACITY    the design's CAPACITY (largest element count of a STAGE)
PRISM_VIP_SEED        seed of the values, pauses and random operations
PRISM_VIP_OPERATIONS  random operations after the two fixed ones (0: none), with resets
PRISM_VIP_OUT         folder for the coverage report (coverage.md, coverage.json)
"""
import os
import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles

from cosim.cocotb_vip import PrismNodeEnv, protocol as P

KULISCH_W = int(os.environ.get("PRISM_VIP_KULISCH_W", "320"))
CAPACITY = int(os.environ.get("PRISM_VIP_CAPACITY", "4096"))
SEED = int(os.environ.get("PRISM_VIP_SEED", "1"))
OPERATIONS = int(os.environ.get("PRISM_VIP_OPERATIONS", "0"))
OUT = os.environ.get("PRISM_VIP_OUT", "")
CLOCK_NS = 10


def random_values(rng, fmt, n):
    """n random bit patterns of input format `fmt` (subnormals, infinities and NaNs among them)."""
    width = P.ELEMENT_BITS[fmt]
    return [rng.getrandbits(width) for _ in range(n)]


async def start_operation(env, stage, port=0, attempts=50):
    """STAGE, then COMMIT until it is not refused BUSY (the previous operation still drains).
    Whatever the design answers, the scoreboard judges it; this only paces the stimulus."""
    await env.request(stage, port)
    for _ in range(attempts):
        answer = await env.request(P.Commit(stage.op_id, stage.generation), port)
        if answer is None or answer.ack or answer.reason != P.BUSY:
            return answer
        await ClockCycles(env.clk, 20)
    return answer


def contribute(env, rng, stage, contributors, cut=None):
    """DATA frames of every contributor (on receive port contributor % 2), cut at multiples of 16
    elements when `cut` is given, in random order."""
    frames = []
    for c in contributors:
        values = random_values(rng, stage.in_format, stage.count)
        step = cut or stage.count
        for offset in range(0, stage.count, step):
            chunk = values[offset:offset + step]
            frames.append((c % 2, P.Data(stage.op_id, stage.generation, c, stage.in_format, offset, tuple(chunk))))
    rng.shuffle(frames)
    for port, frame in frames:
        env.send(port, frame)


def random_stage(rng, op_id):
    policy = rng.choice((P.POLICY_KULISCH, P.POLICY_FP32_ARRIVAL))
    results = [P.FMT_INT8, P.FMT_FP16, P.FMT_BF16, P.FMT_FP32, P.FMT_AUTO]
    if policy == P.POLICY_KULISCH:
        results.append(P.FMT_EXACT)
    mode = rng.choice((P.MODE_REDUCE, P.MODE_ALLREDUCE))
    recipients = rng.choice((1, 2)) if mode == P.MODE_REDUCE else rng.choice((1, 2, 3))
    contributors = sum(1 << c for c in rng.sample(range(P.MAX_CONTRIBUTORS), rng.randint(1, 4)))
    count = min(CAPACITY, rng.choice((1, 15, 16, 17, 40, 100, 256, 300)))
    return P.Stage(op_id, rng.randrange(1 << 16), policy, rng.choice((P.FMT_INT8, P.FMT_FP16, P.FMT_BF16, P.FMT_FP32)),
                   rng.choice(results), mode, count, contributors, recipients)


@cocotb.test()
async def node_operations(dut):
    """Two small operations under random backpressure on all four streams, a refused request and
    an unsupported frame between them, then PRISM_VIP_OPERATIONS random ones (resets among them);
    every frame, response and counter judged by the scoreboard."""
    cocotb.start_soon(Clock(dut.clk, CLOCK_NS, unit="ns").start(start_high=False))
    env = await PrismNodeEnv.create(dut, kulisch_w=KULISCH_W, capacity=CAPACITY)
    rng = random.Random(SEED)
    env.source_pauses(0.2, seed=SEED)
    env.sink_pauses(0.3, seed=SEED)

    # KULISCH_FIXED, FP16 in, FP32 out, E = 40, contributors 0 and 1, AllReduce to both ports
    first = P.Stage(1, 1, P.POLICY_KULISCH, P.FMT_FP16, P.FMT_FP32, P.MODE_ALLREDUCE, 40, 0b11, 0b11)
    await start_operation(env, first)
    contribute(env, rng, first, (0, 1), cut=32)
    env.send(0, P.Commit(9, 9))             # nothing staged: NACK NO_STAGED
    env.send(1, [0x0])                      # class 0: drained and counted as unsupported
    await env.wait_idle()

    # FP32_ARRIVAL, BF16 in, AUTO out, E = 17, contributor 2 alone, Reduce to TX port 1
    second = P.Stage(2, 7, P.POLICY_FP32_ARRIVAL, P.FMT_BF16, P.FMT_AUTO, P.MODE_REDUCE, 17, 0b100, 0b10)
    await start_operation(env, second, port=1)
    contribute(env, rng, second, (2,))
    await env.wait_idle()

    for k in range(OPERATIONS):
        stage = random_stage(rng, 10 + k)
        await start_operation(env, stage, port=rng.randrange(2))
        contribute(env, rng, stage, [c for c in range(P.MAX_CONTRIBUTORS) if stage.contributors >> c & 1],
                   cut=rng.choice((None, 16, 32, 64)))
        if rng.random() < 0.3:              # a reset while DATA comes in, results go out, or after
            await ClockCycles(env.clk, rng.randrange(100))
            await env.reset()
        await env.wait_idle()

    await env.wait_idle()
    report = await env.check(raise_on_failure=False)
    if OUT:
        report.coverage.write(OUT)
    if not report.ok:
        raise AssertionError(report.summary())
