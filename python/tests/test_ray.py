"""Sweeps on Ray: a local cluster and a two-node one, each equal to the local run.

Ray's servers listen on every interface, whatever address it is given, so these tests run
only where this process sees no network but loopback: a network namespace of its own, as
python/run-tests makes with `unshare --net`. Every cluster is stopped at the end.
"""

import pytest

import cclab
from conftest import only_loopback

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.skipif(
    not only_loopback(),
    reason="Ray tests run in a network namespace of their own: python/run-tests (as root) makes one",
)

# 10 points (5 loss rates x 2 controllers) x 20 seeds = 200 runs of 1 s at 10 Mbit/s.
SWEEP = {
    "name": "ray-sweep",
    "duration": "1s",
    "seed": 11,
    "link": {"rate": "10mbit", "rtt": "30ms", "buffer": "1bdp", "loss": [0, "0.5%", "1%", "2%", "5%"]},
    "flows": [{"cc": ["cubic", "bbr"]}],
}


@pytest.fixture(scope="module")
def local():
    return cclab.sweep(SWEEP, repeat=20, progress=False)


def same(a, b):
    assert len(a) == len(b)
    assert a.to_json() == b.to_json(), "the same results document, byte for byte"
    for i in range(len(a)):
        assert a._native.run_json(i) == b._native.run_json(i), f"run {i + 1} (with its series)"


def test_a_local_cluster_gives_the_local_results(local):
    assert len(local) == 200
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        seen = []
        res = cclab.sweep(SWEEP, repeat=20, executor="ray", progress=lambda d, n, t: seen.append(d))
    finally:
        ray.shutdown()
    same(res, local)
    assert not res.failures
    assert seen[-1] == 200 and seen == sorted(seen), "progress as tasks finish"
    assert sum(len(t["runs"]) for t in res.tasks) == 200
    assert len(res.tasks) > 2, "the runs were split into batches"


# Runs long enough (10 s at 50 Mbit/s, ~15 ms each, batches of 5) that one node alone could
# not finish the sweep before the other's workers are up.
HEAVY = {**SWEEP, "duration": "10s", "link": {**SWEEP["link"], "rate": "50mbit"}}


def test_a_two_node_cluster_runs_tasks_on_both_nodes():
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 1, "include_dashboard": False, "node_ip_address": "127.0.0.1"},
    )
    try:
        cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        res = cclab.sweep(HEAVY, repeat=10, executor="ray", batch=5, progress=False)
        nodes = {t["node"] for t in res.tasks}
        assert len(nodes) == 2, f"tasks ran on {len(nodes)} node(s)"
    finally:
        ray.shutdown()
        cluster.shutdown()
    same(res, cclab.sweep(HEAVY, repeat=10, progress=False))


def test_a_sweep_streamed_to_a_directory_writes_the_clis_files(cli, tmp_path):
    import json

    import polars as pl

    from conftest import run_cli

    f = tmp_path / "sweep.toml"
    f.write_text(cclab._native.to_toml(json.dumps(SWEEP), False))
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        res = cclab.sweep(cclab.Scenario.load(str(f)), repeat=3, executor="ray", batch=4, out=tmp_path / "ray", progress=False)
    finally:
        ray.shutdown()
    run_cli(cli, "run", str(f), "--repeat", "3", "--out", str(tmp_path / "cli"), "-q")
    for name in ["results.json", "flows.csv", "meta.json", "series/run-1.csv", "series/run-30.csv"]:
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    for t in ["flows", "runs", "series"]:
        streamed = pl.read_parquet(tmp_path / "ray" / f"{t}.parquet")
        assert streamed.equals(pl.read_parquet(tmp_path / "cli" / f"{t}.parquet")), t
        assert res.table(t).equals(streamed)
    assert (tmp_path / "ray" / "report.html").exists()
    assert not (tmp_path / "ray" / ".runs.jsonl").exists()
    assert len(res) == 30 and res._doc is None, "the results read the directory, and only when asked"
    assert res.to_json() == (tmp_path / "cli" / "results.json").read_text()


def test_without_a_cluster_the_sweep_starts_and_stops_its_own(tmp_path):
    assert not ray.is_initialized()
    small = {**SWEEP, "link": {**SWEEP["link"], "loss": [0, "1%"]}}
    res = cclab.sweep(small, repeat=2, executor="ray", progress=False, out=tmp_path / "out")
    assert not ray.is_initialized(), "the cluster the sweep started is stopped"
    local = cclab.sweep(small, repeat=2, progress=False)
    # Streamed into the directory: read back from it (its series CSVs are rounded; its
    # Parquet tables are not).
    assert res.to_json() == local.to_json()
    for t in ["flows", "runs", "series"]:
        assert res.table(t).equals(local.table(t)), t


def _flaky_batch(spec, indices):
    """A task that dies when it holds run 7 (k = 6) and reports run 12 (k = 11) as failed."""
    from cclab import _sweep

    if 6 in indices:
        raise RuntimeError("worker lost")
    out = _sweep.run_batch(spec, [k for k in indices if k != 11])
    if 11 in indices:
        out["runs"].append((11, False, "the run failed here"))
    return out


def test_failed_runs_are_reported_with_their_point_and_seed_and_the_others_kept(monkeypatch):
    import sys

    import cclab._sweep as sw

    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(sw, "run_batch", _flaky_batch)
    small = {**SWEEP, "link": {**SWEEP["link"], "loss": [0, "1%"]}}  # 4 points x 4 seeds
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False)
    try:
        res = cclab.sweep(small, repeat=4, executor="ray", batch=3, progress=False)
    finally:
        ray.shutdown()
    # Batches of 3: runs 7-9 (k 6-8) died with their task; run 12 failed alone.
    assert [f["run"] for f in res.failures] == [7, 8, 9, 12]
    assert res.failures[0]["error"].startswith("the Ray task failed") and "worker lost" in res.failures[0]["error"]
    # Run k is point k // 4 with seed 11 + k % 4.
    assert (res.failures[0]["label"], res.failures[0]["seed"]) == ("link.loss=0.0,flows.cc=bbr", 13)
    assert res.failures[3] == {
        "run": 12, "label": "link.loss=0.01,flows.cc=cubic", "seed": 14, "error": "the run failed here"
    }
    local = cclab.sweep(small, repeat=4, progress=False)
    kept = [i for i in range(16) if i + 1 not in (7, 8, 9, 12)]
    assert len(res) == 12
    assert [res._native.run_json(j) for j in range(12)] == [local._native.run_json(i) for i in kept]
