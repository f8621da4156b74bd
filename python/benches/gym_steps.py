"""Steps per second of the Gymnasium environment (cclab.gym), and the Python share of a step.

    python python/benches/gym_steps.py [--steps N] [--interval S] [--rate MBIT]

One environment on a fixed path (100 Mbit/s x 20 ms, 1 BDP buffer, no competitors), a
constant action, episodes of 10 s simulated. Prints env steps per second of wall time
(one core), the simulator's share (time inside the native step call) and Python's share
(the rest of env.step: features, observation, reward), and steps per second of the bare
stepper for reference. A benchmark, not a test: compare figures on one machine.
"""

import argparse
import time

import numpy as np

import cclab.gym as cg
from cclab import _native


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--interval", type=float, default=0.010)
    ap.add_argument("--rate", type=float, default=100.0)
    a = ap.parse_args()
    dist = cg.PathDistribution(rate_mbps=(a.rate, a.rate), rtt_ms=(20, 20), buffer_bdp=(1, 1), duration_s=10.0)
    env = cg.CongestionEnv(dist, interval=a.interval, start_rate_bps=a.rate * 1e6 * 0.9)
    native = [0.0]
    inner = None

    def timed(step):
        def f(*args, **kw):
            t = time.perf_counter()
            r = step(*args, **kw)
            native[0] += time.perf_counter() - t
            return r

        return f

    # The timing wrapper's own cost per call (counted in Python's share, reported beside it).
    noop = timed(lambda *a, **k: None)
    t0 = time.perf_counter()
    for _ in range(100000):
        noop(None, 1.0)
    wrapper_s = (time.perf_counter() - t0) / 100000
    native[0] = 0.0

    env.reset(seed=1)
    act = np.zeros(1, dtype=np.float32)
    steps = resets = 0
    t0 = time.perf_counter()
    while steps < a.steps:
        if inner is not env._stepper:
            inner = env._stepper
            inner_step = inner.step
            env._stepper = type("S", (), {"step": staticmethod(timed(inner_step))})()
            inner = env._stepper
        _, _, term, trunc, _ = env.step(act)
        steps += 1
        if term or trunc:
            env.reset(seed=steps)
            resets += 1
    wall = time.perf_counter() - t0
    sim_s = steps * a.interval
    print(f"env: {steps} steps in {wall:.2f} s = {steps / wall:,.0f} steps/s ({sim_s / wall:.0f}x real time, {resets} resets)")
    py_share = 1 - native[0] / wall
    print(f"  simulator (native step): {native[0] / wall:.0%} of the time; Python (env.step less native, resets): {py_share:.0%}"
          f" ({py_share - steps * wrapper_s / wall:.0%} without this bench's timing wrapper, {wrapper_s * 1e9:.0f} ns a step)")
    st = _native.Stepper(env._spec(1))
    n, t0 = 0, time.perf_counter()
    while st.step(rate_bps=a.rate * 0.9e6) is not None:
        n += 1
    w = time.perf_counter() - t0
    print(f"bare stepper: {n} steps in {w:.2f} s = {n / w:,.0f} steps/s")


if __name__ == "__main__":
    main()
