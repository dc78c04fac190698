"""Wire protocol: every field round-trips at the documented bit position, and
element packing follows docs/protocol.md."""
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from golden.node import protocol as P

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def test_field_table_matches_the_document():
    """Every header field's [hi:lo] in code appears in docs/protocol.md with the same bits."""
    text = DOC.read_text()
    documented = {(int(hi), int(lo)) for hi, lo in re.findall(r"`\[(\d+):(\d+)\]`", text)}
    documented |= {(int(b), int(b)) for b in re.findall(r"`\[(\d+)\]`", text)}
    for name, (lsb, width) in P.FIELDS.items():
        assert (lsb + width - 1, lsb) in documented, f"field {name} [{lsb + width - 1}:{lsb}] not in the protocol document"


def test_fields_do_not_overlap_within_a_frame_kind():
    kinds = {
        "stage": ["class", "opcode", "op_id", "generation", "policy", "in_format", "result_format", "mode",
                  "count", "contributors", "recipients"],
        "data": ["class", "opcode", "op_id", "generation", "contributor", "data_format", "offset", "n"],
        "result": ["class", "opcode", "op_id", "generation", "offset", "n", "groups"],
        "response": ["class", "opcode", "op_id", "generation", "reason", "request_opcode"],
    }
    for kind, names in kinds.items():
        used = 0
        for n in names:
            lsb, width = P.FIELDS[n]
            mask = ((1 << width) - 1) << lsb
            assert used & mask == 0, f"{kind}: {n} overlaps another field"
            used |= mask
        assert used < 1 << P.GROUP_DESC_LSB


@given(st.integers(0, 255), st.integers(0, 65535), st.integers(0, 1), st.integers(0, 3), st.integers(0, 5),
       st.integers(0, 1), st.integers(1, 4096), st.integers(1, 255), st.integers(1, 3))
def test_stage_round_trip(op_id, gen, policy, in_fmt, res_fmt, mode, count, contributors, recipients):
    s = P.Stage(op_id, gen, policy, in_fmt, res_fmt, mode, count, contributors, recipients)
    beats = s.encode()
    assert len(beats) == 1 and beats[0] < 1 << P.BEAT_BITS
    assert P.decode(beats) == s
    assert P.get_field(beats[0], "class") == 1 and P.get_field(beats[0], "opcode") == 1


@given(st.integers(0, 3), st.integers(1, 300), st.integers(0, 7), st.data())
def test_data_round_trip_and_packing(fmt, n, contributor, data):
    w = P.ELEMENT_BITS[fmt]
    values = tuple(data.draw(st.lists(st.integers(0, (1 << w) - 1), min_size=n, max_size=n)))
    d = P.Data(9, 1234, contributor, fmt, 16 * data.draw(st.integers(0, 200)), values)
    beats = d.encode()
    assert len(beats) == 1 + -(-n // (512 // w))
    assert P.decode(beats) == P.Data(d.op_id, d.generation, contributor, fmt, d.offset, values)
    # element j sits at bits [w*(j%P) +: w] of payload beat j//P
    per = 512 // w
    for j in (0, n - 1, n // 2):
        assert (beats[1 + j // per] >> (w * (j % per))) & ((1 << w) - 1) == values[j]


def test_result_round_trip_with_exact_and_mixed_groups():
    rng = random.Random(1)
    groups = ((P.FMT_INT8, tuple(rng.getrandbits(8) for _ in range(32))),
              (P.FMT_FP16, tuple(rng.getrandbits(16) for _ in range(16))),
              (P.FMT_EXACT, tuple((rng.randrange(-(1 << 281), 1 << 281), rng.getrandbits(4)) for _ in range(16))))
    r = P.Result(3, 77, 256, groups, kulisch_w=280)
    beats = r.encode()
    assert len(beats) == 1 + 1 + 1 + 16
    assert P.get_field(beats[0], "n") == 64 and P.get_field(beats[0], "groups") == 3
    assert P.get_field(beats[0], "kulisch_w") == 280
    assert P.decode(beats) == r
    # EXACT: the sum as a 508-bit two's complement integer at [507:0], flags at [511:508] (bit 508 = nan)
    total, flags = groups[2][1][0]
    assert beats[3] >> 508 == flags
    assert beats[3] & ((1 << 508) - 1) == total % (1 << 508)


def test_exact_beat_keeps_the_whole_sum():
    """A sum beyond a 280-bit accumulator: the low W bits are the wrapped state, the rest above."""
    total = (1 << 279) + 12345            # one wrap past the top of a 280-bit register
    beat = P.encode_exact(total, 0b1000)
    state = beat & ((1 << 280) - 1)
    assert state - (1 << 280) == total - (1 << 280)      # the register holds total - 2^280
    assert P.decode_exact(beat) == (total, 0b1000)
    assert P.decode_exact(P.encode_exact(-5, 0)) == (-5, 0)
    assert (P.encode_exact(-5, 0) >> 280) & 1 == 1      # sign extension above the state
    with pytest.raises(ValueError):
        P.encode_exact(1 << 507, 0)


def test_abort_round_trip():
    a = P.Abort(7, 300)
    beats = a.encode()
    assert P.get_field(beats[0], "opcode") == P.OP_ABORT == 3
    assert P.decode(beats) == a


def test_response_round_trip():
    for ack, reason in ((True, P.OK), (False, P.BUSY)):
        r = P.Response(ack, 5, 6, reason, P.OP_COMMIT)
        assert P.decode(r.encode()) == r


def test_unsupported_class_and_bad_frames():
    assert P.decode([0x7]) == P.Unsupported(7, 1)
    with pytest.raises(P.MalformedFrame):
        P.decode([])
    short = P.Data(1, 1, 0, P.FMT_FP32, 0, tuple(range(32))).encode()[:2]
    with pytest.raises(P.MalformedFrame):
        P.decode(short)
    with pytest.raises(ValueError, match="does not fit"):
        P.Stage(256, 0, 0, 0, 0, 0, 1, 1, 1).encode()
