//! Tests of the HTML report.

use super::lookup::key_name;
use super::palette::{Palette, EXTRA};
use super::sweep::{headline, matrix_charts, numeric_x, parse_bytes};
use super::tables::{seeds_table, summary_table, unfinished_warning};
use super::{render, Options};
use crate::load::Source;
use crate::plot::{self, Unit};
use cclab_results::testing::{DocBuilder, RunBuilder};
use cclab_results::{ResultsDoc, RunResult};

#[test]
fn shades_differ_and_stay_valid() {
    let p = Palette::new(["cubic", "bbr", "vegas"]);
    assert_eq!(p.color("cubic"), "#1c64d8");
    assert_eq!(p.color("vegas"), EXTRA[0]);
    let s: Vec<String> = (0..4).map(|k| p.shade("bbr", k)).collect();
    assert_eq!(s[0], p.color("bbr"));
    assert!(s.iter().all(|c| c.len() == 7 && c.starts_with('#')));
    assert_ne!(s[1], s[2]);
}

#[test]
fn key_names_read_naturally() {
    assert_eq!(key_name("link.loss"), "loss");
    assert_eq!(key_name("flows.cc"), "cc");
    assert_eq!(key_name("flows.1.cc"), "flows.1.cc");
}

/// A run of a buffer sweep: `buffer` as given, the resolved bytes, and one flow per
/// (cc, goodput).
fn buf_run(buffer: &str, bytes: f64, seed: u64, flows: &[(&str, f64)]) -> RunResult {
    RunBuilder::new()
        .seed(seed)
        .duration(10.0)
        .param("link.buffer", buffer)
        .resolved("link.buffer", buffer)
        .resolved("link.buffer_bytes", bytes)
        .resolved("link.bdp_bytes", 250_000)
        .resolved("link.packet_bytes", 1500)
        .link_rate(50e6)
        .flows(flows)
        .build()
}

fn doc(runs: Vec<RunResult>) -> ResultsDoc {
    DocBuilder::new()
        .cclab("0")
        .scenario("buf")
        .runs(runs)
        .build()
}

use serde_json::json;

#[test]
fn swept_sizes_get_a_numeric_axis() {
    let pair = [("cubic", 10e6), ("bbr", 30e6)];
    // All in BDPs: the multiple of the BDP, from the resolved bytes.
    let runs = [
        buf_run("0.5bdp", 125_000.0, 1, &pair),
        buf_run("1bdp", 250_000.0, 1, &pair),
        buf_run("4bdp", 1_000_000.0, 1, &pair),
    ];
    let refs: Vec<&RunResult> = runs.iter().collect();
    let (v, a) = numeric_x("link.buffer", &refs).unwrap();
    assert_eq!(v, vec![0.5, 1.0, 4.0]);
    assert_eq!(a.label, "buffer (× BDP)");
    assert!(!a.from_zero);
    // All in packets: packets.
    let runs = [
        buf_run("100pkt", 150_000.0, 1, &pair),
        buf_run("400pkt", 600_000.0, 1, &pair),
    ];
    let refs: Vec<&RunResult> = runs.iter().collect();
    let (v, a) = numeric_x("link.buffer", &refs).unwrap();
    assert_eq!((v, a.unit), (vec![100.0, 400.0], Unit::Pkts));
    // Mixed units line up in bytes.
    let runs = [
        buf_run("100pkt", 150_000.0, 1, &pair),
        buf_run("1bdp", 250_000.0, 1, &pair),
        buf_run("64kb", 64_000.0, 1, &pair),
    ];
    let refs: Vec<&RunResult> = runs.iter().collect();
    let (v, a) = numeric_x("link.buffer", &refs).unwrap();
    assert_eq!(
        (v, a.unit),
        (vec![150_000.0, 250_000.0, 64_000.0], Unit::Bytes)
    );
    // Without resolved values, mixed units cannot line up; one unit still can.
    let mut bare = runs.clone();
    for r in &mut bare {
        r.resolved.clear();
    }
    let refs: Vec<&RunResult> = bare.iter().collect();
    assert!(numeric_x("link.buffer", &refs).is_none());
    let refs: Vec<&RunResult> = bare[..1].iter().chain(&bare[..0]).collect();
    assert_eq!(numeric_x("link.buffer", &refs).unwrap().0, vec![100.0]);
    assert_eq!(parse_bytes("64kib"), Some(65536.0));
    // Text that is not a size is not numeric.
    let mut r = buf_run("1bdp", 1.0, 1, &pair);
    r.params.insert("link.aqm".into(), json!("codel"));
    assert!(numeric_x("link.aqm", &[&r]).is_none());
}

#[test]
fn buffer_sweep_charts_goodput_and_share_per_controller() {
    let runs = vec![
        buf_run("0.5bdp", 125_000.0, 1, &[("cubic", 10e6), ("bbr", 30e6)]),
        buf_run("0.5bdp", 125_000.0, 2, &[("cubic", 14e6), ("bbr", 26e6)]),
        buf_run("0.5bdp", 125_000.0, 3, &[("cubic", 12e6), ("bbr", 28e6)]),
        buf_run("4bdp", 1_000_000.0, 1, &[("cubic", 36e6), ("bbr", 12e6)]),
    ];
    let d = doc(runs);
    let pal = Palette::new(["cubic", "bbr"]);
    let charts = matrix_charts(&[(&d, None, "")], &pal);
    let names: Vec<&str> = charts.iter().map(|c| c.0.as_str()).collect();
    assert_eq!(names, ["goodput-vs-buffer", "share-vs-buffer"]);
    let share = &charts[1].1;
    let line = |n: &str| share.lines.iter().find(|l| l.name == n).unwrap();
    // Medians over the three seeds at 0.5 BDP: cubic 12/40, bbr 28/40.
    assert_eq!(line("cubic").points[0], (0.5, 0.3));
    assert!((line("bbr").points[0].1 - 0.7).abs() < 1e-12);
    assert_eq!(line("cubic").points[1], (4.0, 0.75));
    assert_eq!(line("cubic").band[0], (0.5, 0.25, 0.35));
    assert_eq!(share.y.range, Some((0.0, 1.0)));
    assert!(
        line("cubic").tips[0].contains("median of 3 seeds 30.0%"),
        "{:?}",
        line("cubic").tips
    );
    assert!(share
        .notes
        .iter()
        .any(|n| n.0.contains("line: median of 3 seeds")));
    // Goodput: the median, not the mean (12 Mbit/s; the mean would be the same here,
    // so check the skewed point of bbr: 28).
    let gp = &charts[0].1;
    let bbr = gp.lines.iter().find(|l| l.name == "bbr").unwrap();
    assert_eq!(bbr.points[0], (0.5, 28e6));
    let svg = plot::line_chart(&charts[1].1, "t");
    assert!(svg.contains("buffer (× BDP)") && svg.contains("share of the goodput (%)"));
}

#[test]
fn one_controller_many_flows_charts_jain() {
    let runs = vec![
        buf_run("1bdp", 250_000.0, 1, &[("cubic", 10e6), ("cubic", 30e6)]),
        buf_run("2bdp", 500_000.0, 1, &[("cubic", 20e6), ("cubic", 20e6)]),
    ];
    let d = doc(runs);
    let charts = matrix_charts(&[(&d, None, "")], &Palette::new(["cubic"]));
    let j = charts
        .iter()
        .find(|c| c.0 == "jain-vs-buffer")
        .expect("jain chart");
    assert_eq!(j.1.lines[0].points, vec![(1.0, 0.8), (2.0, 1.0)]);
}

#[test]
fn summary_shows_jain_shares_and_unfinished_flows() {
    let mut r = buf_run("1bdp", 250_000.0, 1, &[("cubic", 10e6), ("bbr", 30e6)]);
    r.flows[0].size_bytes = Some(50_000_000);
    r.flows[0].bytes_delivered = 12_500_000;
    r.flows[1].size_bytes = Some(100_000);
    r.flows[1].fct_s = Some(0.5);
    let d = doc(vec![r]);
    let mut out = String::new();
    summary_table(&mut out, &d, &Palette::new(["cubic", "bbr"]));
    assert!(
        out.contains(">Jain</th>") && out.contains(">0.800</td>"),
        "{out}"
    );
    assert!(out.contains(">cubic share</th>") && out.contains(">bbr share</th>"));
    assert!(
        out.contains(">25.0%</td>") && out.contains(">75.0%</td>"),
        "{out}"
    );
    assert!(out.contains(">unfinished</td>"), "{out}");
    assert!(out.contains("12.5 MB of 50.0 MB delivered (25.0%) in the 10.00 s run"));
    let mut w = String::new();
    unfinished_warning(&mut w, &d);
    assert!(
        w.contains("1 sized flow unfinished") && w.contains("#1 flow 0 (cubic)"),
        "{w}"
    );
    // Nothing unfinished, no warning.
    let mut ok = d.clone();
    ok.runs[0].flows[0].fct_s = Some(3.0);
    let mut w = String::new();
    unfinished_warning(&mut w, &ok);
    assert!(w.is_empty());
}

/// A measurement of a real host: two runs with time series, the link fields all zero.
fn host_doc() -> ResultsDoc {
    let runs = (1..=2).map(|seed| {
        RunBuilder::new()
            .seed(seed)
            .duration(10.0)
            .param("flows.cc", "cubic")
            .flow("cubic", 40e6)
            .series(cclab_results::TimeSeries {
                interval_s: 0.1,
                t_s: vec![0.1, 0.2],
                link_queue_bytes: vec![0.0, 0.0],
                flows: vec![cclab_results::FlowSeries {
                    cc: "cubic".into(),
                    goodput_bps: vec![40e6, 40e6],
                    cwnd_pkts: vec![10.0, 20.0],
                    inflight_pkts: vec![10.0, 20.0],
                    srtt_ms: vec![20.0, 21.0],
                    ..Default::default()
                }],
                ..Default::default()
            })
    });
    DocBuilder::new()
        .backend("host")
        .scenario("perf")
        .cclab("0")
        .runs(runs)
        .build()
}

#[test]
fn real_paths_show_no_link_figures() {
    let d = host_doc();
    let page = render(&[Source::new(d.clone())], &Options::default());
    assert!(page.contains("host backend") && page.contains("goodput per flow"));
    for link in [
        "link used",
        "queue p99",
        "drops buf",
        "bottleneck queue",
        "of the link rate",
    ] {
        assert!(!page.contains(link), "{link} in a real path's report");
    }
    assert!(page.contains("path: real path to"), "no path line");
    // The same runs on the simulator show their link.
    let sim = ResultsDoc {
        backend: "sim".into(),
        ..d
    };
    let page = render(&[Source::new(sim)], &Options::default());
    for link in ["link used", "queue p99", "bottleneck queue"] {
        assert!(
            page.contains(link),
            "{link} missing from a simulated report"
        );
    }
}

#[test]
fn repeated_runs_name_the_median_and_the_published_ratio() {
    let mut runs = vec![
        buf_run("1bdp", 250_000.0, 1, &[("cubic", 10e6)]),
        buf_run("1bdp", 250_000.0, 2, &[("cubic", 20e6)]),
        buf_run("1bdp", 250_000.0, 3, &[("cubic", 90e6)]),
    ];
    for r in &mut runs {
        r.reference = Some(json!({"goodput_bps": 16e6, "flows.cc": "cubic", "unit": "Mbit/s"}));
    }
    let d = doc(runs);
    let (svg, _) = headline(&d, &Palette::new(["cubic"]), "h");
    assert!(
        svg.contains("goodput per run vs published, median of 3 seeds"),
        "{svg}"
    );
    assert!(
        svg.contains("median of 3 seeds 20.0 Mbit/s [10.0 Mbit/s – 90.0 Mbit/s]"),
        "{svg}"
    );
    assert!(svg.contains("cclab / published ×1.25"), "{svg}");
    let mut out = String::new();
    seeds_table(&mut out, &d);
    assert!(
        out.contains(">cclab / published</th>") && out.contains("×1.25</td>"),
        "{out}"
    );
}
