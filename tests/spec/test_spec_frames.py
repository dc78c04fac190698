"""spec.frames: the layout rules (no field overlaps another of its frame, every field fits the
beat and its values) and a cross-check against the cocotb client, which encodes frames from
docs/protocol.md alone."""
import os
import random
import sys

import pytest

from spec import formats as SF
from spec import frames as S

CLIENT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "node", "cocotb_client")
if CLIENT not in sys.path:
    sys.path.insert(0, CLIENT)
import prism_wire as W  # noqa: E402  (written from the document, imports nothing of the kit)


def _bits(name):
    lsb, width = S.FIELDS[name]
    return set(range(lsb, lsb + width))


def test_field_table_is_the_module_constants():
    for name, (lsb, width) in S.FIELDS.items():
        key = name.upper()
        assert (getattr(S, f"F_{key}_LSB"), getattr(S, f"F_{key}_END")) == (lsb, lsb + width)
        assert width >= 1
    named = {n[2:-4].lower() for n in dir(S) if n.startswith("F_") and n.endswith("_LSB")}
    assert named == set(S.FIELDS)


@pytest.mark.parametrize("kind", sorted(S.FRAME_FIELDS))
def test_fields_of_a_frame_do_not_overlap_and_fit_the_header(kind):
    used = set()
    for name in S.FRAME_FIELDS[kind]:
        bits = _bits(name)
        assert not bits & used, f"{kind}: {name} overlaps another field"
        used |= bits
    assert max(used) < S.BEAT_BITS
    if kind == "result":       # the group descriptors start above every header field
        assert max(used) < S.GROUP_DESC_LSB
        assert S.GROUP_DESC_LSB + S.MAX_GROUPS * S.GROUP_DESC_BITS <= S.BEAT_BITS
    if kind == "response":
        assert max(used) == S.RESPONSE_BITS - 1
    if kind in ("stage", "commit", "abort", "data"):     # a request: the node keeps its low HDR_BITS bits
        assert max(used) < S.HDR_BITS


def test_request_header_is_whole_words_above_its_fields():
    top = max(S.FIELDS[n][0] + S.FIELDS[n][1] for k in ("stage", "commit", "abort", "data") for n in S.FRAME_FIELDS[k])
    assert S.HDR_BITS == 32 * -(-top // 32) == 96


def test_fields_hold_their_values():
    width = {name: w for name, (_, w) in S.FIELDS.items()}
    assert 1 << width["class"] > S.CLASS_RESULT and 1 << width["opcode"] > S.OP_NACK
    assert 1 << width["policy"] > S.POLICY_FP32_ARRIVAL
    # the input and DATA formats: the four element formats and EXACT (a tree's partials), in 3 bits
    assert max(SF.DATA_FORMATS) == SF.FMT_EXACT and len(SF.DATA_FORMATS) == len(SF.INPUT_FORMATS) + 1
    assert 1 << (width["in_format"] - 1) < len(SF.DATA_FORMATS) <= 1 << width["in_format"] == 1 << width["data_format"]
    assert 1 << width["result_format"] > SF.FMT_AUTO and 1 << S.GROUP_FORMAT_BITS > SF.FMT_EXACT
    assert 1 << width["count"] > S.MAX_CAPACITY and 1 << width["offset"] > S.MAX_CAPACITY
    assert 1 << width["n"] > S.MAX_CAPACITY
    assert width["contributors"] == S.MAX_CONTRIBUTORS and 1 << width["contributor"] == S.MAX_CONTRIBUTORS
    assert 1 << width["groups"] > S.MAX_GROUPS and 1 << width["kulisch_w"] > max(SF.KULISCH_WIDTHS)
    assert 1 << width["reason"] > len(S.REASON_NAMES)
    # a group descriptor: format, then the element count up to a whole block
    assert 1 << (S.GROUP_DESC_BITS - S.GROUP_FORMAT_BITS) > S.BLOCK_ELEMS


def test_headers_decode_with_the_client_s_encoders():
    """Random field values encoded by the client, read back at spec's positions."""
    rng = random.Random(15)

    def field(beat, name):
        lsb, w = S.FIELDS[name]
        return (beat >> lsb) & ((1 << w) - 1)

    for _ in range(200):
        op, gen = rng.randrange(256), rng.randrange(1 << 16)
        v = dict(policy=rng.randrange(4), in_format=rng.randrange(4), result_format=rng.randrange(8),
                 count=rng.randrange(1 << 13), contributors=rng.randrange(256), recipients=rng.randrange(4),
                 mode=rng.randrange(2))
        (h,) = W.stage(op, gen, v["policy"], v["in_format"], v["result_format"], v["count"], v["contributors"],
                       v["recipients"], mode=v["mode"])
        assert {k: field(h, k) for k in v} == v
        assert (field(h, "class"), field(h, "opcode"), field(h, "op_id"), field(h, "generation")) == (
            S.CLASS_CONTROL, S.OP_STAGE, op, gen)
        c, fmt, off, n = rng.randrange(8), rng.randrange(4), rng.randrange(1 << 13), rng.randrange(1 << 13)
        h = W.data(op, gen, c, fmt, off, [], count=n)[0]
        assert [field(h, k) for k in ("class", "contributor", "data_format", "offset", "n")] == [
            S.CLASS_DATA, c, fmt, off, n]
        reason, req = rng.randrange(256), rng.randrange(16)
        resp = (S.CLASS_CONTROL << S.F_CLASS_LSB | S.OP_NACK << S.F_OPCODE_LSB
                | op << S.F_OP_ID_LSB | gen << S.F_GENERATION_LSB | reason << S.F_REASON_LSB
                | req << S.F_REQUEST_OPCODE_LSB)
        r = W.decode_response([resp])
        assert (r.ack, r.op_id, r.generation, r.reason, r.request) == (False, op, gen, reason, req)


def test_result_header_and_exact_layout_agree_with_the_client():
    groups = [(SF.FMT_FP32, 3), (SF.FMT_EXACT, 2)]
    head = (S.CLASS_RESULT << S.F_CLASS_LSB | 7 << S.F_OP_ID_LSB | 9 << S.F_GENERATION_LSB
            | 256 << S.F_OFFSET_LSB | 5 << S.F_N_LSB | len(groups) << S.F_GROUPS_LSB | 280 << S.F_KULISCH_W_LSB)
    for g, (fmt, cnt) in enumerate(groups):
        head |= (fmt | cnt << S.GROUP_FORMAT_BITS) << (S.GROUP_DESC_LSB + S.GROUP_DESC_BITS * g)
    sigma, flags = -12345, S.FLAG_NAN | S.FLAG_OVERFLOW
    exact = (sigma & ((1 << S.EXACT_SUM_BITS) - 1)) | flags << S.EXACT_FLAG_LSB
    r = W.decode_result([head, 0x3F800000, exact, exact])
    assert (r.op_id, r.generation, r.offset, r.count, r.kulisch_w) == (7, 9, 256, 5, 280)
    assert [(g.fmt, len(g.values)) for g in r.groups] == groups
    v = r.groups[1].values[0]
    assert v.sigma == sigma and v.nan and v.overflow and not v.pos_inf and not v.neg_inf
    assert S.EXACT_FLAG_LSB + 4 == S.BEAT_BITS and S.EXACT_SUM_BITS == S.EXACT_FLAG_LSB


def test_codes_and_counters_agree_with_the_client():
    assert (S.CLASS_CONTROL, S.CLASS_DATA, S.CLASS_RESULT) == (W.CLASS_CONTROL, W.CLASS_DATA, W.CLASS_RESULT)
    assert (S.OP_STAGE, S.OP_COMMIT, S.OP_ABORT, S.OP_ACK, S.OP_NACK) == (
        W.OP_STAGE, W.OP_COMMIT, W.OP_ABORT, W.OP_ACK, W.OP_NACK)
    assert (S.POLICY_KULISCH, S.POLICY_FP32_ARRIVAL) == (W.KULISCH_FIXED, W.FP32_ARRIVAL)
    assert (S.MODE_REDUCE, S.MODE_ALLREDUCE) == (W.REDUCE, W.ALLREDUCE)
    assert S.REASON_NAMES == W.REASONS and S.DROP_REASONS == W.DROP_REASONS
    assert [getattr(S, name) for name in S.REASON_NAMES] == list(range(len(S.REASON_NAMES)))
    assert {W.FORMATS[c].lower() for c in W.FORMATS} == set(SF.FORMAT_NAMES.values())
    assert all(SF.FORMAT_CODES[W.FORMATS[c].lower()] == c for c in W.FORMATS)
    sel = W.all_counter_selects()
    for p in (0, 1):
        base = S.CTR_PORT_STRIDE * p
        assert sel[(p, "control")] == base + S.CTR_CONTROL and sel[(p, "admitted")] == base + S.CTR_ADMITTED
        for k, reason in enumerate(S.DROP_REASONS):
            assert sel[(p, reason)] == base + S.CTR_DROP + k
        assert sel[(p, "unsupported")] == base + S.CTR_UNSUPPORTED
        assert sel[(p, "truncated")] == base + S.CTR_TRUNCATED
    assert (sel["ranges_completed"], sel["results_sent"], sel["responses_sent"]) == (
        S.CTR_RANGES, S.CTR_RESULTS, S.CTR_RESPONSES)


def test_counter_map_is_dense_and_fits_the_select():
    per_port = [S.CTR_CONTROL, S.CTR_ADMITTED] + [S.CTR_DROP + k for k in range(len(S.DROP_REASONS))] + [
        S.CTR_UNSUPPORTED, S.CTR_TRUNCATED]
    assert per_port == list(range(len(per_port))) and len(per_port) <= S.CTR_PORT_STRIDE
    shared = [S.CTR_RANGES, S.CTR_RESULTS, S.CTR_RESPONSES]
    assert min(shared) >= 2 * S.CTR_PORT_STRIDE and max(shared) < S.COUNTERS <= 1 << 6


def test_limits():
    assert S.BLOCK_ELEMS == S.MAX_GROUPS * S.RANGE_ELEMS == W.BLOCK and S.RANGE_ELEMS == W.RANGE
    assert S.MAX_RANGES * S.RANGE_ELEMS == S.MAX_CAPACITY
    assert 1 + S.MAX_PAYLOAD_BEATS == W.MAX_FRAME_BEATS and S.BEAT_BITS == W.BEAT_BITS
    # the largest DATA frame (MAX_PAYLOAD_BEATS of INT8) carries whole ranges
    assert S.MAX_PAYLOAD_BEATS * S.BEAT_BITS // 8 % S.RANGE_ELEMS == 0
