//! Helpers shared by the scenario format's integration tests (`scenario`, `path_keys`,
//! `mutate`; each uses a subset): a small scenario to edit, loading and expanding it, the
//! one-line error a bad one must give, and a temporary folder.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use cclab_scenario::{MatrixPoint, Scenario, ScenarioError, ScenarioFile, MAX_REPORTED};

pub const BASE: &str = r#"name = "t"
duration = "10s"
[link]
rate = "100mbit"
rtt = "20ms"
[[flows]]
cc = "cubic"
"#;

/// PIE with every parameter away from its default (`pie_set_by_table`), and a policer with
/// a burst: the `[link]` tables of the files that give every path key.
pub const PIE_AND_POLICER_TABLES: &str = r#"[link.aqm]
kind = "pie"
target = "20ms"
tupdate = "30ms"
alpha = 3
beta = 25
max_burst = "100ms"
ecn = false
bytemode = true
dq_rate_estimator = true
[link.policer]
rate = "10mbit"
burst = "100kb"
"#;

/// The PIE parameters [`PIE_AND_POLICER_TABLES`] sets.
pub fn pie_set_by_table() -> cclab_path::PieParams {
    cclab_path::PieParams {
        target_ns: 20_000_000,
        tupdate_ns: 30_000_000,
        alpha: 3,
        beta: 25,
        max_burst_ns: 100_000_000,
        ecn: false,
        bytemode: true,
        dq_rate_estimator: true,
    }
}

pub fn load(text: &str) -> ScenarioFile {
    ScenarioFile::from_str(text, "t.toml").unwrap_or_else(|e| panic!("{e}\n--- text ---\n{text}"))
}

pub fn points(f: &ScenarioFile) -> Vec<MatrixPoint> {
    f.expand().unwrap_or_else(|e| panic!("{e}"))
}

pub fn one_of(f: &ScenarioFile) -> Scenario {
    let pts = points(f);
    assert_eq!(pts.len(), 1, "expected one point");
    pts.into_iter().next().unwrap().scenario
}

pub fn one(text: &str) -> Scenario {
    one_of(&load(text))
}

/// BASE with `extra` lines added at the end of [link] (after rtt).
pub fn with_link(extra: &str) -> String {
    BASE.replace("rtt = \"20ms\"\n", &format!("rtt = \"20ms\"\n{extra}\n"))
}

/// Lines an error displays as: one per error, the first [`MAX_REPORTED`] of them and then
/// a line counting the rest.
pub fn error_lines(e: &ScenarioError) -> usize {
    let more = e.more.len();
    1 + more.min(MAX_REPORTED - 1) + usize::from(more >= MAX_REPORTED)
}

/// The error of loading, overriding or expanding, checked to be one line per error (a file
/// with several independent mistakes names them together, each on its own line).
pub fn one_line(e: ScenarioError) -> (ScenarioError, String) {
    let s = e.to_string();
    assert!(!s.contains('\r'), "a carriage return in: {s:?}");
    assert_eq!(
        s.lines().count(),
        error_lines(&e),
        "not one line per error: {s:?}"
    );
    assert!(s.lines().all(|l| !l.trim().is_empty()), "{s:?}");
    (e, s)
}

/// Loads and expands `file`, expecting an error at either stage.
pub fn error_of_file(
    f: Result<ScenarioFile, ScenarioError>,
    what: &str,
) -> (ScenarioError, String) {
    match f {
        Err(e) => one_line(e),
        Ok(f) => match f.expand() {
            Err(e) => one_line(e),
            Ok(_) => panic!("expected an error for:\n{what}"),
        },
    }
}

/// Loads (and expands) `text`, expecting an error; returns it and its one-line display.
pub fn error_of(text: &str) -> (ScenarioError, String) {
    error_of_file(ScenarioFile::from_str(text, "t.toml"), text)
}

/// The error names the file and `line` (in its text and its `line`), the key, and says each
/// of `needles`.
pub fn assert_error(text: &str, line: u32, key: &str, needles: &[&str]) -> ScenarioError {
    let (e, s) = error_of(text);
    assert!(
        s.starts_with(&format!("t.toml:{line}:")),
        "wrong file/line (want {line}) in: {s}\n--- text ---\n{text}"
    );
    assert_eq!(e.line, Some(line), "{s}");
    assert!(s.contains(key), "key {key:?} missing in: {s}");
    for n in needles {
        assert!(s.contains(n), "{n:?} missing in: {s}");
    }
    e
}

/// A folder of its own under the system's temp dir, removed when dropped (also when the test
/// fails).
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "cclab-scenario-{}-{tag}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        TempDir(p)
    }

    /// Writes `text` to `name` (which may have folders) under this folder.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.0.join(name);
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        p
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
