"""Typed buses: MyHDL interfaces, plain Python objects whose attributes are Signals.

MyHDL's own idiom for a bundle of signals: a block takes the object as one
argument and its processes read and drive `bus.field` (MyHDL resolves each
attribute to its signal, in simulation and at conversion; a field converts to
a signal named `<bus>_<field>`, and a bus that is a port of the converted top
becomes one port per field).  Two rules follow from how MyHDL resolves them:
a process names the bus directly (`bus.valid`, not `buses[0].valid`), and no
field may be called `next`, `val`, `min`, `max` or `signed` (MyHDL reserves
them on signals).

A subclass creates its own signals in `__init__`, one attribute per field,
widths from the caller; `wrap` builds one around signals that exist already
(a test bench's or a formal harness's ports), `from_ports` around signals named
as the converted ports are (`<bus>_<field>`).

A block that takes a bus keeps its Verilog port names only if the bus's
argument name and field names spell them: a port `s_axis_job_tid` is field
`tid` of argument `s_axis_job`.  MyHDL lists a top level's plain signal ports
first and the buses' fields after them (buses in argument order, fields in
declaration order).
"""
from myhdl import Signal, intbv

_RESERVED = ("next", "val", "min", "max", "signed", "posedge", "negedge", "driven", "read")


def bit(init=0):
    """A 1-bit field."""
    return Signal(bool(init))


def vec(width, init=0):
    """An unsigned field of `width` bits."""
    return Signal(intbv(init)[width:])


class Interface:
    """Base of the node's buses: its fields are the instance's Signal attributes, in the order set."""

    def __setattr__(self, name, value):
        if name in _RESERVED:
            raise AttributeError(f"{type(self).__name__}: a bus field may not be called {name!r} (MyHDL reserves it)")
        object.__setattr__(self, name, value)

    @classmethod
    def wrap(cls, **signals):
        """The bus made of these existing signals (every field of the class, by name)."""
        bus = cls.__new__(cls)
        for name, sig in signals.items():
            setattr(bus, name, sig)
        return bus

    @classmethod
    def field_names(cls):
        """Every field the class can have, in declaration order (the order of the converted ports).
        Read from an instance made with the constructor's defaults; a class with optional fields
        lists them all."""
        return tuple(vars(cls()))

    @classmethod
    def from_ports(cls, name, ports):
        """The bus `name` made of the signals `<name>_<field>` in `ports` ({port name: signal}, as a
        test bench or the converted top names them), fields in declaration order."""
        return cls.wrap(**{f: ports[f"{name}_{f}"] for f in cls.field_names() if f"{name}_{f}" in ports})

    def fields(self):
        """[(field name, signal)] in declaration order."""
        return list(vars(self).items())

    def __repr__(self):
        # deterministic (it is part of a converted block's build key): field names, widths, initial values
        def descr(s):
            return "bool" if s._nrbits == 0 or isinstance(s._init, bool) else f"{len(s)}b={int(s._init)}"
        return f"{type(self).__name__}(" + ", ".join(f"{n}:{descr(s)}" for n, s in self.fields()) + ")"


class AxiStream(Interface):
    """An AXI4-Stream (as verilog-axis names it: a block's inputs `s_axis*`, its outputs `m_axis*`).

    tdata       beat data (`data_width` bits)
    tid         stream or transaction id (`id_width` bits; only when id_width is given)
    tuser       sideband (`user_width` bits; only when user_width is given)
    tlast       end of a frame (only when last=True, the default)
    tvalid      a beat is offered
    tready      back: the beat is taken this cycle (tvalid and tready)

    The fields are declared in this order, which is the order of the converted ports.
    """

    def __init__(self, data_width=8, id_width=None, user_width=None, last=True):
        self.tdata = vec(data_width)
        if id_width is not None:
            self.tid = vec(id_width)
        if user_width is not None:
            self.tuser = vec(user_width)
        if last:
            self.tlast = bit()
        self.tvalid = bit()
        self.tready = bit()

    @classmethod
    def field_names(cls):
        return tuple(vars(cls(id_width=1, user_width=1)))
