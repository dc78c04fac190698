"""`prism mutate fabric` and `prism mutate package`: the campaign on the kit's other designs,
each judged by its own checks (the fabric's 34 conformance properties, the package's six
assertions and the end of its workload).  A small campaign per design must run, keep the
unmutated design passing, and kill mutants by what those checks report; each judge is shown
failing on the kind of run it must reject."""
import json

import pytest

from cosim.mutation.campaign import run_campaign, write


def _campaign(target, tmp_path, mutants, seeds):
    camp = run_campaign(target, mutants=mutants, seeds=seeds, seed=3, jobs=1, timeout=120, first_round=1,
                        equivalence=False, build_folder=str(tmp_path / "build"))
    write(camp, str(tmp_path / "out"), "prism mutate test")
    report = json.loads((tmp_path / "out" / "mutation.json").read_text())
    return camp, report


def test_fabric_campaign_kills_by_property(tmp_path):
    from cosim.fabric.fabric_mutants import fabric_target
    camp, report = _campaign(fabric_target(), tmp_path, 12, [1, 2])
    statuses = {m.status for m in camp.mutants}
    assert statuses <= {"killed", "survived"}
    killed = [m for m in camp.mutants if m.status == "killed"]
    assert killed and {m.caught_by for m in killed} <= {"property", "crash", "hang"}
    assert any(m.caught_by == "property" and "fired at cycle" in m.message for m in killed)
    assert len(report["mutants"]) == 12


def test_fabric_judge_rejects_a_property_and_a_leftover():
    from cosim.fabric.fabric_mutants import judge
    quiet = {"violations": 0, "violations_seen": 0}
    assert judge([quiet] * 3) == ((), "")
    kinds, message = judge([quiet, {"violations": 1 << 6, "violations_seen": 1 << 6}, quiet])
    assert kinds == ("property",) and message == "property B1 fired at cycle 1"
    kinds, message = judge([quiet, {"violations": 0, "violations_seen": 1}])
    assert kinds == ("property",) and "A1" in message and "at the end" in message


def test_package_setups_are_hostile_and_pass_on_the_design():
    from cosim.package.package_mutants import hostile_setup
    setups = [hostile_setup(s) for s in range(1, 9)]
    assert len(set(setups)) == 8
    assert any(s.retries for s in setups) and any(s.late_completions for s in setups)
    assert any(s.resets for s in setups) and any(s.events for s in setups) and any(s.phases == 2 for s in setups)


def test_package_judge_rejects_an_assertion_a_hang_and_a_lost_job():
    from cosim.package.package_bench import FAIL_PORTS, PackageRun, PackageSetup, PACKAGE_OUTPUTS
    from cosim.package.package_mutants import judge
    setup = PackageSetup(die_rate=(8, 8, 8, 8), phase_units=8, job_work=4)      # 2 jobs
    n = 4

    def run(**cols):
        trace = {name: [0] * n for name, _ in PACKAGE_OUTPUTS}
        trace["phases_done"] = [0, 0, 0, 1]
        trace["retire_fire"] = [0, 1, 1, 0]
        trace.update(cols)
        return PackageRun(setup, "test", trace)
    assert judge(setup, run()) == ((), "")
    assert judge(setup, run(**{FAIL_PORTS[0]: [0, 0, 1, 1]}))[0] == ("property",)
    assert judge(setup, run(phases_done=[0, 0, 0, 0]))[0] == ("timeout",)
    assert judge(setup, run(retire_fire=[0, 1, 0, 0]))[0] == ("end-state",)


@pytest.mark.slow
def test_package_campaign_kills_by_assertion_or_end(tmp_path):
    from cosim.package.package_mutants import package_target
    camp, _ = _campaign(package_target(), tmp_path, 10, [1, 2])
    killed = [m for m in camp.mutants if m.status == "killed"]
    assert killed and {m.caught_by for m in killed} <= {"property", "hang", "busy or end state", "crash"}


@pytest.mark.parametrize("argv,message", [
    (["mutate", "fabric", "--dut", "x.v"], "--dut applies to the node only, not to the fabric"),
    (["mutate", "package", "--width", "280"], "--width applies to the node only, not to the package"),
    (["mutate", "package", "--backend", "batch-verilator"], "the package runs on batch-icarus only"),
    (["mutate", "switch"], "invalid choice: 'switch'"),
])
def test_cli_refuses_what_a_design_does_not_take(argv, message, capsys):
    from cosim.cli import main
    try:
        status = main(argv)
    except SystemExit as e:         # argparse's own refusals exit
        status = e.code
    assert status == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
