"""Cycle-level reference of the per-target service-rate estimator (plain Python ints).

One call to `step(...)` is one rising clock edge: it takes the events of that
cycle and returns nothing; the published state is read from the attributes.
The hardware block must match this bit for bit, every cycle.

Definitions (per target t):
    active      outstanding[t] != 0 this cycle
    accepted    += work of each job dispatched to t            (saturating)
    completed   += work of each job retired from t             (saturating)
    active_cyc  += 1 per active cycle                           (saturating)
    stall_cyc   += 1 per active cycle in which t reported a downstream stall
                (saturating)
    svc_rate    work retired during the last full window of `window` active
                cycles (saturating at the rate width); 0 until the first
                window completes; held while the target is idle
    rate_valid  True once a window of t has completed
"""


class ServiceRateReference:
    def __init__(self, n_tgt, window, stat_w, rate_w):
        if window < 2:
            raise ValueError(f"window={window}; it must be >= 2")
        self.n, self.window = n_tgt, window
        self.stat_max = (1 << stat_w) - 1
        self.rate_max = (1 << rate_w) - 1
        self.accepted = [0] * n_tgt
        self.completed = [0] * n_tgt
        self.active_cyc = [0] * n_tgt
        self.stall_cyc = [0] * n_tgt
        self.svc_rate = [0] * n_tgt
        self.rate_valid = [False] * n_tgt
        self._win_act = [0] * n_tgt
        self._win_done = [0] * n_tgt

    def _sat(self, a, b, top):
        return min(a + b, top)

    def step(self, outstanding, dispatch=None, retire=None, stall=None):
        """outstanding: per-target counts this cycle; dispatch/retire: (target, work) or None;
        stall: per-target bools (the targets' downstream-stall reports; None = none)."""
        for t in range(self.n):
            if dispatch is not None and dispatch[0] == t:
                self.accepted[t] = self._sat(self.accepted[t], dispatch[1], self.stat_max)
            retiring = retire is not None and retire[0] == t
            done = self._win_done[t]
            if retiring:
                self.completed[t] = self._sat(self.completed[t], retire[1], self.stat_max)
                done = self._sat(done, retire[1], self.rate_max)
            if outstanding[t] != 0:
                self.active_cyc[t] = self._sat(self.active_cyc[t], 1, self.stat_max)
                if stall is not None and stall[t]:
                    self.stall_cyc[t] = self._sat(self.stall_cyc[t], 1, self.stat_max)
                if self._win_act[t] == self.window - 1:
                    self.svc_rate[t] = done
                    self.rate_valid[t] = True
                    self._win_act[t] = 0
                    self._win_done[t] = 0
                else:
                    self._win_act[t] += 1
                    self._win_done[t] = done
            else:
                self._win_done[t] = done
