"""Functional coverage: the model's bins, merging, holes, and sampling from real runs (what the
monitors saw, not what the stimulus planned)."""
import json
import subprocess
import sys

import pytest

from cosim.node.coverage import POINTS, Coverage, e_bin, sample, stall_bin
from golden.node import protocol as P
from cosim.node.node_harness import check, run_node
from cosim.node.regress import random_scenario


def test_bins_merge_by_adding_counts():
    a, b = Coverage(), Coverage()
    a.hit("operation: contributors", "3")
    b.hit("operation: contributors", "3")
    b.hit("DATA: verdict", "duplicate")
    merged = Coverage().merge(a).merge(b)
    assert merged.hits["operation: contributors"]["3"] == 2 and merged.hits["DATA: verdict"]["duplicate"] == 1
    assert Coverage.from_dict(json.loads(json.dumps(merged.to_dict()))).to_dict() == merged.to_dict()


def test_holes_and_percentage():
    from cosim.node.coverage import UNREACHABLE
    cov = Coverage()
    total = sum(len(b) for b in POINTS.values()) - len(UNREACHABLE)     # unreachable bins are left out
    assert cov.percent() == (0.0, 0, total)
    for point, bins in POINTS.items():
        for b in bins:
            cov.hit(point, b)
    assert cov.percent()[0] == 100.0 and not any(cov.holes().values())
    with pytest.raises(KeyError):
        cov.hit("operation: contributors", "9")


def test_bucket_functions():
    assert [e_bin(e) for e in (1, 2, 15, 16, 17, 100, 255, 256, 257, 3000, 4096)] == \
        ["1", "2-14", "15", "16", "17", "18-254", "255", "256", "257", "258-4095", "4096"]
    assert stall_bin([5, 6, 7]) == "none"
    assert stall_bin([5, 7, 8, 9]) == "light (<50%)"
    assert stall_bin([5, 9, 13]) == "heavy (>=50%)"
    assert stall_bin([5, 200]) == "long stall (>=100 cycles)"


def _run(sc, backend="batch-icarus"):
    run = run_node(sc, backend)
    report = check(sc, run)
    assert report.ok, "\n".join(str(m) for m in report.mismatches[:5])
    return sample(sc, run, report)


def test_sampled_from_what_happened_reset_while_sending():
    """A reset in the middle of a RESULT frame under TX backpressure is sampled as that phase
    because the output monitor saw a frame cut, and the interrupted operation ended by reset."""
    from test_node_reset import reset_scenario
    cov = _run(reset_scenario("fp32-arrival", "sending"))
    assert cov.hits["reset: phase x policy"]["TX frame cut fp32-arrival"] == 1
    assert cov.hits["frames lost to a reset"]["TX frame cut"] >= 1
    assert cov.hits["operation: how it ended"]["reset"] == 1
    assert cov.hits["operation: how it ended"]["complete"] == 1
    assert cov.hits["CONTROL: request -> response"]["COMMIT ACK"] == 2
    assert cov.hits["operation: policy x input x result"]["fp32-arrival fp32->fp32"] == 2


def test_sampled_end_window_and_held_commit():
    import test_node_lifetime as lt       # the same scenario as its end-window test
    from cosim.node.scenarios import Scenario
    from golden.node import protocol as P
    first, second = lt.op(1, 1, "kulisch", 1), lt.op(2, 2, "kulisch", 2)
    sc = Scenario(seed=7)
    sc.add(0, first.stage())
    commit1 = sc.add(0, first.commit())
    d0, d1 = first.data_frames(0), first.data_frames(1)
    for fr in d0:
        sc.add(0, fr)
    sc.add(1, d1[0], after=(0, commit1))
    last1 = sc.add(1, d1[1])
    sc.add(0, second.stage(), after=(1, last1))
    sc.add(0, d0[0], delay=2)
    sc.add(0, P.Abort(1, 1), delay=2)
    sc.add(0, second.commit(), delay=2)
    cov = _run(sc, "batch-verilator")      # the run's Verilator node: 10 s of batched Icarus
    window = cov.hits["end window: request x TX backpressure"]
    assert window["STAGE no stall"] == window["DATA no stall"] == window["ABORT no stall"] == 1
    assert cov.hits["ABORT: phase"]["NOT_OPEN, in the end window"] == 1
    assert cov.hits["COMMIT ACK: while the previous operation drains (held)"]["held"] == 1
    assert cov.hits["DATA: verdict"]["no_operation"] == 1


def test_regress_writes_the_coverage_report(tmp_path):
    cmd = [sys.executable, "-m", "cosim.cli", "regress", "--seeds", "2", "--jobs", "1", "--width", "320",
           "--backend", "batch-verilator", "--out", str(tmp_path)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "functional coverage" in r.stdout and "verdict: PASS" in r.stdout
    data = json.loads((tmp_path / "coverage.json").read_text())
    assert 0 < data["bins_hit"] < data["bins"] and data["holes"]
    assert "| cover point | bins hit | holes |" in (tmp_path / "coverage.md").read_text()
    assert "Traceback" not in r.stderr
    # not a terminal: progress comes as plain lines, not a bar redrawn into the log
    assert "\r" not in r.stderr and "seeds 2/2" in r.stderr


def test_unreachable_bins_are_unreachable_by_the_protocol_limits():
    """Each bin left out of the percentage is out of reach for the reason given: a full frame
    bank of that format holds more elements than the node's largest operation."""
    from cosim.node import coverage as C
    capacity = 4096                      # the node's CAPACITY in every regression
    names = {"INT8": [P.FMT_INT8], "FP16/BF16": [P.FMT_FP16, P.FMT_BF16], "FP32": [P.FMT_FP32]}
    for (point, b), why in C.UNREACHABLE.items():
        assert point in C.POINTS and b in C.POINTS[point] and why
        if point == "DATA: full frame bank (1 + 256 beats)":
            assert all(P.MAX_PAYLOAD_BEATS * P.ELEMS_PER_BEAT[f] > capacity for f in names[b])
    # and the reachable one is reachable
    assert P.MAX_PAYLOAD_BEATS * P.ELEMS_PER_BEAT[P.FMT_FP32] <= capacity
    assert ("DATA: full frame bank (1 + 256 beats)", "FP32") not in C.UNREACHABLE
