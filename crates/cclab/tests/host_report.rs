//! Reports of measurements of real hosts (`backend: "host"`), built by hand from TCP_INFO
//! samples through the host backend's own result builder (no root, no network): no link
//! figures (a real path's link is unknown, not zero), the path line naming the peer and the
//! fitted path, the "Fitted path and prediction" section, and a malformed `fit` skipped.

mod common;
use cclab_remote::protocol::Sample;
use cclab_remote::results::{run_result, FlowMeasure};
use cclab_results::testing::DocBuilder;
use cclab_results::ResultsDoc;
use common::{cclab, tmpdir};
use serde_json::{json, Value};
use std::path::Path;

/// A 2 s run of `cc` at `mbit` Mbit/s acked, RTT 150 ms, settings as `cclab perf` records.
fn run(cc: &str, mbit: f64, rep: u64) -> cclab_results::RunResult {
    let per_10ms = (mbit * 1e6 / 8.0 / 100.0) as u64;
    let samples: Vec<Sample> = (1..=200u32)
        .map(|k| Sample {
            t_us: k * 10_000,
            cwnd: 600,
            inflight: 580,
            srtt_us: 150_000,
            min_rtt_us: 149_750,
            retrans: k / 20,
            segs_out: k * 40,
            bytes_acked: k as u64 * per_10ms,
            bytes_sent: k as u64 * per_10ms,
            ..Default::default()
        })
        .collect();
    let f = FlowMeasure {
        cc: cc.into(),
        delivered: 200 * per_10ms,
        active_ns: 2_000_000_000,
        size: None,
        samples,
    };
    let mut r = run_result(&[f], rep);
    r.params.insert("flows.cc".into(), json!(cc));
    r.resolved.insert("flows.cc".into(), json!(cc));
    r.resolved.insert("duration".into(), json!(2.0));
    for (k, v) in [
        ("host.peer", json!("192.0.2.7:5301")),
        ("host.direction", json!("download")),
        ("host.sender", json!("peer")),
    ] {
        r.settings.insert(k.into(), v);
    }
    r
}

/// A fit as `cclab perf --predict` stores it: cubic measured over 2 runs and predicted 25%
/// above, bbr3 predicted only, bbr measured only.
fn fit() -> Value {
    json!({
        "version": 1, "peer": "192.0.2.7:5301", "direction": "download",
        "rate_bps": {"value": 48.3e6, "low": 47.6e6, "high": 49.0e6, "how": "delivery rate of the rate probe"},
        "rtt_s": {"value": 0.14975, "low": 0.14970, "high": 0.14990, "how": "lowest RTT sample"},
        "loss": {"value": 0.00089, "low": 0.0007, "high": 0.0011, "how": "retransmits of the paced loss probe"},
        "buffer_bytes": {"value": 15000.0, "low": 15000.0, "high": null, "how": "queueing delay of the CUBIC probe"},
        "lost": 89, "sent": 100000, "phases": [], "duration_s": 2.0, "streams": 1,
        "measured": [
            {"cc": "cubic", "goodput_bps": 20e6, "runs": 2},
            {"cc": "bbr", "goodput_bps": 40e6, "runs": 1}
        ],
        "notes": ["the buffer probe never overflowed the buffer"],
        "predictions": [
            {"cc": "cubic", "goodput_bps": 25e6, "min_bps": 24e6, "max_bps": 26e6, "seeds": 5,
             "measured_bps": 20e6, "ratio": 1.25},
            {"cc": "bbr3", "goodput_bps": 44e6, "min_bps": 43e6, "max_bps": 45e6, "seeds": 5,
             "measured_bps": null, "ratio": null}
        ]
    })
}

fn host_doc(fit: Option<Value>) -> ResultsDoc {
    DocBuilder::new()
        .cclab(cclab_results::VERSION)
        .scenario("perf")
        .backend("host")
        .runs([
            run("cubic", 20.0, 1),
            run("cubic", 20.0, 2),
            run("bbr", 40.0, 1),
        ])
        .fit(fit)
        .build()
}

/// `doc` written as `cclab perf --out` writes it (results.json, series/run-N.csv) into a
/// fresh directory.
fn write(doc: &ResultsDoc, tag: &str) -> common::Scratch {
    let d = tmpdir(tag);
    std::fs::write(d.join("results.json"), cclab_report::export::json(doc)).unwrap();
    std::fs::create_dir_all(d.join("series")).unwrap();
    for (i, r) in doc.runs.iter().enumerate() {
        let csv = r.series.as_ref().unwrap().to_csv();
        std::fs::write(d.join(format!("series/run-{}.csv", i + 1)), csv).unwrap();
    }
    d
}

/// `cclab report DIR`, the page it wrote.
fn report(dir: &Path) -> String {
    let out = cclab().arg("report").arg(dir).output().unwrap();
    assert!(
        out.status.success(),
        "cclab report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(dir.join("report.html")).unwrap()
}

/// The link figures a simulated report shows and a real path's must not (as zeros).
const LINK: &[&str] = &[
    "link used",
    "link 0% used",
    "queue p99",
    "drops buf",
    "bottleneck queue",
    "of the link rate",
];

#[test]
fn fitted_host_report_shows_the_prediction_and_no_link_figures() {
    let doc = host_doc(Some(fit()));
    // The hand-written fit is the layout cclab perf writes (cclab fit reads it).
    cclab_remote::fit::PathFit::from_doc(&doc, "test")
        .expect("the test's fit follows cclab-remote's layout");
    let html = report(&write(&doc, "host-report-fit"));
    for l in LINK {
        assert!(!html.contains(l), "\"{l}\" in a real path's report");
    }
    assert!(
        html.contains(
            "path: real path to 192.0.2.7:5301 (download), measured by cclab perf; fitted: \
             48.3 Mbit/s, RTT 149.75 ms, loss 0.089%, buffer &gt;= 15.0 kB"
        ),
        "no path line"
    );
    let sec = html
        .split("<h3>Fitted path and prediction</h3>")
        .nth(1)
        .expect("no fitted path section");
    assert!(sec.contains("47.6 Mbit/s – 49.0 Mbit/s"), "rate interval");
    assert!(
        sec.contains("delivery rate of the rate probe"),
        "how rate was read"
    );
    assert!(sec.contains("≥ 15.0 kB (lower bound)"), "buffer bound");
    assert!(
        sec.contains("the buffer probe never overflowed the buffer"),
        "notes"
    );
    let row = |cc: &str| -> &str {
        let r = sec
            .split(&format!("<tr><td>{cc}</td>"))
            .nth(1)
            .unwrap_or_else(|| panic!("no {cc} row"));
        r.split("</tr>").next().unwrap()
    };
    let cubic = row("cubic");
    assert!(
        cubic.contains("20.0 Mbit/s") && cubic.contains("mean of 2 runs"),
        "{cubic}"
    );
    assert!(
        cubic.contains("25.0 Mbit/s") && cubic.contains("mean of 5 seeds"),
        "{cubic}"
    );
    assert!(cubic.contains("×1.25"), "{cubic}");
    assert!(row("bbr3").contains("not run"));
    assert!(row("bbr").contains("not predicted"));
    // The time series are drawn, the queue is not.
    assert!(html.contains("goodput per flow") && html.contains("smoothed RTT"));
    // The terminal table has no link lines either.
    let t = cclab_report::table::render(&doc, "perf");
    assert!(t.contains("cubic") && !t.contains(": link "), "{t}");
}

#[test]
fn host_report_without_fit_says_it_is_not_fitted() {
    let html = report(&write(&host_doc(None), "host-report-nofit"));
    assert!(
        html.contains(
            "path: real path to 192.0.2.7:5301 (download), measured by cclab perf \
             (not fitted: measured with --no-probe)"
        ),
        "no path line"
    );
    assert!(!html.contains("Fitted path and prediction"));
    for l in LINK {
        assert!(!html.contains(l), "\"{l}\" in a real path's report");
    }
}

#[test]
fn malformed_fit_is_skipped_without_failing() {
    for bad in [
        json!({"rate_bps": "fast", "predictions": 3}),
        json!([1, 2]),
        {
            let mut f = fit();
            f["rtt_s"]["low"] = json!(null);
            f
        },
    ] {
        let html = report(&write(&host_doc(Some(bad)), "host-report-bad"));
        assert!(!html.contains("Fitted path and prediction"));
        assert!(html.contains("measured by cclab perf (fit not readable by this cclab)"));
        assert!(
            html.contains("goodput per flow"),
            "the rest of the report is there"
        );
    }
    // A malformed prediction keeps the estimates, drops the table.
    let mut f = fit();
    f["predictions"][1]["goodput_bps"] = json!("44 Mbit/s");
    let html = report(&write(&host_doc(Some(f)), "host-report-badpred"));
    let sec = html.split("Fitted path and prediction").nth(1).unwrap();
    assert!(sec.contains("149.75 ms") && sec.contains("not readable") && !sec.contains("×1.25"));
}

#[test]
fn comparing_real_paths_lists_no_link_metrics() {
    let a = write(&host_doc(Some(fit())), "host-compare-a");
    let mut doc = host_doc(None);
    doc.runs[0].flows[0].goodput_bps *= 1.5;
    let b = write(&doc, "host-compare-b");
    let out = cclab()
        .args(["compare", "--all"])
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("goodput") && text.contains("+50.0%"),
        "{text}"
    );
    for l in ["utili", "queue delay", "drops", "forwarded"] {
        assert!(!text.contains(l), "\"{l}\" comparing real paths: {text}");
    }
}
