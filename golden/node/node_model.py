"""Transaction-level golden model of the PRISM SINGLE node (docs/protocol.md).

Feed it every frame in admission order (`receive(port, beats)`); it returns what
the node must send: CONTROL responses on TX port 0 and RESULT frames on their
recipient ports, bit-exactly.  It keeps the node's counters too.

An operation is open from its COMMIT until the admission that completes its
last range, or until an ABORT of it (docs/protocol.md, "Operation lifetime");
the node's drain after that is timing, which the model does not predict (a
COMMIT the node holds during the drain gets the answer the model gives).

What the model does not predict is timing: RESULT frames of different blocks
may leave in any order the hardware's latencies give, so a scoreboard compares
responses in order and RESULT frames per port as a set keyed by (op, offset).
"""
from collections import Counter, defaultdict
from dataclasses import dataclass

from golden.node import protocol as P
from golden.arith.auto import auto_format
from golden.arith.formats import fp32_to_format
# the reference's bits on the host's binary64 (tests/arith/test_fp32_fast.py holds them equal)
from golden.arith.fp32_arith import fp32_add_fast as fp32_add, format_to_fp32_fast as format_to_fp32
from golden.arith.kulisch import KulischAccumulator
from spec.formats import KULISCH_WIDTH_DEFAULT, KULISCH_WIDTHS
from spec.frames import MAX_CAPACITY


@dataclass
class Output:
    port: int
    frame: object          # protocol.Response or protocol.Result
    cause: str = ""        # what made the node send it (for logs and reports)


class _Operation:
    def __init__(self, stage, kulisch_w):
        self.stage = stage
        e = stage.count
        self.ranges = -(-e // P.RANGE_ELEMS)
        self.blocks = -(-e // P.BLOCK_ELEMS)
        self.contributed = defaultdict(set)        # contributor -> set of ranges
        self.range_contributors = [0] * self.ranges
        self.expected = bin(stage.contributors).count("1")
        self.blocks_sent = set()
        self.aborted = False
        self.frames_admitted = 0
        if stage.policy == P.POLICY_KULISCH:
            self.acc = [KulischAccumulator(kulisch_w) for _ in range(e)]
        else:
            self.acc = [None] * e                  # FP32 bits, None until the first contribution
        self.admissions = defaultdict(list)       # element -> [(contributor, frame number)]

    @property
    def in_progress(self):
        """Open: DATA is admitted, a COMMIT of another operation is BUSY."""
        return not self.aborted and len(self.blocks_sent) < self.blocks


class NodeModel:
    def __init__(self, capacity=MAX_CAPACITY, kulisch_w=KULISCH_WIDTH_DEFAULT, ports=2):
        if kulisch_w not in KULISCH_WIDTHS:
            raise ValueError(f"KULISCH_W must be 280 or 320, not {kulisch_w}")
        self.capacity, self.kulisch_w, self.ports = capacity, kulisch_w, ports
        self.staged = None
        self.active = None
        self.counters = [Counter() for _ in range(ports)]
        self.node_counters = Counter()
        self.frames_admitted = 0
        self.operations = {}      # (op_id, generation) -> _Operation, every committed operation
        self.last = {}            # what the last frame met (see receive)

    def reset(self):
        """A node reset: staged and active operations are gone; counters persist
        (the node's counters are not cleared by reset, they count it)."""
        self.staged = None
        self.active = None

    # --- entry point -----------------------------------------------------------
    def receive(self, port, beats):
        """One complete frame from receive port `port`; returns a list of Output.  What the
        frame met and what became of it is left in `last` (for coverage and logs):
        {"kind": STAGE/COMMIT/ABORT/CONTROL/DATA/unsupported, "verdict": a reason or drop name,
        "op": the active operation before the frame (or None), "open": it was open}."""
        cls = P.get_field(beats[0], "class")
        op = self.active
        self.last = {"op": op, "open": op is not None and op.in_progress,
                     "admitted_before": 0 if op is None else op.frames_admitted,
                     "blocks_before": 0 if op is None else len(op.blocks_sent)}
        if cls == P.CLASS_CONTROL:
            opc = P.get_field(beats[0], "opcode")
            self.last["kind"] = {P.OP_STAGE: "STAGE", P.OP_COMMIT: "COMMIT", P.OP_ABORT: "ABORT"}.get(opc, "CONTROL")
            out = self._control(port, beats)
            self.last["verdict"] = P.REASON_NAMES[out[0].frame.reason]
            self.last["new_op"] = self.active
        elif cls == P.CLASS_DATA:
            self.last["kind"] = "DATA"
            out = self._data(port, beats)
        else:
            self.last.update(kind="unsupported", verdict="unsupported")
            self.counters[port]["unsupported"] += 1
            out = []
        # this frame ended the open operation (its last range complete, or an ABORT)
        self.last["ends_op"] = self.last["open"] and not op.in_progress
        return out

    # --- CONTROL -----------------------------------------------------------------
    def _respond(self, port, head, reason, cause):
        opc = P.get_field(head, "opcode")
        resp = P.Response(reason == P.OK, P.get_field(head, "op_id"), P.get_field(head, "generation"), reason, opc)
        self.counters[port]["control_accepted"] += 1
        self.node_counters["responses"] += 1
        return [Output(0, resp, cause)]

    def _control(self, port, beats):
        head = beats[0]
        if len(beats) != 1:
            return self._respond(port, head, P.BAD_LENGTH, "CONTROL longer than one beat")
        opc = P.get_field(head, "opcode")
        if opc == P.OP_STAGE:
            st = P.decode(beats)
            reason = self._check_stage(st)
            if reason == P.OK:
                self.staged = st
            return self._respond(port, head, reason, "STAGE")
        if opc == P.OP_COMMIT:
            op_id, gen = P.get_field(head, "op_id"), P.get_field(head, "generation")
            if self.staged is None:
                reason = P.NO_STAGED
            elif (self.staged.op_id, self.staged.generation) != (op_id, gen):
                reason = P.STAGED_MISMATCH
            elif self.active is not None and self.active.in_progress:
                reason = P.BUSY
            else:
                reason = P.OK
                self.active = _Operation(self.staged, self.kulisch_w)
                self.operations[(op_id, gen)] = self.active
                self.staged = None
            return self._respond(port, head, reason, "COMMIT")
        if opc == P.OP_ABORT:
            op_id, gen = P.get_field(head, "op_id"), P.get_field(head, "generation")
            op = self.active
            if op is None or not op.in_progress:
                reason = P.NOT_OPEN
            elif (op.stage.op_id, op.stage.generation) != (op_id, gen):
                reason = P.ACTIVE_MISMATCH
            else:
                reason = P.OK
                op.aborted = True
            return self._respond(port, head, reason, "ABORT")
        return self._respond(port, head, P.BAD_OPCODE, f"opcode {opc}")

    def _check_stage(self, st):
        if st.policy not in (P.POLICY_KULISCH, P.POLICY_FP32_ARRIVAL):
            return P.BAD_POLICY
        if st.result_format > P.FMT_AUTO or (st.result_format == P.FMT_EXACT and st.policy == P.POLICY_FP32_ARRIVAL):
            return P.BAD_FORMAT
        if st.in_format > P.FMT_EXACT or (st.in_format == P.FMT_EXACT and st.policy == P.POLICY_FP32_ARRIVAL):
            return P.BAD_FORMAT         # EXACT partials merge into Kulisch rows only
        if not 1 <= st.count <= self.capacity:
            return P.BAD_COUNT
        if st.contributors == 0:
            return P.BAD_CONTRIBUTORS
        if st.recipients == 0 or (st.mode == P.MODE_REDUCE and bin(st.recipients).count("1") != 1) \
                or st.recipients >> self.ports:
            return P.BAD_RECIPIENTS
        return P.OK

    # --- DATA --------------------------------------------------------------------
    def validate(self, beats):
        """The drop reason for a DATA frame (docs/protocol.md order), or None to admit."""
        head = beats[0]
        op = self.active
        if len(beats) > 1 + P.MAX_PAYLOAD_BEATS:
            return "too_long"
        if op is None or not op.in_progress:
            return "no_operation"
        st = op.stage
        if P.get_field(head, "op_id") != st.op_id:
            return "wrong_op"
        if P.get_field(head, "generation") != st.generation:
            return "stale_generation"
        contributor = P.get_field(head, "contributor")
        if not (st.contributors >> contributor) & 1:
            return "bad_contributor"
        fmt = P.get_field(head, "data_format")
        if fmt != st.in_format:
            return "bad_format"
        off, n = P.get_field(head, "offset"), P.get_field(head, "n")
        if n < 1 or off % P.RANGE_ELEMS or off + n > st.count or (n % P.RANGE_ELEMS and off + n != st.count):
            return "bad_range"
        if len(beats) != 1 + P.payload_beats(fmt, n):
            return "bad_length"
        ranges = range(off // P.RANGE_ELEMS, -(-(off + n) // P.RANGE_ELEMS))
        if any(r in op.contributed[contributor] for r in ranges):
            return "duplicate"
        return None

    def _data(self, port, beats):
        reason = self.validate(beats)
        self.last["verdict"] = reason or "admitted"
        if reason is not None:
            self.counters[port][f"dropped_{reason}"] += 1
            return []
        self.counters[port]["data_accepted"] += 1
        self.frames_admitted += 1
        self.active.frames_admitted += 1
        frame = P.decode(beats)
        op = self.active
        st = op.stage
        for j, bits in enumerate(frame.values):
            i = frame.offset + j
            op.admissions[i].append((frame.contributor, self.frames_admitted))
            if st.in_format == P.FMT_EXACT:
                op.acc[i].add_exact(*bits)          # a child's partial: (sum, flags)
            elif st.policy == P.POLICY_KULISCH:
                op.acc[i].add(P.FORMAT_NAMES[st.in_format], bits)
            else:
                x = format_to_fp32(P.FORMAT_NAMES[st.in_format], bits)
                op.acc[i] = x if op.acc[i] is None else fp32_add(op.acc[i], x)
        out = []
        first_r, end_r = frame.offset // P.RANGE_ELEMS, -(-(frame.offset + len(frame.values)) // P.RANGE_ELEMS)
        for r in range(first_r, end_r):
            op.contributed[frame.contributor].add(r)
            op.range_contributors[r] += 1
            if op.range_contributors[r] == op.expected:
                self.node_counters["ranges_completed"] += 1
        for b in sorted({r * P.RANGE_ELEMS // P.BLOCK_ELEMS for r in range(first_r, end_r)}):
            if b not in op.blocks_sent and self._block_complete(op, b):
                op.blocks_sent.add(b)
                res = self.block_result(op, b)
                for p in range(self.ports):
                    if (st.recipients >> p) & 1:
                        out.append(Output(p, res, f"block {b} complete"))
                        self.node_counters["results"] += 1
        return out

    @staticmethod
    def _block_complete(op, b):
        first = b * P.BLOCK_ELEMS // P.RANGE_ELEMS
        last = min(op.ranges, first + P.BLOCK_ELEMS // P.RANGE_ELEMS)
        return all(op.range_contributors[r] == op.expected for r in range(first, last))

    # --- RESULT formation ----------------------------------------------------------
    def element_fp32(self, op, i):
        if op.stage.policy == P.POLICY_KULISCH:
            return op.acc[i].result("fp32")
        return op.acc[i]

    def element_value(self, op, i, fmt):
        """The bits of element i in result format code `fmt` (not AUTO)."""
        if op.stage.policy == P.POLICY_KULISCH:
            acc = op.acc[i]
            if fmt == P.FMT_EXACT:
                return (acc.true_sum, acc.flags)   # the exact sum; flag bits as the EXACT beat carries them
            return acc.result(P.FORMAT_NAMES[fmt])
        bits32 = op.acc[i]
        return bits32 if fmt == P.FMT_FP32 else fp32_to_format(P.FORMAT_NAMES[fmt], bits32)

    def block_result(self, op, b):
        st = op.stage
        lo, hi = b * P.BLOCK_ELEMS, min((b + 1) * P.BLOCK_ELEMS, st.count)
        groups = []
        for t in range(lo, hi, P.RANGE_ELEMS):
            tile = range(t, min(t + P.RANGE_ELEMS, hi))
            if st.result_format == P.FMT_AUTO:
                fp32 = [self.element_fp32(op, i) for i in tile]
                fmt = P.FORMAT_CODES[auto_format(fp32)]
                vals = [v if fmt == P.FMT_FP32 else fp32_to_format(P.FORMAT_NAMES[fmt], v) for v in fp32]
            else:
                fmt = st.result_format
                vals = [self.element_value(op, i, fmt) for i in tile]
            if groups and groups[-1][0] == fmt:
                groups[-1][1].extend(vals)   # join adjacent uniform tiles within the frame
            else:
                groups.append((fmt, list(vals)))
        return P.Result(st.op_id, st.generation, lo, tuple((f, tuple(v)) for f, v in groups), self.kulisch_w)
