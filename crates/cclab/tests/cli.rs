//! The `cclab` binary: output formats, overrides and one-line errors.

mod common;
use common::{cclab, json_stdout, scenario_file, stdout_of, tmpdir};

const SMALL: &str = r#"
name = "small"
duration = "3s"
[link]
rate = "20mbit"
rtt = "20ms"
loss = [0, "1%"]
[[flows]]
cc = ["cubic", "bbr"]
"#;

/// A fresh directory `name` holding `SMALL` as `s.toml`: (the directory, the file).
fn small_scenario(name: &str) -> (common::Scratch, std::path::PathBuf) {
    scenario_file(name, "s.toml", SMALL)
}

#[test]
fn json_matches_the_contract() {
    let (_d, f) = small_scenario("json");
    let v: serde_json::Value = json_stdout(cclab().args(["run", "--json", "-q"]).arg(&f));
    assert_eq!(v["scenario"], "small");
    assert_eq!(v["backend"], "sim");
    assert!(v["cclab"].is_string());
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);
    assert_eq!(runs[1]["params"]["link.loss"], 0.0);
    assert_eq!(runs[1]["params"]["flows.cc"], "bbr");
    assert_eq!(runs[2]["params"]["link.loss"], 0.01);
    for r in runs {
        let f = &r["flows"][0];
        for k in [
            "id",
            "cc",
            "goodput_bps",
            "throughput_bps",
            "bytes_delivered",
            "retransmits",
            "retrans_ratio",
            "fct_s",
        ] {
            assert!(f.get(k).is_some(), "flow field {k}");
        }
        for k in ["min", "p50", "p95", "p99"] {
            assert!(f["rtt_ms"][k].as_f64().unwrap() > 0.0);
        }
        let l = &r["link"];
        for k in ["utilization", "drops_buffer", "drops_random"] {
            assert!(l.get(k).is_some(), "link field {k}");
        }
        for k in ["p50", "p95", "p99"] {
            assert!(l["queue_delay_ms"].get(k).is_some());
        }
        assert!(r["jain"].as_f64().unwrap() > 0.99);
        assert!(
            r.get("series").is_none(),
            "series go to CSV, not stdout JSON"
        );
    }
    // Lossless runs see no random drops; lossy ones do.
    assert_eq!(runs[0]["link"]["drops_random"], 0);
    assert!(runs[2]["link"]["drops_random"].as_u64().unwrap() > 0);
}

#[test]
fn out_dir_set_and_seed() {
    let (d, f) = small_scenario("out");
    let out_dir = d.join("res");
    let out = cclab()
        .args([
            "run",
            "-q",
            "--set",
            "link.loss=0.5%",
            "--set",
            "flows.cc=reno",
            "--seed",
            "7",
            "--out",
        ])
        .arg(&out_dir)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(
        table.contains("reno") && table.contains("goodput"),
        "{table}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 1);
    assert_eq!(v["runs"][0]["seed"], 7);
    assert_eq!(v["runs"][0]["flows"][0]["cc"], "reno");
    let csv = std::fs::read_to_string(out_dir.join("series/run-1.csv")).unwrap();
    assert!(csv.starts_with("t_s,flow,cc,goodput_bps,cwnd_pkts"));
    assert_eq!(csv.lines().count(), 1 + 30, "3 s in 100 ms bins");
    assert!(
        std::fs::read_to_string(out_dir.join("flows.csv"))
            .unwrap()
            .lines()
            .count()
            == 2
    );
}

fn one_line_error(args: &[&str], file_text: Option<&str>, must_contain: &[&str]) {
    let d = tmpdir("err");
    let mut cmd = cclab();
    cmd.args(args);
    if let Some(t) = file_text {
        let f = d.join("bad.toml");
        std::fs::write(&f, t).unwrap();
        cmd.arg(&f);
    }
    let out = cmd.output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for m in must_contain {
        assert!(err.contains(m), "{err:?} should contain {m:?}");
    }
}

#[test]
fn bad_input_gets_one_line() {
    one_line_error(&["run"], Some("name = \"x\"\nduration = \"1s\"\n[link]\nrate = \"100mbps/s\"\nrtt = \"1ms\"\n[[flows]]\ncc = \"bbr\"\n"), &["bad.toml:4", "link.rate"]);
    one_line_error(&["run"], Some("name = \"x\"\nduration = \"1s\"\n[link]\nrate = \"1mbit\"\nrtt = \"1ms\"\nloss = \"100%\"\n[[flows]]\ncc = \"bbr\"\n"), &["link.loss"]);
    one_line_error(
        &["run"],
        Some("name = \"x\"\nduration = \"1s\"\n[link]\nrate = \"1mbit\"\nrtt = \"1ms\"\n"),
        &["flows"],
    );
    one_line_error(&["run", "--set", "link.bogus=1"], Some(SMALL), &["bogus"]);
    one_line_error(
        &["run", "/nonexistent/file.toml"],
        None,
        &["/nonexistent/file.toml"],
    );
    one_line_error(&["run", "--backend", "warp"], Some(SMALL), &["warp"]);
    one_line_error(
        &["bench", "--case", "warp"],
        None,
        &["warp", "bbr 100mbit 100ms 60s", "report"],
    );
}

/// `cclab bench --case`: only the cases named, measured with their counts; the JSON array
/// of simulator cases keeps its fields.
#[test]
fn bench_runs_the_cases_asked_for() {
    let v: serde_json::Value =
        json_stdout(cclab().args(["bench", "--case", "dctcp", "--repeat", "2", "--json"]));
    let cases = v.as_array().expect("an array of cases");
    assert_eq!(cases.len(), 1, "{v}");
    let c = &cases[0];
    assert_eq!(c["name"], "dctcp 1gbit 1ms ecn 10s");
    for k in [
        "wall_s",
        "target_s",
        "packets",
        "events",
        "goodput_bps",
        "met_target",
    ] {
        assert!(c.get(k).is_some(), "{k} missing: {c}");
    }
    assert!(c["packets"].as_u64().unwrap() > 100_000, "{c}");
    assert!(c["wall_s"].as_f64().unwrap() > 0.0, "{c}");
}

#[test]
fn calibrate_sim_only_covers_the_matrix() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/calibration");
    let d = tmpdir("cal");
    let out = cclab()
        .args(["calibrate", "--sim-only", "-q", "--dir", root, "--out"])
        .arg(&d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("calibration.json")).unwrap())
            .unwrap();
    let points = v["points"].as_array().unwrap();
    // At least 24 matrix points (two-flow points contribute two rows).
    let mut runs: Vec<String> = points
        .iter()
        .map(|p| format!("{}|{}", p["scenario"], p["params"]))
        .collect();
    runs.dedup();
    assert!(runs.len() >= 24, "{} points", runs.len());
    for cc in ["reno", "cubic", "bbr"] {
        assert!(points.iter().any(|p| p["cc"] == cc));
    }
    assert!(std::fs::read_to_string(d.join("calibration.md"))
        .unwrap()
        .contains("| scenario | params |"));
}

#[test]
fn calibrate_against_stored_kernel_runs() {
    // A calibration directory with one scenario, and "kernel" results that are the
    // simulator's own: every error must then be zero.
    let d = tmpdir("calk");
    let dir = d.join("matrix");
    let stored = d.join("stored");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&stored).unwrap();
    std::fs::write(dir.join("small.toml"), SMALL).unwrap();
    let mut doc = json_stdout(
        cclab()
            .args(["run", "--json", "-q"])
            .arg(dir.join("small.toml")),
    );
    doc["backend"] = "kernel".into();
    std::fs::write(stored.join("kernel-small.json"), doc.to_string()).unwrap();
    let v: serde_json::Value = json_stdout(
        cclab()
            .args(["calibrate", "--json", "-q", "--dir"])
            .arg(&dir)
            .arg("--kernel-from")
            .arg(&stored),
    );
    assert_eq!(v["repeat"], 1);
    assert!(v["kernel_from"].as_str().unwrap().ends_with("stored"));
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 4);
    for p in points {
        let g = p["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["metric"] == "goodput_bps")
            .unwrap();
        assert_eq!(g["error"].as_f64(), Some(0.0), "{p}");
    }
    // Stored runs of another matrix: a one-line error naming the file.
    doc["runs"].as_array_mut().unwrap().pop();
    std::fs::write(stored.join("kernel-small.json"), doc.to_string()).unwrap();
    let out = cclab()
        .args(["calibrate", "-q", "--dir"])
        .arg(&dir)
        .arg("--kernel-from")
        .arg(&stored)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("kernel-small.json") && err.contains("re-run"),
        "{err}"
    );
    // No stored runs at all.
    let out = cclab()
        .args(["calibrate", "-q", "--dir"])
        .arg(&dir)
        .arg("--kernel-from")
        .arg(d.join("none"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.trim().lines().count() == 1
            && err.contains("kernel-small.json"),
        "{err}"
    );
}

#[test]
fn repeat_reports_median_and_range() {
    let (d, f) = small_scenario("rep");
    let out_dir = d.join("res");
    let out = cclab()
        .args([
            "run",
            "-q",
            "--repeat",
            "3",
            "--set",
            "link.loss=1%",
            "--out",
        ])
        .arg(&out_dir)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("seeds"), "{table}");
    // cubic and bbr rows, each "median [min-max]".
    assert_eq!(
        table
            .lines()
            .filter(|l| l.contains(" [") && (l.contains("cubic") || l.contains("bbr")))
            .count(),
        2,
        "{table}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("results.json")).unwrap())
            .unwrap();
    let seeds: Vec<u64> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, [1, 2, 3, 1, 2, 3]);
    // The statistic is named, the same for the table and the link lines.
    assert!(table.contains("median of 3 seeds [min-max]"), "{table}");
    assert!(!table.contains("(mean)"), "{table}");
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("Median over seeds"));
}

/// Every value that shaped a run is in its results: the resolved scenario (hosts included),
/// the backend's settings and each path element's counters.
#[test]
fn results_record_what_shaped_the_run() {
    let (_d, f) = small_scenario("resolved");
    let v = json_stdout(
        cclab()
            .args([
                "run",
                "--json",
                "-q",
                "--set",
                "hosts.wake=off",
                "--set",
                "flows.cc_params.hystart=false",
            ])
            .arg(&f),
    );
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        4,
        "hystart applies to cubic only: no extra runs"
    );
    let (cubic_lossy, bbr_lossy) = (&runs[2], &runs[3]);
    let r = &cubic_lossy["resolved"];
    assert_eq!(r["link.loss"], 0.01);
    assert_eq!(r["link.rtt"], 0.02);
    assert_eq!(r["hosts.wake"], 0.0);
    assert_eq!(r["hosts.hz"], 250);
    assert_eq!(r["flows.cc_params.hystart"], false);
    assert_eq!(r["flows.cc_params.hystart_low_window"], 16);
    assert!(bbr_lossy["resolved"]
        .get("flows.cc_params.hystart")
        .is_none());
    let s = &cubic_lossy["settings"];
    assert_eq!(s["sim.tso"], true);
    assert_eq!(s["sim.host_wake"], serde_json::Value::Null);
    let e = &cubic_lossy["link"]["elements"];
    assert_eq!(
        e["data.loss"]["dropped"],
        cubic_lossy["link"]["drops_random"]
    );
    assert_eq!(
        e["data.queue"]["dropped"],
        cubic_lossy["link"]["drops_buffer"]
    );
    assert_eq!(
        e["data.queue"]["forwarded"],
        cubic_lossy["link"]["forwarded_pkts"]
    );
    assert!(
        runs[0]["link"]["elements"].get("data.loss").is_none(),
        "no loss element without loss"
    );
}

/// `--trace DIR` writes one trace per run in the documented format; a directory that cannot
/// be made is a one-line error.
#[test]
fn traces_come_from_a_flag() {
    let (d, f) = small_scenario("trace");
    let t = d.join("traces");
    let out = cclab()
        .args([
            "run",
            "-q",
            "--set",
            "link.loss=0",
            "--set",
            "flows.cc=bbr",
            "--trace",
        ])
        .arg(&t)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(t.join("small-run-1.trace")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("# cclab packet trace 1: backend sim, scenario small, seed 1")
    );
    let (mut data, mut acks) = (0, 0);
    for l in lines {
        let w: Vec<&str> = l.split(' ').collect();
        match w[0] {
            "D" => {
                assert!(w.len() == 6 || (w.len() == 7 && w[6] == "R"), "{l}");
                data += 1;
            }
            "A" => {
                assert_eq!(w.len(), 6, "{l}");
                acks += 1;
            }
            _ => panic!("unexpected line {l}"),
        }
        assert!(w[1..6].iter().all(|x| x.parse::<u64>().is_ok()), "{l}");
    }
    assert!(data > 100 && acks > 100, "{data} bursts, {acks} ACKs");
    let bad = cclab()
        .args(["run", "-q", "--trace", "/proc/cclab-no/such"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let e = String::from_utf8_lossy(&bad.stderr);
    assert!(
        e.contains("cannot create the trace directory") && e.trim().lines().count() == 1,
        "{e}"
    );
}

/// Controllers come from the registry: listed with their parameters; an unknown name, an
/// unknown parameter and an unknown backend are one-line errors naming what exists.
#[test]
fn controllers_are_listed_and_checked() {
    let out = cclab().args(["controllers"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for c in cclab_core::cc::CONTROLLERS {
        assert!(text.contains(&format!("  {}", c.name)), "{text}");
        for p in c.params {
            assert!(text.contains(&format!("cc_params.{}", p.name)), "{text}");
        }
    }
    let json = cclab().args(["controllers", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        v["controllers"].as_array().unwrap().len(),
        cclab_core::cc::CONTROLLERS.len()
    );
    let help = cclab().args(["run", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("cc_params: hystart"));
    let (_d, f) = small_scenario("ccnames");
    for (set, words) in [
        (
            "flows.cc=vegas",
            "the simulator has: reno (or newreno), cubic, bbr",
        ),
        ("flows.cc_params.hystrat=false", "no controller's parameter"),
    ] {
        let out = cclab()
            .args(["run", "-q", "--set", set])
            .arg(&f)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && e.contains(words) && e.trim().lines().count() == 1,
            "{set}: {e}"
        );
    }
    let out = cclab()
        .args(["run", "-q", "--backend", "ns3"])
        .arg(&f)
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("unknown backend \"ns3\" (available: sim, kernel)"),
        "{e}"
    );
}

/// `cclab advise`: a ranking against the scenario's own hosts, the commands for the best,
/// the same as JSON, and one-line errors for a bad objective.
#[test]
fn advise_ranks_settings_and_prints_commands() {
    let d = tmpdir("advise");
    let f = d.join("a.toml");
    // A long path where a 10-segment start costs round trips: a larger initial window
    // must win for a 300 KB transfer.
    std::fs::write(
        &f,
        "name = \"adv\"\n[link]\nrate = \"50mbit\"\nrtt = \"100ms\"\n[[flows]]\ncc = \"cubic\"\nsize = \"1mb\"\n",
    )
    .unwrap();
    let out = cclab()
        .args(["advise", "-q", "--repeat", "1", "--objective", "fct:300kb"])
        .arg(&f)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("current:  cubic iw 10"), "{text}");
    assert!(text.contains("workload: 1 transfer of 300 kB per run, in place of the scenario's 1 transfer of 1.00 MB"), "{text}");
    assert!(text.contains("apply #1, "), "{text}");
    assert!(text.contains("initcwnd 40"), "{text}");
    // A path that marks no ECN: the controllers that need it are left out, and it says so.
    assert!(
        text.contains("left out: dctcp, prague: they need a bottleneck that marks ECN"),
        "{text}"
    );
    assert!(
        !text.contains("  dctcp") && !text.contains("prague,"),
        "{text}"
    );
    // A DualPI2 bottleneck marks: they are searched.
    let v = json_stdout(
        cclab()
            .args(["advise", "-q", "--json", "--repeat", "1"])
            .args(["--objective", "fct:300kb", "--set", "link.aqm=dualpi2"])
            .arg(&f),
    );
    assert_eq!(v["left_out"], "", "{}", v["left_out"]);
    assert!(
        v["searched"][0].as_str().unwrap().contains("prague"),
        "{}",
        v["searched"]
    );
    // A bulk flow is never silently replaced, and --current names the baseline.
    let bulk = d.join("bulk.toml");
    std::fs::write(
        &bulk,
        "name = \"bulk\"\nduration = \"2s\"\n[link]\nrate = \"50mbit\"\nrtt = \"100ms\"\n[[flows]]\ncc = \"cubic\"\n",
    )
    .unwrap();
    let out = cclab()
        .args([
            "advise",
            "-q",
            "--repeat",
            "1",
            "--objective",
            "fct",
            "--size",
            "300kb",
            "--current",
            "bbr",
        ])
        .arg(&bulk)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("in place of the scenario's 1 bulk flow"),
        "{text}"
    );
    assert!(text.contains("current:  bbr iw 10"), "{text}");
    assert!(
        text.contains("assumed: controller from --current"),
        "{text}"
    );
    let out = cclab()
        .args([
            "advise",
            "--json",
            "--repeat",
            "1",
            "--objective",
            "fct:300kb",
        ])
        .arg(&f)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ranked = v["ranked"].as_array().unwrap();
    assert_eq!(ranked.len(), v["candidates"].as_u64().unwrap() as usize);
    let best = &ranked[0];
    assert!(best["predicted_gain"].as_f64().unwrap() > 0.2, "{best}");
    assert_eq!(best["candidate"]["init_cwnd"], 40);
    // The ranking is ordered by the objective (completion time, lower first).
    let p: Vec<f64> = ranked
        .iter()
        .map(|r| r["predicted"].as_f64().unwrap())
        .collect();
    assert!(p.windows(2).all(|w| w[0] <= w[1] * 1.006), "{p:?}");
    // Folded rows: fewer than the settings, each standing for some of them, all of them
    // covered; a bbr3 row carries the kernel caveat and no sysctl naming bbr3.
    let rows = v["rows"].as_array().unwrap();
    assert!(rows.len() < ranked.len() / 4, "{} rows", rows.len());
    let covered: u64 = rows.iter().map(|r| r["settings"].as_u64().unwrap()).sum();
    assert_eq!(covered as usize, ranked.len());
    // No row asks a stock kernel for a controller it lacks; those rows say what runs them.
    for r in rows {
        let cc = r["apply"]["cc"].as_str().unwrap();
        if cc == "bbr3" || cc == "prague" {
            assert_eq!(r["stock_kernel"], false, "{r}");
            assert!(!r["caveats"].as_array().unwrap().is_empty(), "{r}");
            assert!(
                !r["commands"].to_string().contains("congestion_control"),
                "{r}"
            );
        }
    }
    // At 1% loss bbr3 differs from bbr: its own row carries the caveat, not a sysctl.
    let out = cclab()
        .args([
            "advise",
            "--json",
            "--repeat",
            "1",
            "--objective",
            "fct:300kb",
        ])
        .args(["--set", "link.loss=1%"])
        .arg(&f)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let v3 = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["controllers"] == serde_json::json!(["bbr3"]))
        .expect("a row of bbr3 alone");
    assert_eq!(v3["stock_kernel"], false);
    assert!(
        v3["caveats"][0]
            .as_str()
            .unwrap()
            .contains("bpf/bbr3.bpf.c"),
        "{v3}"
    );
    assert!(!v3["commands"].to_string().contains("=bbr3"), "{v3}");
    // A scenario that sweeps its hosts has no one current setting to compare with.
    let seed = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/seeds/small-files.toml"
    );
    let out = cclab()
        .args(["advise", "-q", "--objective", "fct:640kb", seed])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("--set hosts.profile=") && err.lines().count() == 1,
        "{err}"
    );
    let out = cclab()
        .args(["advise", "--objective", "fast"])
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("unknown objective") && err.lines().count() == 1,
        "{err}"
    );
}

/// `cclab run` scores each file's published figures and claims under its table, and adds
/// them up over the files in one total line.
#[test]
fn run_scores_published_figures_and_claims_with_a_total() {
    let d = tmpdir("score");
    let body = |name: &str, expect: f64| {
        format!(
            "name = \"{name}\"\nduration = \"1s\"\n[link]\nrate = \"10mbit\"\nrtt = \"20ms\"\n\
             [[flows]]\ncc = [\"cubic\", \"bbr\"]\n[reference]\nunit = \"Mbit/s\"\n\
             [[reference.results]]\n\"flows.cc\" = \"cubic\"\ngoodput = \"9mbit\"\nretransmits = 1000000\n\
             [[reference.relations]]\nclaim = \"BBR about as fast as CUBIC\"\nmetric = \"goodput\"\n\
             of = {{ \"flows.cc\" = \"bbr\" }}\nto = {{ \"flows.cc\" = \"cubic\" }}\nexpect = {expect}\nwithin = 1.3\n"
        )
    };
    let (a, b) = (d.join("a.toml"), d.join("b.toml"));
    std::fs::write(&a, body("a", 1.0)).unwrap();
    std::fs::write(&b, body("b", 5.0)).unwrap();
    let out = cclab()
        .args(["run", "-q"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(t.contains("holds  BBR about as fast as CUBIC"), "{t}");
    assert!(t.contains("FAILS  BBR about as fast as CUBIC"), "{t}");
    assert!(t.contains("MISS  flows.cc=cubic  retransmits"), "{t}");
    assert!(
        t.contains("total over 2 scenario files: 2 of 4 published figures (goodput 2 of 2 within x1.5, retransmits 0 of 2 within x2); claims 1 of 2 hold"),
        "{t}"
    );
    // The same score in --json (beside each document's runs) and in --markdown.
    let v = json_stdout(cclab().args(["run", "-q", "--json"]).arg(&a).arg(&b));
    let (sa, sb) = (&v[0]["score"], &v[1]["score"]);
    assert_eq!(sa["claims"][0]["verdict"], "holds", "{sa}");
    assert_eq!(sb["claims"][0]["verdict"], "fails", "{sb}");
    let figs = sa["figures"].as_array().unwrap();
    assert_eq!(figs.len(), 2, "{sa}");
    assert!(figs
        .iter()
        .any(|f| f["figure"] == "retransmits" && f["ok"] == false));
    assert!(v[0]["runs"].as_array().is_some_and(|r| r.len() == 2));
    let md = stdout_of(cclab().args(["run", "-q", "--markdown"]).arg(&a).arg(&b));
    assert_eq!(md.matches("```text").count(), 2, "{md}");
    assert!(md.contains("**total over 2 scenario files: 2 of 4"), "{md}");
    // A --set that changes the path, hosts or flows leaves the published figures unscored
    // (they were measured on the file's setup); another duration still scores.
    let t = stdout_of(
        cclab()
            .args(["run", "-q", "--set", "link.rate=20mbit"])
            .arg(&a)
            .arg(&b),
    );
    assert_eq!(
        t.matches("score: not scored: --set link.rate=20mbit")
            .count(),
        2,
        "{t}"
    );
    assert!(
        !t.contains("ratio") && !t.contains("within x1.5") && !t.contains("total over"),
        "{t}"
    );
    let v = json_stdout(
        cclab()
            .args(["run", "-q", "--json", "--set", "hosts.init_cwnd=40"])
            .arg(&a),
    );
    assert!(v.get("score").is_none(), "{v}");
    let t = stdout_of(cclab().args(["run", "-q", "--set", "duration=2s"]).arg(&a));
    assert!(t.contains("score: 1 of 2 published figures"), "{t}");
}

/// `--markdown`: one GitHub-flavoured table per scenario under its title; not with --json.
#[test]
fn markdown_prints_one_table_per_scenario() {
    let (d, f) = small_scenario("md");
    let g = d.join("t.toml");
    std::fs::write(&g, SMALL.replace("name = \"small\"", "name = \"other\"")).unwrap();
    let out = cclab()
        .args(["run", "-q", "--markdown", "--set", "duration=1s"])
        .arg(&f)
        .arg(&g)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    let headings: Vec<&str> = md.lines().filter(|l| l.starts_with("### ")).collect();
    assert_eq!(headings.len(), 2, "{md}");
    assert!(headings[0].starts_with("### small  (") && headings[1].starts_with("### other  ("));
    // Per scenario: header, alignment row and 4 runs, all with the header's cell count.
    for part in md.split("### ").skip(1) {
        let rows: Vec<&str> = part.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(rows.len(), 6, "{part}");
        assert!(
            rows[0].starts_with("| # |") && rows[1].contains("---"),
            "{part}"
        );
        let n = rows[0].matches('|').count();
        assert!(rows.iter().all(|r| r.matches('|').count() == n), "{part}");
        assert!(part.contains("\n- #1: link "), "{part}");
    }
    one_line_error(&["run", "--markdown", "--json"], Some(SMALL), &["--json"]);
}

/// A sized flow that does not finish is flagged, with a warning saying what would fix it.
#[test]
fn unfinished_sized_flows_are_flagged() {
    let d = tmpdir("unfinished");
    let f = d.join("u.toml");
    std::fs::write(
        &f,
        "name = \"u\"\nduration = \"1s\"\n[link]\nrate = \"20mbit\"\nrtt = \"20ms\"\n[[flows]]\ncc = \"cubic\"\nsize = [\"100kb\", \"10mb\"]\n",
    )
    .unwrap();
    let out = cclab().args(["run", "-q"]).arg(&f).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = String::from_utf8_lossy(&out.stdout);
    let row = |n: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(&format!("{n} ")))
            .unwrap_or_else(|| panic!("{t}"))
    };
    assert!(!row("1").contains("unfinished"), "{t}");
    assert!(row("2").trim_end().ends_with("unfinished"), "{t}");
    let w = t.lines().find(|l| l.contains("warning:")).expect(&t);
    assert!(w.contains("1 of 2 sized flows unfinished (run #2)"), "{w}");
    assert!(w.contains("a longer `duration`"), "{w}");
}

/// `cclab fit` reads measurements of real hosts only: a simulator's results, a file that is
/// not results and a missing path are one-line errors saying what to give it.
#[test]
fn fit_refuses_what_is_not_a_perf_measurement() {
    let (d, f) = small_scenario("fit-errors");
    let sim = d.join("sim");
    let out = cclab()
        .args(["run", "-q", "--out"])
        .arg(&sim)
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let missing = d.join("nothing-here");
    for (path, want) in [
        (sim.as_path(), "cclab perf --out DIR"),
        (f.as_path(), "cclab perf --out DIR"),
        (missing.as_path(), "cclab perf --out DIR"),
    ] {
        let out = cclab().arg("fit").arg(path).output().unwrap();
        assert!(!out.status.success(), "{}", path.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.contains(want), "{err}");
    }
}

/// `--out` writes each run as it comes: with two scenario files, each sub-directory's
/// results.json is the document `--json` prints, runs in matrix order, and every run's
/// series file is there.
#[test]
fn streamed_out_holds_what_json_prints() {
    let (d, f) = small_scenario("stream-out");
    let g = d.join("t.toml");
    std::fs::write(
        &g,
        SMALL.replace("\"small\"", "\"other\"").replace("3s", "1s"),
    )
    .unwrap();
    let out_dir = d.join("out");
    let v = json_stdout(
        cclab()
            .args([
                "run", "--json", "-q", "--repeat", "2", "--jobs", "2", "--out",
            ])
            .arg(&out_dir)
            .args([&f, &g]),
    );
    let docs = v.as_array().unwrap();
    assert_eq!(docs.len(), 2);
    for (doc, name) in docs.iter().zip(["small", "other"]) {
        let dir = out_dir.join(name);
        let stored: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap())
                .unwrap();
        assert_eq!(&stored, doc, "{name}");
        assert_eq!(doc["runs"].as_array().unwrap().len(), 8);
        for k in 1..=8 {
            assert!(
                dir.join(format!("series/run-{k}.csv")).exists(),
                "{name} run {k}"
            );
        }
        assert!(!dir.join(".runs.jsonl").exists(), "the spool is removed");
    }
    assert!(out_dir.join("report.html").exists());
}

/// Ctrl-C during `cclab run --out` stops the matrix between runs and removes the partial
/// directory (files it wrote and the directory it made), exit status 130.
#[test]
fn interrupted_out_leaves_nothing_behind() {
    let (d, f) = small_scenario("stream-int");
    let out_dir = d.join("out");
    let child = cclab()
        .args(["run", "-q", "--repeat", "100000", "--jobs", "1", "--out"])
        .arg(&out_dir)
        .arg(&f)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for runs to reach the directory, then interrupt.
    let series = out_dir.join("series/run-2.csv");
    let start = std::time::Instant::now();
    while !series.exists() {
        assert!(start.elapsed().as_secs() < 60, "no run was written");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    assert!(std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap()
        .success());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted after"), "{err}");
    assert!(!out_dir.exists(), "partial results left: {err}");
}

/// `--from` adds steady-state columns computed from the series; a bad time is a one-line
/// error.
#[test]
fn from_adds_steady_state_columns() {
    let (_d, f) = small_scenario("from");
    let out = cclab()
        .args([
            "run",
            "-q",
            "--set",
            "link.loss=0",
            "--set",
            "flows.cc=cubic",
            "--from",
            "1s",
        ])
        .arg(&f)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let head = t.lines().find(|l| l.contains("goodput")).expect(&t);
    for c in ["queue p99", "goodput ≥1s", "srtt p99 ≥1s", "queue p99 ≥1s"] {
        assert!(head.contains(c), "{c}: {t}");
    }
    // 3 s in 100 ms bins: 20 of them start at 1 s or later.
    assert!(t.contains("(20 of them)"), "{t}");
    let out = cclab()
        .args(["run", "-q", "--from", "10"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("--from 10") && e.contains("unit"), "{e}");
}

/// A latency probe's RTT is drawn on its run's RTT chart beside the flows' srtt, and its
/// line is in the table.
#[test]
fn a_probe_is_on_the_rtt_chart_and_in_the_table() {
    let d = tmpdir("probe");
    let f = d.join("p.toml");
    std::fs::write(
        &f,
        "name = \"p\"\nduration = \"2s\"\n[link]\nrate = \"20mbit\"\nrtt = \"30ms\"\nbuffer = \"4bdp\"\n\
         [[flows]]\ncc = \"cubic\"\n[[flows]]\nkind = \"probe\"\ninterval = \"50ms\"\n",
    )
    .unwrap();
    let t = stdout_of(
        cclab()
            .args(["run", "-q", "--out"])
            .arg(d.join("o"))
            .arg(&f),
    );
    assert!(
        t.contains("#1: probe flows.1 (64 B every 50.0 ms): RTT p50 "),
        "{t}"
    );
    let page = std::fs::read_to_string(d.join("o/report.html")).unwrap();
    assert!(
        page.contains("latency probe&#39;s RTT (dotted)")
            || page.contains("latency probe's RTT (dotted)")
    );
    assert!(page.contains("probe flows.1 (every 50.0 ms)"));
    assert!(d.join("o/series/run-1-probes.csv").exists());
}
