"""``python -m cclab run FILE [--ray [ADDRESS]]``: a scenario's sweep from the command line,
on this machine or on a Ray cluster, with the CLI's table and results directory."""

from __future__ import annotations

import argparse
import sys

from . import CclabError, Scenario, sweep


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cclab", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run a scenario file (a sweep over its matrix x seeds)")
    r.add_argument("file", help="scenario file (TOML)")
    r.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                   help="run on a Ray cluster: ADDRESS (auto, host:6379, ray://host:10001), or without one a local cluster")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a scenario value (repeatable)")
    r.add_argument("--seed", type=int, help="use this seed instead of the scenario's")
    r.add_argument("--repeat", type=int, default=1, metavar="N", help="run every matrix point N times with consecutive seeds")
    r.add_argument("--batch", type=int, metavar="N", help="runs per Ray task (default: about 4 tasks per CPU)")
    r.add_argument("--backend", default="sim", help="sim (default) or kernel")
    r.add_argument("--out", metavar="DIR", help="write the results directory (JSON, CSV, Parquet, report.html)")
    r.add_argument("--json", action="store_true", help="print results.json instead of the table")
    r.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    a = ap.parse_args(argv)
    try:
        sc = Scenario.load(a.file, backend=a.backend).set(*a.set)
        res = sweep(
            sc,
            repeat=a.repeat,
            seed=a.seed,
            executor="local" if a.ray is None else "ray",
            address=a.ray or None,
            batch=a.batch,
            out=a.out,
            progress=not a.quiet,
        )
    except CclabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    print(res.to_json() if a.json else res)
    if a.out:
        print(f"results written to {a.out}")
    return 1 if res.failures else 0


if __name__ == "__main__":
    sys.exit(main())
