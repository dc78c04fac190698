"""AUTO result-format classifier (pure-Python reference).

A tile is one 16-element range of the rounded FP32 result (elements
16r .. 16r+15; a final partial range is its own tile).  AUTO picks the
narrowest format in which every FP32 pattern of the tile round-trips
losslessly (FP32 -> format -> FP32 gives the same bits), preferring
INT8 < FP16 < BF16 < FP32.  -0.0 does not fit INT8; the canonical NaN and
+/-inf fit FP16 and BF16.
"""
from golden.arith.formats import FORMAT_CODE, format_to_fp32, fp32_to_format
from spec.frames import RANGE_ELEMS

TILE = RANGE_ELEMS      # AUTO picks one format per tile of 16 elements (one range)
AUTO_ORDER = ("int8", "fp16", "bf16", "fp32")


def fits(fmt, bits32):
    return format_to_fp32(fmt, fp32_to_format(fmt, bits32)) == bits32


def auto_format(tile_fp32_bits):
    """Narrowest lossless format for one tile of FP32 patterns."""
    tile = [int(b) for b in tile_fp32_bits]
    for fmt in AUTO_ORDER[:-1]:
        if all(fits(fmt, b) for b in tile):
            return fmt
    return "fp32"


def auto_tiles(fp32_bits_vector):
    """Format per 16-element tile of a vector of FP32 patterns."""
    v = [int(b) for b in fp32_bits_vector]
    return [auto_format(v[i:i + TILE]) for i in range(0, len(v), TILE)]


def auto_encode(fp32_bits_vector):
    """(per-element bits in the tile's format, per-tile format codes)."""
    v = [int(b) for b in fp32_bits_vector]
    fmts = auto_tiles(v)
    out = [fp32_to_format(fmts[i // TILE], b) for i, b in enumerate(v)]
    return out, [FORMAT_CODE[f] for f in fmts]
