//! Running one case: load, override, expand and round-trip one input, and say what went
//! wrong (an error that is not one clear line, a panic, a round trip that changes something).

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;

use cclab_scenario::{Scenario, ScenarioError, ScenarioFile, MAX_MATRIX_POINTS};
use serde_json::Value;

use crate::alloc::{CURRENT, PEAK};
use crate::{clip, AGAIN, MAX_POINT_BYTES, ORIGIN};

/// One input: file text and `--set` overrides applied in order.
#[derive(Clone, Debug)]
pub struct Case {
    pub text: String,
    pub sets: Vec<String>,
}

impl Case {
    pub fn text(text: impl Into<String>) -> Case {
        Case {
            text: text.into(),
            sets: Vec::new(),
        }
    }
    pub fn size(&self) -> usize {
        self.text.len() + self.sets.iter().map(|s| s.len() + 1).sum::<usize>()
    }
}

/// What went wrong: `sig` groups findings of one cause, `detail` shows one instance.
pub struct Problem {
    pub sig: String,
    pub detail: String,
}

pub fn problem(sig: impl Into<String>, detail: impl Into<String>) -> Problem {
    Problem {
        sig: sig.into(),
        detail: detail.into(),
    }
}

#[derive(Default)]
pub struct Stats {
    pub loaded: usize,
    pub load_errors: usize,
    pub sets_applied: usize,
    pub set_errors: usize,
    pub expanded: usize,
    pub expand_errors: usize,
    pub points: usize,
    pub round_trips: usize,
    pub max_point_bytes: usize,
}

/// An error must be one clear line that names the file.
pub fn check_error(e: &ScenarioError, origin: &str, stage: &str) -> Result<(), Problem> {
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
    // One line per error: a file's independent errors come together (at most
    // MAX_REPORTED of them, then a line counting the rest), each on a line of its own.
    let lines: Vec<&str> = s.split('\n').collect();
    if lines.len() > cclab_scenario::MAX_REPORTED + 1 {
        return fail("more error lines than MAX_REPORTED and the count of the rest");
    }
    if lines.len()
        != 1 + e.more.len().min(cclab_scenario::MAX_REPORTED - 1)
            + (e.more.len() >= cclab_scenario::MAX_REPORTED) as usize
    {
        return fail("error text is not one line per error");
    }
    for l in lines {
        if l.trim().is_empty() {
            return fail("empty error line");
        }
        if l.chars().any(char::is_control) {
            return fail("error text contains a control character");
        }
        if !l.starts_with(origin) {
            return fail("error text does not start with the file name");
        }
    }
    Ok(())
}

/// Loads, overrides, expands and round-trips one case. Problems that end the case are
/// returned; problems after which the case can go on (round-trip differences) go to `out`.
pub fn exercise(case: &Case, st: &mut Stats, out: &mut Vec<Problem>) -> Result<(), Problem> {
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

pub fn expand_and_check(
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
pub fn round_trip(s: &Scenario, st: &mut Stats, out: &mut Vec<Problem>) -> Result<(), Problem> {
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
pub fn differences(a: &Scenario, b: &Scenario) -> Vec<(String, String)> {
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
pub fn group_field(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    match parts.as_slice() {
        ["flows", i, rest @ ..] if i.parse::<usize>().is_ok() => {
            format!("flows.{}", rest.join("."))
        }
        _ => key.to_string(),
    }
}

pub fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(absent)".into(), |v| v.to_string())
}

pub fn without_nulls(v: &Value) -> Value {
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
    pub static IN_CASE: Cell<bool> = const { Cell::new(false) };
    /// Message and location of the last panic inside a case.
    pub static LAST_PANIC: RefCell<Option<(String, String)>> = const { RefCell::new(None) };
}

/// Runs a case; returns what went wrong, a panic included.
pub fn run_case(case: &Case, st: &mut Stats) -> Vec<Problem> {
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

pub fn payload_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(non-string panic payload)".into()
    }
}
