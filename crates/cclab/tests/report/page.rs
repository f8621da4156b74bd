//! The page itself: what the lossy-lan report shows, that it is self-contained with every
//! plot, that `cclab report` rebuilds and merges it, and its size.

use crate::common::{cclab, tmpdir};
use crate::{bars, count, figure, lines_of, lossy_lan, run_figure, run_out, small_repeat, tsdata};

#[test]
fn lossy_lan_report_shows_cubic_collapse_against_bbr() {
    let d = lossy_lan();
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    let head = figure(&html, "lossy-lan-goodput");
    let b = bars(head);
    assert_eq!(
        b.len(),
        6,
        "one bar per run (cubic, bbr, bbr3 x 2 losses): {b:?}"
    );
    let find = |loss: &str, cc: &str| {
        b.iter()
            .find(|(_, t)| t.starts_with(&format!("loss {loss} · {cc}:")))
            .unwrap_or_else(|| panic!("bar loss {loss} {cc} in {b:?}"))
            .0
    };
    let (cubic1, bbr1, cubic0) = (find("1%", "cubic"), find("1%", "bbr"), find("0", "cubic"));
    assert!(
        cubic1 < 0.1 * bbr1,
        "CUBIC at 1% loss must collapse against BBR: bar heights {cubic1} vs {bbr1}"
    );
    assert!(
        cubic0 > 0.9 * bbr1,
        "no collapse without loss: {cubic0} vs {bbr1}"
    );
    // The four published figures as markers, with their tooltips.
    assert_eq!(count(head, "published: "), 4, "published markers");
    assert!(
        head.contains("published 142 MB/s") || head.contains("(142 MB/s)"),
        "published figure of CUBIC at 1%"
    );
    // Summary table with the published column, and goodput vs loss on a log axis.
    assert!(html.contains("<table class=\"summary\">") && html.contains(">published</th>"));
    let gl = figure(&html, "lossy-lan-goodput-vs-loss");
    assert!(
        gl.contains("loss (%)")
            && gl.contains("text-anchor=\"middle\">0<")
            && gl.contains("text-anchor=\"middle\">1<")
            && !gl.contains("text-anchor=\"middle\">10<"),
        "log loss axis from 0 to the data's 1%: {gl}"
    );
    // Controllers keep one colour across the page.
    for (cc, col, run) in [("cubic", "#1c64d8", 1), ("bbr", "#e8590c", 2)] {
        assert!(
            head.contains(&format!("fill=\"{col}\"")),
            "{cc} colour in the headline"
        );
        assert!(
            gl.contains(&format!("stroke=\"{col}\"")),
            "{cc} colour in goodput vs loss"
        );
        assert!(
            run_figure(&html, "lossy-lan", run, "goodput").contains(&format!("stroke=\"{col}\"")),
            "{cc} colour over time"
        );
    }
}

#[test]
fn report_is_self_contained_with_every_plot() {
    let d = small_repeat();
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    // No network: no external scripts, styles, images or fonts.
    for bad in [
        "<script src",
        "<link",
        "@import",
        "url(http",
        "src=\"http",
        "href=\"http",
        "cdn",
    ] {
        assert!(!html.contains(bad), "report must not load {bad}");
    }
    // 1 headline + goodput vs loss + goodput vs delay + 3 points x cubic-vs-bbr (goodput,
    // cwnd, rtt) + 12 runs x (goodput, cwnd/inflight, rtt, queue).
    assert_eq!(
        count(&html, "<figure class=\"plot"),
        1 + 1 + 1 + 3 * 3 + 12 * 4
    );
    for what in ["goodput", "cwnd", "rtt", "queue"] {
        let side_by_side = if what == "queue" { 0 } else { 3 };
        assert_eq!(
            count(&html, &format!("-{what}\"><svg")),
            12 + side_by_side + (what == "goodput") as usize,
            "{what} plots"
        );
    }
    assert_eq!(count(&html, "-cubic-vs-bbr-goodput\"><svg"), 3);
    assert_eq!(count(&html, "data-name=\"small-goodput-vs-delay\""), 1);
    assert_eq!(
        count(&html, "<button type=\"button\" data-export=\"svg\""),
        60,
        "an SVG button per plot"
    );
    assert_eq!(
        count(&html, "<button type=\"button\" data-export=\"png\""),
        60,
        "a PNG button per plot"
    );
    // Spread over the 2 seeds: a min-max band per controller line, error bars on the bars.
    let gl = figure(&html, "small-goodput-vs-loss");
    assert_eq!(
        count(gl, "fill-opacity=\"0.16\""),
        2,
        "a band per controller"
    );
    // --repeat folds seeds into the median, and every chart that does says so.
    assert!(
        gl.contains("line: median of 2 seeds; band: min–max"),
        "{gl}"
    );
    let head = figure(&html, "small-goodput");
    assert!(
        head.contains("goodput per run, median of 2 seeds"),
        "chart title"
    );
    assert!(head.contains("min–max over seeds") && head.contains(": median of 2 seeds "));
    assert!(!html.contains("mean of 2"), "the statistic is the median");
    // Axis labels carry units; time series legends name flows.
    let r1 = run_figure(&html, "small", 1, "rtt");
    assert!(r1.contains("srtt (ms)") && r1.contains("time (s)") && r1.contains("flow 0 · cubic"));
    // The queue plot: each queue's measured delay per bin (the series carry it).
    let q = run_figure(&html, "small", 1, "queue");
    assert!(
        q.contains("queue delay (ms)") && q.contains("queueing delay per queue"),
        "{q}"
    );
}

#[test]
fn report_subcommand_rebuilds_the_same_page_and_merges_dirs() {
    let d = small_repeat();
    let first = std::fs::read_to_string(d.join("report.html")).unwrap();
    let out_dir = tmpdir("rebuild");
    let out = out_dir.join("again.html");
    let o = cclab()
        .arg("report")
        .arg(d)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        first,
        "cclab report DIR rebuilds report.html from the files"
    );
    // Merge two directories into one page.
    let l = lossy_lan();
    let merged_dir = tmpdir("merge");
    let merged = merged_dir.join("both.html");
    let o = cclab()
        .arg("report")
        .arg(d)
        .arg(l)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let m = std::fs::read_to_string(&merged).unwrap();
    assert!(m.contains("id=\"doc0\"") && m.contains("id=\"doc1\"") && m.contains("<nav>"));
    assert_eq!(count(&m, "<table class=\"summary\">"), 2);
    // lossy-lan: headline, goodput vs loss, goodput vs delay, 2 losses x 3 side-by-side
    // charts, 6 runs x 4.
    assert_eq!(
        count(&m, "<figure class=\"plot"),
        60 + 1 + 1 + 1 + 2 * 3 + 6 * 4
    );
    // Default output: DIR/report.html.
    let o = cclab().arg("report").arg(l).output().unwrap();
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&l.join("report.html").display().to_string())
    );
    // A directory without results is a one-line error.
    let o = cclab().arg("report").arg(tmpdir("empty")).output().unwrap();
    assert!(!o.status.success());
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim().lines().count(), 1);
}

#[test]
fn report_of_a_60s_10_flow_run_is_under_1_mb() {
    let d = tmpdir("big");
    let f = d.join("big.toml");
    std::fs::write(&f, cclab::bench::REPORT_SCENARIO).unwrap();
    let out = d.join("res");
    run_out(&f, &out, &[]);
    let size = std::fs::metadata(out.join("report.html")).unwrap().len();
    println!(
        "report of a 60 s 10-flow run: {:.0} kB ({size} bytes)",
        size as f64 / 1e3
    );
    assert!(size < 1_000_000, "report is {size} bytes");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Every bin is drawn (600 per flow), none dropped by the point budget.
    // Its name says which controllers the run has.
    let g = figure(&html, "ten-flows-run1-cubic-bbr-goodput");
    // Goodput and the dotted delivery rate of each flow.
    assert_eq!(count(g, "class=\"ln\""), 20);
    let dotted = lines_of(g).iter().filter(|(_, d)| d == "1.5 2.5").count();
    assert_eq!(dotted, 10);
    // ... and is in the interactive chart's data, every flow's every bin (even bins sent
    // as first, step and count).
    let d = tsdata(g);
    assert_eq!(d["xr"][2].as_u64(), Some(600), "{}", d["xr"]);
    assert_eq!(d["s"].as_array().unwrap().len(), 20);
    assert!(d["s"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["v"].as_array().unwrap().len() == 600));
    // The interactive library is inlined once.
    assert_eq!(count(&html, "var uPlot="), 1);
}

/// A 24-run sweep (2 controllers x 3 loss rates x 4 seeds, 30 s runs) stays light: the
/// collapsed run sections carry their charts' data only, drawn when opened, and the page
/// fits its budget. Measured 2026-11-28: 590 kB; the budget is that and a third again.
#[test]
fn report_of_a_24_run_sweep_fits_its_size_budget() {
    const BUDGET: u64 = 800_000;
    let d = tmpdir("sweep24");
    let f = d.join("sweep.toml");
    std::fs::write(
        &f,
        "name = \"sweep24\"\nduration = \"30s\"\n[link]\nrate = \"20mbit\"\nrtt = \"40ms\"\nloss = [0, \"0.5%\", \"1%\"]\n[[flows]]\ncc = [\"cubic\", \"bbr\"]\n",
    )
    .unwrap();
    let out = d.join("res");
    run_out(&f, &out, &["--repeat", "4"]);
    let page = out.join("report.html");
    let size = std::fs::metadata(&page).unwrap().len();
    println!("report of a 24-run sweep: {:.0} kB", size as f64 / 1e3);
    assert!(size <= BUDGET, "{size} bytes, budget {BUDGET}");
    let html = std::fs::read_to_string(&page).unwrap();
    // Every run's charts are there, the collapsed ones as data only.
    let lazy = count(&html, "<figure class=\"plot ts lazy\"");
    assert!(lazy >= 20 * 4, "{lazy} lazy figures");
    assert_eq!(count(&html, "<details class=\"run\" open>"), 3);
    // Controllers side by side per point, and goodput against delay.
    for point in ["loss-0", "loss-0-5", "loss-1"] {
        for what in ["goodput", "cwnd", "rtt"] {
            assert!(
                html.contains(&format!(
                    "data-name=\"sweep24-{point}-cubic-vs-bbr-{what}\""
                )),
                "no {point} {what} overlay"
            );
        }
    }
    let ov = figure(&html, "sweep24-loss-0-5-cubic-vs-bbr-goodput");
    assert!(ov.contains("flow 0 · cubic") && ov.contains("flow 0 · bbr"));
    let tvd = figure(&html, "sweep24-goodput-vs-delay");
    assert!(tvd.contains("median of 4 seeds"), "{tvd}");
    // The chart files draw every chart, the lazy ones too.
    let charts = d.join("charts");
    let o = cclab()
        .arg("report")
        .arg(&out)
        .arg("--svg")
        .arg("--charts-dir")
        .arg(&charts)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let files = std::fs::read_dir(&charts).unwrap().count();
    assert_eq!(files, count(&html, "<figure class=\"plot"));
    assert!(charts
        .join(format!(
            "{files:03}-sweep24-run24-loss-1-bbr-seed-4-queue.svg"
        ))
        .exists());
}

/// `cclab report DIR --markdown`: the run's Markdown table from its results, without
/// re-running; the same text `cclab run --markdown` printed.
#[test]
fn report_markdown_from_a_results_dir() {
    let dir = lossy_lan();
    let o = cclab()
        .arg("report")
        .arg(dir)
        .arg("--markdown")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = String::from_utf8_lossy(&o.stdout);
    assert!(md.starts_with("### lossy-lan"), "{md}");
    assert!(md.contains("| ---: |") && md.contains("| bbr |"), "{md}");
    // Stdout is the Markdown only; no page is written.
    assert!(!md.contains("report written"));
    let ran = cclab()
        .args(["run", "-q", "--markdown"])
        .arg(crate::seed("lossy-lan"))
        .output()
        .unwrap();
    let ran = String::from_utf8_lossy(&ran.stdout);
    let table = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| l.starts_with('|'))
            .map(String::from)
            .collect()
    };
    assert_eq!(table(&md), table(&ran));
    // --markdown writes nothing: with --svg it is a one-line error.
    let o = cclab()
        .arg("report")
        .arg(dir)
        .args(["--markdown", "--svg"])
        .output()
        .unwrap();
    assert!(!o.status.success());
}
