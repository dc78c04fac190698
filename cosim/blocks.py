"""Icarus co-simulation factories, one per MyHDL block.

`from cosim.blocks import fp32_add` gives a function with the same name and
signature as `hdl.fp32_add.fp32_add` that returns the converted block's
co-simulation, so one test body drives either back end.  Every block lives in
`hdl/<name>.py` as `<name>` (one block per file), which is how it is found here.
"""
import importlib

from .toolchain import cosim_factory

_factories = {}


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    if name not in _factories:
        try:
            module = importlib.import_module(f"hdl.{name}")
        except ModuleNotFoundError as e:
            raise AttributeError(f"no MyHDL block hdl/{name}.py") from e
        _factories[name] = cosim_factory(getattr(module, name))
    return _factories[name]
