"""Elaboration-time wiring: connect a block's ports by name instead of restating its port list.

A composing block whose signals carry the inner block's port names (a wrapper, a checked
variant, a property harness) instantiates it with

    inner = some_block(**ports_of(some_block, locals(), port_a=other_signal), PARAM=...)

MyHDL binds the same signals as a positional call would, so the converted Verilog does not
change.  Instances must still be created in the block's own body (MyHDL checks the caller),
which is why this returns the keyword arguments rather than the instance.

Buses (hdl/common/interface.py) are matched by their converted names, `<bus>_<field>`, both
ways: a bus port of the inner block is assembled from signals so named in `scope` (a test
bench's flat port dictionary), and a plain port is found as the field of a bus in `scope`
(a block holding the bus wires an inner block that takes the field).  A block declares a bus
port by annotating its parameter with the bus class (`s_axis_job: AxiStream`).
"""
import inspect

from hdl.common.interface import Interface


def port_names(block_func):
    """The port names of a @block function, in order (its parameters without the upper-case
    ones, which by this repository's convention are elaboration parameters)."""
    func = getattr(block_func, "func", block_func)
    return tuple(n for n in inspect.signature(func).parameters if not n.isupper())


def bus_params(block_func):
    """{port name: bus class} of the ports annotated with an Interface class."""
    func = getattr(block_func, "func", block_func)
    return {n: p.annotation for n, p in inspect.signature(func).parameters.items()
            if isinstance(p.annotation, type) and issubclass(p.annotation, Interface)}


def _field_of_bus(name, scope):
    """The signal called `name` once converted, as a field of a bus in `scope` (None: none is)."""
    for bus_name, bus in scope.items():
        if isinstance(bus, Interface) and name.startswith(bus_name + "_"):
            sig = vars(bus).get(name[len(bus_name) + 1:])
            if sig is not None:
                return sig
    return None


def _bus_from(cls, name, scope):
    """Bus `name` of class `cls` assembled from the flat signals `<name>_<field>` in `scope` (None: none there)."""
    if not any(f"{name}_{f}" in scope for f in cls.field_names()):
        return None
    return cls.from_ports(name, scope)


def ports_of(block_func, scope, **rewired):
    """{port: signal or bus} for `block_func`: each port taken from `scope` (the caller's locals())
    under its own name, except those given in `rewired`; a bus port missing from `scope` is made
    of the signals `<bus>_<field>` there, a plain port missing from it is looked for as a field of
    a bus there."""
    names = port_names(block_func)
    buses = bus_params(block_func)
    name = getattr(block_func, "func", block_func).__name__
    unknown = sorted(set(rewired) - set(names))
    out, missing = {}, []
    for n in names:
        if n in rewired:
            out[n] = rewired[n]
        elif n in scope:
            out[n] = scope[n]
        else:
            v = _bus_from(buses[n], n, scope) if n in buses else _field_of_bus(n, scope)
            if v is None:
                missing.append(n)
            out[n] = v
    if unknown or missing:
        raise ValueError(f"ports_of({name}): not its ports: {unknown}; no signal for: {missing}")
    return out


def bundle(block_func, kwargs):
    """`kwargs` with each bus port of `block_func` that is given as flat signals `<bus>_<field>`
    replaced by the bus: a test bench's dictionary of converted port names, ready for the block.
    Buses given whole, plain ports and parameters pass through."""
    buses = bus_params(block_func)
    made, used = {}, set()
    for n, cls in buses.items():
        if n in kwargs:
            continue
        flat = [f"{n}_{f}" for f in cls.field_names() if f"{n}_{f}" in kwargs]
        if flat:
            made[n] = cls.from_ports(n, kwargs)
            used.update(flat)
    out = {}
    for k, v in kwargs.items():
        if k not in used:
            out[k] = v
    out.update(made)
    return out


def flat_ports(arguments):
    """{name: value} with each bus expanded into its fields under their converted names
    (`<bus>_<field>`, in declaration order); everything else as it is."""
    out = {}
    for n, v in arguments.items():
        if isinstance(v, Interface):
            for f, sig in v.fields():
                out[f"{n}_{f}"] = sig
        else:
            out[n] = v
    return out
