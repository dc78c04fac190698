"""Shared by the benchmark suites."""
import os

import pytest


@pytest.fixture
def record(benchmark, request):
    """record(n, impl, peer=False), called after `benchmark` ran: stores the figures docs/perf.md and
    bench/plot_perf.py read, the cost per item of n items per call (the test module's ITEM names
    them: "term", "flow"), the implementation, whether it is a peer's, and the load at the time."""
    unit = request.module.ITEM

    def store(n, impl, peer=False):
        if benchmark.stats is None:                                   # --benchmark-disable: checks only
            return
        stats = benchmark.stats.stats
        benchmark.extra_info.update(n=n, unit=unit, impl=impl, peer=peer, load1=os.getloadavg()[0],
                                    ns_per_item=stats.min / n * 1e9, ns_per_item_mean=stats.mean / n * 1e9)
        benchmark.extra_info[f"ns_per_{unit}"] = stats.min / n * 1e9   # the name earlier runs used
    return store
