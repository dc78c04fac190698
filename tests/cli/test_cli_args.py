"""The one integer-argument helper every `prism` sub-command uses."""
import pytest

from cosim.cli import UsageError, int_arg


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
