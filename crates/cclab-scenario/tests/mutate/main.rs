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
//!
//! One test binary (its allocator counts every allocation); its modules: `alloc` (the
//! counting allocator), `scenarios` (the files and generated scenarios that are mutated),
//! `hostile` (hostile values, keys and overrides), `mutators`, `case` (running one case) and
//! `findings` (collecting, shrinking and reporting what went wrong).

#[path = "../common/mod.rs"]
mod common;

mod alloc;
mod case;
mod findings;
mod hostile;
mod mutators;
mod scenarios;

use std::panic;
use std::path::Path;
use std::time::{Duration, Instant};

use cclab_scenario::{ScenarioFile, MAX_MATRIX_POINTS};

use crate::case::{payload_text, Case, IN_CASE, LAST_PANIC};
use crate::common::TempDir;
use crate::findings::{check_parse_is_linear, shrink, Fuzz};
use crate::mutators::{long_set_list, mutate_file, Rng};
use crate::scenarios::{absolute_traces, generated_scenarios, toml_files};

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
    let write = |name: &str, text: &str| traces.write(name, text).display().to_string();
    let good = write("good.trace", "0\n1\n1\n3\n4\n\n7\n9\n10\n");
    let bad = write("bad.trace", "1\n2\n2.5\n4\n");
    let empty = write("empty.trace", "\n");
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
