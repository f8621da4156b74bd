//! Tests of the scenario format: units, errors, matrix expansion, overrides, round trip, and a
//! garbage-input run that must never panic.
//!
//! One test binary; its modules by concern: `units` (units, defaults and typed values),
//! `errors`, `matrix`, `overrides`, `round_trip` (a realistic file), `garbage`, `hosts` (the
//! `[hosts]` keys and controller parameters) and `docs` (docs/scenarios.md stays true). The
//! helpers they share with the other scenario tests are in `tests/common`.

#[path = "../common/mod.rs"]
mod common;

mod docs;
mod errors;
mod garbage;
mod hosts;
mod matrix;
mod overrides;
mod round_trip;
mod units;

use common::BASE;

/// BASE with `line` replaced by `with` (1-based), or `with` appended if `line` is 0.
fn edit(line: usize, with: &str) -> String {
    let mut lines: Vec<String> = BASE.lines().map(String::from).collect();
    if line == 0 {
        lines.push(with.to_string());
    } else {
        lines[line - 1] = with.to_string();
    }
    lines.join("\n") + "\n"
}

/// BASE with `extra` lines added at the top (after name and duration).
fn with_top(extra: &str) -> String {
    BASE.replace(
        "duration = \"10s\"\n",
        &format!("duration = \"10s\"\n{extra}\n"),
    )
}

/// A scenario that sweeps its seed, rate, loss and controller: 16 points.
const MATRIX: &str = r#"name = "m"
duration = "5s"
seed = [1, 2]
[link]
rate = ["10mbit", "100mbit"]
rtt = "10ms"
loss = [0, "1%"]
[[flows]]
cc = ["cubic", "bbr"]
"#;

/// A file as people write them: comments, a description, two flow groups with every key,
/// and a `[reference]` table.
const REALISTIC: &str = r#"# BBR vs CUBIC on a shallow-buffered WAN path
name = "bbr-vs-cubic-wan"
description = "Two flows share a 100 Mbit/s, 40 ms path; does BBR starve CUBIC?"
duration = "60s"
seed = 42

[link]
rate = "100mbit"
rtt = "40ms"
buffer = "0.5bdp"
loss = "0.01%"
ack_loss = 0
mss = 1448

[[flows]]
cc = "cubic"
count = 2
start = "0s"
init_cwnd = 10

[[flows]]
cc = "bbr"
start = "5s"
rtt_extra = "10ms"
size = "250MB"

[reference]
source = "Hock et al., ICNP 2017, fig. 3"
bbr_share = 0.85
runs = [1, 2, 3]
published = 2017-10-10
"#;
