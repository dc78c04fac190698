"""prism_arrival_banks' side of its two handshakes, which its consumers rely on: each ready is high
while nothing is offered on it (a reader takes group.ready as its issue stage's advance, and
prism_completion takes cmd.ready as its "empty or taken", with no LUT of their own).  Random
inputs on every port, enabled or not, for a few hundred cycles of the MyHDL block; the
contracts must hold on every cycle, and the readies must also fall now and then (else the test
would hold for a block that is always ready)."""
import random

from myhdl import Signal, StopSimulation, block, delay, instance, intbv

from hdl.node.prism_arrival_banks import prism_arrival_banks

CAPACITY = 512          # 32 ranges: every bank holds two rows, so reservations and conflicts happen


def _signals():
    def sig(w=None):
        return Signal(bool(0)) if w is None else Signal(intbv(0)[w:])
    ports = dict(clk=sig(), rst=sig(), clear=sig(), enable=sig(), fmt=sig(2), cmd_valid=sig(), cmd_row=sig(8),
                 cmd_ready=sig(), ev0_valid=sig(), ev0_row=sig(8), ev0_n=sig(3), ev1_valid=sig(), ev1_row=sig(8),
                 ev1_n=sig(3), o_valid=sig(), o_row=sig(8), o_tile=sig(512))
    for p in (0, 1):
        ports.update({f"p{p}_valid": sig(), f"p{p}_ready": sig(), f"p{p}_row": sig(8), f"p{p}_lanes": sig(64),
                      f"p{p}_data": sig(2048), f"p{p}_active": sig(), f"p{p}_seq": sig(4), f"p{p}_lo": sig(9),
                      f"p{p}_hi": sig(9), f"p{p}_next": sig(9), f"p{p}_pend": sig(), f"p{p}_pseq": sig(4),
                      f"p{p}_plo": sig(9), f"p{p}_phi": sig(9)})
    return ports


def test_the_readies_are_high_while_nothing_is_offered():
    rng = random.Random(11)
    s = _signals()
    seen = {"p0": [0, 0], "p1": [0, 0], "cmd": [0, 0]}        # [cycles offered and refused, offered]
    broken = []

    @block
    def bench():
        dut = prism_arrival_banks(**s, CAPACITY=CAPACITY)

        @instance
        def drive():
            for cycle in range(150):
                s["rst"].next = cycle < 2
                s["clear"].next = cycle == 3 or rng.random() < 0.01
                s["enable"].next = cycle > 3 and rng.random() < 0.9
                s["fmt"].next = rng.randrange(4)
                for p in (0, 1):
                    lanes = rng.choice((0xFFFF, 0xFFFFFFFF, (1 << 64) - 1, 1 << rng.randrange(16)))
                    s[f"p{p}_valid"].next = rng.random() < 0.7
                    s[f"p{p}_row"].next = rng.randrange(CAPACITY // 16)
                    s[f"p{p}_lanes"].next = lanes
                    s[f"p{p}_data"].next = rng.getrandbits(2048)
                    s[f"p{p}_active"].next = rng.random() < 0.8
                    s[f"p{p}_seq"].next = rng.randrange(16)
                    s[f"p{p}_pend"].next = rng.random() < 0.3
                    s[f"p{p}_pseq"].next = rng.randrange(16)
                    lo = rng.randrange(CAPACITY // 16)
                    s[f"p{p}_lo"].next, s[f"p{p}_hi"].next = lo, min(CAPACITY // 16, lo + rng.randint(1, 8))
                    s[f"p{p}_next"].next = lo + rng.randint(0, 4)
                    plo = rng.randrange(CAPACITY // 16)
                    s[f"p{p}_plo"].next, s[f"p{p}_phi"].next = plo, min(CAPACITY // 16, plo + rng.randint(1, 8))
                s["cmd_valid"].next = rng.random() < 0.6
                s["cmd_row"].next = rng.randrange(CAPACITY // 16)
                yield delay(1)
                for name, valid, ready in (("p0", s["p0_valid"], s["p0_ready"]), ("p1", s["p1_valid"], s["p1_ready"]),
                                           ("cmd", s["cmd_valid"], s["cmd_ready"])):
                    if not valid and not ready:
                        broken.append((cycle, name))
                    if valid:
                        seen[name][1] += 1
                        seen[name][0] += not ready
                s["clk"].next = 1
                yield delay(1)
                s["clk"].next = 0
                yield delay(1)
            raise StopSimulation

        return dut, drive

    tb = bench()
    tb.run_sim()
    tb.quit_sim()
    assert not broken, f"ready low with nothing offered: {broken[:5]}"
    for name, (refused, offered) in seen.items():
        assert offered > 50 and refused > 0, (name, refused, offered)
