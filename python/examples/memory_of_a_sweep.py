"""The driver's memory in a Ray sweep, gathered in memory or streamed to a directory:

    python3 python/examples/memory_of_a_sweep.py memory|stream N

(as root, run it under `unshare --net` with loopback up: Ray listens on every interface).
Prints the sweep's time and the driver's peak RSS.
"""
import cclab, resource, sys, time, tempfile, os
mode = sys.argv[1]; n = int(sys.argv[2])
sc = cclab.Scenario.from_dict({"name": "mem", "duration": "2s", "seed": 1,
   "link": {"rate": "10mbit", "rtt": "20ms", "buffer": "1bdp", "loss": [0, "1%"]}, "flows": [{"cc": ["cubic", "bbr"]}]})
import ray
ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.time()
out = tempfile.mkdtemp() if mode == "stream" else None
res = cclab.sweep(sc, repeat=n // 4, executor="ray", out=out, progress=False)
el = time.time() - t
print(mode, n, "runs", f"{el:.1f} s", "driver peak RSS MB", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, "(after ray.init", base // 1024, ")", "rows", res.flows.height)
if out: print("dir MB", sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(out) for f in fs) // 2**20)
ray.shutdown()
