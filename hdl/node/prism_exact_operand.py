"""An EXACT partial as a Kulisch word: the operand a row adds when DATA carries another node's sums.

Part of phase 4 (hdl/node/prism_kulisch_store.py builds one per receive port and sub-store, so the
16 lanes of a sub-store share it: an EXACT group holds one partial, for one lane).  The word is
registered at the edge the group is taken, so it stands beside the lanes' own stage-1 registers
(hdl/node/prism_kulisch_bank.py) and a lane picks it at its adder's operand, where the choice
costs no LUT of its own.  Not reset: a word is read only beside a valid stage 1.

The beat (docs/protocol.md, "EXACT input") holds sigma at [507:0], a 508-bit two's complement sum
in units of 2^-149, and the flags nan [508], +inf [509], -inf [510], overflow [511].  The word is
the term a bank row adds, {-inf, +inf, nan, E} with E the row's extended sum (W + WB bits,
hdl/node/prism_kulisch_bank.py): E = sigma mod 2^(W + WB), the low W + WB bits of the beat.  That
is the same as the Kulisch word (state, wraps) with

    sigma = signed(state) + wraps * 2^W,   state = sigma mod 2^W,   wraps = (sigma >> W) + sigma[W-1]

so a row that adds it holds the true sum, however many times sigma wraps the W-bit register.
A row's wrap count has WB bits; a sigma outside [-2^(W+H), 2^(W+H)) (H = KULISCH_EXACT_IN_HEADROOM,
with 8 contributions and the merge of two ports inside WB bits) cannot be held and enters as a NaN
(E 0).  The overflow flag is not used: sigma is complete.

Parameters:
    WRAP_BITS   WB, the rows' wrap counter width (KULISCH_WRAP_BITS; at least H + 5)

Ports (widths from the signals):
    clk         clock
    beat        the EXACT beat (512 bits)
    word        out: the word of the beat at the last edge, W + WB + 3 bits (W = KULISCH_W, 320 or 280)
"""
from myhdl import always, block, modbv

from spec.formats import KULISCH_EXACT_IN_HEADROOM, KULISCH_WIDTHS, KULISCH_WRAP_BITS
from spec.frames import EXACT_FLAG_LSB, EXACT_SUM_BITS, FLAG_NAN, FLAG_NEG_INF, FLAG_POS_INF


@block
def prism_exact_operand(clk, beat, word, WRAP_BITS=KULISCH_WRAP_BITS):
    WB = WRAP_BITS
    W = len(word) - 3 - WB
    if W not in KULISCH_WIDTHS:
        raise ValueError(f"prism_exact_operand: word is {len(word)} bits; it must be KULISCH_W + 3 + {WB}")
    if len(beat) != 512:
        raise ValueError("prism_exact_operand: beat is a 512-bit EXACT beat")
    IN_RANGE_LSB = W + KULISCH_EXACT_IN_HEADROOM       # sigma is held when bits [507 : W+H] all equal
    if IN_RANGE_LSB > W + WB - 5:       # 8 inputs below 2^(W+H), and the merge: below 2^(W+WB-1)
        raise ValueError(f"prism_exact_operand: WRAP_BITS={WB} cannot hold 8 partials below 2^{IN_RANGE_LSB}")
    HIGH_ONES = (1 << (EXACT_SUM_BITS - IN_RANGE_LSB)) - 1
    EW = W + WB
    NAN_BIT, PINF_BIT, NINF_BIT, TOP = EW, EW + 1, EW + 2, EW + 3
    F_NAN, F_PINF, F_NINF = (EXACT_FLAG_LSB + f.bit_length() - 1 for f in (FLAG_NAN, FLAG_POS_INF, FLAG_NEG_INF))

    @always(clk.posedge)
    def form_word():
        w = modbv(0)[TOP:]
        w[:] = 0
        if beat[EXACT_SUM_BITS:IN_RANGE_LSB] == 0 or beat[EXACT_SUM_BITS:IN_RANGE_LSB] == HIGH_ONES:
            w[EW:0] = beat[EW:0]
            w[NAN_BIT] = beat[F_NAN]
        else:
            w[NAN_BIT] = 1                  # beyond what a row holds: a NaN contribution
        w[PINF_BIT] = beat[F_PINF]
        w[NINF_BIT] = beat[F_NINF]
        word.next = w

    return form_word
