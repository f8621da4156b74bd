"""The package's API against the CLI: same results bytes, same tables, same errors."""

import json
import signal
import subprocess
import sys
import time

import polars as pl
import pyarrow.parquet as pq
import pytest

import cclab
from conftest import SMALL, run_cli


def test_a_file_runs_as_the_cli_runs_it(cli, small_file):
    res = cclab.Scenario.load(str(small_file)).run(seed=5)
    out = run_cli(cli, "run", str(small_file), "--seed", "5", "--json", "-q").stdout
    assert res.to_json() + "\n" == out, "results.json bytes equal the CLI's --json"
    assert len(res) == 4 and res.backend == "sim" and res.scenario == "small"


def test_a_dict_a_toml_string_and_a_file_are_the_same_scenario(small_file):
    d = {
        "name": "small",
        "description": "Two controllers over two loss rates, one second each.",
        "duration": "1s",
        "seed": 3,
        "link": {"rate": "20mbit", "rtt": "20ms", "buffer": "1bdp", "loss": [0, "1%"]},
        "flows": [{"cc": ["cubic", "bbr"]}],
    }
    a = cclab.Scenario.from_dict(d).run()
    b = cclab.Scenario.from_toml(SMALL).run()
    c = cclab.run(str(small_file))
    for x in (a, b):
        assert x.flows.equals(c.flows)
        assert [x.run(i)["flows"] for i in range(4)] == [c.run(i)["flows"] for i in range(4)]
    assert [p["label"] for p in cclab.Scenario.from_dict(d).points] == [
        p["label"] for p in cclab.Scenario.load(small_file).points
    ], "the dict's order is the matrix's order"


def test_overrides_as_strings_or_mappings_match_the_cli(cli, small_file):
    sc = cclab.Scenario.load(str(small_file))
    a = sc.set("link.loss=2%", {"flows.cc": ["reno", "bbr3"]}, duration="2s").run()
    assert len(sc.set("flows.cc=dctcp")) == 2
    out = run_cli(
        cli, "run", str(small_file), "--set", "link.loss=2%", "--set", "flows.cc=[reno,bbr3]",
        "--set", "duration=2s", "--json", "-q",
    ).stdout
    cli_doc = json.loads(out)
    mine = a.to_dict()
    assert [r["flows"] for r in mine["runs"]] == [r["flows"] for r in cli_doc["runs"]]
    assert a.flows["cc"].to_list() == ["reno", "bbr3"]


def test_bad_input_raises_the_clis_message(cli, small_file):
    cases = [
        ("link.bufer=1bdp", "unknown key"),
        ("link.rate=fast", "rate"),
        ("link.loss=150%", "below 100%"),
        ("flows.cc=vegas", "vegas"),
    ]
    sc = cclab.Scenario.load(str(small_file))
    for spec, word in cases:
        with pytest.raises(cclab.CclabError) as e:
            sc.set(spec)
        err = run_cli(cli, "run", str(small_file), "--set", spec, check=False)
        assert err.returncode != 0
        assert str(e.value) in err.stderr, (spec, str(e.value), err.stderr)
        assert word in str(e.value)
    with pytest.raises(cclab.CclabError, match="None has no TOML value"):
        cclab.Scenario.from_dict({"name": "x", "link": {"rate": None}})
    base = {"name": "x", "duration": "1s", "link": {"rate": "10mbit", "rtt": "10ms"}, "flows": [{"cc": "bbr"}]}
    with pytest.raises(cclab.CclabError, match=r"link.rate = true: expected a rate string"):
        cclab.Scenario.from_dict({**base, "link": {"rate": True, "rtt": "10ms"}})
    with pytest.raises(cclab.CclabError, match=r"flows.0.count = \"two\": expected a whole number"):
        cclab.Scenario.from_dict({**base, "flows": [{"cc": "bbr", "count": "two"}]})
    with pytest.raises(cclab.CclabError, match="a time needs a unit"):
        cclab.Scenario.from_dict({**base, "link": {"rate": "10mbit", "rtt": 5}})
    with pytest.raises(cclab.CclabError) as e:
        cclab.Scenario.load("/nonexistent/scenario.toml")
    assert str(e.value) in run_cli(cli, "run", "/nonexistent/scenario.toml", check=False).stderr
    assert "cannot read scenario file" in str(e.value)
    # The kernel backend's controllers (its own and the BPF ones cclab loads): the same
    # refusal as `--backend kernel`, which lists them.
    with pytest.raises(cclab.CclabError) as e:
        cclab.Scenario.load(str(small_file), backend="kernel").set("flows.cc=westwood")
    err = run_cli(cli, "run", str(small_file), "--backend", "kernel", "--set", "flows.cc=westwood", check=False)
    assert str(e.value) in err.stderr and "this kernel has: " in str(e.value)
    with pytest.raises(cclab.CclabError, match='unknown backend "nope"'):
        cclab.Scenario.load(str(small_file)).run(backend="nope")


def test_tables_match_the_csv_and_the_parquet_files(cli, small_file, tmp_path):
    out = tmp_path / "out"
    run_cli(cli, "run", str(small_file), "--out", str(out), "-q")
    csv = pl.read_csv(out / "flows.csv")
    by_polars = pl.read_parquet(out / "flows.parquet")
    by_arrow = pl.from_arrow(pq.read_table(out / "flows.parquet"))
    assert by_polars.columns == csv.columns
    assert by_polars.equals(by_arrow)
    for col in ["goodput_bps", "retransmits", "rtt_p50_ms", "queue_p99_ms"]:
        digits = 0 if col in ("goodput_bps", "retransmits") else 3
        assert by_polars[col].round(digits).to_list() == pytest.approx(csv[col].to_list()), col
    # The package's tables are those files' tables.
    res = cclab.run(str(small_file))
    assert res.flows.equals(by_polars)
    assert res.runs.equals(pl.read_parquet(out / "runs.parquet"))
    assert res.series.equals(pl.read_parquet(out / "series.parquet"))
    assert res.runs.height == 4 and res.series.height == 4 * 10
    assert res.flows.to_pandas()["cc"].tolist() == ["cubic", "bbr", "cubic", "bbr"]


def test_results_written_from_python_are_read_by_the_cli(cli, small_file, tmp_path):
    res = cclab.run(str(small_file))
    d = tmp_path / "py"
    res.write(d)
    for f in ["results.json", "meta.json", "flows.csv", "report.html", "flows.parquet", "series/run-1.csv"]:
        assert (d / f).exists(), f
    cli_dir = tmp_path / "cli"
    run_cli(cli, "run", str(small_file), "--out", str(cli_dir), "-q")
    for f in ["results.json", "flows.csv", "series/run-2.csv", "flows.parquet"]:
        assert (d / f).read_bytes() == (cli_dir / f).read_bytes(), f
    cmp = run_cli(cli, "compare", str(cli_dir), str(d)).stdout
    assert "4 shared runs" in cmp
    back = cclab.read(d)
    assert back.to_json() == res.to_json()
    assert back.flows.select("run", "cc", "retransmits").equals(res.flows.select("run", "cc", "retransmits"))


def test_runs_carry_their_resolved_scenario_and_settings(small_file):
    res = cclab.run(str(small_file), repeat=2)
    assert len(res) == 8
    r = res.run(3)
    assert r["seed"] == 4 and r["resolved"]["link.rate"] and r["resolved"]["flows.cc"] == "bbr"
    assert "settings" in r and r["series"]["t_s"]
    assert res.runs["seed"].to_list() == [3, 4] * 4
    assert "small" in str(res) and "goodput" in str(res)
    assert res.to_markdown().count("|") > 10


def test_controllers_lists_the_registry_with_parameters():
    cs = {c["name"]: c for c in cclab.controllers()}
    assert {"reno", "cubic", "bbr", "bbr3", "dctcp"} <= set(cs)
    assert "hystart" in [p["name"] for p in cs["cubic"]["params"]]
    with pytest.raises(cclab.CclabError, match="unknown backend"):
        cclab.controllers("nope")


def test_ctrl_c_stops_a_long_run():
    code = (
        "import cclab\n"
        "print('go', flush=True)\n"
        "cclab.run({'name': 'long', 'duration': '600s', 'link': {'rate': '1gbit', 'rtt': '50ms',"
        " 'buffer': '1bdp'}, 'flows': [{'cc': 'cubic', 'count': 4}]}, repeat=4)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "go"
    time.sleep(1.0)
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode != 0
    assert "KeyboardInterrupt" in err, err
    # The runs under way finish (a simulated run is not cut), then nothing more starts.
    assert time.monotonic() - t < 60


def test_the_walkthrough_example_runs(root):
    out = subprocess.run(
        [sys.executable, str(root / "python" / "examples" / "is_bbr_worth_it.py"), "--quick"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert "12 runs" in out and "bbr/cubic" in out


def test_python_m_cclab_runs_a_file_like_the_cli(cli, small_file, tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "cclab", "run", str(small_file), "--seed", "5", "--json", "-q"],
        capture_output=True, text=True, check=True,
    ).stdout
    assert out == run_cli(cli, "run", str(small_file), "--seed", "5", "--json", "-q").stdout
    bad = subprocess.run([sys.executable, "-m", "cclab", "run", str(small_file), "--set", "link.rate=fast"],
                         capture_output=True, text=True)
    assert bad.returncode == 1 and bad.stderr.startswith("error: ") and "link.rate" in bad.stderr


def test_a_ray_sweep_refuses_the_kernel_backend(small_file):
    with pytest.raises(cclab.CclabError, match='one run at a time on one machine: sweep it with executor="local"'):
        cclab.sweep(cclab.Scenario.load(str(small_file), backend="kernel"), executor="ray")
