"""Hand-written controllers for flows decided from Python (``cc = "py:module:Class"``).

A controller is any class with ``on_interval(stats) -> action``: ``stats`` is a dict of the
monitor interval's statistics (names and units in docs/learning.md, e.g.
``delivery_rate_bps``, ``rtt_avg_s``, ``min_rtt_s``, ``lost_pkts``), and the action is
``None`` (keep the last decision) or a dict with any of ``rate_bps`` (pacing rate, bit/s),
``cwnd`` (packets) and ``interval_s`` (the next interval's length, s). One instance runs one
flow of one run. A class may also define ``on_ack(ack) -> action`` to be shown every ACK of
its flow (slow: several times slower; docs/learning.md lists the ACK's fields).

>>> sc = cclab.Scenario.from_dict({... "flows": [{"cc": "py:cclab.policies:DelayRate"}, {"cc": "cubic"}]})
>>> sc.run()
"""


class DelayRate:
    """A delay-based rate controller: keeps the queueing delay it causes near ``target_s``.

    Each interval it measures the queueing delay (mean RTT less the minimum RTT) and sets
    its rate from what the path delivered: up by ``gain`` x the room left below the target
    (at most +25% an interval, and at least a small probe while the queue is empty), down
    in proportion to the excess above it. Losses alone do not cut the rate (random loss is
    not congestion), but a loss rate above 10% with a standing queue halves it.
    """

    def __init__(self, target_s: float = 0.005, gain: float = 0.5, start_bps: float = 1e6):
        self.target = target_s
        self.gain = gain
        self.rate = start_bps

    def on_interval(self, st: dict) -> dict:
        if st["rtt_samples"] == 0 or st["min_rtt_s"] <= 0:
            return {"rate_bps": self.rate}
        q = max(0.0, st["rtt_avg_s"] - st["min_rtt_s"])
        delivered = st["delivery_rate_bps"]
        if q < self.target:
            room = (self.target - q) / self.target
            self.rate = max(self.rate, delivered) * (1.0 + min(0.25, 0.02 + self.gain * room))
        else:
            excess = (q - self.target) / max(q, 1e-9)
            self.rate = max(delivered, 0.1 * self.rate) * (1.0 - 0.5 * excess)
        lost = st["lost_pkts"] / max(1.0, st["sent_pkts"])
        if lost > 0.1 and q > self.target:
            self.rate *= 0.5
        self.rate = max(self.rate, 1e5)
        return {"rate_bps": self.rate}
