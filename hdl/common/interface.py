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
(a test bench's or a formal harness's ports).
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

    def fields(self):
        """[(field name, signal)] in declaration order."""
        return list(vars(self).items())

    def __repr__(self):
        # deterministic (it is part of a converted block's build key): field names, widths, initial values
        def descr(s):
            return "bool" if s._nrbits == 0 or isinstance(s._init, bool) else f"{len(s)}b={int(s._init)}"
        return f"{type(self).__name__}(" + ", ".join(f"{n}:{descr(s)}" for n, s in self.fields()) + ")"
