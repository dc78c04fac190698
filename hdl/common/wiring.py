"""Elaboration-time wiring: connect a block's ports by name instead of restating its port list.

A composing block whose signals carry the inner block's port names (a wrapper, a checked
variant, a property harness) instantiates it with

    inner = some_block(**ports_of(some_block, locals(), port_a=other_signal), PARAM=...)

MyHDL binds the same signals as a positional call would, so the converted Verilog does not
change.  Instances must still be created in the block's own body (MyHDL checks the caller),
which is why this returns the keyword arguments rather than the instance.
"""
import inspect


def port_names(block_func):
    """The port names of a @block function, in order (its parameters without the upper-case
    ones, which by this repository's convention are elaboration parameters)."""
    func = getattr(block_func, "func", block_func)
    return tuple(n for n in inspect.signature(func).parameters if not n.isupper())


def ports_of(block_func, scope, **rewired):
    """{port: signal} for `block_func`: each port taken from `scope` (the caller's locals())
    under its own name, except those given in `rewired`."""
    names = port_names(block_func)
    name = getattr(block_func, "func", block_func).__name__
    unknown = sorted(set(rewired) - set(names))
    missing = [n for n in names if n not in rewired and n not in scope]
    if unknown or missing:
        raise ValueError(f"ports_of({name}): not its ports: {unknown}; no signal for: {missing}")
    return {n: rewired[n] if n in rewired else scope[n] for n in names}
