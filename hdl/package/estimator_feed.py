"""What the service-rate estimator counts as retired work, shared by the compositions that
put the estimator beside a work_distributor: accelerator_package and the formal
work-accounting harness (cosim/formal/harness.py).  (They, and checked_work_distributor,
wire the distributor by name: hdl/common/wiring.py.)
"""
from myhdl import always_comb, block


@block
def estimator_feed(retry_fire, m_job_target, m_job_work, retire_fire, retire_target, retire_work,
                   est_retire, est_target, est_work, RETRY_AS_WORK=False):
    """The retirements the service-rate estimator counts: the distributor's, or (RETRY_AS_WORK,
    accelerator_package's test-only FAULT_RETRY_AS_WORK) also every transport retry."""
    retry_as_work = bool(RETRY_AS_WORK)

    @always_comb
    def estimator_events():
        if retry_as_work and retry_fire:
            # BUG (FAULT_RETRY_AS_WORK): a transport attempt counted as completed work.
            est_retire.next = True
            est_target.next = m_job_target
            est_work.next = m_job_work
        else:
            est_retire.next = retire_fire
            est_target.next = retire_target
            est_work.next = retire_work

    return estimator_events
