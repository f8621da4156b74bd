//! `link.trace`: where a trace path is read from (the scenario's folder, or the current one
//! for `--set`), the errors, `--set link.rate` in place of a trace, sweeps, and one read per
//! expansion.

use std::path::Path;

use cclab_path::RateDesc;
use cclab_scenario::*;
use serde_json::json;

use crate::common::{assert_error, error_of_file, one_line, one_of, points, with_link, TempDir};
use crate::{
    assert_round_trip, labels, relative_to_cwd, trace_of, without_rate, SCHEDULE, TRACE, TRACE_BPS,
};

#[test]
fn trace_relative_to_the_scenario_folder() {
    let dir = TempDir::new("rel");
    dir.write("traces/step.trace", TRACE);
    let text = without_rate("trace = \"traces/step.trace\"\nbuffer = \"2bdp\"");
    let path = dir.write("x.toml", &text);
    let f = ScenarioFile::from_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let s = one_of(&f);
    let t = trace_of(&s.link);
    assert_eq!(
        t.opportunities,
        vec![1_000_000, 2_000_000, 3_000_000, 4_000_000]
    );
    assert_eq!(t.period(), 4_000_000);
    // The nominal rate is the trace's mean; buffers in bdp use it.
    assert_eq!(s.link.path.rate_bps, TRACE_BPS as f64);
    assert_eq!(s.link.bdp_bytes(), 30_000);
    assert_eq!(s.link.buffer_bytes(), 60_000);
    let r = s.resolved();
    assert_eq!(r["link.rate"], json!(TRACE_BPS));
    assert!(
        r["link.trace"].as_str().unwrap().ends_with("step.trace"),
        "{}",
        r["link.trace"]
    );
    // Blank lines are ignored, repeated timestamps are several opportunities.
    dir.write("b.trace", "\n0\n5\n5\n\n10\n");
    let path = dir.write("b.toml", &without_rate("trace = \"b.trace\""));
    let s = one_of(&ScenarioFile::from_file(&path).unwrap());
    assert_eq!(
        trace_of(&s.link).opportunities,
        vec![0, 5_000_000, 5_000_000, 10_000_000]
    );
    assert_eq!(s.link.path.rate_bps, 4_800_000.0);
    // An absolute path is taken as it is.
    let abs = dir.0.join("traces/step.trace");
    let other = TempDir::new("abs");
    let path = other.write(
        "a.toml",
        &without_rate(&format!("trace = {:?}", abs.display().to_string())),
    );
    assert_eq!(
        trace_of(&one_of(&ScenarioFile::from_file(&path).unwrap()).link).opportunities,
        t.opportunities
    );
}

#[test]
fn trace_errors_name_the_key_and_the_fix() {
    let dir = TempDir::new("err");
    // A missing file: where it looked, and what paths are relative to.
    let path = dir.write("x.toml", &without_rate("trace = \"nope.trace\""));
    let (e, s) = error_of_file(ScenarioFile::from_file(&path), "missing trace");
    assert_eq!(e.kind, ErrorKind::BadValue);
    assert!(s.starts_with(&format!("{}:5:", path.display())), "{s}");
    assert!(s.contains("link.trace = \"nope.trace\""), "{s}");
    assert!(s.contains("cannot read trace file"), "{s}");
    assert!(
        s.contains(&dir.0.join("nope.trace").display().to_string()),
        "{s}"
    );
    assert!(s.contains("relative to its folder"), "{s}");
    // A malformed trace names the file and the line.
    for (body, needles) in [
        (
            "1\n2\nthree\n4\n",
            &["line 3", "whole number of milliseconds", "\"three\""][..],
        ),
        ("1\n2.5\n", &["line 2", "\"2.5\""][..]),
        ("1\n-2\n", &["line 2"][..]),
        ("5\n3\n", &["line 2", "must not decrease"][..]),
        ("", &["no timestamps"][..]),
        ("\n\n", &["no timestamps"][..]),
        ("0\n0\n", &["more than 0 ms"][..]),
        ("99999999999999999999\n", &["line 1"][..]),
    ] {
        dir.write("bad.trace", body);
        let path = dir.write("bad.toml", &without_rate("trace = \"bad.trace\""));
        let (_, s) = error_of_file(ScenarioFile::from_file(&path), body);
        assert!(s.contains("link.trace"), "{s}");
        assert!(s.contains("bad.trace"), "{s}");
        for n in needles {
            assert!(s.contains(n), "{body:?}: {n:?} missing in: {s}");
        }
    }
    // Trace and rate both in the file.
    dir.write("ok.trace", TRACE);
    let path = dir.write("both.toml", &with_link("trace = \"ok.trace\""));
    let (e, s) = error_of_file(ScenarioFile::from_file(&path), "both");
    assert_eq!(e.kind, ErrorKind::Inconsistent);
    assert!(s.contains("link.trace"), "{s}");
    assert!(s.contains("link.trace and link.rate both give"), "{s}");
    assert!(s.contains("keep one"), "{s}");
    // ...also when the rate is a schedule or a sweep.
    let path = dir.write(
        "both2.toml",
        &with_link("trace = \"ok.trace\"").replace("\"100mbit\"", "[\"1mbit\", \"2mbit\"]"),
    );
    let (_, s) = error_of_file(ScenarioFile::from_file(&path), "both2");
    assert!(s.contains("both give"), "{s}");
    // Neither: the rate is missing, and the message says a trace would do.
    assert_error(
        &without_rate(""),
        3,
        "link.rate",
        &["missing required key", "rate = \"100mbit\""],
    );
    for (extra, needle) in [
        ("trace = \"\"", "empty path"),
        ("trace = \"  \"", "empty path"),
        ("trace = 5", "the path of a Mahimahi trace file"),
        ("trace = []", "empty list"),
    ] {
        assert_error(&without_rate(extra), 5, "link.trace", &[needle]);
    }
}

#[test]
fn trace_with_set_is_relative_to_the_current_directory() {
    let dir = TempDir::new("set");
    let trace = dir.write("t/x.trace", TRACE);
    // The scenario file in a folder of its own, beside a trace of the same relative name.
    let sdir = TempDir::new("set-sc");
    let scenario = sdir.write("s.toml", &with_link("loss = \"1%\""));
    sdir.write("t/x.trace", "1\n");
    let rel = relative_to_cwd(&trace);
    assert!(!Path::new(&rel).is_absolute());
    let mut f = ScenarioFile::from_file(&scenario).unwrap();
    f.apply_override(&format!("link.trace={rel}")).unwrap();
    let s = one_of(&f);
    // The file's rate is replaced by the trace's.
    assert_eq!(trace_of(&s.link).opportunities.len(), 4);
    assert_eq!(s.link.path.rate_bps, TRACE_BPS as f64);
    // Named by its absolute path, so the written scenario loads from anywhere.
    assert_eq!(
        Path::new(&trace_of(&s.link).name),
        std::fs::canonicalize(&trace).unwrap()
    );
    assert_eq!(s.link.path.loss, 0.01);
    assert_round_trip(&s);
    // A path relative to the scenario's folder is not what --set means.
    let mut f = ScenarioFile::from_file(&scenario).unwrap();
    let e = match f.apply_override("link.trace=t/x.trace") {
        Err(e) => e,
        Ok(()) => f.expand().unwrap_err(),
    };
    let (_, s) = one_line(e);
    assert!(s.contains("--set link.trace=t/x.trace"), "{s}");
    assert!(s.contains("cannot read trace file t/x.trace"), "{s}");
    assert!(s.contains("current directory"), "{s}");
    assert!(!s.contains("relative to its folder"), "{s}");
    // A quoted value is the same path; a --set trace also replaces a swept or scheduled rate.
    let swept = sdir.write(
        "swept.toml",
        &with_link("").replace("\"100mbit\"", "[\"1mbit\", \"2mbit\"]"),
    );
    let mut f = ScenarioFile::from_file(&swept).unwrap();
    f.apply_override(&format!("link.trace=\"{rel}\"")).unwrap();
    assert!(f.sweep_keys().is_empty(), "{:?}", f.sweep_keys());
    assert_eq!(one_of(&f).link.path.rate_bps, TRACE_BPS as f64);
    let sched = sdir.write(
        "sched.toml",
        &with_link("").replace("rate = \"100mbit\"", SCHEDULE),
    );
    let mut f = ScenarioFile::from_file(&sched).unwrap();
    f.apply_override(&format!("link.trace={rel}")).unwrap();
    assert!(matches!(
        one_of(&f).link.path.rate_varies,
        Some(RateDesc::Trace(_))
    ));
}

#[test]
fn set_rate_replaces_the_file_s_trace() {
    let dir = TempDir::new("set-rate");
    dir.write("x.trace", TRACE);
    let path = dir.write("s.toml", &without_rate("trace = \"x.trace\""));
    let mut f = ScenarioFile::from_file(&path).unwrap();
    f.apply_override("link.rate=50mbit").unwrap();
    let s = one_of(&f);
    assert_eq!(
        s.link.path.rate_bps, 50_000_000.0,
        "a --set rate was ignored"
    );
    assert_eq!(s.link.path.rate_varies, None);
    let mut f = ScenarioFile::from_file(&path).unwrap();
    f.apply_override("link.rate=[{at=\"0s\",rate=\"100mbit\"},{at=\"5s\",rate=\"20mbit\"}]")
        .unwrap();
    assert_eq!(
        one_of(&f).link.path.rate_varies,
        Some(RateDesc::Schedule(vec![(0, 100e6), (5_000_000_000, 20e6)]))
    );
}

#[test]
fn trace_sweep() {
    let dir = TempDir::new("sweep");
    dir.write("a.trace", TRACE);
    dir.write("b.trace", "2\n4\n");
    let path = dir.write(
        "s.toml",
        &without_rate("trace = [\"a.trace\", \"b.trace\"]\naqm = [\"codel\", \"pie\"]"),
    );
    let f = ScenarioFile::from_file(&path).unwrap();
    assert_eq!(f.sweep_keys(), ["link.trace", "link.aqm"]);
    let pts = points(&f);
    assert_eq!(
        labels(&pts),
        [
            "link.trace=a.trace,link.aqm=codel",
            "link.trace=a.trace,link.aqm=pie",
            "link.trace=b.trace,link.aqm=codel",
            "link.trace=b.trace,link.aqm=pie"
        ]
    );
    assert_eq!(pts[0].scenario.link.path.rate_bps, TRACE_BPS as f64);
    assert_eq!(pts[3].scenario.link.path.rate_bps, 6_000_000.0);
    for p in &pts {
        assert_round_trip(&p.scenario);
    }
}

#[test]
fn trace_is_read_once_per_expand() {
    // Traces run to tens of thousands of lines: every point of a sweep shares one copy.
    let dir = TempDir::new("once");
    let body: String = (1..=20_000).map(|i| format!("{}\n", i / 2)).collect();
    dir.write("long.trace", &body);
    let path = dir.write("s.toml", &without_rate("trace = \"long.trace\""));
    let mut f = ScenarioFile::from_file(&path).unwrap();
    f.apply_override("seed=[1, 2, 3, 4, 5, 6, 7, 8]").unwrap();
    f.apply_override("link.aqm=[codel, pie]").unwrap();
    let pts = points(&f);
    assert_eq!(pts.len(), 16);
    let first = match &pts[0].scenario.link.path.rate_varies {
        Some(RateDesc::Trace(t)) => t.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(first.opportunities.len(), 20_000);
    for p in &pts {
        match &p.scenario.link.path.rate_varies {
            Some(RateDesc::Trace(t)) => assert!(std::sync::Arc::ptr_eq(t, &first)),
            other => panic!("{other:?}"),
        }
    }
}
