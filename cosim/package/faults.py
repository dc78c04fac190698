"""The accelerator package's test faults: the notes' failure lenses as deliberate bugs, each an
edit of the converted Verilog (cosim/sim/faults.py) that makes one package assertion fail.

    setup = FAULT_BASE.with_(fault="no_gen_check", late_completions=stale)    # package_bench
    bench = VectorBench(with_fault(checked_work_distributor, PACKAGE_FAULTS["tie_lowest"]), ...)

The work distributor's faults apply to every design that holds one distributor instance
(`work_distributor0`): accelerator_package, the test harness checked_work_distributor
(cosim/package/checked_work_distributor.py) and the formal work-accounting harness;
retry_as_work to every design where the service-rate estimator counts the distributor's
retirements (accelerator_package and the formal work-accounting harness).  Each edit is
confined to one process, named by its block's label, and reads the distributor's ports under
their own names (the designs wire them by name: hdl/common/wiring.py).  A design change that
moves an anchor makes the fault fail to build (FaultAnchorError); tests/sim/test_faults.py builds
every fault on each of those designs.
"""
from cosim.sim.faults import Edit, Fault

SELECT = "work_distributor0_select"
HANDSHAKE = "work_distributor0_handshake"
COMPLETION = "work_distributor0_completion"
STATE = "work_distributor0_state_update"
ESTIMATOR = "service_rate_estimator0_measure"


def _tie_lowest(p):
    n = len(p["tgt_enable"])
    return Edit(f"""cand = ($signed({{1'b0, work_distributor0_rr_ptr}}) + k);
            if ((cand >= {n})) begin
                cand = (cand - {n});
            end
""", "cand = k;\n", within=SELECT)


def _retry_as_job(p):
    return (Edit("        rf = tr;\n", "        rf = tr;\n        nf = (tr && work_distributor0_have_free);\n",
                 within=HANDSHAKE),
            # the second job takes the retried one's target, id and work
            Edit("        new_tgt = work_distributor0_sel_target;\n", """        new_tgt = work_distributor0_sel_target;
        if (retry_fire) begin
            new_tgt = work_distributor0_tbl_tgt[retry_slot];
        end
""", within=STATE),
            Edit("""            work_distributor0_tbl_tid[work_distributor0_free_slot] <= s_axis_job_tid;
            work_distributor0_tbl_work[work_distributor0_free_slot] <= s_axis_job_tdata;
""", """            if (retry_fire) begin
                work_distributor0_tbl_tid[work_distributor0_free_slot] <= work_distributor0_tbl_tid[retry_slot];
                work_distributor0_tbl_work[work_distributor0_free_slot] <= work_distributor0_tbl_work[retry_slot];
            end
            else begin
                work_distributor0_tbl_tid[work_distributor0_free_slot] <= s_axis_job_tid;
                work_distributor0_tbl_work[work_distributor0_free_slot] <= s_axis_job_tdata;
            end
""", within=STATE),
            Edit("                inc = s_axis_job_tdata;\n", """                if (retry_fire) begin
                    inc = work_distributor0_tbl_work[retry_slot];
                end
                else begin
                    inc = s_axis_job_tdata;
                end
""", within=STATE))


def _epoch_rewrite(p):
    epoch_w, n_job = len(p["route_epoch"]), 1 << len(p["m_job_slot"])
    return (Edit(r"^(reg \[\d+:0\] work_distributor0_rr_ptr = 0;)$",
                 rf"\1\nreg [{epoch_w - 1}:0] work_distributor0_last_epoch = 0;", regex=True),
            Edit("    integer t;\n", "    integer j;\n    integer t;\n", within=STATE),
            Edit("    if (rst == 1) begin\n", "    if (rst == 1) begin\n        work_distributor0_last_epoch <= 0;\n",
                 within=STATE),
            Edit("        for (t=0;", f"""        work_distributor0_last_epoch <= route_epoch;
        if ((route_epoch != work_distributor0_last_epoch)) begin
            for (j=0; j<{n_job}; j=j+1) begin
                if ((work_distributor0_tbl_live[j] && (!(work_distributor0_fire_new && ($signed({{1'b0, work_distributor0_free_slot}}) == j))))) begin
                    work_distributor0_tbl_epoch[j] <= route_epoch;
                end
            end
        end
        for (t=0;""", within=STATE))


_FAULTS = [
    Fault("no_gen_check", "work_distributor",
          "retirement ignores the generation: a stale completion retires the slot's next job",
          Edit(r"m = \(work_distributor0_tbl_gen\[\w+\] == \w+\);", "m = 1'b1;", regex=True, within=COMPLETION)),
    Fault("retry_as_job", "work_distributor", "a transport retry allocates a new job entry", _retry_as_job),
    Fault("epoch_rewrite", "work_distributor",
          "a route-epoch change is written into every live entry (a remap without quiescing)", _epoch_rewrite),
    Fault("tie_lowest", "work_distributor",
          "service-rate ties go to the lowest index (the notes' §14 selection loop as written)", _tie_lowest),
    Fault("retry_as_work", "service_rate_estimator",
          "the estimator counts a transport retry as retired work (the §16 conflation)",
          # what the estimator counts as a retirement: the distributor's, or a retry re-sent on the dispatch bus
          (Edit(r"\bretire_fire\b", "(retire_fire || retry_fire)", regex=True, within=ESTIMATOR),
           Edit(r"\bretire_target\b", "(retry_fire ? m_job_target : retire_target)", regex=True, within=ESTIMATOR),
           Edit(r"\bretire_work\b", "(retry_fire ? m_job_work : retire_work)", count=2, regex=True, within=ESTIMATOR))),
]
PACKAGE_FAULTS = {f.name: f for f in _FAULTS}
