"""Is BBR worth it on my path? The seeds' question as a sweep over loss and RTT.

    python3 python/examples/is_bbr_worth_it.py [--quick] [--png FILE] [--ray [ADDRESS]]

docs/python.md walks through it. --quick: a small matrix (the test suite runs it).
"""

import argparse

import polars as pl

import cclab

ap = argparse.ArgumentParser()
ap.add_argument("--quick", action="store_true", help="2 RTTs x 2 loss rates x 1 seed, 2 s each")
ap.add_argument("--png", help="draw the chart into this file (needs matplotlib)")
ap.add_argument("--ray", nargs="?", const="", metavar="ADDRESS", help="sweep on a Ray cluster")
a = ap.parse_args()

# One path, described once: 100 Mbit/s with a one-BDP drop-tail buffer, Linux's default hosts.
# Lists make a matrix: 4 RTTs x 5 loss rates x 3 controllers = 60 points.
sc = cclab.Scenario.from_dict(
    {
        "name": "bbr-worth-it",
        "duration": "20s",
        "seed": 1,
        "link": {
            "rate": "100mbit",
            "rtt": ["10ms", "50ms", "100ms", "200ms"],
            "buffer": "1bdp",
            "loss": [0, "0.1%", "0.5%", "1%", "2%"],
        },
        "flows": [{"cc": ["cubic", "bbr", "bbr3"]}],
    }
)
repeat = 5
if a.quick:
    sc = sc.set({"duration": "2s", "link.rtt": ["10ms", "100ms"], "link.loss": [0, "1%"]})
    repeat = 1

# Every point with 5 seeds: on this machine, or on a Ray cluster with --ray.
res = cclab.sweep(
    sc, repeat=repeat, executor="local" if a.ray is None else "ray", address=a.ray or None, progress=False
)

# flows: one row per run and flow, the swept params as columns (resolved: RTT in seconds,
# loss as a fraction).
per_point = (
    res.flows.group_by("link.rtt", "link.loss", "cc")
    .agg(
        (pl.col("goodput_bps").median() / 1e6).alias("mbit"),
        (pl.col("goodput_bps").quantile(0.9) - pl.col("goodput_bps").quantile(0.1)).alias("spread") / 1e6,
        pl.col("retrans_ratio").median().alias("retrans"),
    )
    .sort("link.rtt", "link.loss", "cc")
)
table = (
    per_point.pivot(on="cc", index=["link.rtt", "link.loss"], values="mbit")
    .with_columns(
        (pl.col("link.rtt") * 1e3).alias("rtt_ms"),
        (pl.col("link.loss") * 100).alias("loss_%"),
        (pl.col("bbr") / pl.col("cubic")).round(2).alias("bbr/cubic"),
        (pl.col("bbr3") / pl.col("cubic")).round(2).alias("bbr3/cubic"),
    )
    .select("rtt_ms", "loss_%", pl.col("cubic", "bbr", "bbr3").round(1), "bbr/cubic", "bbr3/cubic")
)
with pl.Config(tbl_rows=40, tbl_hide_dataframe_shape=True, tbl_hide_column_data_types=True):
    print(f"{len(res)} runs; median goodput, Mbit/s:")
    print(table)

if a.png:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, table["rtt_ms"].n_unique(), figsize=(12, 3.2), sharey=True)
    for ax, ((rtt,), g) in zip(axes, per_point.group_by("link.rtt", maintain_order=True)):
        for cc, gc in g.group_by("cc", maintain_order=True):
            ax.errorbar(gc["link.loss"] * 100, gc["mbit"], yerr=gc["spread"] / 2, marker="o", label=cc[0], capsize=2)
        ax.set_title(f"RTT {rtt * 1e3:.0f} ms")
        ax.set_xlabel("loss, %")
    axes[0].set_ylabel("median goodput, Mbit/s")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(a.png, dpi=110)
    print(f"chart: {a.png}")
