"""MyHDL's process-wide registries, made to forget the designs nothing refers to any more.

MyHDL records every Signal it creates in one list (`myhdl._simulator._signals`) and every
list of signals a block holds (a memory) in one map (`myhdl._extractHierarchy._memInfoMap`,
keyed by the list's id).  It never removes an entry, so a long-lived process (a test worker,
`prism regress`, a notebook) keeps every design it ever elaborated alive, and every simulation
walks all of their signals twice: at the start, for the waiters of shadow signals, and at the
end, where it resets each signal to a deep copy of its initial value.  After one conversion of
the node (49,000 signals kept alive through 1,120 memories) a 150-addition simulation of the
FP32 adder took 0.67 s instead of 0.09 s, and that cost grew with every design the process built.

`LiveSignals` replaces the signal list in the three MyHDL modules that use it.  It holds a weak
reference to each signal's positive-edge waiter list (a Signal has no weak-reference slot; the
list is created with the signal, never replaced, and points back to it) and yields the signals
still alive in the order they were created, as MyHDL's list did.

`LiveMemories` replaces the memory map.  Neither a memory (a plain list) nor its entry can be
referred to weakly, so an entry is dropped when nothing but the map refers to it or to its
list: no block holds the entry, no process or block the list.  The map's keys are ids, which
Python reuses once an object is gone, so an entry may only go once its list is gone too (here:
is about to go, with the entry); that is the rule.  A dead design's blocks refer to each other,
so they are freed by the garbage collector's full collections, not at once: entries are checked
after each full collection and by `forget_unused_memories()` (before each top-level
elaboration and in `release_dropped_designs`, cosim.sim.toolchain).  A design
dropped from the map is itself freed by a later full collection.

Neither change is visible to a program: a signal or memory nothing refers to can take part in no
simulation or conversion.  `install()` is idempotent and leaves MyHDL untouched if its internals
are not the ones this was written against."""
import gc
import sys
import weakref

import myhdl._extractHierarchy as _hierarchy
import myhdl._Signal as _signal_module
import myhdl._Simulation as _simulation_module
import myhdl._simulator as _simulator

_SIGNAL_MODULES = (_simulator, _signal_module, _simulation_module)


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
        for ref in self._refs:
            waiters = ref()
            if waiters is not None:
                yield waiters.sig

    def __len__(self):
        return sum(1 for ref in self._refs if ref() is not None)


def _held_elsewhere_counts():
    """The reference counts `LiveMemories.unused_keys` measures for an entry, and for its list,
    that nothing but the map refers to (calibrated here with the same code, not assumed)."""
    probe = LiveMemories()
    probe[0] = _hierarchy._MemInfo([object()])
    ((_, entry, mem),) = probe._reference_counts()
    return entry, mem


class LiveMemories(dict):
    """MyHDL's memory map (id of a list of signals -> its _MemInfo) that lets go of the entries
    nothing else refers to (see the module's docstring)."""

    _alone = None          # (entry, list) reference counts of an entry only the map holds

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._forgetting = False

    def _reference_counts(self):
        # a snapshot first: a collection (and its callback) during the scan cannot change it
        entries = list(dict.items(self))
        return [(key, sys.getrefcount(info), sys.getrefcount(info.mem)) for key, info in entries]

    def unused_keys(self):
        entry_alone, mem_alone = self._alone
        return [key for key, entry, mem in self._reference_counts() if entry <= entry_alone and mem <= mem_alone]

    def forget_unused(self):
        """Drop the unused entries; returns how many."""
        if self._forgetting:       # called again from a collection inside this call
            return 0
        self._forgetting = True
        try:
            unused = self.unused_keys()
            for key in unused:
                self.pop(key, None)
            return len(unused)
        finally:
            self._forgetting = False


def _compatible():
    probe = _signal_module.Signal(bool(0))
    if not (isinstance(getattr(probe, "_posedgeWaiters", None), _signal_module._PosedgeWaiterList)
            and getattr(probe._posedgeWaiters, "sig", None) is probe):
        return False
    memories = getattr(_hierarchy, "_memInfoMap", None)
    return (type(memories) in (dict, LiveMemories) and hasattr(_hierarchy, "_MemInfo")
            and hasattr(_hierarchy, "_makeMemInfo"))


def forget_unused_memories():
    """Drop the memory map's entries nothing else refers to (a no-op if not installed); returns
    how many."""
    memories = getattr(_hierarchy, "_memInfoMap", None)
    if isinstance(memories, LiveMemories):
        return memories.forget_unused()
    return 0


# growth of the live signals since the last release above which `release_dropped_designs` collects
LARGE_DESIGN_SIGNALS = 10_000
_released_level = 0        # live signals after the last release (or fewer, as they die)


def live_signals():
    """How many signals are alive (all MyHDL ever created if the registry is not installed)."""
    return len(_simulator._signals)


def release_dropped_designs():
    """Free the designs dropped since the last call, now, if the live signals grew by
    LARGE_DESIGN_SIGNALS or more since then (a conversion of the node leaves about 49,000; a test
    that simulated the node in MyHDL as many): a full collection frees their blocks, the memory
    map then lets go of their memories, and a second collection frees their signals.  Without it
    that takes two of the garbage collector's own full collections, many simulations apart.
    A large design that stays alive is collected for once, not at every call.  Returns the
    signals still alive."""
    global _released_level
    live = _simulator._signals
    if not isinstance(live, LiveSignals):
        return len(live)
    alive = len(live)
    _released_level = min(_released_level, alive)
    if alive - _released_level < LARGE_DESIGN_SIGNALS:
        return alive
    found = gc.collect()
    # the second collection only if the first, or the memories it let go, left signals to free
    # (when neither did, the growth is a design still in use: 0.18 s of the node saved)
    if forget_unused_memories() or found:
        gc.collect()
    _released_level = len(live)
    return _released_level


def _after_full_collection(phase, info):
    if phase == "stop" and info.get("generation") == 2:
        forget_unused_memories()


def install():
    current = _simulator._signals
    if isinstance(current, LiveSignals):
        return
    if not (isinstance(current, list) and all(getattr(m, "_signals", None) is current for m in _SIGNAL_MODULES)):
        return
    if not _compatible():
        return
    LiveMemories._alone = _held_elsewhere_counts()
    live = LiveSignals(current)
    for module in _SIGNAL_MODULES:
        module._signals = live
    _hierarchy._memInfoMap = LiveMemories(_hierarchy._memInfoMap)
    gc.callbacks.append(_after_full_collection)
