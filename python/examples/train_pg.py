"""A tiny training example: REINFORCE with a linear Gaussian policy on cclab.gym, numpy only.

    python python/examples/train_pg.py [--iters N] [--episodes K]

The agent sets an Aurora-style rate multiplier every 10 ms on paths of 20-100 Mbit/s x
10-60 ms (one episode = 2 s simulated = 200 steps); the reward is Aurora's. Every iteration
runs K episodes with K seeds, then takes one policy-gradient step (returns-to-go, a mean
baseline). At the end it evaluates the mean policy on 5 unseen seeds: link utilisation and
queueing delay. docs/learning.md reports what it reached.
"""

import argparse
import time

import numpy as np

import cclab.gym as cg

DIST = cg.PathDistribution(rate_mbps=(20, 100), rtt_ms=(10, 60), buffer_bdp=(1, 2), duration_s=2.0)
HIST = 3


def run(env, w, b, sigma, seed, rng, greedy=False):
    obs, _ = env.reset(seed=seed)
    xs, acts, rews, stats = [], [], [], []
    while True:
        mu = float(np.tanh(obs @ w + b))
        a = mu if greedy else float(np.clip(mu + sigma * rng.standard_normal(), -1, 1))
        xs.append(obs)
        acts.append((a, mu))
        obs, r, term, trunc, info = env.step(np.array([a], dtype=np.float32))
        rews.append(r)
        if "stats" in info:
            stats.append(info["stats"])
        if term or trunc:
            return xs, acts, rews, stats


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=150)
    ap.add_argument("--episodes", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.01)
    a = ap.parse_args()
    env = cg.CongestionEnv(DIST, history=HIST, reward=cg.LinearReward(throughput=1.0, delay=100.0, loss=200.0))
    nobs = env.observation_space.shape[0]
    rng = np.random.default_rng(0)
    w, b, sigma, lr = np.zeros(nobs), 0.0, 0.3, a.lr
    t0 = time.time()
    steps = 0
    for it in range(a.iters):
        gw, gb, rets = np.zeros(nobs), 0.0, []
        batch = [run(env, w, b, sigma, 1000 * it + k, rng) for k in range(a.episodes)]
        all_g = []
        for xs, acts, rews, _ in batch:
            g = np.cumsum(np.array(rews)[::-1])[::-1]
            all_g.append(g)
            rets.append(sum(rews))
            steps += len(rews)
        base = np.mean(np.concatenate(all_g))
        scale = np.std(np.concatenate(all_g)) + 1e-8
        for (xs, acts, rews, _), g in zip(batch, all_g):
            for x, (act, mu), gt in zip(xs, acts, g):
                # d log N(act; tanh(z), sigma) / dz
                dz = (act - mu) / sigma**2 * (1 - mu**2) * (gt - base) / scale
                gw += dz * x
                gb += dz
        n = sum(len(x[0]) for x in batch)
        w += lr * gw / n
        b += lr * gb / n
        if it % 5 == 0 or it == a.iters - 1:
            print(f"iter {it:3d}: mean return {np.mean(rets):9.1f}  ({steps} steps, {time.time() - t0:.0f} s)", flush=True)
    evaluate(env, w, b, rng)


def evaluate(env, w, b, rng) -> None:
    i = cg.STATS.index
    for seed in range(5):
        _, _, _, stats = run(env, w, b, 0.0, 10_000 + seed, rng, greedy=True)
        st = np.array(stats[len(stats) // 2 :])
        rate = float(env.path["rate"].removesuffix("mbit")) * 1e6
        dr = st[:, i("delivery_rate_bps")].mean()
        q = (st[:, i("rtt_avg_s")] - st[:, i("min_rtt_s")]).mean()
        print(f"eval seed {seed}: {env.path['rate']} x {env.path['rtt']}: utilisation {dr / rate:4.0%}, delivery {dr / 1e6:6.1f} Mbit/s, queueing delay {q * 1e3:5.1f} ms, loss {st[:, i('lost_pkts')].sum():.0f} pkts")


if __name__ == "__main__":
    main()
