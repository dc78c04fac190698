"""The one integer-argument helper every `prism` sub-command uses."""
import argparse

import pytest

from cosim.cli import UsageError, add_int_option, convert_int_options, int_arg


def test_int_arg_accepts_bounds_and_digit_groups():
    assert int_arg("--flows", "1_000_000", 1024, 10**8) == 1_000_000
    assert int_arg("--seed", 0, 0, None) == 0
    assert int_arg("--window", "65536", 2, 1 << 16) == 65536


@pytest.mark.parametrize("text, lo, hi, message", [
    ("lots", 0, 5, "--n must be an integer, got 'lots'"),
    (None, 0, 5, "--n must be an integer, got None"),
    ("6", 0, 5, "--n must be in 0..5, got 6"),
    ("-1", 0, None, "--n must be in 0..any, got -1"),
])
def test_int_arg_names_the_option_in_one_line(text, lo, hi, message):
    with pytest.raises(UsageError) as e:
        int_arg("--n", text, lo, hi)
    assert str(e.value) == message and "\n" not in str(e.value)


def test_int_options_are_converted_in_their_range_before_the_command_runs():
    p = argparse.ArgumentParser()
    add_int_option(p, "--n", 3, 1, 5)
    add_int_option(p, "seed", None, 0, metavar="SEED")
    add_int_option(p, "--depth", None, 1, 200)
    args = p.parse_args(["7", "--n", "4"])
    convert_int_options(args)
    assert (args.n, args.seed, args.depth) == (4, 7, None)       # an absent option without default stays None
    args = p.parse_args(["1_000"])
    convert_int_options(args)
    assert (args.n, args.seed) == (3, 1000)
    for argv, message in ((["x"], "SEED must be an integer, got 'x'"), (["1", "--n", "6"], "--n must be in 1..5, got 6")):
        with pytest.raises(UsageError) as e:
            convert_int_options(p.parse_args(argv))
        assert str(e.value) == message
