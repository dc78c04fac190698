"""Elaboration checks shared by the arithmetic blocks and the node blocks that use them."""


def check_widths(block, *checks):
    """Raise ValueError for the first (name, signal, width) whose signal is not `width` bits wide."""
    for name, sig, width in checks:
        if len(sig) != width:
            raise ValueError(f"{block}: {name} is {len(sig)} bits; it must be {width}")
