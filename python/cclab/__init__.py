"""cclab from Python: describe a path, its hosts and a workload once, run it on a
simulator faithful to Linux TCP (or on real Linux TCP in network namespaces), and get the
results as polars tables.

>>> import cclab
>>> sc = cclab.Scenario.load("scenarios/seeds/lossy-lan.toml")   # or from_toml / from_dict
>>> res = sc.set({"duration": "2s"}).run(seed=1)
>>> res.flows.group_by("flows.cc").agg(pl.col("goodput_bps").median())
>>> res.write("out/")              # cclab report / cclab compare read it
>>> big = cclab.sweep(sc, repeat=50, executor="ray")   # the same results, on a Ray cluster

Everything here calls the library the ``cclab`` command calls: same results, byte for
byte, and the same one-line errors (raised as :class:`CclabError`). docs/python.md walks
through a study.
"""

from ._native import CclabError, version as _version
from ._results import Results, read
from ._scenario import Scenario, controllers, load
from ._sweep import sweep

__version__ = _version()


def run(scenario, **kwargs) -> Results:
    """Run a scenario (a path, a dict or a :class:`Scenario`): :meth:`Scenario.run`'s
    keyword arguments (``seed``, ``repeat``, ``backend``, ``jobs``, ``progress``,
    ``trace``)."""
    return load(scenario).run(**kwargs)


__all__ = ["CclabError", "Results", "Scenario", "controllers", "load", "read", "run", "sweep", "__version__"]
