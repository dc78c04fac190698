"""Figures of the reports (`prism fabric`, `prism package`, `prism topo`): one way to save them.

Beside the simulation core, under every subsystem: the reports of cosim/fabric, cosim/package
and cosim/topology use it, and it imports nothing of ours."""


def save_figure(fig, path, dpi=110):
    """Write a report's figure to `path` (PNG) and free it; returns the path."""
    import matplotlib.pyplot as plt  # deferred: matplotlib takes half a second to import
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
