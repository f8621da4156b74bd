//! `cclab lab fit-check`: `cclab perf`'s probe phase, the fit and `--predict` across the
//! kernel lab, held against the known path (issue #16). Needs root; without it the test
//! prints `SKIP <test>: <reason>` and checks the one-line error instead.
//!
//! The three-path acceptance is the command itself, long (about 35 minutes) and run by hand on
//! a quiet machine (docs/remote.md, "How far to trust a fit"):
//!
//! ```sh
//! cclab lab fit-check scenarios/fit-check/p1-*.toml scenarios/fit-check/p3-*.toml --repeat 5
//! cclab lab fit-check scenarios/fit-check/p2-*.toml --repeat 10
//! ```

mod common;

use cclab_kernel::{lab_unavailable, namespaces_of};
use cclab_results::ResultsDoc;
use common::{cclab, tmpdir};
use serde_json::Value;

/// 50 Mbit/s x 20 ms, 1% random loss: with 4 streams CUBIC goes through many loss epochs in
/// 8 s, so one run's goodput is steady enough to hold against the simulator's.
const LOSSY: &str = r#"
name = "fit-lossy-lab"
description = "50 Mbit/s x 20 ms, 1% loss"
duration = "8s"
[link]
rate = "50mbit"
rtt = "20ms"
buffer = "1bdp"
loss = "1%"
[[flows]]
cc = "cubic"
"#;

#[test]
fn fit_check_holds_the_fit_and_prediction_against_a_lossy_lab_path() {
    let dir = tmpdir("fit-check");
    let scen = dir.join("lossy.toml");
    std::fs::write(&scen, LOSSY).unwrap();
    let out = dir.join("out");
    let run = |extra: &[&str]| {
        let mut c = cclab();
        c.args(["lab", "fit-check"]).arg(&scen).args(extra);
        c.output().expect("cclab runs")
    };
    if let Some(why) = lab_unavailable(&["cubic", "bbr"]) {
        eprintln!("SKIP fit_check_holds_the_fit_and_prediction_against_a_lossy_lab_path: {why}");
        let o = run(&["--json"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success());
        assert!(err.contains("needs the kernel lab"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        return;
    }
    // A machine the hypervisor or other work kept busy falsifies the lab, and fit-check
    // says so (`disturbed`): a check that failed there is run once more; one that fails on a
    // quiet machine, or twice, fails the test.
    let mut attempt = 0;
    let (o, rows) = loop {
        attempt += 1;
        let _ = std::fs::remove_dir_all(&out);
        let o = run(&["-P", "4", "--json", "--out", out.to_str().unwrap()]);
        assert!(namespaces_of(std::process::id()).is_empty());
        let rows: Vec<Value> = serde_json::from_slice(&o.stdout).unwrap_or_default();
        let busy = rows.first().and_then(|r| r["disturbed"].as_str());
        let held = rows.first().is_some_and(|r| r["buffer_held"] == true);
        match busy {
            Some(why) if attempt == 1 && !(o.status.success() && held) => {
                eprintln!("NOTE: a check failed on a busy machine ({why}); running it once more");
            }
            _ => break (o, rows),
        }
    };
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}\n{stdout}");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    eprintln!("{}", serde_json::to_string_pretty(&r["criteria"]).unwrap());
    // The issue's criteria: rate, RTT, loss, cubic and bbr predicted.
    let names: Vec<&str> = r["criteria"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "rate ±10%",
            "RTT ±5%",
            "loss in interval",
            "cubic ±20%",
            "bbr ±20%"
        ]
    );
    for c in r["criteria"].as_array().unwrap() {
        assert_eq!(c["pass"], true, "{c}");
    }
    // The element drew about the configured loss. Random loss keeps CUBIC's probe below the
    // 1 BDP buffer, but BBR's start-up in the rate probe overflows it: an estimate (not a
    // lower bound) whose interval holds the truth.
    let drawn = r["truth"]["drawn_loss"].as_f64().unwrap();
    assert!((0.008..0.012).contains(&drawn), "{drawn}");
    let fit = &r["fit"];
    assert!(
        !fit["buffer_bytes"]["high"].is_null(),
        "{}",
        fit["buffer_bytes"]
    );
    assert_eq!(r["buffer_held"], true, "{}", fit["buffer_bytes"]);
    assert_eq!(fit["streams"], 4);
    let phases: Vec<&str> = fit["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    for p in ["rtt", "rate", "loss", "buffer"] {
        assert!(phases.contains(&p), "{phases:?}");
    }
    // At 1% over 8 s the loss phase reads 100 losses in its first part.
    assert!(fit["lost"].as_u64().unwrap() >= 100, "{}", fit["lost"]);
    // Each prediction has its range over the loss interval: less loss, more goodput for
    // CUBIC. bbr3 is predicted though the server did not run it.
    let preds = fit["predictions"].as_array().unwrap();
    let cubic = preds.iter().find(|p| p["cc"] == "cubic").unwrap();
    let (lo, hi) = (
        cubic["at_loss_low_bps"].as_f64().unwrap(),
        cubic["at_loss_high_bps"].as_f64().unwrap(),
    );
    let g = cubic["goodput_bps"].as_f64().unwrap();
    assert!(lo > g && g > hi, "{lo} {g} {hi}");
    let b3 = preds.iter().find(|p| p["cc"] == "bbr3").expect("bbr3");
    assert!(b3["measured_bps"].is_null() && b3["goodput_bps"].as_f64().unwrap() > 0.0);
    // --out: the measurement with its fit, readable by `cclab fit`.
    let doc: ResultsDoc =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(doc.backend, "host");
    assert_eq!(doc.runs.len(), 2);
    assert!(doc.fit.is_some());
    let o = cclab().arg("fit").arg(&out).output().unwrap();
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("fitted path"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fit_check_refuses_impossible_options_in_one_line() {
    for (args, want) in [
        (&["--repeat", "0"][..], "at least 1"),
        (&["--cc", ","][..], "names no controller"),
        (&["--duration", "soon"][..], "--duration"),
    ] {
        let o = cclab()
            .args(["lab", "fit-check", "scenarios/fit-check/p3-1gbit-2ms.toml"])
            .args(args)
            .current_dir(env!("CARGO_MANIFEST_DIR").to_string() + "/../..")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
