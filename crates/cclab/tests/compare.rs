//! `cclab compare A B`: two sim runs of one scenario with different seeds.

mod common;
use common::{cclab, scenario_file};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

const SIZED: &str = r#"
name = "cmp"
[link]
rate = "20mbit"
rtt = "30ms"
loss = [0, "1%"]
[[flows]]
cc = ["cubic", "bbr"]
size = "2mb"
count = 2
"#;

fn ok(o: Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// Runs SIZED with seeds 1 and 2; returns (the scratch directory, dir A, dir B).
fn two_seeds(tag: &str) -> (common::Scratch, PathBuf, PathBuf) {
    let (d, f) = scenario_file(tag, "cmp.toml", SIZED);
    for (s, sub) in [("1", "a"), ("2", "b")] {
        ok(cclab()
            .args(["run", "-q", "--seed", s, "--out"])
            .arg(d.join(sub))
            .arg(&f)
            .output()
            .unwrap());
    }
    let (a, b) = (d.join("a"), d.join("b"));
    (d, a, b)
}

fn doc(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

const FLOW_METRICS: &[&str] = &[
    "goodput",
    "throughput",
    "bytes delivered",
    "retransmits",
    "retrans ratio",
    "segments sent",
    "rto count",
    "rtt min",
    "rtt p50",
    "rtt p95",
    "rtt p99",
    "fct",
];
const RUN_METRICS: &[&str] = &[
    "total goodput",
    "link utilization",
    "queue delay p50",
    "queue delay p95",
    "queue delay p99",
    "drops buffer",
    "drops random",
    "drops ack",
    "drops aqm",
    "drops policer",
    "forwarded packets",
    "jain",
    "duration",
];

#[test]
fn compare_prints_every_shared_metric_with_its_difference() {
    let (_d, a, b) = two_seeds("text");
    let text = ok(cclab()
        .args(["compare", "--all"])
        .arg(&a)
        .arg(b.join("results.json"))
        .output()
        .unwrap());
    assert!(text.contains("4 shared runs"), "{text}");
    assert_eq!(text.matches("(seeds differ)").count(), 4, "{text}");
    // Every flow (4 runs x 2 flows) has every flow metric; every run has every run metric;
    // each line ends with a difference.
    for run in 0..4 {
        let block = text
            .split("\ncmp  ")
            .nth(run + 1)
            .unwrap_or_else(|| panic!("run block {run}: {text}"));
        for flow in 0..2 {
            for m in FLOW_METRICS {
                let cc = if run % 2 == 0 { "cubic" } else { "bbr" };
                let line = block
                    .lines()
                    .find(|l| {
                        l.trim_start()
                            .starts_with(&format!("flow {flow} {cc} {m} "))
                    })
                    .unwrap_or_else(|| panic!("no line for flow {flow} {m} in {block}"));
                let diff = line.split_whitespace().last().unwrap();
                // Ratios differ in percentage points, everything else relatively.
                if *m == "retrans ratio" {
                    assert!(line.trim_end().ends_with(" pp"), "{line:?}");
                } else {
                    assert!(
                        diff.ends_with('%') || diff == "(A=0)",
                        "difference on {line:?}"
                    );
                }
            }
        }
        for m in RUN_METRICS {
            assert!(
                block
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("run {m} "))
                        && (l.trim_end().ends_with(['%', ')'])
                            || l.trim_end().ends_with(" pp")
                            || (*m == "jain"
                                && l.split_whitespace().last().is_some_and(|d| {
                                    d.starts_with(['+', '-']) && d.parse::<f64>().is_ok()
                                })))),
                "run {m} in {block}"
            );
        }
    }
}

#[test]
fn compare_json_differences_match_the_documents() {
    let (_d, a, b) = two_seeds("json");
    let v: Value = serde_json::from_str(&ok(cclab()
        .args(["compare", "--json"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap()))
    .unwrap();
    let (da, db) = (doc(&a), doc(&b));
    let shared = v["shared"].as_array().unwrap();
    assert_eq!(shared.len(), 4);
    assert_eq!(v["only_a"], serde_json::json!([]));
    for p in shared {
        assert_eq!(
            (p["seed_a"].as_u64(), p["seed_b"].as_u64()),
            (Some(1), Some(2))
        );
        let (ra, rb) = (
            &da["runs"][p["run_a"].as_u64().unwrap() as usize - 1],
            &db["runs"][p["run_b"].as_u64().unwrap() as usize - 1],
        );
        assert_eq!(ra["params"], p["params"]);
        assert_eq!(rb["params"], p["params"]);
        let flows = p["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 2);
        for f in flows {
            let id = f["id"].as_u64().unwrap() as usize;
            for (m, field) in [
                ("goodput", "goodput_bps"),
                ("retrans_ratio", "retrans_ratio"),
                ("fct", "fct_s"),
            ] {
                let x = ra["flows"][id][field].as_f64().unwrap();
                let y = rb["flows"][id][field].as_f64().unwrap();
                let got = &f["metrics"][m];
                assert_eq!(got["a"].as_f64(), Some(x), "{m}");
                assert_eq!(got["b"].as_f64(), Some(y), "{m}");
                if x != 0.0 {
                    let want = (y - x) / x * 100.0;
                    assert!(
                        (got["diff_pct"].as_f64().unwrap() - want).abs() < 1e-9,
                        "{m}: {got} vs {want}"
                    );
                }
            }
            let p99a = ra["flows"][id]["rtt_ms"]["p99"].as_f64().unwrap();
            assert_eq!(f["metrics"]["rtt_p99"]["a"].as_f64(), Some(p99a));
            assert_eq!(f["metrics"].as_object().unwrap().len(), FLOW_METRICS.len());
        }
        assert_eq!(p["run"].as_object().unwrap().len(), RUN_METRICS.len());
        let q = ra["link"]["queue_delay_ms"]["p95"].as_f64().unwrap();
        assert_eq!(p["run"]["queue_delay_p95"]["a"].as_f64(), Some(q));
    }
    // Seeds differ, so the random losses differ: some metric must move.
    assert!(shared
        .iter()
        .any(|p| p["flows"][0]["metrics"]["goodput"]["diff_pct"].as_f64() != Some(0.0)));
}

#[test]
fn compare_with_itself_is_zero_everywhere_and_unrelated_results_share_nothing() {
    let (_d, a, _) = two_seeds("self");
    let v: Value = serde_json::from_str(&ok(cclab()
        .args(["compare", "--json"])
        .arg(&a)
        .arg(&a)
        .output()
        .unwrap()))
    .unwrap();
    // The verdict: no difference, none significant.
    for p in v["verdict"]["points"].as_array().unwrap() {
        for r in p["rows"].as_array().unwrap() {
            assert_eq!(r["diff"]["estimate"].as_f64(), Some(0.0), "{r}");
            assert_eq!(r["diff"]["significant"], false, "{r}");
        }
    }
    for p in v["shared"].as_array().unwrap() {
        assert_eq!(p["seed_a"], p["seed_b"], "exact seed match first");
        for f in p["flows"].as_array().unwrap() {
            for (m, x) in f["metrics"].as_object().unwrap() {
                assert_eq!(x["diff_pct"].as_f64(), Some(0.0), "{m}");
            }
        }
    }
    // Another scenario: nothing shared, a one-line error and both sides listed.
    let (d, f) = scenario_file(
        "other",
        "o.toml",
        &SIZED.replace("name = \"cmp\"", "name = \"other\""),
    );
    ok(cclab()
        .args(["run", "-q", "--out"])
        .arg(d.join("o"))
        .arg(&f)
        .output()
        .unwrap());
    let o = cclab()
        .arg("compare")
        .arg(&a)
        .arg(d.join("o"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("only in A (4)") && out.contains("only in B (4)"),
        "{out}"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("share no runs"));
}

/// A one-flow CUBIC scenario on a lossy path, for setup differences.
const PLAIN: &str = r#"
name = "setup"
duration = "3s"
[link]
rate = "20mbit"
rtt = "30ms"
loss = "0.5%"
buffer = "1bdp"
[[flows]]
cc = "cubic"
"#;

#[test]
fn compare_names_setup_differences_first_and_summarises_before_details() {
    let (d, f) = scenario_file("setup", "s.toml", PLAIN);
    ok(cclab()
        .args(["run", "-q", "--out"])
        .arg(d.join("a"))
        .arg(&f)
        .output()
        .unwrap());
    // Same scenario, same (empty) swept keys: a --set makes it another setup.
    ok(cclab()
        .args(["run", "-q", "--set", "link.buffer=200pkt", "--out"])
        .arg(d.join("b"))
        .arg(&f)
        .output()
        .unwrap());
    let text = ok(cclab()
        .arg("compare")
        .arg(d.join("a"))
        .arg(d.join("b"))
        .output()
        .unwrap());
    let setup = text.find("setup differences").expect(&text);
    let summary = text.find("summary").expect(&text);
    assert!(setup < summary, "{text}");
    assert!(
        text.contains("matched by swept params only: their setups differ"),
        "{text}"
    );
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("link.buffer "))
        .unwrap_or_else(|| panic!("no link.buffer line: {text}"));
    assert!(line.contains("1bdp → 200pkt"), "{line}");
    assert!(text.contains("--set overrides"), "{text}");
    // The summary per point: goodput with its relative change, utilisation in percentage
    // points, queue delay; one seed per side gives no interval, and says so.
    let row = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row: {text}"))
            .to_string()
    };
    let g = row("cubic goodput ");
    assert!(
        g.contains("Mbit/s") && g.contains('%') && g.contains("none: one seed per side"),
        "{g}"
    );
    assert!(row("link utilization ").contains(" pp"), "{text}");
    assert!(row("queue delay p99 ").contains(" ms"), "{text}");
    // Per-seed rows and details only with --all.
    assert!(!text.contains("flow 0 cubic"), "{text}");
    assert!(!text.contains("run queue delay p95"), "{text}");
    let all = ok(cclab()
        .args(["compare", "--all"])
        .arg(d.join("a"))
        .arg(d.join("b"))
        .output()
        .unwrap());
    assert!(
        all.contains("run queue delay p95")
            && all.contains("setup: link.buffer")
            && all.contains("flow 0 cubic"),
        "{all}"
    );
    let v: Value = serde_json::from_str(&ok(cclab()
        .args(["compare", "--json"])
        .arg(d.join("a"))
        .arg(d.join("b"))
        .output()
        .unwrap()))
    .unwrap();
    let p = &v["shared"][0];
    assert_eq!(p["matched"], "other_setup");
    assert!(p["setup"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["key"] == "link.buffer" && d["a"] == "1bdp"));
    let u = &p["run"]["link_utilization"];
    let want = (u["b"].as_f64().unwrap() - u["a"].as_f64().unwrap()) * 100.0;
    assert!((u["diff_pp"].as_f64().unwrap() - want).abs() < 1e-9, "{u}");
    assert!(v["from_s"].is_null());
    // --from: steady-state rows from the series (the 3 s runs' bins from 1 s on), named in
    // a legend line, and in the JSON; a bad time is one line.
    let text = ok(cclab()
        .args(["compare", "--from", "1s"])
        .arg(d.join("a"))
        .arg(d.join("b"))
        .output()
        .unwrap());
    for name in [
        "cubic goodput from T ",
        "cubic srtt p99 from T ",
        "queue delay p99 from T ",
    ] {
        let r = text
            .lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no {name} row: {text}"));
        assert!(r.contains(" ms") || r.contains("bit/s"), "{r}");
    }
    assert!(text.contains("from T = 1.00 s on"), "{text}");
    let v: Value = serde_json::from_str(&ok(cclab()
        .args(["compare", "--json", "--from", "1s"])
        .arg(d.join("a"))
        .arg(d.join("b"))
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(v["from_s"], 1.0);
    assert!(
        v["verdict"].to_string().contains("goodput_from_T"),
        "{}",
        v["verdict"]
    );
    let o = cclab()
        .args(["compare", "--from", "soon"])
        .arg(d.join("a"))
        .arg(d.join("b"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("--from soon") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn a_set_shows_in_meta_json_results_and_the_report() {
    let (d, f) = scenario_file("meta", "s.toml", PLAIN);
    let out = d.join("o");
    let text = ok(cclab()
        .args(["run", "--set", "link.loss=2%", "--out"])
        .arg(&out)
        .arg(&f)
        .output()
        .unwrap());
    // The terminal header states the path as run, the override marked.
    let path = text
        .lines()
        .find(|l| l.trim_start().starts_with("path: "))
        .unwrap_or_else(|| panic!("no path line: {text}"));
    assert!(
        path.contains("20.0 Mbit/s") && path.contains("RTT 30.0 ms"),
        "{path}"
    );
    assert!(path.contains("loss 2% random*"), "{path}");
    assert!(
        text.contains("* set on the command line: --set link.loss=2%"),
        "{text}"
    );
    let meta: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["overrides"], serde_json::json!(["link.loss=2%"]));
    let sha = meta["sha256"].as_str().unwrap();
    assert_eq!(sha.len(), 64);
    let resolved = &meta["points"][0]["resolved"];
    assert_eq!(resolved["link.loss"].as_f64(), Some(0.02));
    assert_eq!(resolved["link.rtt"].as_f64(), Some(0.03));
    assert!(resolved["hosts.tcp_rmem"].is_string(), "{resolved}");
    let results = doc(&out);
    assert_eq!(results["source"]["sha256"].as_str(), Some(sha));
    assert_eq!(results["source"]["overrides"][0], "link.loss=2%");
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(page.contains("loss 2% random*"), "report path line");
    assert!(page.contains("--set link.loss=2%"), "report overrides line");
}

#[test]
fn a_long_overrides_row_does_not_push_the_pairs_column_off_the_screen() {
    let (d, f) = scenario_file("setup-width", "s.toml", PLAIN);
    let run = |out: &str, sets: &[&str]| {
        let mut cmd = cclab();
        cmd.args(["run", "-q", "--set", "link.loss=[0.5%,1%]"]);
        for s in sets {
            cmd.args(["--set", s]);
        }
        ok(cmd.arg("--out").arg(d.join(out)).arg(&f).output().unwrap());
    };
    run("a", &[]);
    // Several overrides on B's side only: the overrides row is the longest of the setup's.
    run(
        "b",
        &[
            "link.buffer=200pkt",
            "link.rtt=30ms",
            "duration=3s",
            "link.rate=20mbit",
        ],
    );
    let text = ok(cclab()
        .arg("compare")
        .arg(d.join("a"))
        .arg(d.join("b"))
        .output()
        .unwrap());
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no {start} line: {text}"))
            .to_string()
    };
    let overrides = line("--set overrides");
    let buffer = line("link.buffer ");
    assert!(buffer.ends_with("every pair"), "{text}");
    assert!(
        buffer.chars().count() < overrides.chars().count(),
        "the pairs column is aligned past the overrides row:\n{text}"
    );
}

/// `cclab compare DIR --by KEY`: within one results set, the runs where a swept parameter has
/// one value against those where it has another, paired by the other parameters; the
/// parameter's values are the setup difference. Errors name the values to choose from.
#[test]
fn compare_by_splits_one_results_set_on_a_swept_parameter() {
    let (d, f) = scenario_file("cmp-by", "cmp.toml", SIZED);
    ok(cclab()
        .args(["run", "-q", "--out"])
        .arg(d.join("r"))
        .arg(&f)
        .output()
        .unwrap());
    let r = d.join("r");
    let t = ok(cclab()
        .args(["compare", "--by", "link.loss"])
        .arg(&r)
        .output()
        .unwrap());
    assert!(
        t.contains("A: link.loss=0.0 ") && t.contains("B: link.loss=0.01 "),
        "{t}"
    );
    // Two controllers: two points, each pairing loss 0 with loss 1% for one controller.
    assert!(t.contains("2 shared runs"), "{t}");
    assert!(
        t.contains("flows.cc=cubic") && t.contains("flows.cc=bbr"),
        "{t}"
    );
    let v: Value = serde_json::from_str(&ok(cclab()
        .args(["compare", "--json", "--by", "link.loss=0.01,0"])
        .arg(&r)
        .output()
        .unwrap()))
    .unwrap();
    assert!(v.to_string().contains("link.loss=0.01"), "{v}");
    for (by, want) in [
        (
            "link.rate",
            "no run has swept parameter link.rate (swept here: flows.cc, link.loss)",
        ),
        (
            "link.loss=0,0.05",
            "link.loss is never 0.05 (its values: 0.0, 0.01)",
        ),
        (
            "link.loss=0",
            "name two values, e.g. --by link.loss=0.0,0.01",
        ),
    ] {
        let o = cclab()
            .args(["compare", "--by", by])
            .arg(&r)
            .output()
            .unwrap();
        assert!(!o.status.success());
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(e.contains(want), "{by}: {e}");
    }
    let o = cclab().args(["compare"]).arg(&r).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("--by KEY"));
}
