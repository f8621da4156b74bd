//! Tests of the path-element keys of `[link]`: `aqm` (a name or a `[link.aqm]` table),
//! `policer` and `shaper` (a rate or a table), `trace`, `rate` as a schedule, `loss_unit`,
//! `jitter`, `reorder` and `ack_aggregation`. For each: the values land in the right fields
//! of the `LinkSpec`'s path (a `cclab_path::LinkDesc`), which backends hand on; defaults are
//! Linux's; every bad input is one line that names the key and says what would fix it;
//! sweeps expand to the right points and params; `--set` reaches every form; and
//! `to_toml_string` loads back to an equal scenario.
//!
//! One test binary; its modules by key: `aqm`, `buckets` (policer and shaper), `schedule`
//! (`rate` as a schedule), `trace`, `loss_and_timing` (`loss_unit`, `jitter`, `reorder`,
//! `ack_aggregation`), then `sweeps`, `set` (`--set`) and `round_trip` across them. The
//! helpers they share with the other scenario tests are in `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod aqm;
mod buckets;
mod loss_and_timing;
mod round_trip;
mod schedule;
mod set;
mod sweeps;
mod trace;

use std::path::{Path, PathBuf};

use cclab_path::RateDesc;
use cclab_scenario::*;

use common::{error_of_file, load, one_line, with_link, BASE};

/// Line of the first `extra` line given to [`with_link`] (BASE's `[[flows]]` is after them).
const EXTRA_LINE: u32 = 6;

/// BASE without its rate, with `extra` lines at the end of [link].
fn without_rate(extra: &str) -> String {
    with_link(extra).replace("rate = \"100mbit\"\n", "")
}

/// BASE with `extra` appended (new tables after `[[flows]]`).
fn with_tables(extra: &str) -> String {
    BASE.replace(
        "[[flows]]\ncc = \"cubic\"\n",
        &format!("[[flows]]\ncc = \"cubic\"\n{extra}\n"),
    )
}

/// Applies `sets` to `file` in order, then expands; the error of whichever stage fails.
fn set_error(file: &str, sets: &[&str]) -> (ScenarioError, String) {
    let mut f = load(file);
    for s in sets {
        if let Err(e) = f.apply_override(s) {
            return one_line(e);
        }
    }
    error_of_file(Ok(f), &format!("{file}\n--set {sets:?}"))
}

fn with_sets(text: &str, sets: &[&str]) -> ScenarioFile {
    let mut f = load(text);
    for s in sets {
        f.apply_override(s)
            .unwrap_or_else(|e| panic!("--set {s}: {e}"));
    }
    f
}

/// `to_toml_string` loads back to an equal scenario, writes the same text again, and its
/// resolved values are the same.
fn assert_round_trip(s: &Scenario) -> String {
    let text = s.to_toml_string();
    let again = ScenarioFile::from_str(&text, "again.toml")
        .unwrap_or_else(|e| panic!("{e}\n--- written ---\n{text}"));
    let pts = again
        .expand()
        .unwrap_or_else(|e| panic!("{e}\n--- written ---\n{text}"));
    assert_eq!(pts.len(), 1, "{text}");
    assert_eq!(&pts[0].scenario, s, "--- written ---\n{text}");
    assert_eq!(pts[0].scenario.to_toml_string(), text);
    assert_eq!(pts[0].scenario.resolved(), s.resolved());
    text
}

fn labels(pts: &[MatrixPoint]) -> Vec<String> {
    pts.iter().map(|p| p.label()).collect()
}

/// A trace of 4 opportunities in 4 ms: 4 x 1500 bytes per 4 ms = 12 Mbit/s.
const TRACE: &str = "1\n2\n3\n4\n";
const TRACE_BPS: u64 = 12_000_000;

fn trace_of(link: &LinkSpec) -> &cclab_path::TraceDesc {
    match &link.path.rate_varies {
        Some(RateDesc::Trace(t)) => t,
        other => panic!("expected a trace, found {other:?}"),
    }
}

/// `path` relative to the current directory (`..` up to the root, then down), so that it
/// only resolves from there.
fn relative_to_cwd(path: &Path) -> String {
    let cwd = std::env::current_dir().unwrap();
    let ups = cwd.components().count() - 1;
    let down = path.strip_prefix("/").unwrap_or(path);
    let mut rel = PathBuf::new();
    for _ in 0..ups {
        rel.push("..");
    }
    rel.push(down);
    rel.display().to_string()
}

/// A rate schedule of three steps, to put in place of BASE's rate.
const SCHEDULE: &str =
    "rate = [{at = \"0s\", rate = \"100mbit\"}, {at = \"20s\", rate = \"20mbit\"}, {at = \"25s\", rate = \"200mbit\"}]";
