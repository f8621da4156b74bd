"""A Gymnasium environment on cclab's simulator: one flow of a scenario (``cc = "external"``)
is the agent's, the others are Linux's controllers as the simulator models them.

>>> import cclab.gym
>>> env = cclab.gym.CongestionEnv(cclab.gym.PathDistribution(rate_mbps=(20, 100)))
>>> obs, info = env.reset(seed=1)
>>> obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

Each step is one monitor interval of the agent's flow (``interval``, 10 ms by default): the
action is applied, the simulator runs to the interval's end (in Rust, without the GIL) and
the observation is the history of the last ``history`` intervals' features. Episodes are
deterministic by seed: the seed draws the path from the distribution and seeds the run.
Install with ``pip install cclab[gym]``; docs/learning.md walks through it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from . import _native
from ._scenario import Scenario, load

#: The statistics of one monitor interval, in the order the simulator returns them.
STATS = tuple(_native.Stepper.fields())
_I = {k: i for i, k in enumerate(STATS)}

#: The observation's features per interval (Aurora's three, then loss, ECN and the rate):
#: latency gradient (s/s), latency ratio (mean RTT / min RTT), send ratio (send rate /
#: delivery rate, at most 10), loss rate (lost / sent), ECN rate (CE-marked / delivered),
#: and log10 of the delivery rate in Mbit/s.
FEATURES = ("rtt_gradient", "latency_ratio", "send_ratio", "loss_rate", "ecn_rate", "delivery_log")


# Indices of the statistics the features and rewards read (module constants: a dict lookup
# per statistic per step was a visible share of a step).
_DR, _SR, _RAVG, _GRAD, _MINRTT = _I["delivery_rate_bps"], _I["send_rate_bps"], _I["rtt_avg_s"], _I["rtt_gradient"], _I["min_rtt_s"]
_LOST, _ECN, _SENT, _DELIV = _I["lost_pkts"], _I["ecn_pkts"], _I["sent_pkts"], _I["delivered_pkts"]


def _features(s: Sequence[float]) -> Tuple[float, ...]:
    """One interval's :data:`FEATURES` from its statistics (in :data:`STATS`' order)."""
    dr, sr, mn, avg = s[_DR], s[_SR], s[_MINRTT], s[_RAVG]
    sent, delivered = s[_SENT], s[_DELIV]
    g = s[_GRAD]
    return (
        -10.0 if g < -10.0 else (10.0 if g > 10.0 else g),
        min(100.0, avg / mn) if mn > 0 and avg > 0 else 1.0,
        min(10.0, sr / dr) if dr > 0 else (10.0 if sr > 0 else 1.0),
        s[_LOST] / sent if sent > 0 else 0.0,
        s[_ECN] / delivered if delivered > 0 else 0.0,
        math.log10(1.0 + dr / 1e6),
    )


# ---------------------------------------------------------------- rewards


def _stats_dict(s: Sequence[float]) -> dict:
    return dict(zip(STATS, s))


class LinearReward:
    """``throughput x Mbit/s - delay x queueing delay (s) - loss x loss rate``: the form of
    Aurora's reward (PCC-RL: 10 x throughput - 1000 x latency - 2000 x loss), with its
    weights by default. Queueing delay is the interval's mean RTT less the minimum RTT."""

    def __init__(self, throughput: float = 10.0, delay: float = 1000.0, loss: float = 2000.0):
        self.w = (throughput, delay, loss)

    def reset(self) -> None:
        pass

    def __call__(self, s: Sequence[float]) -> float:
        q = s[_RAVG] - s[_MINRTT]
        sent = s[_SENT]
        wt, wd, wl = self.w
        return wt * (s[_DR] / 1e6) - wd * (q if q > 0.0 else 0.0) - wl * (s[_LOST] / sent if sent > 0 else 0.0)


class OrcaReward:
    """Orca's reward: (throughput - zeta x loss rate in bit/s) / delay, normalised by the
    best throughput seen this episode over the minimum RTT, so 1 is the link at an empty
    queue; ``zeta`` weighs losses (Orca: 5)."""

    def __init__(self, zeta: float = 5.0):
        self.zeta = zeta
        self.best = 1.0

    def reset(self) -> None:
        self.best = 1.0

    def __call__(self, s: Sequence[float]) -> float:
        dr = s[_DR]
        self.best = max(self.best, dr)
        sent = s[_SENT]
        loss_bps = (s[_LOST] / sent) * s[_SR] if sent > 0 else 0.0
        d, mn = s[_RAVG], s[_MINRTT]
        if d <= 0 or mn <= 0:
            return 0.0
        return ((dr - self.zeta * loss_bps) / d) / (self.best / mn)


REWARDS = {"aurora": LinearReward, "orca": OrcaReward}


def _reward(r: Union[str, dict, Callable]) -> Any:
    if isinstance(r, str):
        if r not in REWARDS:
            raise ValueError(f"unknown reward preset {r!r}: use one of {sorted(REWARDS)}, a dict of weights (throughput, delay, loss) or a callable")
        return REWARDS[r]()
    if isinstance(r, dict):
        bad = set(r) - {"throughput", "delay", "loss"}
        if bad:
            raise ValueError(f"reward weights are throughput, delay and loss, not {sorted(bad)}")
        return LinearReward(**r)
    if callable(r):
        return r
    raise TypeError("reward is a preset name ('aurora', 'orca'), a dict of weights or a callable(stats dict) -> float")


# ---------------------------------------------------------------- scenarios


@dataclass
class PathDistribution:
    """Paths drawn per episode: each range ``(low, high)`` uniform (rate and RTT log-uniform),
    each tuple of choices uniform. ``competing`` is the range of Linux flows sharing the
    path with the agent, each running one of ``competing_cc`` and starting within the first
    ``competing_start_s``."""

    rate_mbps: Tuple[float, float] = (10.0, 100.0)
    rtt_ms: Tuple[float, float] = (10.0, 100.0)
    buffer_bdp: Tuple[float, float] = (0.5, 2.0)
    loss: Tuple[float, float] = (0.0, 0.0)
    aqm: Tuple[str, ...] = ("droptail",)
    competing: Tuple[int, int] = (0, 0)
    competing_cc: Tuple[str, ...] = ("cubic", "bbr")
    competing_start_s: float = 0.5
    duration_s: float = 5.0

    def draw(self, rng: np.random.Generator, interval_us: int) -> dict:
        def logu(lo_hi):
            lo, hi = lo_hi
            return float(math.exp(rng.uniform(math.log(lo), math.log(hi)))) if hi > lo else float(lo)

        def uni(lo_hi):
            lo, hi = lo_hi
            return float(rng.uniform(lo, hi)) if hi > lo else float(lo)

        flows = [{"cc": "external", "cc_params": {"interval_us": interval_us}}]
        n = int(rng.integers(self.competing[0], self.competing[1] + 1))
        for _ in range(n):
            flows.append(
                {
                    "cc": str(self.competing_cc[int(rng.integers(len(self.competing_cc)))]),
                    "start": f"{uni((0.0, self.competing_start_s)) * 1e3:.3f}ms",
                }
            )
        return {
            "name": "gym",
            "duration": f"{self.duration_s}s",
            "link": {
                "rate": f"{logu(self.rate_mbps):.4f}mbit",
                "rtt": f"{logu(self.rtt_ms):.4f}ms",
                "buffer": f"{uni(self.buffer_bdp):.4f}bdp",
                "loss": uni(self.loss),
                "aqm": str(self.aqm[int(rng.integers(len(self.aqm)))]),
            },
            "flows": flows,
        }


# ---------------------------------------------------------------- the environment


class CongestionEnv(gym.Env):
    """One flow's congestion control as a Gymnasium environment.

    ``scenario``: a :class:`PathDistribution` (the default one if ``None``), or a fixed
    scenario (a path, dict or :class:`cclab.Scenario`) with one flow of ``cc = "external"``
    (its ``cc_params.interval_us`` sets the interval; ``interval`` is then ignored).
    ``action``: ``"rate"`` (Aurora: the pacing rate is multiplied by ``1 + scale x a`` for
    ``a >= 0`` and divided by ``1 - scale x a`` for ``a < 0``, ``a`` in [-1, 1]) or
    ``"cwnd"`` (cwnd += round(``scale`` x a) packets, at least 2). ``reward``: ``"aurora"``,
    ``"orca"``, a dict of weights for :class:`LinearReward`, or a callable taking the
    interval's statistics (a dict) and returning a float.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        scenario: Any = None,
        *,
        action: str = "rate",
        history: int = 10,
        interval: float = 0.010,
        reward: Union[str, dict, Callable] = "aurora",
        scale: Optional[float] = None,
        start_rate_bps: float = 2e6,
        start_cwnd: int = 10,
        max_steps: Optional[int] = None,
    ):
        if action not in ("rate", "cwnd"):
            raise ValueError(f"action is 'rate' (Aurora's rate multiplier) or 'cwnd' (a cwnd delta), not {action!r}")
        if history < 1:
            raise ValueError("history must be at least 1 interval")
        if not interval > 0:
            raise ValueError("interval must be a positive number of seconds")
        self.kind = action
        self.history = int(history)
        self.interval_us = max(100, int(round(interval * 1e6)))
        self.scale = float(scale if scale is not None else (0.25 if action == "rate" else 10.0))
        self.start_rate = float(start_rate_bps)
        self.start_cwnd = int(start_cwnd)
        self.max_steps = max_steps
        self._reward = _reward(reward)
        self._reward_is_obj = hasattr(self._reward, "reset")
        if scenario is None:
            scenario = PathDistribution()
        self.dist = scenario if isinstance(scenario, PathDistribution) else None
        self.fixed: Optional[Scenario] = None if self.dist else load(scenario)
        nf = len(FEATURES)
        self.observation_space = spaces.Box(-1e3, 1e3, shape=(self.history * nf,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(1,), dtype=np.float32)
        self._stepper = None
        # The observation history: a ring of 2 x `history` rows of features, each interval
        # written twice (rows i and i + history) so the last `history` rows, oldest first,
        # are always one contiguous slice; the observation is a copy of it. Rows before the
        # first interval are a quiet path's (features are bounded, well inside +-1e3).
        self._quiet = np.tile(np.array((0.0, 1.0, 1.0, 0.0, 0.0, 0.0), dtype=np.float32), 2 * self.history)
        self._ring = self._quiet.copy()
        self._mv = memoryview(self._ring)  # element writes through it are the cheapest
        self._slot = 0
        self._span = self.history * nf
        self._rate = self.start_rate
        self._cwnd = self.start_cwnd
        self._steps = 0
        #: The episode's drawn path (the scenario's `link` table) under a distribution.
        self.path: Optional[dict] = None

    # -- helpers
    def _push(self, s: Sequence[float]) -> np.ndarray:
        """Add interval `s`'s features to the history; the observation (a copy)."""
        i = self._slot
        j = i * 6  # len(FEATURES)
        k = j + self._span
        m = self._mv
        m[j], m[j + 1], m[j + 2], m[j + 3], m[j + 4], m[j + 5] = m[k], m[k + 1], m[k + 2], m[k + 3], m[k + 4], m[k + 5] = _features(s)
        self._slot = i + 1 if i + 1 < self.history else 0
        return self._ring[j + 6 : k + 6].copy()

    def _observation(self) -> np.ndarray:
        """The last observation again (a copy)."""
        j = (self._slot - 1) % self.history * 6 + 6
        return self._ring[j : j + self._span].copy()

    def _spec(self, seed: int) -> tuple:
        if self.dist is not None:
            d = self.dist.draw(self.np_random, self.interval_us)
            self.path = d["link"]
            sc = Scenario.from_dict(d)
        else:
            sc = self.fixed
        return sc._spec(seed, 1, "sim")

    def _act(self) -> dict:
        if self.kind == "rate":
            return {"rate_bps": self._rate}
        return {"cwnd": float(self._cwnd)}

    # -- the Gymnasium API
    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        super().reset(seed=seed)
        run_seed = int(self.np_random.integers(1, 2**31 - 1))
        self._stepper = _native.Stepper(self._spec(run_seed))
        self._ring[:] = self._quiet
        self._slot = 0
        self._rate, self._cwnd, self._steps = self.start_rate, self.start_cwnd, 0
        if self._reward_is_obj:
            self._reward.reset()
        s = self._stepper.step(**self._act())
        if s is None:
            raise _native.CclabError("the scenario ends before the first monitor interval")
        return self._push(s), {"stats": _stats_dict(s)}

    def step(self, action):
        try:
            a = float(action[0])  # the Box(1,) action as an array or a list
        except (TypeError, IndexError):
            a = float(np.asarray(action).flat[0])
        if not a >= -1.0:  # (NaN too, as before)
            a = -1.0
        elif a > 1.0:
            a = 1.0
        if self.kind == "rate":
            r = self._rate * (1.0 + self.scale * a) if a >= 0 else self._rate / (1.0 - self.scale * a)
            self._rate = r = 1e4 if r < 1e4 else (1e12 if r > 1e12 else r)
            s = self._stepper.step(None, r)
        else:
            self._cwnd = c = max(2, self._cwnd + int(round(self.scale * a)))
            s = self._stepper.step(float(c))
        self._steps += 1
        if s is None:
            return self._observation(), 0.0, False, True, {}
        obs = self._push(s)
        r = float(self._reward(s if self._reward_is_obj else _stats_dict(s)))
        trunc = self.max_steps is not None and self._steps >= self.max_steps
        return obs, r, False, trunc, {"stats": s}


def make_vector(n: int, **kwargs) -> gym.vector.SyncVectorEnv:
    """``n`` environments with the same settings stepped together in this process
    (``gymnasium.vector.SyncVectorEnv``); ``AsyncVectorEnv`` spreads them over processes."""
    return gym.vector.SyncVectorEnv([lambda: CongestionEnv(**kwargs) for _ in range(n)])


gym.register(id="cclab/Congestion-v0", entry_point=CongestionEnv)

__all__ = ["CongestionEnv", "PathDistribution", "LinearReward", "OrcaReward", "FEATURES", "STATS", "make_vector"]
