"""The Python package's speed, as `cclab bench` measures the simulator's:

    python3 python/bench.py [--runs N] [--sweep N] [--no-ray] [--json]

1. Overhead per run through Python: N one-second runs, each its own `cclab.run` call
   (scenario check, run, results object), against the same N runs made by one call
   (`repeat=N`, one at a time): the difference per run is what Python adds. Reading a run's
   `flows` table (Parquet bytes to a polars DataFrame) is timed apart.
2. A sweep on a local Ray cluster of this machine's CPUs (started first, not timed) against
   `cclab run --repeat` of the same matrix with as many parallel runs, and whether the two
   results documents are equal. As root the cluster runs in a network namespace of its own
   (this script re-runs itself under `unshare --net`), since Ray listens on every interface.

Targets (issue #29): <= 5 ms per run of overhead; the Ray sweep within 1.5x of the CLI's.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The installed package (pip install ./python), not its source folder beside this script.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
import cclab  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

ONE_SECOND = {
    "name": "bench-1s",
    "duration": "1s",
    "seed": 1,
    "link": {"rate": "10mbit", "rtt": "20ms", "buffer": "1bdp"},
    "flows": [{"cc": "cubic"}],
}

# 5 loss rates x 2 controllers, 10 s at 50 Mbit/s x 40 ms.
SWEEP = {
    "name": "bench-sweep",
    "duration": "10s",
    "seed": 1,
    "link": {"rate": "50mbit", "rtt": "40ms", "buffer": "1bdp", "loss": [0, "0.1%", "0.5%", "1%", "2%"]},
    "flows": [{"cc": ["cubic", "bbr"]}],
}


def overhead(n: int) -> dict:
    sc = cclab.Scenario.from_dict(ONE_SECOND)
    sc.run()  # warm up
    t = time.perf_counter()
    sc.run(repeat=n, jobs=1)
    inside = (time.perf_counter() - t) / n
    t = time.perf_counter()
    for k in range(n):
        cclab.run(ONE_SECOND, seed=k + 1, jobs=1)
    each = (time.perf_counter() - t) / n
    res = sc.run()
    t = time.perf_counter()
    for _ in range(n):
        res._tables.clear()
        res.flows
    table = (time.perf_counter() - t) / n
    return {
        "runs": n,
        "sim_ms_per_run": inside * 1e3,
        "python_call_ms_per_run": each * 1e3,
        "overhead_ms_per_run": (each - inside) * 1e3,
        "flows_table_ms": table * 1e3,
    }


def ray_sweep(n: int) -> dict:
    import ray

    points = len(cclab.Scenario.from_dict(SWEEP))
    repeat = max(1, n // points)
    cpus = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "sweep.toml"
        f.write_text(cclab._native.to_toml(json.dumps(SWEEP), False))
        cli = ROOT / "target" / "release" / "cclab"
        t = time.perf_counter()
        out = subprocess.run(
            [str(cli), "run", str(f), "--repeat", str(repeat), "--jobs", str(cpus), "--json", "-q"],
            check=True, capture_output=True, text=True,
        ).stdout
        cli_s = time.perf_counter() - t
        t = time.perf_counter()
        ray.init(num_cpus=cpus, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
        init_s = time.perf_counter() - t
        try:
            t = time.perf_counter()
            res = cclab.sweep(cclab.Scenario.load(str(f)), repeat=repeat, executor="ray", progress=False)
            ray_s = time.perf_counter() - t
        finally:
            ray.shutdown()
    return {
        "runs": points * repeat,
        "cpus": cpus,
        "cli_s": cli_s,
        "ray_init_s": init_s,
        "ray_sweep_s": ray_s,
        "ratio": ray_s / cli_s,
        "tasks": len(res.tasks),
        "equal": res.to_json() + "\n" == out,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=300, help="one-second runs for the overhead (default 300)")
    ap.add_argument("--sweep", type=int, default=1000, help="runs of the Ray sweep (default 1000)")
    ap.add_argument("--no-ray", action="store_true", help="only the overhead")
    ap.add_argument("--json", action="store_true", help="print JSON")
    a = ap.parse_args()
    isolated = [name for _, name in socket.if_nameindex()] == ["lo"]
    if not a.no_ray and not isolated and os.geteuid() == 0 and not os.environ.get("CCLAB_BENCH_NS"):
        # Ray in a network namespace of its own; the marker only stops a second re-run.
        env = {**os.environ, "CCLAB_BENCH_NS": "1"}
        cmd = "ip link set lo up && exec " + " ".join(map(str, [sys.executable, *sys.argv]))
        return subprocess.call(["unshare", "--net", "sh", "-c", cmd], env=env)
    out = {"overhead": overhead(a.runs)}
    if not a.no_ray:
        out["ray"] = ray_sweep(a.sweep)
    if a.json:
        print(json.dumps(out, indent=2))
        return 0
    o = out["overhead"]
    print(f"python overhead: {o['overhead_ms_per_run']:.2f} ms per run ({o['runs']} one-second runs: "
          f"{o['python_call_ms_per_run']:.2f} ms per call, {o['sim_ms_per_run']:.2f} ms simulating); "
          f"flows table {o['flows_table_ms']:.2f} ms  [target <= 5 ms: {'ok' if o['overhead_ms_per_run'] <= 5 else 'OVER'}]")
    if "ray" in out:
        r = out["ray"]
        print(f"ray sweep: {r['runs']} runs in {r['ray_sweep_s']:.1f} s on {r['cpus']} CPUs ({r['tasks']} tasks; "
              f"cluster start {r['ray_init_s']:.1f} s, not counted) vs cclab run --jobs {r['cpus']} {r['cli_s']:.1f} s: "
              f"x{r['ratio']:.2f} [target <= 1.5: {'ok' if r['ratio'] <= 1.5 else 'OVER'}]; "
              f"results {'equal' if r['equal'] else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
