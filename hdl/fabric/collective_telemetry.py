"""collective_telemetry: what a leaf knows about a collective running across
it, snapshot into a register bank -- and the one field it cannot compute.

The uncomputable field is the JOB's minimum rate: a minimum over every
participant, of which this leaf holds a few.  It must be imported (i_job_min_*),
and without it no figure here may be published as the collective's rate.

Ports (widths from the signals; outputs are registered at `snapshot`):
    clk, rst                    clock; synchronous reset (ResetSignal)
    snapshot                    capture the inputs into the bank
    i_local_min_gbps, i_local_mean_gbps   this leaf's minimum and mean member rate
    i_slowest_member            this leaf's slowest member index
    i_slowest_unchanged         consecutive samples with the same slowest member
    i_samples                   samples taken (the seed's i_steps_done: the tracker
                                samples once per step)
    i_accel_seconds_lost        from stall_accountant
    i_flows_this_leaf           flows leaving this leaf
    i_busiest_uplink_flows      flows on its busiest uplink
    i_job_min_gbps, i_job_min_valid   the job-wide minimum, IMPORTED across leaves
    i_active_fix                fabric_fix_e: the remedy relied on (3 bits)
    i_fix_attempts, i_fix_successes   the remedy's own success metric (e.g. flows
                                placed / perfect placements, connections requested /
                                established, flowlet gaps seen / re-hashed)
    o_local_min_gbps, o_slowest_member, o_accel_seconds_lost, o_active_fix   copies
    o_mean_over_min_x10 (out)   floor(10 x mean / min); kept when min is 0
    o_pinned_samples_pct (out)  floor(100 x unchanged / samples), at most 100; kept when
                                samples is 0 (near 100: a pinned collision; near 100/n:
                                congestion)
    o_imbalance_x10 (out)       floor(10 x busiest_flows x UPLINKS / flows) (a prediction
                                from counts, not a measurement); kept when flows is 0
    o_job_min_gbps (out)        the published JOB rate: min(imported, local minimum) when
                                the import is valid (the job's minimum can never exceed
                                this leaf's, so a larger import is stale), else 0
    o_job_rate_claim (out)      o_job_min_gbps is published as the job's rate
    o_fix_effective_pct (out)   floor(100 x successes / attempts); 0 without attempts
    o_caveats (out)             bit 0 LOCAL_ONLY: no job-wide minimum imported
                                bit 1 PINNED: 2 x unchanged > samples
                                bit 2 FEW_FLOWS: flows < ceil(2 ln UPLINKS) x UPLINKS
                                bit 3 FIX_INERT: a remedy is active, has been tried,
                                      and has never succeeded
    o_rate_claim_valid (out)    not LOCAL_ONLY: a rate figure may be called the job's

Parameters:
    UPLINKS   uplinks per leaf (>= 1)

Fixed from the seed's simplifications: the remedy's effectiveness is published
(o_fix_effective_pct, FIX_INERT) next to the flag that says it is on; the FEW_FLOWS
threshold follows UPLINKS (the seed bakes 7 = 2 ln 32); 2 x unchanged and
100 x unchanged are formed one bit wider (the seed's 32-bit products wrap); a stale
import above the local minimum is clamped.  Not fixed: no read-clear;
o_imbalance_x10 is a prediction from flow counts.
"""
from myhdl import always_comb, always_seq, block, intbv

from hdl.fabric import collective_pkg as pkg

C_LOCAL_ONLY, C_PINNED, C_FEW_FLOWS, C_FIX_INERT = 0, 1, 2, 3
CAVEAT_BITS = 4


@block
def collective_telemetry(clk, rst, snapshot, i_local_min_gbps, i_local_mean_gbps, i_slowest_member,
                         i_slowest_unchanged, i_samples, i_accel_seconds_lost, i_flows_this_leaf,
                         i_busiest_uplink_flows, i_job_min_gbps, i_job_min_valid, i_active_fix,
                         i_fix_attempts, i_fix_successes,
                         o_local_min_gbps, o_mean_over_min_x10, o_slowest_member, o_pinned_samples_pct,
                         o_imbalance_x10, o_accel_seconds_lost, o_job_min_gbps, o_job_rate_claim,
                         o_active_fix, o_fix_effective_pct, o_caveats, o_rate_claim_valid,
                         UPLINKS=pkg.UPLINKS_PER_LEAF):
    name = "collective_telemetry"
    if not isinstance(UPLINKS, int) or UPLINKS < 1:
        raise ValueError(f"{name}: UPLINKS must be a positive integer, got {UPLINKS!r}")
    W = len(i_local_min_gbps)
    for port, sig in (("i_local_mean_gbps", i_local_mean_gbps), ("i_job_min_gbps", i_job_min_gbps),
                      ("o_local_min_gbps", o_local_min_gbps), ("o_job_min_gbps", o_job_min_gbps)):
        pkg.require_width(sig, W, name, port)
    pkg.require_width(o_slowest_member, len(i_slowest_member), name, "o_slowest_member")
    pkg.require_width(o_accel_seconds_lost, len(i_accel_seconds_lost), name, "o_accel_seconds_lost")
    pkg.require_width(i_active_fix, pkg.FIX_BITS, name, "i_active_fix")
    pkg.require_width(o_active_fix, pkg.FIX_BITS, name, "o_active_fix")
    pkg.require_width(o_caveats, CAVEAT_BITS, name, "o_caveats")
    pkg.require_width(o_pinned_samples_pct, 7, name, "o_pinned_samples_pct", at_least=True)
    pkg.require_width(o_fix_effective_pct, 7, name, "o_fix_effective_pct", at_least=True)
    FEW = pkg.few_flows_per_uplink(UPLINKS) * UPLINKS
    UW = max(len(i_slowest_unchanged), len(i_samples), len(i_fix_attempts), len(i_fix_successes)) + 8
    FW = len(i_busiest_uplink_flows) + UPLINKS.bit_length() + 5
    RW = W + 5
    MOM_MAX = (1 << len(o_mean_over_min_x10)) - 1
    IMB_MAX = (1 << len(o_imbalance_x10)) - 1
    FIX_NONE = pkg.FIX_NONE

    @always_seq(clk.posedge, reset=rst)
    def bank():
        r = intbv(0)[RW:]
        u = intbv(0)[UW:]
        f = intbv(0)[FW:]
        if snapshot:
            o_local_min_gbps.next = i_local_min_gbps
            o_slowest_member.next = i_slowest_member
            o_accel_seconds_lost.next = i_accel_seconds_lost
            o_active_fix.next = i_active_fix
            if i_local_min_gbps != 0:
                r[:] = i_local_mean_gbps * 10
                r[:] = r // i_local_min_gbps
                if r > MOM_MAX:
                    r[:] = MOM_MAX
                o_mean_over_min_x10.next = r
            if i_samples != 0:
                u[:] = i_slowest_unchanged * 100
                u[:] = u // i_samples
                if u > 100:
                    u[:] = 100
                o_pinned_samples_pct.next = u
            if i_flows_this_leaf != 0:
                f[:] = i_busiest_uplink_flows * (10 * UPLINKS)
                f[:] = f // i_flows_this_leaf
                if f > IMB_MAX:
                    f[:] = IMB_MAX
                o_imbalance_x10.next = f
            # A rate for a collective means the JOB's minimum, which this leaf cannot compute.
            if i_job_min_valid:
                o_job_rate_claim.next = 1
                if i_job_min_gbps > i_local_min_gbps:
                    o_job_min_gbps.next = i_local_min_gbps
                else:
                    o_job_min_gbps.next = i_job_min_gbps
            else:
                o_job_rate_claim.next = 0
                o_job_min_gbps.next = 0
            if i_fix_attempts != 0:
                u[:] = i_fix_successes * 100
                u[:] = u // i_fix_attempts
                if u > 100:
                    u[:] = 100
                o_fix_effective_pct.next = u
            else:
                o_fix_effective_pct.next = 0
            o_caveats.next[C_LOCAL_ONLY] = not i_job_min_valid
            u[:] = i_slowest_unchanged * 2
            o_caveats.next[C_PINNED] = i_samples != 0 and u > i_samples
            o_caveats.next[C_FEW_FLOWS] = i_flows_this_leaf < FEW
            o_caveats.next[C_FIX_INERT] = i_active_fix != FIX_NONE and i_fix_attempts != 0 \
                and i_fix_successes == 0
            o_rate_claim_valid.next = i_job_min_valid

    return bank
