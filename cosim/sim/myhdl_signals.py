"""MyHDL's registry of signals, holding each signal weakly.

MyHDL appends every Signal it creates to one process-wide list (`myhdl._simulator._signals`)
and never removes one.  Every simulation then walks the whole list twice: at the start, for the
waiters of shadow signals, and at the end, where it resets each signal to a deep copy of its
initial value.  In a long-lived process (a test worker, `prism regress` or a notebook) the list
holds every design ever elaborated and keeps each of them alive: after one conversion of the
node (about 70,000 signals) a 150-addition simulation of the FP32 adder took 0.55 s instead
of 0.08 s, and that cost grew with every design the process built.

`LiveSignals` replaces the list in the three MyHDL modules that use it.  It holds a weak reference
to each signal's positive-edge waiter list (a Signal has no weak-reference slot; the list is
created with the signal, never replaced, and points back to it), and yields the signals that are
still alive in the order they were created, as MyHDL's list did.  A signal nothing else refers to
can no longer take part in any simulation, so leaving it out changes nothing a program can see.
`install()` is idempotent and leaves MyHDL untouched if its internals are not the ones this was
written against."""
import weakref

import myhdl._Signal as _signal_module
import myhdl._Simulation as _simulation_module
import myhdl._simulator as _simulator

_MODULES = (_simulator, _signal_module, _simulation_module)


class LiveSignals:
    """The signals created so far that are still alive, in creation order (append and iterate,
    the two operations MyHDL performs on its list)."""

    __slots__ = ("_refs", "_dead", "__weakref__")

    def __init__(self, signals=()):
        self._refs = []
        self._dead = 0
        for sig in signals:
            self.append(sig)

    def _died(self, _ref):
        self._dead += 1

    def append(self, sig):
        if self._dead > len(self._refs) // 2 and self._dead > 1024:
            # drop the references of collected signals, keeping the order of the others
            self._refs = [r for r in self._refs if r() is not None]
            self._dead = 0
        self._refs.append(weakref.ref(sig._posedgeWaiters, self._died))

    def __iter__(self):
        for ref in list(self._refs):
            waiters = ref()
            if waiters is not None:
                yield waiters.sig

    def __len__(self):
        return sum(1 for ref in self._refs if ref() is not None)


def _compatible():
    probe = _signal_module.Signal(bool(0))
    return (isinstance(getattr(probe, "_posedgeWaiters", None), _signal_module._PosedgeWaiterList)
            and getattr(probe._posedgeWaiters, "sig", None) is probe)


def install():
    current = _simulator._signals
    if isinstance(current, LiveSignals):
        return
    if not (isinstance(current, list) and all(getattr(m, "_signals", None) is current for m in _MODULES)):
        return
    if not _compatible():
        return
    live = LiveSignals(current)
    for module in _MODULES:
        module._signals = live
