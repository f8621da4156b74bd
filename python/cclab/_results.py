"""Results: one scenario's runs, as polars tables and as the CLI's results documents."""

from __future__ import annotations

import io
import json
import os
from typing import Any, Optional, Union

import polars as pl

from . import _native

PathLike = Union[str, "os.PathLike[str]"]


class Results:
    """The results of one scenario: the document ``cclab run`` writes, with its tables.

    - :attr:`flows`: one row per run and flow (the columns of ``flows.csv``, full precision);
    - :attr:`runs`: one row per run (swept params, link counters, run metrics);
    - :attr:`series`: one row per run, time bin and flow (``series/run-N.csv``);
    - :meth:`run` ``(i)``: run ``i``'s whole record (``resolved`` scenario, ``settings``, ...).

    Tables are polars DataFrames (Arrow-backed; ``.to_pandas()`` with pandas and pyarrow
    installed), read from the same Parquet bytes the results directory holds. ``print()``
    shows the CLI's table. A sweep's results also list its :attr:`failures` and
    :attr:`tasks`.
    """

    def __init__(self, native: Any, failures: Optional[list] = None, tasks: Optional[list] = None):
        self._doc = native
        self._dir: Optional[str] = None
        self._tables: dict = {}
        self.failures: list = failures or []
        """Runs of a sweep that failed: dicts with ``run`` (from 1), ``label``, ``seed`` and
        ``error`` (the CLI's message). Empty for a complete run."""
        self.tasks: list = tasks or []
        """A distributed sweep's tasks: dicts with ``runs`` (from 1), ``node`` (the Ray
        node that ran it) and ``seconds``."""

    @classmethod
    def from_dir(cls, dir: PathLike, failures: Optional[list] = None, tasks: Optional[list] = None) -> "Results":
        """The results in a results directory, read when asked: the tables from its Parquet
        files, the document from results.json on first use (what a streamed sweep returns)."""
        r = cls(None, failures, tasks)
        r._dir = os.fspath(dir)
        return r

    @property
    def _native(self) -> Any:
        if self._doc is None:
            self._doc = _native.read(self._dir)[0]
        return self._doc

    # ---- what it is ---------------------------------------------------------------------
    @property
    def scenario(self) -> str:
        """The scenario's name."""
        return self._native.scenario

    @property
    def backend(self) -> str:
        """The backend that ran it: ``sim``, ``kernel`` or ``host``."""
        return self._native.backend

    @property
    def origin(self) -> str:
        """Where the scenario came from (its file, or ``<dict>``)."""
        return self._native.origin

    def __len__(self) -> int:
        if self._doc is None and self._dir is not None:
            return self.runs.height
        return len(self._native)

    # ---- tables -------------------------------------------------------------------------
    def table(self, name: str) -> pl.DataFrame:
        """Table ``name``: ``"flows"``, ``"runs"`` or ``"series"``."""
        if name not in self._tables:
            if self._dir is not None and name in ("flows", "runs", "series"):
                self._tables[name] = pl.read_parquet(os.path.join(self._dir, f"{name}.parquet"))
            else:
                self._tables[name] = pl.read_parquet(io.BytesIO(self._native.parquet(name)))
        return self._tables[name]

    @property
    def flows(self) -> pl.DataFrame:
        """One row per run and flow: ``run``, ``seed``, the swept params, ``flow``, ``cc``,
        then goodput, retransmits, RTT percentiles, FCT and the link's figures."""
        return self.table("flows")

    @property
    def runs(self) -> pl.DataFrame:
        """One row per run: ``run``, ``seed``, the swept params, ``flows``, the link's rate,
        utilisation, queue delay, drops and marks, Jain's index and the duration."""
        return self.table("runs")

    @property
    def series(self) -> pl.DataFrame:
        """One row per run, 100 ms bin and flow: goodput, cwnd, in flight, pacing rate,
        srtt, delivery rate and the bottleneck's backlog (join on ``run`` for the params)."""
        return self.table("series")

    # ---- documents ----------------------------------------------------------------------
    def run(self, i: int) -> dict:
        """Run ``i`` (from 0)'s record: ``params``, ``seed``, ``flows``, ``link``,
        ``resolved`` (every scenario value it ran with), ``settings`` (what the hosts and the
        path resolved to) and ``series``."""
        if i < 0:
            i += len(self)
        return json.loads(self._native.run_json(i))

    def to_json(self) -> str:
        """``results.json``'s text (no time series), byte for byte as ``cclab run --json``
        prints it for one scenario."""
        return self._native.json()

    def to_dict(self) -> dict:
        """The results document as a dict (no time series)."""
        return json.loads(self.to_json())

    def to_csv(self) -> str:
        """``flows.csv``'s text."""
        return self._native.flows_csv()

    def write(self, dir: PathLike) -> None:
        """Write a results directory as ``cclab run --out DIR``: results.json, meta.json,
        flows.csv, series/run-N.csv, flows/runs/series.parquet and report.html, which
        ``cclab report`` and ``cclab compare`` read."""
        self._native.write(os.fspath(dir))

    def to_markdown(self) -> str:
        """The table as GitHub-flavoured Markdown (``cclab run --markdown``)."""
        return self._native.table(True)

    def __str__(self) -> str:
        return self._native.table(False)

    def __repr__(self) -> str:
        extra = f", {len(self.failures)} failed" if self.failures else ""
        return f"<cclab.Results {self.scenario!r}: {len(self)} runs on {self.backend}{extra}>"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()


def read(path: PathLike) -> Union[Results, list]:
    """Read results written by ``cclab run --out`` or :meth:`Results.write`: a results
    directory, a directory of them, or a results.json. One document gives a
    :class:`Results`, several a list of them."""
    docs = [Results(n) for n in _native.read(os.fspath(path))]
    return docs[0] if len(docs) == 1 else docs


__all__ = ["Results", "read"]
