"""spec.fabric: the values derived again (the tuple from its fields, the lookup from the seed's
quoted curve); tests/fabric/test_fabric_math.py recomputes the lookup from balls in bins."""
import struct

from spec import fabric as S


def test_the_seeds_fabric():
    assert (S.LEAVES, S.ACC_PER_LEAF, S.UPLINKS_PER_LEAF, S.RATE_GBPS) == (32, 32, 32, 100)
    assert S.PARTICIPANTS == 1024 == S.LEAVES * S.ACC_PER_LEAF


def test_the_flow_tuple_is_its_serialised_fields():
    # src_ip, dst_ip (IPv4), src_port, dst_port (UDP), proto: big-endian, no padding
    assert S.TUPLE_BYTES == struct.calcsize(">IIHHB")
    assert S.TUPLE_BITS == 8 * S.TUPLE_BYTES == 104


def test_path_modes():
    assert S.PATH_MODES == ("mod", "mulhi")


def test_efficiency_lookup_rounds_the_seeds_curve():
    """The seed quotes the curve at each bucket's point (1, 2, 4, 8, 20, 100 flows per uplink, and
    93.8 % at 1 023); the lookup holds those figures rounded to whole per cent."""
    quoted = (28.4, 37.0, 46.2, 55.9, 67.2, 82.4, 93.8)
    assert S.EFF_PCT == tuple(round(q) for q in quoted)
    assert len(S.EFF_PCT) == len(S.EFF_FPU_LIMITS) + 1
    assert list(S.EFF_FPU_LIMITS) == sorted(set(S.EFF_FPU_LIMITS)) and S.EFF_FPU_LIMITS[0] >= 1
    assert list(S.EFF_PCT) == sorted(set(S.EFF_PCT)) and S.EFF_PCT[-1] < 100
