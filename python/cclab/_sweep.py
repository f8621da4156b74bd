"""Sweeps: a scenario's matrix x seeds, run here or spread over a Ray cluster.

A sweep is ``cclab run --repeat N`` of a scenario: run ``k`` is matrix point ``k // N``
with the point's seed plus ``k % N``. The local executor is that very call. The Ray
executor splits the runs into batches, runs each batch as one Ray task through this package
on any node of the cluster (each run by the same library call a local run makes), and
assembles the runs in order into the same results document, byte for byte.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from typing import Any, Callable, Mapping, Optional, Union

from . import _native
from ._results import Results
from ._scenario import Scenario, load

Source = Union[str, "os.PathLike[str]", Mapping[str, Any], Scenario]

# A streamed sweep's report.html is written up to this many runs (the page holds them all),
# the same limit as `cclab run --out`.
REPORT_MOST = _native.STREAM_REPORT_MOST


def sweep(
    scenario: Source,
    *,
    repeat: int = 1,
    seed: Optional[int] = None,
    executor: str = "local",
    address: Optional[str] = None,
    batch: Optional[int] = None,
    jobs: int = 0,
    backend: Optional[str] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    progress: Union[bool, Callable[[int, int, float], None]] = True,
) -> Results:
    """Run every matrix point of ``scenario`` ``repeat`` times (consecutive seeds from
    ``seed``, else the scenario's).

    - ``executor="local"``: on this machine, ``jobs`` runs at a time (0: one per core), as
      ``cclab run --repeat`` does.
    - ``executor="ray"``: as Ray tasks of ``batch`` runs each (default: about four tasks per
      CPU of the cluster, at most 64 runs each) on the cluster at ``address`` (``"auto"``,
      ``"ray://host:10001"``, ``"host:6379"``), or on the cluster this process is already
      connected to, or else on a local one started here (bound to 127.0.0.1 and stopped
      after). Runs of a failed task are listed in the results' ``failures`` with their point
      and seed, and the other runs are kept.

    ``out``: also write the results directory (as ``cclab run --out``). A Ray sweep writes it
    as the runs come, in run order, and holds no run in memory: the results it returns read
    the directory when asked (the tables from its Parquet files), so a sweep of any size fits
    (report.html is left out above 5,000 runs: ``cclab report DIR`` makes it). ``progress``: a line
    on stderr as runs finish (True), nothing (False), or a function called with (runs done,
    runs in all, seconds elapsed).
    """
    sc = load(scenario)
    if repeat < 1:
        raise _native.CclabError("repeat must be at least 1")
    report = _progress_printer() if progress is True else (progress or None)
    if executor == "local":
        res = sc.run(seed=seed, repeat=repeat, backend=backend, jobs=jobs, progress=bool(progress is True))
        if out is not None:
            res.write(out)
    elif executor == "ray":
        res = _ray_sweep(sc, repeat, seed, backend, address, batch, report, out)
    else:
        raise _native.CclabError(f'unknown executor "{executor}" (available: local, ray)')
    return res


def _progress_printer() -> Callable[[int, int, float], None]:
    state = {"last": 0.0}
    tty = sys.stderr.isatty()

    def show(done: int, total: int, elapsed: float) -> None:
        if elapsed < 2 and done < total:
            return
        if not tty and done < total and time.monotonic() - state["last"] < 10:
            return
        state["last"] = time.monotonic()
        left = f", ~{elapsed / done * (total - done):.0f} s left" if 0 < done < total else ""
        msg = f"cclab: {done}/{total} runs done, {elapsed:.0f} s elapsed{left}"
        if tty:
            end = "\n" if done == total else ""
            sys.stderr.write(f"\r\x1b[K{msg}{end}")
        else:
            sys.stderr.write(msg + "\n")
        sys.stderr.flush()

    return show


def run_batch(spec: tuple, indices: list) -> dict:
    """One task of a distributed sweep: runs ``indices`` of the scenario ``spec`` (see
    :meth:`Scenario._spec`) here, one after the other. Returns the runs as (k, ok, run JSON
    or error message), the node and the seconds taken."""
    start = time.monotonic()
    runs = _native.run_jobs(spec, list(indices))
    node = None
    try:
        import ray

        if ray.is_initialized():
            node = ray.get_runtime_context().get_node_id()
    except ImportError:
        pass
    return {"runs": runs, "node": node, "seconds": time.monotonic() - start}


def _ray_sweep(
    sc: Scenario,
    repeat: int,
    seed: Optional[int],
    backend: Optional[str],
    address: Optional[str],
    batch: Optional[int],
    report: Optional[Callable[[int, int, float], None]],
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
) -> Results:
    try:
        import ray
    except ImportError:
        raise _native.CclabError(
            'executor="ray" needs Ray: pip install "cclab[ray]" (or pip install ray)'
        ) from None
    spec = sc._spec(seed, repeat, backend)
    plan = json.loads(_native.plan_info(spec))
    if plan["parallel_runs"] == 1:
        raise _native.CclabError(
            f"the {plan['backend']} backend measures real time and makes one run at a time on "
            'one machine: sweep it with executor="local"'
        )
    points = plan["points"]
    total = len(points) * repeat
    own = False
    if not ray.is_initialized():
        if address is None:
            # A cluster of this machine alone, reachable from this machine alone.
            ray.init(
                include_dashboard=False,
                _node_ip_address="127.0.0.1",
                log_to_driver=False,
                configure_logging=False,
            )
        else:
            ray.init(address=address, log_to_driver=False, configure_logging=False)
        own = True
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        size = batch or max(1, min(64, math.ceil(total / (cpus * 4))))
        # SPREAD: the batches go round the nodes, so every node works from the start (by
        # default Ray fills the node it already has workers on, and a sweep of short runs
        # can finish there before another node's workers have started).
        task = ray.remote(num_cpus=1, max_retries=0, scheduling_strategy="SPREAD")(run_batch)
        batches = [list(range(i, min(i + size, total))) for i in range(0, total, size)]
        pending = {task.remote(spec, b): b for b in batches}
        # Without a directory the runs are held, in order; with one each is written as soon as
        # every run before it has come (or failed), and dropped.
        sink = _native.stream(spec, os.fspath(out)) if out is not None else None
        runs: list = [None] * total
        waiting: dict = {}
        next_k = 0
        failures: list = []
        tasks: list = []
        done = 0
        start = time.monotonic()
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1)
            for ref in ready:
                indices = pending.pop(ref)
                try:
                    got = ray.get(ref)
                except Exception as e:  # the task itself failed (its worker died, ...)
                    why = str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__
                    failures.extend(_failure(points, repeat, k, f"the Ray task failed: {why}") for k in indices)
                    waiting.update((k, None) for k in indices)
                    done += len(indices)
                    continue
                for k, ok, text in got["runs"]:
                    waiting[k] = text if ok else None
                    if not ok:
                        failures.append(_failure(points, repeat, k, text))
                tasks.append({"runs": [k + 1 for k in indices], "node": got["node"], "seconds": got["seconds"]})
                done += len(indices)
            while next_k in waiting:
                text = waiting.pop(next_k)
                if text is not None:
                    if sink is not None:
                        sink.push(text)
                    else:
                        runs[next_k] = text
                next_k += 1
            if report:
                report(done, total, time.monotonic() - start)
    finally:
        if own:
            ray.shutdown()
    failures.sort(key=lambda f: f["run"])
    if failures:
        first = failures[0]
        print(
            f"warning: {len(failures)} of {total} runs failed (first: run {first['run']}, "
            f"{first['label'] or 'the only point'} seed {first['seed']}: {first['error']}); "
            "the results hold the others (Results.failures lists them)",
            file=sys.stderr,
        )
    if sink is not None:
        sink.finish(total - len(failures) <= REPORT_MOST)
        return Results.from_dir(out, failures=failures, tasks=tasks)
    native = _native.assemble(spec, [r for r in runs if r is not None])
    return Results(native, failures=failures, tasks=tasks)


def _failure(points: list, repeat: int, k: int, error: str) -> dict:
    p = points[k // repeat]
    return {"run": k + 1, "label": p["label"], "seed": p["seed"] + k % repeat, "error": error}


__all__ = ["sweep", "run_batch"]
