//! The scenarios that are mutated: every `*.toml` under `scenarios/` (their traces made
//! absolute), and generated ones that use every path key of `[link]` in each of its forms.

use std::path::{Path, PathBuf};

use crate::mutators::{replace_line, value_lines};

pub fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            toml_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// `text` with each relative `trace = "path"` made absolute against `dir` (a path in a file
/// is relative to the file's folder, and mutants are loaded from text, which has none), or
/// replaced by `with` when given.
pub fn absolute_traces(text: &str, dir: &Path, with: Option<&str>) -> String {
    let mut out = text.to_string();
    for l in value_lines(text) {
        let quoted = l.value.strip_prefix('"').and_then(|v| v.split_once('"'));
        match (l.key.as_str(), quoted) {
            ("trace", Some((path, rest))) if !Path::new(path).is_absolute() => {
                let abs = with.map_or_else(|| dir.join(path).display().to_string(), String::from);
                let with = format!("{} = {}{rest}", l.key, toml_str(&abs));
                out = replace_line(&out, l.index, &with);
            }
            _ => {}
        }
    }
    out
}

/// `s` as a TOML basic string.
pub fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Scenarios that use every path key of `[link]` in each of its forms (no file under
/// `scenarios/` has them all): tables with every parameter, inline tables, bare names and
/// rates, a rate schedule as a list of inline tables and as `[[link.rate]]`, a trace (a real
/// file at the absolute path `trace`), and sweeps of each, with parameters that apply to only
/// some of the swept disciplines. Each is one flow group with a small matrix, so the override
/// pass costs what a real file's does.
pub fn generated_scenarios(trace: &str) -> Vec<(String, String)> {
    let tables = format!(
        r#"name = "gen-path-tables"
description = "Generated: every path key, in table form, over a trace"
duration = "10s"
seed = 3
[link]
trace = {}
rtt = "40ms"
buffer = "2bdp"
loss = "0.5%"
loss_burst = 2
loss_unit = "gso"
jitter = "1ms"
reorder = true
ack_aggregation = "2ms"
{}[link.shaper]
rate = "20mbit"
burst = 3000
[[flows]]
cc = ["cubic", "bbr"]
"#,
        toml_str(trace),
        crate::common::PIE_AND_POLICER_TABLES
    );
    let sweeps = r#"name = "gen-path-sweeps"
duration = "10s"
[link]
rate = [{at = "0s", rate = "100mbit"}, {at = "2s", rate = "20mbit"}]
rtt = "20ms"
loss = "1%"
loss_unit = ["segment", "gso"]
policer = "50mbit"
[link.aqm]
kind = ["codel", "fq_codel", "pie"]
target = ["5ms", "10ms"]
interval = ["50ms", "100ms"]
flows = 64
tupdate = "15ms"
[link.shaper]
rate = "30mbit"
burst = ["2kb", "64kb"]
[[flows]]
cc = "cubic"
"#;
    let inline = r#"name = "gen-path-inline"
duration = "5s"
[link]
rtt = "10ms"
buffer = "100pkt"
aqm = { kind = "fq_codel", flows = 16, quantum = 3028, drop_batch = 8, ecn = false }
policer = { rate = "1gbit" }
shaper = "500mbit"
jitter = ["0s", "200us"]
ack_aggregation = "1ms"
[[link.rate]]
at = "0s"
rate = "1gbit"
[[link.rate]]
at = "1s"
rate = "200mbit"
[[flows]]
cc = "reno"
count = 2
"#;
    let bare = r#"name = "gen-path-bare"
duration = "5s"
[link]
rate = [[{at = "0s", rate = "10mbit"}, {at = "1s", rate = "5mbit"}], "20mbit"]
rtt = "30ms"
aqm = ["droptail", "codel", "fq_codel", "pie"]
policer = ["10mbit", "20mbit"]
reorder = false
[[flows]]
cc = "bbr"
"#;
    vec![
        ("(generated) path-tables.toml".into(), tables),
        ("(generated) path-sweeps.toml".into(), sweeps.into()),
        ("(generated) path-inline.toml".into(), inline.into()),
        ("(generated) path-bare.toml".into(), bare.into()),
    ]
}
