//! Mutation test of the scenario parser on the real scenario files.
//!
//! Bad input must always give a clear error, never a panic: a panic kills a whole sweep and
//! does not say which file or key was wrong, and a message spread over several lines breaks
//! the one-line-per-error output of the CLI and its logs.
//!
//! Every `*.toml` under `scenarios/`, and a few generated scenarios that use every path key of
//! `[link]` in each of its forms (`[link.aqm]`, `[link.policer]` and `[link.shaper]` tables, inline
//! tables, bare names and rates, rate schedules, a Mahimahi trace written to a temp folder, and
//! sweeps of them), is mutated in many deterministic ways: random byte flips,
//! insertions and deletions; truncation; values of the wrong type; huge, negative and odd
//! numbers; long lists that blow up the matrix; hostile keys; and `--set` overrides with the
//! same values. Each mutant is loaded, overridden and expanded. Every outcome must be `Ok` or
//! an error whose text is one non-empty line, free of control characters, starting with the
//! file name; never a panic, a hang (a case over 3 s) or a huge allocation (a case over
//! 512 MiB, or an `expand` that would need gigabytes at `MAX_MATRIX_POINTS`). A few points of
//! every matrix are also resolved and written back with `to_toml_string`, and that text must
//! load back to the same scenario. One more check: parse time must stay linear in the length
//! of a line (a long sweep list is usually written on one line).
//!
//! The PRNG has a constant seed, so every run tests the same inputs and a failure reproduces.
//! Failures are grouped by cause, shrunk line by line to a small input, and reported together;
//! run with `--nocapture` to see the counts of a passing run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use cclab_scenario::{Scenario, ScenarioError, ScenarioFile, MAX_MATRIX_POINTS};
use serde_json::Value;

/// Origin name given to `from_str` for mutants; every error must start with it.
const ORIGIN: &str = "mutant.toml";
/// Origin name for text written by `to_toml_string`.
const AGAIN: &str = "round-trip.toml";
/// Random byte-level mutants per file.
const BYTE_MUTANTS: usize = 200;
/// Truncation offsets per file.
const TRUNCATIONS: usize = 40;
/// Random override sequences per file.
const SET_SEQUENCES: usize = 80;
/// Lines per file that get a long (1000-value) list.
const LONG_LISTS: usize = 6;
/// A case slower than this is reported (a hang in disguise).
const SLOW: Duration = Duration::from_secs(3);
/// A case that allocates more than this at once is reported.
const MAX_CASE_BYTES: usize = 512 << 20;
/// `expand` may allocate this much per matrix point: `MAX_MATRIX_POINTS` points of this size
/// are 2 GiB.
const MAX_POINT_BYTES: usize = (2 << 30) / MAX_MATRIX_POINTS;

// ---------------------------------------------------------------------------------------------
// Allocation accounting: a counting global allocator measures each case's peak, so a case
// that allocates far too much is reported (the mutants are sized to stay well below the RAM
// of a small machine even then).
// ---------------------------------------------------------------------------------------------

struct Counting;
static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let now = CURRENT.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(now, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            grew(layout.size());
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        CURRENT.fetch_sub(layout.size(), Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

// ---------------------------------------------------------------------------------------------
// Deterministic PRNG
// ---------------------------------------------------------------------------------------------

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------------------------------------
// Hostile inputs
// ---------------------------------------------------------------------------------------------

/// Values of the wrong TOML type for most keys (written as TOML value text).
const WRONG_TYPES: &[&str] = &[
    "true",
    "false",
    "[]",
    "[[1]]",
    "[true]",
    "[\"1ms\", 2]",
    "{a=1}",
    "{}",
    "\"text\"",
    "\"\"",
    "'literal'",
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
    "1.5",
    "-1",
    "0",
    "",
];

/// Huge, negative, tiny, non-finite and oddly written values (TOML value text).
const HOSTILE: &[&str] = &[
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "0x7fffffffffffffff",
    "0o777",
    "0b101",
    "1_000",
    "4294967296",
    "10001",
    "100001",
    "535",
    "9001",
    "1e308",
    "-1e308",
    "1e309",
    "5e-324",
    "-0.0",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "\"99999999999999999999gbit\"",
    "\"18446744073709551615bit\"",
    "\"1e30s\"",
    "\"18446744073s\"",
    "\"18446744073709551615ns\"",
    "\"0.0000001ns\"",
    "\"1e2147483648s\"",
    "\"1e-2147483649ms\"",
    "\"-5ms\"",
    "\"-0ms\"",
    "\"+5ms\"",
    "\".5ms\"",
    "\"5.ms\"",
    "\"1.2.3ms\"",
    "\"1e\"",
    "\"1e+\"",
    "\"1µs\"",
    "\"µs\"",
    "\"0bdp\"",
    "\"-1bdp\"",
    "\"1e300bdp\"",
    "\"1e-300bdp\"",
    "\"NaNbdp\"",
    "\"infbdp\"",
    "\"100000000pkt\"",
    "\"4294967296pkt\"",
    "\"1.5pkt\"",
    "\"18446744073709551616b\"",
    "\"1e19b\"",
    "\"1b\"",
    "\"1tib\"",
    "\"200%\"",
    "\"-1%\"",
    "\"100%\"",
    "\"99.9999999999999999999%\"",
    "\"1e-400%\"",
    "\"%\"",
    "\"1%%\"",
    "\"0x10mbit\"",
    "\"1_000mbit\"",
    "\"100 mbit\"",
    "\"100MBps\"",
    "\"100mb/s\"",
    "\"1KiB/s\"",
    "\"1Ki\"",
    "\"BBR\"",
    "\" bbr \"",
    "\"ünïcödé\"",
    "\"\\u0000\"",
    "\"\\u001b[31mred\"",
    "\"a\\nb\"",
    "\"\"\"\nmulti\nline\"\"\"",
    "\"  \"",
];

/// Keys that replace the key of a `key = value` line.
const HOSTILE_KEYS: &[&str] = &[
    "\"a\\nb\"",
    "\"a\\rb\"",
    "\"tab\\there\"",
    "\"esc\\u001b[31m\"",
    "\"nul\\u0000\"",
    "\"ünïcödé\"",
    "ünïcödé",
    "\"\"",
    "''",
    "RATE",
    "rat",
    "bandwidth",
    "link",
    "flows",
    "rate.deep",
    "a.b.c.d.e.f",
    "1234",
    "-",
    "\"rate\"",
    "'cc'",
];

/// The first this many of [`SET_KEYS`] are real keys of every format version.
const REAL_SET_KEYS: usize = 16;

/// Keys for `--set` overrides: real ones, per-group ones and unknown or malformed ones.
const SET_KEYS: &[&str] = &[
    "link.rate",
    "link.rtt",
    "link.buffer",
    "link.loss",
    "link.ack_loss",
    "link.mss",
    "link.host_latency",
    "link.host_jitter",
    "flows.count",
    "flows.size",
    "flows.init_cwnd",
    "flows.start",
    "flows.rtt_extra",
    "flows.cc",
    "flows.0.cc",
    "flows.1.size",
    "flows.99.cc",
    "flows.18446744073709551616.cc",
    "flows.-1.cc",
    "duration",
    "seed",
    "name",
    "description",
    "bogus",
    "link.bogus",
    "flows.bogus",
    "flows.0.bogus",
    "reference.x",
    "link",
    "flows",
    "",
    "a.b.c.d",
    "link..rate",
    "link.ra\nte",
    "na\tme",
    "\u{1b}[31mlink.rate",
    // Keys of `[hosts]` and `cc_params` (newer formats; unknown keys to older ones).
    "hosts.latency",
    "hosts.jitter",
    "hosts.wake",
    "hosts.wake_idle",
    "hosts.shared_cpu",
    "hosts.hz",
    "flows.cc_params.beta",
    "flows.0.cc_params",
];

/// `--set` keys of the path elements of `[link]` (and near misses); the first
/// [`REAL_PATH_SET_KEYS`] are real keys.
const PATH_SET_KEYS: &[&str] = &[
    "link.aqm",
    "link.aqm.kind",
    "link.aqm.target",
    "link.aqm.interval",
    "link.aqm.flows",
    "link.aqm.tupdate",
    "link.aqm.ecn",
    "link.policer",
    "link.policer.burst",
    "link.shaper.rate",
    "link.trace",
    "link.loss_unit",
    "link.jitter",
    "link.reorder",
    "link.ack_aggregation",
    "link.aqm.bogus",
    "link.policer.rate.deep",
    "link.shaper.0",
];

/// The first this many of [`PATH_SET_KEYS`] are real keys.
const REAL_PATH_SET_KEYS: usize = 15;

/// Whole `--set` texts that are malformed on their own.
const BAD_SETS: &[&str] = &[
    "",
    "=",
    "==",
    "link.rate",
    "=5",
    "link.rate==5",
    "link.rate=",
    "link.rate= ",
    "link.rate=[",
    "link.rate=]",
    "link.rate=[,]",
    "link.rate=[1mbit,,2mbit]",
    "link.rate=[1mbit, [2mbit]]",
    "link.rate=\"unterminated",
    "link.rate='",
    "link.rate={",
    "link.rate=1=2",
    "link.rate=\n",
    "link.rate=a\nb",
    "flows.cc=[cubic, bbr,]",
    "flows.cc=[cubic bbr]",
    "flows.0.=1",
    ".=1",
];

/// Extra values that only make sense for overrides (bare words, bare lists).
const SET_VALUES: &[&str] = &[
    "bbr",
    "1%",
    "100mbit",
    "[cubic, bbr]",
    "[0, 1%]",
    "[1ms, 2ms, 3ms]",
    "[1mbit, nan, -1]",
    "[\"a\", b]",
    "1%%",
    "=",
    "a b c",
];

/// Values for the `--set` path keys ([`PATH_SET_KEYS`]), besides trace paths and a sample of
/// the hostile values (every hostile value reaches each path key in the generated files).
const PATH_SET_VALUES: &[&str] = &[
    "codel",
    "fq_codel",
    "[droptail, codel, fq_codel, pie]",
    "[codel, red]",
    "10ms",
    "64kb",
    "gso",
    "{kind=\"pie\", alpha=3}",
    "{kind=\"codel\", flows=16}",
    "{rate=\"10mbit\", burst=\"1kb\"}",
    "{burst=\"64kb\"}",
    "[{at=\"0s\",rate=\"100mbit\"},{at=\"5s\",rate=\"20mbit\"}]",
    "[{at=\"1s\",rate=\"1mbit\"}]",
    "[{at=\"0s\"}]",
    "[[{at=\"0s\",rate=\"1mbit\"}], 2mbit]",
    "missing.trace",
];

/// Nested value deeper than any sane limit.
fn deep_array(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

fn deep_table(depth: usize) -> String {
    format!("{}1{}", "{a=".repeat(depth), "}".repeat(depth))
}

/// All hostile values, constant and generated.
fn hostile_values() -> Vec<String> {
    let mut v: Vec<String> = WRONG_TYPES
        .iter()
        .chain(HOSTILE)
        .map(|s| s.to_string())
        .collect();
    v.push(deep_array(40));
    v.push(deep_array(300));
    v.push(deep_table(300));
    v.push(format!("\"{}\"", "9".repeat(5000)));
    v.push(format!("\"1e{}s\"", "9".repeat(100)));
    v.push(format!("\"0.{}1%\"", "0".repeat(5000)));
    v
}

/// Bytes that the random mutator likes to insert.
const TOKENS: &[&str] = &[
    "\"",
    "'",
    "'''",
    "\"\"\"",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    "=",
    ",",
    ".",
    "#",
    "\\",
    "\\u",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\u{0}",
    "\u{feff}",
    "µ",
    "%",
    "-",
    "+",
    "_",
    "e999",
    "nan",
    "0x",
    "9223372036854775808",
    "1979-05-27T07:32:00Z",
    "\n[link]\n",
    "\n[[flows]]\n",
    "\n[reference]\n",
    "\n[flows]\n",
    "\ncc = \"bbr\"\n",
    "\nrate = [\"1mbit\", \"2mbit\"]\n",
    "\n[link.aqm]\n",
    "\n[link.policer]\n",
    "\n[[link.rate]]\n",
    "\naqm = \"fq_codel\"\n",
    "\nkind = [\"codel\", \"pie\"]\n",
    "{at = \"0s\", rate = \"1mbit\"}",
];

// ---------------------------------------------------------------------------------------------
// Running one case
// ---------------------------------------------------------------------------------------------

/// One input: file text and `--set` overrides applied in order.
#[derive(Clone, Debug)]
struct Case {
    text: String,
    sets: Vec<String>,
}

impl Case {
    fn text(text: impl Into<String>) -> Case {
        Case {
            text: text.into(),
            sets: Vec::new(),
        }
    }
    fn size(&self) -> usize {
        self.text.len() + self.sets.iter().map(|s| s.len() + 1).sum::<usize>()
    }
}

/// What went wrong: `sig` groups findings of one cause, `detail` shows one instance.
struct Problem {
    sig: String,
    detail: String,
}

fn problem(sig: impl Into<String>, detail: impl Into<String>) -> Problem {
    Problem {
        sig: sig.into(),
        detail: detail.into(),
    }
}

#[derive(Default)]
struct Stats {
    loaded: usize,
    load_errors: usize,
    sets_applied: usize,
    set_errors: usize,
    expanded: usize,
    expand_errors: usize,
    points: usize,
    round_trips: usize,
    max_point_bytes: usize,
}

/// An error must be one clear line that names the file.
fn check_error(e: &ScenarioError, origin: &str, stage: &str) -> Result<(), Problem> {
    let s = e.to_string();
    let fail = |what: &str| {
        Err(problem(
            format!("{what} (from {stage}, {:?})", e.kind),
            format!("text: {s:?}\nerror: {e:?}"),
        ))
    };
    if s.trim().is_empty() {
        return fail("empty error text");
    }
    if s.contains('\n') || s.contains('\r') {
        return fail("error text is not one line");
    }
    if s.chars().any(char::is_control) {
        return fail("error text contains a control character");
    }
    if !s.starts_with(origin) {
        return fail("error text does not start with the file name");
    }
    Ok(())
}

/// Loads, overrides, expands and round-trips one case. Problems that end the case are
/// returned; problems after which the case can go on (round-trip differences) go to `out`.
fn exercise(case: &Case, st: &mut Stats, out: &mut Vec<Problem>) -> Result<(), Problem> {
    let mut file = match ScenarioFile::from_str(&case.text, ORIGIN) {
        Ok(f) => {
            st.loaded += 1;
            f
        }
        Err(e) => {
            st.load_errors += 1;
            return check_error(&e, ORIGIN, "from_str");
        }
    };
    for set in &case.sets {
        let (keys, len) = (file.sweep_keys(), file.matrix_len());
        match file.apply_override(set) {
            Ok(()) => st.sets_applied += 1,
            Err(e) => {
                st.set_errors += 1;
                check_error(&e, ORIGIN, "apply_override")?;
                if file.sweep_keys() != keys || file.matrix_len() != len {
                    return Err(problem(
                        "a rejected override changed the file",
                        format!("--set {set:?}: {e}"),
                    ));
                }
            }
        }
    }
    expand_and_check(&file, st, out)
}

fn expand_and_check(
    file: &ScenarioFile,
    st: &mut Stats,
    out: &mut Vec<Problem>,
) -> Result<(), Problem> {
    let len = file.matrix_len();
    // Bytes allocated by `expand` alone (the case's own peak is kept).
    let before = CURRENT.load(Relaxed);
    let case_peak = PEAK.swap(before, Relaxed);
    let expanded = file.expand();
    let used = PEAK.load(Relaxed).saturating_sub(before);
    PEAK.fetch_max(case_peak, Relaxed);
    let points = match expanded {
        Ok(p) => p,
        Err(e) => {
            st.expand_errors += 1;
            return check_error(&e, ORIGIN, "expand");
        }
    };
    st.expanded += 1;
    st.points += points.len();
    if len > MAX_MATRIX_POINTS {
        return Err(problem(
            "expand accepted more than MAX_MATRIX_POINTS points",
            format!("{len} points"),
        ));
    }
    // A parameter swept beside a swept controller or discipline (`cc_params`, `[link.aqm]`)
    // makes runs of its own only for those that take it: then there are fewer points than
    // the product of the list lengths, never more, and never none.
    let conditional = file
        .sweep_keys()
        .iter()
        .any(|k| k.contains("cc_params.") || (k.starts_with("link.aqm.") && k != "link.aqm.kind"));
    if len == 0 || points.is_empty() || points.len() > len || (!conditional && points.len() != len)
    {
        return Err(problem(
            "expand gave a different number of points than matrix_len",
            format!("matrix_len {len}, expand {}", points.len()),
        ));
    }
    // The matrix limit bounds the points, so each point must stay small, or a file within
    // the limit takes gigabytes.
    if len >= 100 {
        let per_point = used / len;
        st.max_point_bytes = st.max_point_bytes.max(per_point);
        if per_point > MAX_POINT_BYTES {
            out.push(problem(
                format!(
                    "expand allocates more than {} KiB per matrix point",
                    MAX_POINT_BYTES >> 10
                ),
                format!(
                    "{len} points took {} MiB, {} KiB each: {MAX_MATRIX_POINTS} points (the \
                     limit) would take about {} GiB",
                    used >> 20,
                    per_point >> 10,
                    (per_point * MAX_MATRIX_POINTS) >> 30
                ),
            ));
        }
    }
    let n = points.len();
    let mut picks = vec![0, n / 2, n - 1];
    picks.dedup();
    for i in picks {
        let p = &points[i];
        if p.index != i {
            return Err(problem(
                "matrix point has the wrong index",
                format!("point {i} says {}", p.index),
            ));
        }
        let _ = p.label();
        let s = &p.scenario;
        if s.resolved().is_empty() {
            return Err(problem("resolved() is empty", format!("{s:?}")));
        }
        let _ = (s.total_flows(), s.run_limit_ns(), s.link.buffer_bytes());
        for g in 0..s.flows.len() {
            let _ = (s.flow_rtt_ns(g), s.socket_buffer_bytes(g));
        }
        round_trip(s, st, out)?;
    }
    Ok(())
}

/// `to_toml_string` must load back to an equal scenario, and write the same text again.
fn round_trip(s: &Scenario, st: &mut Stats, out: &mut Vec<Problem>) -> Result<(), Problem> {
    let text = s.to_toml_string();
    let again = ScenarioFile::from_str(&text, AGAIN).map_err(|e| {
        problem(
            format!("to_toml_string text does not load ({:?})", e.kind),
            format!("{e}\n--- written ---\n{text}"),
        )
    })?;
    let points = again.expand().map_err(|e| {
        problem(
            format!("to_toml_string text does not expand ({:?})", e.kind),
            format!("{e}\n--- written ---\n{text}"),
        )
    })?;
    if points.len() != 1 {
        return Err(problem(
            "to_toml_string text expands to several points",
            text,
        ));
    }
    st.round_trips += 1;
    let back = &points[0].scenario;
    let diffs = differences(s, back);
    for (field, change) in &diffs {
        out.push(problem(
            format!("round trip through to_toml_string changes {field}"),
            format!("{change}\n--- written ---\n{text}"),
        ));
    }
    if diffs.is_empty() {
        let text2 = back.to_toml_string();
        if text2 != text {
            out.push(problem(
                "to_toml_string is not stable under a round trip",
                format!("--- first ---\n{text}--- second ---\n{text2}"),
            ));
        }
    }
    Ok(())
}

/// Fields that differ between `a` and `b`, as (field, "field: old -> new"). Fields are
/// found through `resolved()` and `Debug`, not by name, so the check keeps up with new keys.
fn differences(a: &Scenario, b: &Scenario) -> Vec<(String, String)> {
    let mut d = Vec::new();
    let (ma, mb) = (a.resolved(), b.resolved());
    for k in ma.keys().chain(mb.keys().filter(|k| !ma.contains_key(*k))) {
        let (x, y) = (ma.get(k), mb.get(k));
        if x != y {
            d.push((group_field(k), format!("{k}: {} -> {}", show(x), show(y))));
        }
    }
    if a.description != b.description {
        d.push((
            "description".into(),
            format!("description: {:?} -> {:?}", a.description, b.description),
        ));
    }
    // TOML has no null, so `to_toml_string` drops the nulls (from non-finite floats) of
    // `[reference]`, as documented; compare without them. JSON objects compare as maps.
    let (ra, rb) = (
        a.reference.as_deref().map(without_nulls),
        b.reference.as_deref().map(without_nulls),
    );
    if ra != rb {
        d.push(("reference".into(), format!("reference: {ra:?} -> {rb:?}")));
    }
    // Anything else (e.g. a value `resolved()` rounds, or leaves out).
    let (mut a2, mut b2) = (a.clone(), b.clone());
    (a2.reference, b2.reference) = (ra.map(std::sync::Arc::new), rb.map(std::sync::Arc::new));
    if d.is_empty() && a2 != b2 {
        let (da, db) = (format!("{a2:?}"), format!("{b2:?}"));
        let at = da
            .bytes()
            .zip(db.bytes())
            .position(|(x, y)| x != y)
            .unwrap_or(da.len().min(db.len()));
        let at = (0..=at)
            .rev()
            .find(|&i| da.is_char_boundary(i))
            .unwrap_or(0);
        // The field is the last `name: ` before the first difference.
        let field = da[..at]
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .find(|w| w.len() > 1 && w.ends_with(':'))
            .map(|w| w.trim_end_matches(':').to_string())
            .unwrap_or_else(|| "(unknown)".into());
        let from = (0..=at.saturating_sub(80))
            .rev()
            .find(|&i| da.is_char_boundary(i))
            .unwrap_or(0);
        d.push((
            format!("{field} (seen in Debug)"),
            format!(
                "first difference in Debug output:\n...{}\n...{}",
                clip(&da[from..], 240),
                clip(db.get(from..).unwrap_or(""), 240)
            ),
        ));
    }
    d
}

/// `flows.1.size` and `flows.size` are the same field for grouping findings.
fn group_field(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    match parts.as_slice() {
        ["flows", i, rest @ ..] if i.parse::<usize>().is_ok() => {
            format!("flows.{}", rest.join("."))
        }
        _ => key.to_string(),
    }
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(absent)".into(), |v| v.to_string())
}

fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|x| !x.is_null())
                .map(without_nulls)
                .collect(),
        ),
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        other => other.clone(),
    }
}

thread_local! {
    /// Set while a case runs, so the panic hook records instead of printing.
    static IN_CASE: Cell<bool> = const { Cell::new(false) };
    /// Message and location of the last panic inside a case.
    static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Runs a case; returns what went wrong, a panic included.
fn run_case(case: &Case, st: &mut Stats) -> Vec<Problem> {
    let mut out = Vec::new();
    LAST_PANIC.with(|p| p.borrow_mut().take());
    IN_CASE.with(|f| f.set(true));
    let r = panic::catch_unwind(AssertUnwindSafe(|| exercise(case, st, &mut out)));
    IN_CASE.with(|f| f.set(false));
    match r {
        Ok(Ok(())) => {}
        Ok(Err(p)) => out.push(p),
        Err(payload) => {
            let (msg, loc) = LAST_PANIC
                .with(|p| p.borrow_mut().take())
                .unwrap_or_else(|| (payload_text(&*payload), "unknown location".into()));
            out.push(problem(format!("panic at {loc}"), msg));
        }
    }
    out
}

fn payload_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".into()
    }
}

// ---------------------------------------------------------------------------------------------
// Collecting findings
// ---------------------------------------------------------------------------------------------

struct Finding {
    count: usize,
    /// The smallest case seen with this signature, and its detail.
    case: Case,
    detail: String,
    file: String,
}

#[derive(Default)]
struct Fuzz {
    stats: Stats,
    cases: usize,
    findings: BTreeMap<String, Finding>,
    slowest: (Duration, String),
    biggest: (usize, String),
}

impl Fuzz {
    fn check(&mut self, file: &str, case: Case) {
        self.cases += 1;
        let base = CURRENT.load(Relaxed);
        PEAK.store(base, Relaxed);
        let t0 = Instant::now();
        let mut problems = run_case(&case, &mut self.stats);
        let took = t0.elapsed();
        let bytes = PEAK.load(Relaxed).saturating_sub(base);
        if took > self.slowest.0 {
            self.slowest = (took, file.to_string());
        }
        if bytes > self.biggest.0 {
            self.biggest = (bytes, file.to_string());
        }
        if took > SLOW {
            problems.push(problem(
                format!("slow: one case took more than {SLOW:?}"),
                format!("took {took:?}"),
            ));
        }
        if bytes > MAX_CASE_BYTES {
            problems.push(problem(
                format!("one case allocated more than {} MiB", MAX_CASE_BYTES >> 20),
                format!("peak {} MiB", bytes >> 20),
            ));
        }
        for p in problems {
            self.record(file, &case, p);
        }
    }

    fn record(&mut self, file: &str, case: &Case, p: Problem) {
        let f = self.findings.entry(p.sig).or_insert_with(|| Finding {
            count: 0,
            case: case.clone(),
            detail: p.detail.clone(),
            file: file.to_string(),
        });
        f.count += 1;
        if case.size() < f.case.size() {
            f.case = case.clone();
            f.detail = p.detail;
            f.file = file.to_string();
        }
    }
}

/// The detail of the problem with signature `sig` that `case` has, if it has one.
fn fails_with(case: &Case, sig: &str) -> Option<String> {
    run_case(case, &mut Stats::default())
        .into_iter()
        .find(|p| p.sig == sig)
        .map(|p| p.detail)
}

/// Shrinks a failing case: drops overrides, then lines, while it fails the same way.
/// Returns the smaller case and its problem's detail.
fn shrink(case: &Case, sig: &str, detail: &str) -> (Case, String) {
    let mut best = (case.clone(), detail.to_string());
    let mut budget = 2000usize;
    let mut i = 0;
    while i < best.0.sets.len() && budget > 0 {
        let mut c = best.0.clone();
        c.sets.remove(i);
        budget -= 1;
        match fails_with(&c, sig) {
            Some(d) => best = (c, d),
            None => i += 1,
        }
    }
    let mut changed = true;
    while changed && budget > 0 {
        changed = false;
        let lines: Vec<String> = best
            .0
            .text
            .split_inclusive('\n')
            .map(String::from)
            .collect();
        for skip in (0..lines.len()).rev() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let text: String = lines
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != skip)
                .map(|(_, l)| l.as_str())
                .collect();
            let c = Case {
                text,
                sets: best.0.sets.clone(),
            };
            if let Some(d) = fails_with(&c, sig) {
                best = (c, d);
                changed = true;
                break;
            }
        }
    }
    best
}

/// Parsing must take time linear in the input, also when a long list is on one line (the
/// usual way to write a sweep). Compares one line against one value per line, so the check
/// does not depend on the machine's speed.
fn check_parse_is_linear(fuzz: &mut Fuzz) {
    const N: usize = 40_000;
    let text = |sep: &str| {
        let values: Vec<String> = (1..=N).map(|i| format!("\"{i}ms\"")).collect();
        format!(
            "name = \"x\"\nduration = \"1s\"\n[link]\nrate = \"1mbit\"\nrtt = [{}]\n[[flows]]\n\
             cc = \"bbr\"\n",
            values.join(sep)
        )
    };
    let best_time = |text: &str| {
        (0..2)
            .map(|_| {
                let t0 = Instant::now();
                let _ = ScenarioFile::from_str(text, ORIGIN);
                t0.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let (one_line, many_lines) = (text(", "), text(",\n"));
    let (t_one, t_many) = (best_time(&one_line), best_time(&many_lines));
    if t_one > t_many * 8 + Duration::from_millis(100) {
        let case = Case::text(format!(
            "rtt = [\"1ms\", \"2ms\", ... \"{N}ms\"] on one line, in a minimal file"
        ));
        let p = problem(
            "slow: parse time grows faster than linearly with the length of a line",
            format!(
                "{N} values on one line: {t_one:?}; the same with one value per line: \
                 {t_many:?}"
            ),
        );
        fuzz.record("(generated)", &case, p);
    }
}

// ---------------------------------------------------------------------------------------------
// Mutators
// ---------------------------------------------------------------------------------------------

/// 1 to 4 random byte-level edits; the result is made valid UTF-8 lossily.
fn mutate_bytes(text: &str, rng: &mut Rng) -> String {
    let mut b = text.as_bytes().to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(b.len() + 1);
        match rng.below(10) {
            0 if at < b.len() => b[at] ^= 1 << rng.below(8),
            1 if at < b.len() => b[at] = rng.next() as u8,
            2 if at < b.len() => b[at] = rng.pick(TOKENS).as_bytes()[0],
            3 => b.insert(at, rng.next() as u8),
            4 => {
                let t = rng.pick(TOKENS).as_bytes();
                b.splice(at..at, t.iter().copied());
            }
            5 if at < b.len() => {
                let n = (1 + rng.below(16)).min(b.len() - at);
                b.drain(at..at + n);
            }
            6 if at < b.len() => {
                let n = (1 + rng.below(32)).min(b.len() - at);
                let chunk = b[at..at + n].to_vec();
                let to = rng.below(b.len() + 1);
                b.splice(to..to, chunk);
            }
            _ => {
                // Line edits: delete, duplicate or swap whole lines.
                let s = String::from_utf8_lossy(&b).into_owned();
                let mut lines: Vec<&str> = s.split_inclusive('\n').collect();
                if lines.is_empty() {
                    continue;
                }
                let i = rng.below(lines.len());
                let j = rng.below(lines.len());
                match rng.below(3) {
                    0 => {
                        lines.remove(i);
                    }
                    1 => lines.insert(j, lines[i]),
                    _ => lines.swap(i, j),
                }
                b = lines.concat().into_bytes();
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

/// A `key = value` line: its index, key text and value text (comment and all), and
/// whether it is under `[reference]`.
struct ValueLine {
    index: usize,
    key: String,
    value: String,
    in_reference: bool,
}

fn value_lines(text: &str) -> Vec<ValueLine> {
    let mut in_reference = false;
    text.lines()
        .enumerate()
        .filter_map(|(index, line)| {
            let t = line.trim_start();
            if t.starts_with('[') {
                in_reference = t.trim_start_matches('[').starts_with("reference");
                return None;
            }
            if t.starts_with('#') {
                return None;
            }
            let (k, v) = line.split_once('=')?;
            let keyish = !k.trim().is_empty()
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-.\"' \t".contains(c));
            keyish.then(|| ValueLine {
                index,
                key: k.trim().to_string(),
                value: v.trim().to_string(),
                in_reference,
            })
        })
        .collect()
}

/// `text` with line `index` replaced by `with`.
fn replace_line(text: &str, index: usize, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i == index {
            out.push_str(with);
            if l.ends_with('\n') {
                out.push('\n');
            }
        } else {
            out.push_str(l);
        }
    }
    out
}

/// A list of `n` values shaped like `value` (the first element if it is a list), so that
/// most of them are valid: `"10mbit"` gives `["1mbit", "2mbit", ...]`, `0.01` gives floats.
fn long_list(value: &str, n: usize) -> String {
    let v = value.split('#').next().unwrap_or("").trim();
    let first = v
        .trim_start_matches('[')
        .split(',')
        .next()
        .unwrap_or("")
        .trim()
        .trim_end_matches(']')
        .trim();
    let item = |i: usize| -> String {
        if let Some(s) = first.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            let unit = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
            if unit.len() == s.len() {
                // Not a number: cycle through valid names of the same kind (queue
                // disciplines, loss units or congestion controls).
                let names: &[&str] = if AQM_NAMES.contains(&s) {
                    &AQM_NAMES
                } else if s == "segment" || s == "gso" {
                    &["segment", "gso"]
                } else {
                    &["reno", "cubic", "bbr"]
                };
                format!("\"{}\"", names[i % names.len()])
            } else if unit == "%" {
                format!("\"{}%\"", i as f64 / 100.0)
            } else {
                format!("\"{}{unit}\"", i + 1)
            }
        } else if first.contains('.') {
            format!("{}", i as f64 / 10000.0)
        } else {
            (i + 1).to_string()
        }
    };
    let items: Vec<String> = (0..n).map(item).collect();
    format!("[{}]", items.join(", "))
}

/// Queue disciplines `link.aqm` names.
const AQM_NAMES: [&str; 4] = ["droptail", "codel", "fq_codel", "pie"];

/// A bare-word list for `--set key=[...]` of `n` values that suit `key`.
fn long_set_list(key: &str, n: usize) -> String {
    let last = key.rsplit('.').next().unwrap_or(key);
    let items: Vec<String> = (1..=n)
        .map(|i| match last {
            "rate" => format!("{i}mbit"),
            "rtt" | "start" | "rtt_extra" | "target" | "interval" | "tupdate" | "jitter"
            | "ack_aggregation" => format!("{i}ms"),
            "aqm" | "kind" => AQM_NAMES[i % AQM_NAMES.len()].to_string(),
            "policer" => format!("{i}mbit"),
            "burst" => format!("{}kb", i + 1),
            "loss_unit" => ["segment", "gso"][i % 2].to_string(),
            "reorder" | "ecn" => (i % 2 == 0).to_string(),
            "host_latency" | "host_jitter" => format!("{i}us"),
            "buffer" => format!("{i}pkt"),
            "loss" | "ack_loss" => format!("{}%", i as f64 / 100.0),
            "size" => format!("{i}kb"),
            "duration" => format!("{i}s"),
            "mss" => (535 + i).to_string(),
            "cc" => ["reno", "cubic", "bbr"][i % 3].to_string(),
            _ => i.to_string(),
        })
        .collect();
    format!("[{}]", items.join(", "))
}

// ---------------------------------------------------------------------------------------------
// The test
// ---------------------------------------------------------------------------------------------

/// `s` cut to about `max` bytes, saying how long it was.
fn clip(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}... ({} bytes in all)", &s[..end], s.len())
}

fn toml_files(dir: &Path, out: &mut Vec<PathBuf>) {
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

/// Every mutant of one file. `trace_values` are `--set link.trace` values (paths of real
/// trace files, good and bad).
fn mutate_file(
    fuzz: &mut Fuzz,
    name: &str,
    text: &str,
    rng: &mut Rng,
    nth: usize,
    trace_values: &[String],
) {
    let hostile = hostile_values();
    // The costliest mutants are made for one file in six, in turn.
    let turn = nth % 6;
    let lines = value_lines(text);

    // The file itself, with other line ends, a byte-order mark, no final newline, a NUL.
    fuzz.check(name, Case::text(text));
    fuzz.check(name, Case::text(text.replace('\n', "\r\n")));
    fuzz.check(name, Case::text(text.replace('\n', "\r")));
    fuzz.check(name, Case::text(format!("\u{feff}{text}")));
    fuzz.check(name, Case::text(text.trim_end()));
    fuzz.check(name, Case::text(format!("{text}\0")));

    // 1. Random byte edits.
    for _ in 0..BYTE_MUTANTS {
        fuzz.check(name, Case::text(mutate_bytes(text, rng)));
    }

    // 2. Truncation at evenly spaced byte offsets (some in the middle of a character).
    let b = text.as_bytes();
    let step = (b.len() / TRUNCATIONS).max(1);
    for off in (0..b.len()).step_by(step) {
        let off = (off + rng.below(step)).min(b.len());
        fuzz.check(name, Case::text(String::from_utf8_lossy(&b[..off])));
    }

    // 3 and 4. Every `key = value` line gets every wrong-typed and hostile value (lines of
    // the free-form `[reference]` a random quarter of them).
    for l in &lines {
        for v in &hostile {
            if l.in_reference && rng.below(4) != 0 {
                continue;
            }
            let with = format!("{} = {v}", l.key);
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
    }

    // 4. Long lists: 1000 mostly valid values on a few lines, two of them at once (10^6
    // points, over the limit), and once in a while a list over the limit on its own.
    if !lines.is_empty() {
        for _ in 0..LONG_LISTS {
            let l = rng.pick(&lines);
            let with = format!("{} = {}", l.key, long_list(&l.value, 1000));
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
        // (Not in `[reference]`: it does not make a matrix, and it is the next check's subject.)
        let sweepable: Vec<&ValueLine> = lines.iter().filter(|l| !l.in_reference).collect();
        let (a, b) = (rng.below(sweepable.len()), rng.below(sweepable.len()));
        if a != b {
            let (a, b) = (sweepable[a], sweepable[b]);
            let t = replace_line(
                text,
                a.index,
                &format!("{} = {}", a.key, long_list(&a.value, 1000)),
            );
            let t = replace_line(
                &t,
                b.index,
                &format!("{} = {}", b.key, long_list(&b.value, 1000)),
            );
            fuzz.check(name, Case::text(t));
        }
        if turn == 0 && !sweepable.is_empty() {
            let l = rng.pick(&sweepable);
            let with = format!("{} = {}", l.key, long_list(&l.value, MAX_MATRIX_POINTS + 1));
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
    }

    // A long list in `[reference]` and a sweep: the matrix is small, but each point must not
    // carry a copy of everything.
    if let Some(l) = lines.iter().find(|l| l.in_reference) {
        let with = format!("{} = {}", l.key, long_list(&l.value, 1000));
        fuzz.check(
            name,
            Case {
                text: replace_line(text, l.index, &with),
                sets: vec![format!("seed={}", long_set_list("seed", 200))],
            },
        );
    }

    // Hostile keys in place of real ones, and a very long key.
    for l in &lines {
        for k in HOSTILE_KEYS {
            let with = format!("{k} = {}", l.value);
            fuzz.check(name, Case::text(replace_line(text, l.index, &with)));
        }
    }
    if let Some(l) = lines.first() {
        let long_key = format!("{} = {}", "k".repeat(10_000), l.value);
        fuzz.check(name, Case::text(replace_line(text, l.index, &long_key)));
        let deep_key = format!("{} = 1", vec!["a"; 300].join("."));
        fuzz.check(name, Case::text(replace_line(text, l.index, &deep_key)));
    }

    // 5. Overrides with hostile values on real and unknown keys, then expand.
    if ScenarioFile::from_str(text, ORIGIN).is_err() {
        return;
    }
    let set_values: Vec<String> = hostile
        .iter()
        .cloned()
        .chain(SET_VALUES.iter().map(|s| s.to_string()))
        .collect();
    let path_values: Vec<String> = PATH_SET_VALUES
        .iter()
        .map(|s| s.to_string())
        .chain(trace_values.iter().cloned())
        .chain(hostile.iter().step_by(8).cloned())
        .collect();
    let set_keys: Vec<&str> = SET_KEYS.iter().chain(PATH_SET_KEYS).copied().collect();
    let all_values: Vec<String> = set_values.iter().chain(&path_values).cloned().collect();
    let with_sets = |sets: Vec<String>| Case {
        text: text.to_string(),
        sets,
    };
    // Every key with every value on a few files (one with two flow groups among them), a
    // random sample of the pairs on the others: override handling hardly depends on the file.
    let groups = text.matches("[[flows]]").count();
    for (keys, values) in [(SET_KEYS, &set_values), (PATH_SET_KEYS, &path_values)] {
        for k in keys {
            for v in values {
                if turn == 0 || groups > 1 || rng.below(8) == 0 {
                    fuzz.check(name, with_sets(vec![format!("{k}={v}")]));
                }
            }
        }
    }
    for s in BAD_SETS {
        fuzz.check(name, with_sets(vec![s.to_string()]));
    }
    for _ in 0..4 {
        let k = rng.pick(&SET_KEYS[..REAL_SET_KEYS]);
        fuzz.check(
            name,
            with_sets(vec![format!("{k}={}", long_set_list(k, 1000))]),
        );
    }
    let k = rng.pick(&SET_KEYS[..REAL_SET_KEYS]);
    fuzz.check(
        name,
        with_sets(vec![
            format!("{k}={}", long_set_list(k, 1000)),
            format!("seed={}", long_set_list("seed", 1000)),
        ]),
    );
    // A long list on a path key, over a file's own path keys or none.
    let k = rng.pick(&PATH_SET_KEYS[..REAL_PATH_SET_KEYS]);
    fuzz.check(
        name,
        with_sets(vec![format!("{k}={}", long_set_list(k, 1000))]),
    );
    if turn == 1 {
        let k = rng.pick(&SET_KEYS[..REAL_SET_KEYS]);
        fuzz.check(
            name,
            with_sets(vec![format!(
                "{k}={}",
                long_set_list(k, MAX_MATRIX_POINTS + 1)
            )]),
        );
    }
    // Random sequences of overrides, good and bad mixed.
    for _ in 0..SET_SEQUENCES {
        let sets = (0..2 + rng.below(3))
            .map(|_| match rng.below(4) {
                0 => rng.pick(BAD_SETS).to_string(),
                _ => format!("{}={}", rng.pick(&set_keys), rng.pick(&all_values)),
            })
            .collect();
        fuzz.check(name, with_sets(sets));
    }
}

/// A folder of its own under the system's temp dir, removed when dropped (also when the test
/// fails).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(format!("cclab-mutate-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        TempDir(p)
    }

    fn write(&self, name: &str, text: &str) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        p.display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `text` with each relative `trace = "path"` made absolute against `dir` (a path in a file
/// is relative to the file's folder, and mutants are loaded from text, which has none), or
/// replaced by `with` when given.
fn absolute_traces(text: &str, dir: &Path, with: Option<&str>) -> String {
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
fn toml_str(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Scenarios that use every path key of `[link]` in each of its forms (no file under
/// `scenarios/` has them all): tables with every parameter, inline tables, bare names and
/// rates, a rate schedule as a list of inline tables and as `[[link.rate]]`, a trace (a real
/// file at the absolute path `trace`), and sweeps of each, with parameters that apply to only
/// some of the swept disciplines. Each is one flow group with a small matrix, so the override
/// pass costs what a real file's does.
fn generated_scenarios(trace: &str) -> Vec<(String, String)> {
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
[link.aqm]
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
[link.shaper]
rate = "20mbit"
burst = 3000
[[flows]]
cc = ["cubic", "bbr"]
"#,
        toml_str(trace)
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

#[test]
fn mutated_scenario_files_give_one_line_errors_and_never_panic() {
    let t0 = Instant::now();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files = Vec::new();
    toml_files(&root, &mut files);
    assert!(!files.is_empty(), "no *.toml under {}", root.display());

    // Panics inside a case are recorded, not printed; any other panic prints as usual.
    let default_hook = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if IN_CASE.with(|f| f.get()) {
            let loc = info
                .location()
                .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                .unwrap_or_else(|| "unknown location".into());
            LAST_PANIC.with(|p| *p.borrow_mut() = Some((payload_text(info.payload()), loc)));
        } else {
            default_hook(info);
        }
    }));

    // Traces for `link.trace`: a good one, one with a bad line, and one that is empty.
    let traces = TempDir::new("traces");
    let good = traces.write("good.trace", "0\n1\n1\n3\n4\n\n7\n9\n10\n");
    let bad = traces.write("bad.trace", "1\n2\n2.5\n4\n");
    let empty = traces.write("empty.trace", "\n");
    let trace_values = vec![good.clone(), bad, empty, traces.0.display().to_string()];
    let generated = generated_scenarios(&good);

    let mut rng = Rng(0x5EED_CC1A_B5CE_7A10);
    let mut fuzz = Fuzz::default();
    let mut unloadable = Vec::new();
    let real = files.iter().map(|path| {
        let name = format!(
            "scenarios/{}",
            path.strip_prefix(&root).unwrap_or(path).display()
        );
        let text = std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let dir = path.parent().unwrap_or(&root);
        (
            name,
            absolute_traces(&text, dir, None),
            absolute_traces(&text, dir, Some(&good)),
        )
    });
    let all: Vec<(String, String, String)> = real
        .chain(
            generated
                .iter()
                .map(|(n, t)| (n.clone(), t.clone(), t.clone())),
        )
        .collect();
    for (nth, (name, text, small)) in all.iter().enumerate() {
        // A file with a trace of its own (they run to tens of thousands of lines) is mutated
        // with the small one, so each case stays cheap; with its own, it is loaded as it is
        // and swept over 1000 seeds (its points must share one copy of the trace).
        if small != text {
            fuzz.check(name, Case::text(text.clone()));
            fuzz.check(
                name,
                Case {
                    text: text.clone(),
                    sets: vec![format!("seed={}", long_set_list("seed", 1000))],
                },
            );
        }
        let text = small;
        let loaded = match ScenarioFile::from_str(text, name) {
            Ok(f) => f.expand().err(),
            Err(e) => Some(e),
        };
        if let Some(e) = loaded {
            unloadable.push(e.to_string());
        }
        mutate_file(&mut fuzz, name, text, &mut rng, nth, &trace_values);
    }
    // The generated scenarios are the only ones with some of the keys: they must load.
    for (name, _) in &generated {
        assert!(
            !unloadable.iter().any(|u| u.starts_with(name.as_str())),
            "a generated scenario does not load: {unloadable:#?}"
        );
    }
    check_parse_is_linear(&mut fuzz);
    let run_time = t0.elapsed();

    let mut report = String::new();
    for (sig, f) in &fuzz.findings {
        // Shrinking re-runs the case, so not for the costly ones.
        let (small, detail) = if sig.starts_with("slow")
            || sig.starts_with("one case allocated")
            || sig.starts_with("expand allocates")
        {
            (f.case.clone(), f.detail.clone())
        } else {
            shrink(&f.case, sig, &f.detail)
        };
        report.push_str(&format!(
            "\n=== {sig}\n    {} case(s); smallest from {}\n    input text: {}\n",
            f.count,
            f.file,
            clip(&format!("{:?}", small.text), 2000)
        ));
        for s in &small.sets {
            report.push_str(&format!("    --set {}\n", clip(&format!("{s:?}"), 300)));
        }
        report.push_str(&format!(
            "    detail:\n      {}\n",
            clip(&detail, 3000).replace('\n', "\n      ")
        ));
    }
    // Restore the default hook before asserting.
    drop(panic::take_hook());

    let st = &fuzz.stats;
    eprintln!(
        "mutate: {} files ({} generated), {} cases in {:.1?} (slowest case {:.1?} in {}, largest {} MiB in {}); \
         loaded {}, load errors {}; overrides applied {}, rejected {}; expanded {} ({} points), \
         expand errors {}; round trips {}; at most {} KiB per matrix point",
        all.len(),
        generated.len(),
        fuzz.cases,
        run_time,
        fuzz.slowest.0,
        fuzz.slowest.1,
        fuzz.biggest.0 >> 20,
        fuzz.biggest.1,
        st.loaded,
        st.load_errors,
        st.sets_applied,
        st.set_errors,
        st.expanded,
        st.points,
        st.expand_errors,
        st.round_trips,
        st.max_point_bytes >> 10,
    );
    for u in &unloadable {
        eprintln!("note: an unmodified scenario file does not load: {u}");
    }
    assert!(
        fuzz.findings.is_empty(),
        "{} kind(s) of bad outcome found:{report}",
        fuzz.findings.len()
    );
    // The mutants reached every stage, so the checks above were not vacuous.
    assert!(st.round_trips > 1000, "only {} round trips", st.round_trips);
    assert!(st.load_errors > 1000, "only {} load errors", st.load_errors);
    assert!(
        st.set_errors > 1000,
        "only {} override errors",
        st.set_errors
    );
    assert!(
        st.expand_errors > 10,
        "only {} expand errors",
        st.expand_errors
    );
}
