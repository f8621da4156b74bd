"""What per-ACK hooks cost: a Python controller with and without ``on_ack``.

    python python/benches/ack_hooks.py [--duration S] [--rate MBIT]

One flow of ``cclab.policies:DelayRate`` on 100 Mbit/s x 20 ms (10 ms intervals), run once as
it is and once with an ``on_ack`` that returns None (the ACKs are shown, nothing decided).
Prints the wall time of each run, decisions (intervals) per second and ACKs per second. A
benchmark, not a test: compare figures on one machine.
"""

import argparse
import time

import cclab
from cclab.policies import DelayRate


class DelayRateWatching(DelayRate):
    """DelayRate, shown every ACK (and deciding nothing on them)."""

    acks = 0

    def on_ack(self, ack):
        DelayRateWatching.acks += 1
        return None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--duration", type=float, default=10.0)
    ap.add_argument("--rate", type=float, default=100.0)
    a = ap.parse_args()
    steps = a.duration / 0.010
    for cc in ("py:cclab.policies:DelayRate", "py:__main__:DelayRateWatching"):
        sc = cclab.Scenario.from_dict(
            {"name": "ack-hooks", "duration": f"{a.duration}s",
             "link": {"rate": f"{a.rate}mbit", "rtt": "20ms", "buffer": "1bdp"}, "flows": [{"cc": cc}]}
        )
        DelayRateWatching.acks = 0
        t = time.perf_counter()
        res = sc.run(seed=1)
        wall = time.perf_counter() - t
        gp = res.flows["goodput_bps"][0] / 1e6
        acks = DelayRateWatching.acks
        extra = f", {acks} ACKs = {acks / wall:,.0f} ACKs/s" if acks else ""
        print(f"{cc}: {wall:.2f} s for {a.duration:g} s simulated, {steps / wall:,.0f} intervals/s{extra} ({gp:.1f} Mbit/s)")


if __name__ == "__main__":
    main()
