//! The `cclab` binary: output formats, overrides and one-line errors.

mod common;
use common::{cclab, tmpdir};

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

#[test]
fn json_matches_the_contract() {
    let d = tmpdir("json");
    let f = d.join("s.toml");
    std::fs::write(&f, SMALL).unwrap();
    let out = cclab()
        .args(["run", "--json", "-q"])
        .arg(&f)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let d = tmpdir("out");
    let f = d.join("s.toml");
    std::fs::write(&f, SMALL).unwrap();
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
    let out = cclab()
        .args(["run", "--json", "-q"])
        .arg(dir.join("small.toml"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["backend"] = "kernel".into();
    std::fs::write(stored.join("kernel-small.json"), doc.to_string()).unwrap();
    let out = cclab()
        .args(["calibrate", "--json", "-q", "--dir"])
        .arg(&dir)
        .arg("--kernel-from")
        .arg(&stored)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
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
    let d = tmpdir("rep");
    let f = d.join("s.toml");
    std::fs::write(&f, SMALL).unwrap();
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
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("Median over seeds"));
}
