//! Helpers shared by the `cclab` integration tests (each test binary uses a subset).
#![allow(dead_code)]

use cclab_results::{ResultsDoc, RunResult};
use std::path::PathBuf;
use std::process::Command;

/// The `cclab` binary under test.
pub fn cclab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cclab"))
}

/// A fresh, empty temporary directory for this test process.
pub fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cclab-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The run of `doc` whose params include every `(key, value)` of `want`.
pub fn find<'a>(doc: &'a ResultsDoc, want: &[(&str, serde_json::Value)]) -> &'a RunResult {
    doc.runs
        .iter()
        .find(|r| want.iter().all(|(k, v)| r.params.get(*k) == Some(v)))
        .unwrap_or_else(|| panic!("no run with {want:?}"))
}

/// Median goodput of the first flow over every run (seed) with these params.
#[allow(dead_code)]
pub fn median_goodput(doc: &ResultsDoc, want: &[(&str, serde_json::Value)]) -> f64 {
    let mut v: Vec<f64> = doc
        .runs
        .iter()
        .filter(|r| want.iter().all(|(k, v)| r.params.get(*k) == Some(v)))
        .map(goodput)
        .collect();
    assert!(!v.is_empty(), "no run with {want:?}");
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The rtt-sweep seed's paths: RTT (s) -> the loss inferred for that path (its scenario
/// runs both rates on every path).
#[allow(dead_code)]
pub fn rtt_sweep_loss(rtt: f64) -> f64 {
    if (rtt - 0.099).abs() < 1e-9 {
        0.00008
    } else {
        0.0002
    }
}

/// Median first-flow goodput of the rtt-sweep runs at `rtt` with controller `cc`, on that
/// path's own loss rate.
#[allow(dead_code)]
pub fn rtt_sweep_goodput(doc: &ResultsDoc, rtt: f64, cc: &str) -> f64 {
    let loss = rtt_sweep_loss(rtt);
    let mut v: Vec<f64> = doc
        .runs
        .iter()
        .filter(|r| {
            let p = |k: &str| r.params.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
            (p("link.rtt") - rtt).abs() < 1e-9
                && (p("link.loss") - loss).abs() < 1e-12
                && r.params.get("flows.cc") == Some(&serde_json::json!(cc))
        })
        .map(goodput)
        .collect();
    assert!(
        !v.is_empty(),
        "no rtt-sweep run at {rtt} s, {cc}, loss {loss}"
    );
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Goodput of a run's first flow.
pub fn goodput(r: &RunResult) -> f64 {
    r.flows[0].goodput_bps
}
