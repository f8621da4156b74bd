//! Helpers shared by the `cclab` integration tests (each test binary uses a subset).
#![allow(dead_code)]

use cclab_results::{ResultsDoc, RunResult};
use std::path::PathBuf;
use std::process::Command;

/// The `cclab` binary under test.
pub fn cclab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_cclab"))
}

/// Run `cmd`, which must succeed (its stderr shown if not), and return its stdout.
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Run `cmd`, which must succeed (its stderr shown if not), and parse its stdout as JSON.
pub fn json_stdout(cmd: &mut Command) -> serde_json::Value {
    serde_json::from_str(&stdout_of(cmd)).unwrap()
}

/// A fresh, empty temporary directory for this test process, removed when the test is done
/// with it; kept (and named on stderr) when the test fails, to look at.
pub fn tmpdir(tag: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("cclab-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// A fresh scratch directory ([`tmpdir`]) holding `text` as the scenario file `file`:
/// (the directory, the file).
pub fn scenario_file(tag: &str, file: &str, text: &str) -> (Scratch, PathBuf) {
    let d = tmpdir(tag);
    let f = d.join(file);
    std::fs::write(&f, text).unwrap();
    (d, f)
}

/// A fresh, empty directory for a fixture that several tests of one binary share (held in a
/// static, so never dropped): under cargo's `target/tmp`, one per tag, emptied when first
/// used, so runs do not pile them up in the system's temporary directory.
pub fn fixture_dir(tag: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("cclab-fixture-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A test's scratch directory: a path that removes its directory when dropped, unless the
/// test is failing.
pub struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<std::path::Path> for Scratch {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept for a look: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The run of `doc` whose params include every `(key, value)` of `want`.
pub fn find<'a>(doc: &'a ResultsDoc, want: &[(&str, serde_json::Value)]) -> &'a RunResult {
    doc.runs
        .iter()
        .find(|r| want.iter().all(|(k, v)| r.params.get(*k) == Some(v)))
        .unwrap_or_else(|| panic!("no run with {want:?}"))
}

/// Median first-flow goodput over the runs (seeds) `keep` selects.
fn median_where(doc: &ResultsDoc, keep: impl Fn(&RunResult) -> bool) -> Option<f64> {
    let mut v: Vec<f64> = doc.runs.iter().filter(|r| keep(r)).map(goodput).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// Median goodput of the first flow over every run (seed) with these params.
pub fn median_goodput(doc: &ResultsDoc, want: &[(&str, serde_json::Value)]) -> f64 {
    median_where(doc, |r| {
        want.iter().all(|(k, v)| r.params.get(*k) == Some(v))
    })
    .unwrap_or_else(|| panic!("no run with {want:?}"))
}

/// The rtt-sweep seed's paths: RTT (s) -> the loss inferred for that path (its scenario
/// runs both rates on every path).
pub fn rtt_sweep_loss(rtt: f64) -> f64 {
    if (rtt - 0.099).abs() < 1e-9 {
        0.00008
    } else {
        0.0002
    }
}

/// Median first-flow goodput of the rtt-sweep runs at `rtt` with controller `cc`, on that
/// path's own loss rate.
pub fn rtt_sweep_goodput(doc: &ResultsDoc, rtt: f64, cc: &str) -> f64 {
    let loss = rtt_sweep_loss(rtt);
    let p = |r: &RunResult, k: &str| r.params.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
    median_where(doc, |r| {
        (p(r, "link.rtt") - rtt).abs() < 1e-9
            && (p(r, "link.loss") - loss).abs() < 1e-12
            && r.params.get("flows.cc") == Some(&serde_json::json!(cc))
    })
    .unwrap_or_else(|| panic!("no rtt-sweep run at {rtt} s, {cc}, loss {loss}"))
}

/// Goodput of a run's first flow.
pub fn goodput(r: &RunResult) -> f64 {
    r.flows[0].goodput_bps
}
