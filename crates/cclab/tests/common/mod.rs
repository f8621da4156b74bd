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

/// Goodput of a run's first flow.
pub fn goodput(r: &RunResult) -> f64 {
    r.flows[0].goodput_bps
}
