"""Scenarios: a path, its hosts and a workload, loaded from a file, TOML text or a dict."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Mapping, Optional, Union

from . import _native

if TYPE_CHECKING:
    from ._results import Results

PathLike = Union[str, "os.PathLike[str]"]
Override = Union[str, Mapping[str, Any]]


@dataclass(frozen=True)
class Scenario:
    """A scenario as ``cclab run`` reads it: a TOML document plus ``--set`` overrides.

    Make one with :meth:`load` (a file), :meth:`from_toml` (text) or :meth:`from_dict`;
    each checks the scenario at once and raises :class:`cclab.CclabError` with the CLI's
    one-line message on bad input. A scenario is immutable: :meth:`set` returns a new one.

    >>> sc = cclab.Scenario.load("scenarios/seeds/lossy-lan.toml").set({"duration": "2s"})
    >>> len(sc)            # matrix points
    6
    >>> res = sc.run(seed=1)
    >>> res.flows          # a polars DataFrame
    """

    text: str
    origin: str = "<string>"
    dir: Optional[str] = None
    overrides: tuple = field(default_factory=tuple)
    backend: str = "sim"

    # ---- construction -------------------------------------------------------------------
    @classmethod
    def load(cls, path: PathLike, *, backend: str = "sim") -> "Scenario":
        """Read a scenario file. Relative paths in it (trace files) are the file's, and
        errors and results name the path as given."""
        p = os.fspath(path)
        text = _native.read_scenario(p)
        sc = cls(text=text, origin=p, dir=os.path.dirname(p) or None, backend=backend)
        sc._plan()
        return sc

    @classmethod
    def from_toml(
        cls, text: str, *, origin: str = "<string>", dir: Optional[PathLike] = None, backend: str = "sim"
    ) -> "Scenario":
        """A scenario from TOML text (the format of docs/scenarios.md). ``origin`` names it
        in errors and results; relative paths in it are taken from ``dir``."""
        sc = cls(text=text, origin=origin, dir=os.fspath(dir) if dir else None, backend=backend)
        sc._plan()
        return sc

    @classmethod
    def from_dict(
        cls, d: Mapping[str, Any], *, origin: str = "<dict>", dir: Optional[PathLike] = None, backend: str = "sim"
    ) -> "Scenario":
        """A scenario from a dict shaped like the TOML file: ``{"name": ..., "duration":
        "10s", "link": {"rate": "100mbit", ...}, "flows": [{"cc": "bbr"}]}``. Any value may
        be a list (a matrix), as in the file; the dict's order is the matrix's order."""
        return cls.from_toml(_native.to_toml(json.dumps(d), False), origin=origin, dir=dir, backend=backend)

    # ---- overrides ------------------------------------------------------------------------
    def set(self, *overrides: Override, **kwargs: Any) -> "Scenario":
        """A new scenario with ``--set`` overrides applied, in order: strings as the CLI
        takes them (``"link.loss=1%"``, ``"flows.cc=[cubic,bbr]"``), or a mapping of keys to
        Python values (``{"link.loss": "1%", "flows.cc": ["cubic", "bbr"]}``). Keyword
        arguments are top-level keys (``seed=3``, ``duration="5s"``)."""
        specs = []
        for o in overrides:
            if isinstance(o, str):
                specs.append(o)
            elif isinstance(o, Mapping):
                specs.extend(_override(k, v) for k, v in o.items())
            else:
                raise TypeError(f"an override is a 'key=value' string or a mapping, not {type(o).__name__}")
        specs.extend(_override(k, v) for k, v in kwargs.items())
        sc = replace(self, overrides=self.overrides + tuple(specs))
        sc._plan()
        return sc

    def on(self, backend: str) -> "Scenario":
        """The same scenario checked for another backend's controllers (``"kernel"``)."""
        sc = replace(self, backend=backend)
        sc._plan()
        return sc

    # ---- what it is ---------------------------------------------------------------------
    def _plan(self, seed: Optional[int] = None) -> dict:
        return json.loads(_native.plan_info(self._spec(seed, 1, None)))

    @property
    def name(self) -> str:
        """The scenario's name."""
        return self._plan()["name"]

    @property
    def description(self) -> Optional[str]:
        """The scenario's description, if it has one."""
        return self._plan()["description"]

    @property
    def points(self) -> list:
        """The matrix points, in run order: each a dict with its ``label``, ``seed``, the
        swept ``params`` and the ``resolved`` values of every key."""
        return self._plan()["points"]

    def __len__(self) -> int:
        return len(self._plan()["points"])

    def __repr__(self) -> str:
        p = self._plan()
        extra = f", overrides={list(self.overrides)!r}" if self.overrides else ""
        return f"Scenario({p['name']!r} from {self.origin!r}, {len(p['points'])} points{extra})"

    # ---- running ------------------------------------------------------------------------
    def run(
        self,
        *,
        seed: Optional[int] = None,
        repeat: int = 1,
        backend: Optional[str] = None,
        jobs: int = 0,
        progress: bool = False,
        trace: Optional[PathLike] = None,
    ) -> "Results":
        """Run every matrix point ``repeat`` times (consecutive seeds from ``seed``, else
        the scenario's) on ``backend`` (default: the scenario's, ``"sim"``), ``jobs`` runs
        at a time (0: one per core), as ``cclab run`` does. The GIL is released while it
        runs; Ctrl-C stops it (KeyboardInterrupt)."""
        from ._results import Results

        native = _native.run(
            self._spec(seed, repeat, backend), jobs, progress, os.fspath(trace) if trace else None
        )
        return Results(native)

    def sweep(self, **kwargs: Any) -> "Results":
        """:func:`cclab.sweep` of this scenario."""
        from ._sweep import sweep

        return sweep(self, **kwargs)

    def _spec(self, seed: Optional[int], repeat: int, backend: Optional[str]) -> tuple:
        """The scenario as the native functions take it: (text, origin, dir, overrides,
        seed, repeat, backend), a plain tuple that Ray ships to its workers."""
        return (self.text, self.origin, self.dir, list(self.overrides), seed, repeat, backend or self.backend)


def _override(key: str, value: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(f"an override key is a string like 'link.loss', not {type(key).__name__}")
    return f"{key}={_native.to_toml(json.dumps(value), True)}"


def controllers(backend: str = "sim") -> list:
    """The controllers of a backend, as ``cclab controllers --json`` lists them: each a
    dict with ``name``, ``aliases``, ``title``, ``summary`` and ``params`` (each with
    ``name``, ``default``, ``kind``, ``unit``, ``help``)."""
    return json.loads(_native.controllers(backend))["controllers"]


def load(source: Union[PathLike, Mapping[str, Any], Scenario], **kwargs: Any) -> Scenario:
    """A scenario from a path, a dict or a Scenario (returned as is)."""
    if isinstance(source, Scenario):
        return source
    if isinstance(source, Mapping):
        return Scenario.from_dict(source, **kwargs)
    return Scenario.load(source, **kwargs)


__all__ = ["Scenario", "controllers", "load"]
