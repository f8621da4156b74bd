"""The Gymnasium environment (cclab.gym) and Python-driven controllers (cc = "py:...")."""

import math

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium")

import cclab  # noqa: E402
import cclab.gym as cg  # noqa: E402
from cclab import CclabError  # noqa: E402

SMALL = cg.PathDistribution(rate_mbps=(20, 50), rtt_ms=(10, 40), loss=(0, 0.01), competing=(0, 1), duration_s=0.5)


def test_env_checker_passes():
    from gymnasium.utils.env_checker import check_env

    check_env(cg.CongestionEnv(SMALL), skip_render_check=True)
    check_env(cg.CongestionEnv(SMALL, action="cwnd", reward="orca"), skip_render_check=True)


def _episode(env, seed, steps=30):
    obs, _ = env.reset(seed=seed)
    out = [obs]
    rewards = []
    for i in range(steps):
        obs, r, term, trunc, _ = env.step(np.array([math.sin(i)], dtype=np.float32))
        out.append(obs)
        rewards.append(r)
        if term or trunc:
            break
    return np.concatenate(out), np.array(rewards)


def test_same_seed_same_episode_other_seed_other_episode():
    a = _episode(cg.CongestionEnv(SMALL), 7)
    b = _episode(cg.CongestionEnv(SMALL), 7)
    c = _episode(cg.CongestionEnv(SMALL), 8)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert not np.array_equal(a[0], c[0])


def test_rate_actions_move_the_send_rate_and_episodes_end():
    env = cg.CongestionEnv(cg.PathDistribution(rate_mbps=(100, 100), rtt_ms=(20, 20), duration_s=0.3))
    env.reset(seed=1)
    rates = []
    trunc = False
    while not trunc:
        _, _, _, trunc, info = env.step(np.array([1.0], dtype=np.float32))
        if "stats" in info:
            rates.append(info["stats"][cg.STATS.index("send_rate_bps")])
    # 30 intervals of 10 ms; the rate grows 1.25x per interval from 2 Mbit/s toward the link.
    assert 25 <= len(rates) <= 31
    assert rates[-1] > 10 * rates[2]


def test_vector_env_runs():
    envs = cg.make_vector(3, scenario=SMALL)
    obs, _ = envs.reset(seed=3)
    assert obs.shape == (3, 10 * len(cg.FEATURES))
    for _ in range(5):
        obs, r, term, trunc, _ = envs.step(envs.action_space.sample())
    assert r.shape == (3,) and np.isfinite(r).all()
    envs.close()


def test_bad_settings_are_one_line_errors():
    with pytest.raises(ValueError, match="action is"):
        cg.CongestionEnv(action="speed")
    with pytest.raises(ValueError, match="reward preset"):
        cg.CongestionEnv(reward="fast")
    with pytest.raises(CclabError, match="external"):
        cg.CongestionEnv({"name": "x", "duration": "1s", "link": {"rate": "10mbit", "rtt": "10ms"}, "flows": [{"cc": "cubic"}]}).reset(seed=1)


def _with_policy(cc="py:cclab.policies:DelayRate", competitor=None):
    flows = [{"cc": cc}]
    if competitor:
        flows.append({"cc": competitor})
    return cclab.Scenario.from_dict(
        {"name": "pypolicy", "duration": "3s", "link": {"rate": "100mbit", "rtt": "20ms", "buffer": "2bdp"}, "flows": flows}
    )


def test_python_controller_runs_a_flow_and_is_recorded_by_class():
    f = _with_policy().run(seed=1).flows
    assert f["cc"].to_list() == ["py:cclab.policies:DelayRate"]
    # The example policy alone on 100 Mbit/s x 20 ms: > 70% of the link (measured 78%), the
    # median queueing delay near its 5 ms target (measured 6.3 ms).
    assert f["link_utilization"][0] > 0.7, f["link_utilization"][0]
    assert f["queue_p50_ms"][0] < 10, f["queue_p50_ms"][0]
    # Against CUBIC in the same run: both deliver, the run records both controllers.
    g = _with_policy(competitor="cubic").run(seed=1).flows
    assert g["cc"].to_list() == ["py:cclab.policies:DelayRate", "cubic"]
    assert (g["goodput_bps"] > 1e6).all()


def test_python_controller_errors_are_clear():
    with pytest.raises(CclabError, match="py:module:Class"):
        cclab.Scenario.from_dict({"name": "x", "link": {"rate": "10mbit", "rtt": "10ms"}, "duration": "1s", "flows": [{"cc": "py:x"}]}).run()
    with pytest.raises(ModuleNotFoundError):
        _with_policy("py:no_such_module_here:X").run()


class AckCounter:
    """DelayRate with a per-ACK hook that counts what it sees (the instances of the last run
    are kept on the class)."""

    runs = []

    def __init__(self):
        from cclab.policies import DelayRate

        self.policy = DelayRate()
        self.acks = []
        self.intervals = []
        AckCounter.runs.append(self)

    def on_interval(self, st):
        self.intervals.append(st)
        return self.policy.on_interval(st)

    def on_ack(self, a):
        self.acks.append(a)
        return None


def test_per_ack_hook_sees_every_ack_of_its_flow():
    AckCounter.runs.clear()
    sc = cclab.Scenario.from_dict(
        {"name": "acks", "duration": "1s", "link": {"rate": "50mbit", "rtt": "20ms", "loss": "0.5%"},
         "flows": [{"cc": "py:test_gym:AckCounter"}, {"cc": "cubic"}]}
    )
    f = sc.run(seed=2).flows
    assert f["cc"].to_list() == ["py:test_gym:AckCounter", "cubic"]
    (c,) = AckCounter.runs
    acks, ivs = c.acks, c.intervals
    assert len(acks) > 500 and len(ivs) > 90
    assert set(acks[0]) == {"t_s", "delivered_pkts", "bytes_acked", "lost_pkts", "rtt_s", "ece", "delivered_total",
                            "inflight_pkts", "cwnd_pkts", "min_rtt_s"}
    # Every ACK of the flow: up to the last interval's end the hook's ACKs deliver what the
    # intervals counted, and give as many RTT samples.
    end = ivs[-1]["t_s"]
    upto = [a for a in acks if a["t_s"] <= end]
    assert sum(a["delivered_pkts"] for a in upto) == sum(s["delivered_pkts"] for s in ivs)
    assert sum(a["rtt_s"] is not None for a in upto) == sum(s["rtt_samples"] for s in ivs)
    assert sum(a["delivered_pkts"] for a in acks) == acks[-1]["delivered_total"]
    assert any(a["lost_pkts"] > 0 for a in acks)
    # Watching changes nothing: the same run without the hook gives the same results.
    sc2 = cclab.Scenario.from_dict(
        {"name": "acks", "duration": "1s", "link": {"rate": "50mbit", "rtt": "20ms", "loss": "0.5%"},
         "flows": [{"cc": "py:cclab.policies:DelayRate"}, {"cc": "cubic"}]}
    )
    g = sc2.run(seed=2).flows
    assert f["goodput_bps"].to_list() == g["goodput_bps"].to_list()


class BadAck:
    def on_interval(self, st):
        return None

    def on_ack(self, a):
        return "faster"


def test_per_ack_hook_bad_answer_is_a_clear_error():
    sc = cclab.Scenario.from_dict(
        {"name": "x", "duration": "1s", "link": {"rate": "10mbit", "rtt": "10ms"}, "flows": [{"cc": "py:test_gym:BadAck"}]}
    )
    with pytest.raises(CclabError, match="on_ack returns None or a dict"):
        sc.run()


def test_compare_policy_example_writes_a_report_of_the_four_controllers(tmp_path):
    import pathlib
    import subprocess
    import sys

    import polars as pl

    example = pathlib.Path(__file__).parents[1] / "examples" / "compare_policy.py"
    out = tmp_path / "cmp"
    p = subprocess.run([sys.executable, str(example), "--out", str(out), "--duration", "1"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    page = (out / "report.html").read_text()
    ccs = pl.read_csv(out / "flows.csv")["cc"].to_list()
    assert ccs == ["py:cclab.policies:DelayRate", "cubic", "bbr", "bbr3"]
    assert all(cc in page for cc in ccs)
    assert "report.html" in p.stdout
