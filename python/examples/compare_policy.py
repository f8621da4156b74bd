"""A Python policy beside Linux's controllers, in one report.

    python3 python/examples/compare_policy.py [--out DIR] [--duration S] [--seed N]
                                              [--policy py:module:Class]

Runs one path (100 Mbit/s x 20 ms, a 2 BDP drop-tail buffer) once per controller: the
hand-written ``cclab.policies.DelayRate`` (or ``--policy``), CUBIC, BBRv1 and BBRv3, each
alone; prints the table and writes a results directory (DIR/report.html and the files
``cclab report`` / ``cclab compare`` read) through the library the ``cclab`` command uses.
docs/learning.md shows the table.
"""

import argparse

import cclab

ap = argparse.ArgumentParser()
ap.add_argument("--out", default="out/compare-policy", help="results directory (default: out/compare-policy)")
ap.add_argument("--duration", type=float, default=10.0, help="seconds per run (default 10)")
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--policy", default="py:cclab.policies:DelayRate", help="the Python controller, py:module:Class")
a = ap.parse_args()

sc = cclab.Scenario.from_dict(
    {
        "name": "policy-vs-linux",
        "description": f"{a.policy} beside CUBIC, BBRv1 and BBRv3, each alone on 100 Mbit/s x 20 ms with a 2 BDP buffer",
        "duration": f"{a.duration}s",
        "link": {"rate": "100mbit", "rtt": "20ms", "buffer": "2bdp"},
        # A list makes a matrix: one run per controller.
        "flows": [{"cc": [a.policy, "cubic", "bbr", "bbr3"]}],
    }
)
res = cclab.run(sc, seed=a.seed)
res.write(a.out)
print(res)
print(f"report: {a.out}/report.html (open it in a browser; `cclab report {a.out}` rebuilds it)")
