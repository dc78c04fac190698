"""Peak resident memory of the golden kernels at 10^6 terms / flows.

    python bench/peak_memory.py [--json FILE]

Each case runs in a fresh Python process: imports, the input (built in small
pieces so no temporary raises the peak), one warm-up call on a small input
(numba's compilation or cache load), then the kernel at full size.  The
kernel's own peak is read from Linux's VmHWM after resetting it just before
the call (/proc/self/clear_refs); the process peak is VmHWM at the end without
the reset (ru_maxrss where /proc is not there).  Freed heap is handed back
(malloc_trim) before the call, so the call's own allocations show.  Sizes in
MiB.
"""
import argparse
import json
import subprocess
import sys

CASES = {
    "kulisch C, 10^6 x 1 FP32 (kulisch_accumulate)": ("kulisch", "c", "sequence", 4),
    "kulisch C, 64 x 16,384 FP32 (kulisch_reduce)": ("kulisch", "c", "allreduce", 4),
    "kulisch C, 64 x 16,384 FP32 -> FP32 (reduce)": ("kulisch", "c", "allreduce-fp32", 4),
    "kulisch numba, 10^6 x 1 FP32 (kulisch_accumulate)": ("kulisch", "numba", "sequence", 4),
    "kulisch numba, 64 x 16,384 FP32 (kulisch_reduce)": ("kulisch", "numba", "allreduce", 4),
    "kulisch numba, 64 x 16,384 FP32 -> FP32 (reduce)": ("kulisch", "numba", "allreduce-fp32", 4),
    "ECMP C, 10^6 flows CRC-32 hash": ("ecmp", "c", "hash", 13),
    "ECMP C, 10^6 flows CRC-32 hash + bin": ("ecmp", "c", "bin", 17),
    "ECMP numba, 10^6 flows CRC-32 hash": ("ecmp", "numba", "hash", 13),
    "ECMP numba, 10^6 flows CRC-32 hash + bin": ("ecmp", "numba", "bin", 17),
}

CHILD = r'''
import json, resource, sys
import numpy as np
kind, impl, what = sys.argv[1:4]
N = 1_000_000

def status(key):
    try:
        for line in open("/proc/self/status"):
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False

rng = np.random.default_rng(0)
if kind == "kulisch":
    from golden.reduce import reduce
    mod = __import__("golden.arith.kulisch_c" if impl == "c" else "golden.arith.kulisch_numba", fromlist=["x"])
    x = np.empty(N if what == "sequence" else 64 * 16384, np.uint32)
    for i in range(0, x.size, 65536):
        m = min(65536, x.size - i)
        x[i:i + m] = (rng.standard_normal(m) * np.exp2(rng.integers(-30, 30, m))).astype(np.float32).view(np.uint32)
    if what == "sequence":
        call = lambda a: mod.kulisch_accumulate("fp32", a)
        small = x[:20000]
    elif what == "allreduce":
        x = x.reshape(64, 16384)
        call = lambda a: mod.kulisch_reduce("fp32", a)
        small = x[:, :100]
    else:
        x = x.reshape(64, 16384)
        call = lambda a: reduce("kulisch", "fp32", "fp32", a, impl=impl)
        small = x[:, :100]
else:
    from golden.fabric import ecmp
    mod = __import__("golden.fabric.ecmp_c" if impl == "c" else "golden.fabric.ecmp_numba", fromlist=["x"])
    z = np.zeros(N, np.int32)
    fs = ecmp.FlowSet("m", rng.integers(0, 2**32, N, dtype=np.uint32), rng.integers(0, 2**32, N, dtype=np.uint32),
                      rng.integers(0, 2**16, N).astype(np.uint16), np.full(N, 4791, np.uint16),
                      np.full(N, 17, np.uint8), rng.integers(0, 32, N).astype(np.int32), z, z, z, z)
    del z
    if what == "hash":
        call = lambda f: mod.hash_flows(f, "crc32")
    else:
        call = lambda f: mod.bin_flows(f, 32, "crc32", n_groups=32)
    x, small = fs, ecmp.FlowSet("s", *(getattr(fs, k)[:1000] for k in
                                       ("src_ip", "dst_ip", "src_port", "dst_port", "proto", "src_leaf",
                                        "dst_leaf", "src_rank", "dst_rank", "stripe")))
call(small)
try:                                    # hand freed heap back to the system, so the call cannot hide in it
    import ctypes
    ctypes.CDLL("libc.so.6").malloc_trim(0)
except (OSError, AttributeError):
    pass
before = status("VmRSS")
exact = reset_peak()
out = call(x)
during = status("VmHWM")
print(json.dumps({"rss_before": before, "kernel_peak": during, "kernel_extra": during - before,
                  "exact": exact}))
'''


def run_case(kind, impl, what):
    out = subprocess.run([sys.executable, "-c", CHILD, kind, impl, what], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="write the results here as JSON")
    args = ap.parse_args(argv)
    results = {}
    for name, (kind, impl, what, input_mb) in CASES.items():
        r = run_case(kind, impl, what)
        r["input_mb"] = input_mb
        results[name] = r
        print(f"{name:52s} input {input_mb:3d} MB  RSS before {r['rss_before']:7.1f}  peak in call "
              f"{r['kernel_peak']:7.1f}  (+{r['kernel_extra']:.1f}) MiB", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
