"""PRISM node counters, read one at a time through a select input.

Phase 1 bookkeeping of the SINGLE node (docs/protocol.md, "Counters").  One
32-bit counter per event kind; `counter_value` shows the counter chosen by
`counter_select` one cycle later, which keeps the node's port list narrow.

Counter map (counter_select):
    16*P + 0    port P: CONTROL requests answered        (P = 0, 1)
    16*P + 1    port P: DATA frames admitted
    16*P + 2+k  port P: DATA frames dropped for reason k: too_long, no_operation,
                wrong_op, stale_generation, bad_contributor, bad_format, bad_range,
                bad_length, duplicate (k = 0 .. 8)
    16*P + 11   port P: unsupported frames drained
    16*P + 12   port P: frames truncated by a reset in the middle of the frame
    32          ranges completed
    33          RESULT frames sent (their last beat taken on a transmit port: an AllReduce to two
                ports counts 2)
    34          CONTROL responses sent (taken on TX port 0)
Other selections read 0.  "Frames accepted" of the protocol is counter 0 + 1.

The counters are not cleared by rst (a reset is itself an event they count:
`truncated`); they start at 0 and wrap modulo 2^32.

Ports (buses in hdl/node/prism_buses.py):
    clk, rst                clock; reset (only observed, to count truncated frames)
    p0_event, p1_event      CounterEvent of port 0, 1: a verdict's event code 0 .. 10 as above
    p0_status, p1_status    PortStatus of port 0, 1: unsupported frame drained (pulse), inside a frame
                            (a reset now truncates it)
    ranges_done             number of ranges completed this cycle (0 .. 8; any width up to 32 bits)
    results_sent            number of RESULT frames sent this cycle (2 bits)
    response_sent           pulse: a CONTROL response was sent
    counter_select          which counter to show (6 bits)
    counter_value           out: that counter (32 bits), registered
"""
from myhdl import Signal, always, block, modbv

from spec.frames import (COUNTER_BITS, COUNTERS, CTR_PORT_STRIDE, CTR_RANGES, CTR_RESPONSES, CTR_RESULTS,
                         CTR_TRUNCATED, CTR_UNSUPPORTED)


@block
def prism_counters(clk, rst, p0_event, p1_event, p0_status, p1_status, ranges_done, results_sent, response_sent,
                   counter_select, counter_value):
    if len(counter_value) != COUNTER_BITS:
        raise ValueError("prism_counters: counter_value is 32 bits")
    if len(counter_select) != 6:
        raise ValueError("prism_counters: counter_select is 6 bits")
    mem = [Signal(modbv(0)[COUNTER_BITS:]) for _ in range(COUNTERS)]

    @always(clk.posedge)
    def count_events():
        # Each event kind below updates a different counter, so several may land in one cycle.
        # Events are pulses registered by their blocks at the edge they happened, so one that
        # happened at the last edge before a reset is counted during it.  The drain pulse of an
        # unsupported frame is registered at its TLAST, like the stored frames' hand-over to
        # validation: a frame completing in the cycle rst rises is neither validated nor
        # counted, whatever its class.
        if rst:
            if p0_status.in_frame:
                mem[CTR_TRUNCATED].next = mem[CTR_TRUNCATED] + 1
            if p1_status.in_frame:
                mem[CTR_PORT_STRIDE + CTR_TRUNCATED].next = mem[CTR_PORT_STRIDE + CTR_TRUNCATED] + 1
        else:
            if p0_status.unsupported:
                mem[CTR_UNSUPPORTED].next = mem[CTR_UNSUPPORTED] + 1
            if p1_status.unsupported:
                mem[CTR_PORT_STRIDE + CTR_UNSUPPORTED].next = mem[CTR_PORT_STRIDE + CTR_UNSUPPORTED] + 1
        if p0_event.valid:
            mem[p0_event.code].next = mem[p0_event.code] + 1
        if p1_event.valid:
            mem[CTR_PORT_STRIDE + p1_event.code].next = mem[CTR_PORT_STRIDE + p1_event.code] + 1
        if ranges_done != 0:
            mem[CTR_RANGES].next = mem[CTR_RANGES] + ranges_done
        if results_sent != 0:
            mem[CTR_RESULTS].next = mem[CTR_RESULTS] + results_sent
        if response_sent:
            mem[CTR_RESPONSES].next = mem[CTR_RESPONSES] + 1
        if counter_select < COUNTERS:
            counter_value.next = mem[counter_select]
        else:
            counter_value.next = 0

    return count_events
