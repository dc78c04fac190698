"""The fast ECMP kernels' paths against the bit-serial reference (golden.fabric.ecmp).

The C and numba kernels hash whole blocks of 64 flows by byte planes and GF(2)
affine maps where the CPU has AVX-512BW and GFNI, and the rest by position
tables; they bin through interleaved histogram copies when n_groups * n_paths
is small, else straight into the counts.  Each path, its tails, and the
"group out of range" rule are checked here on both kernels.
"""
import numpy as np
import pytest

from golden.fabric import ecmp_c as c_ecmp
from golden.fabric import ecmp, ecmp_numba

KERNELS = {"c": c_ecmp, "numba": ecmp_numba}


def random_flows(n, seed, groups):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, 2**32, n, dtype=np.uint32)
    dst = rng.integers(0, 2**32, n, dtype=np.uint32)
    sport = rng.integers(0, 2**16, n).astype(np.uint16)
    dport = rng.integers(0, 2**16, n).astype(np.uint16)
    proto = rng.integers(0, 256, n).astype(np.uint8)
    src[:4] = [0, 2**32 - 1, 0x80000000, 1]                  # extreme bytes in the first block
    dport[:4] = [0, 65535, 0x8000, 1]
    g = rng.integers(0, groups, n).astype(np.int32)
    z = np.zeros(n, np.int32)
    return ecmp.FlowSet("random", src, dst, sport, dport, proto, g, z, z, z, z)


@pytest.fixture(params=[True, False], ids=["planes", "tables"])
def block_path(request):
    """Run with the byte-plane kernels on (where the CPU has them) and off."""
    was = c_ecmp.use_gfni(request.param), ecmp_numba.use_gfni(request.param)
    yield request.param
    c_ecmp.use_gfni(was[0])
    ecmp_numba.use_gfni(was[1])


@pytest.mark.parametrize("algo", list(ecmp.HASHES))
@pytest.mark.parametrize("n", [64, 200, 257])
def test_hashes_of_whole_blocks_and_tails(block_path, algo, n):
    fs = random_flows(n, n, 4)
    ref = ecmp.hash_flows_ref(fs, algo)
    for name, mod in KERNELS.items():
        assert mod.hash_flows(fs, algo).tolist() == ref, name


@pytest.mark.parametrize("algo", list(ecmp.HASHES))
@pytest.mark.parametrize("mode,n_paths", [("mod", 32), ("mod", 7), ("mulhi", 32), ("mulhi", 1000)])
def test_binning_through_histogram_copies(block_path, algo, mode, n_paths):
    fs = random_flows(331, 3, 5)
    ref_counts = ecmp.bin_flows_ref(fs, n_paths, algo, mode, n_groups=5)
    ref_paths = [ecmp.select_path(h, n_paths, mode, ecmp.HASHES[algo][1]) for h in ecmp.hash_flows_ref(fs, algo)]
    for name, mod in KERNELS.items():
        counts, paths = mod.bin_flows(fs, n_paths, algo, mode, n_groups=5, return_paths=True)
        assert counts.tolist() == ref_counts, name
        assert paths.tolist() == ref_paths, name


def test_binning_straight_into_large_count_tables(block_path):
    """2 x 65535 cells: beyond the histogram copies' limit."""
    fs = random_flows(150, 4, 2)
    ref = ecmp.bin_flows_ref(fs, 65535, "crc32", "mod", n_groups=2)
    for name, mod in KERNELS.items():
        assert mod.bin_flows(fs, 65535, "crc32", "mod", n_groups=2).tolist() == ref, name


@pytest.mark.parametrize("position", [5, 130, 199])
def test_a_group_out_of_range_anywhere_is_reported(block_path, position):
    fs = random_flows(200, 5, 3)
    groups = fs.src_leaf.copy()
    groups[position] = 3
    for name, mod in KERNELS.items():
        with pytest.raises(ValueError, match=f"flow {position} has group 3"):
            mod.bin_flows(fs, 32, groups=groups, n_groups=3)


def test_the_switch_reports_support():
    assert c_ecmp.use_gfni(True) == c_ecmp.use_gfni(True) == c_ecmp.gfni_supported()
    assert ecmp_numba.use_gfni(True) == ecmp_numba.HAVE_GFNI
