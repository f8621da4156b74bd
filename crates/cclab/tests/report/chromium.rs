//! The page in headless Chromium: the self-check can fail, every plot is drawn with no
//! errors, the work done at load stays in budget, and plots export as PNG and SVG.

use serde_json::Value;

use crate::common::tmpdir;
use crate::{browse, chromium, count, lossy_lan, run_out, selfcheck, selfcheck_raw, small_repeat};

/// The browser check is able to fail: a script error and a plot with nothing drawn are caught.
#[test]
fn chromium_check_catches_a_broken_page() {
    let Some(bin) = chromium() else {
        println!("SKIP: chromium_check_catches_a_broken_page: chromium is not installed and could not be installed");
        return;
    };
    let html = std::fs::read_to_string(lossy_lan().join("report.html")).unwrap();
    let broken = html
        .replacen("<g class=\"data\"", "<g class=\"data\" display=\"none\"", 1)
        .replace("</main>", "<script>notDefinedAnywhere()</script></main>");
    let page_dir = tmpdir("broken");
    let page = page_dir.join("report.html");
    std::fs::write(&page, broken).unwrap();
    let (v, _, console) = selfcheck_raw(&bin, &page);
    assert_eq!(v["empty"], serde_json::json!(["lossy-lan-goodput"]), "{v}");
    assert!(
        v["errors"][0]
            .as_str()
            .unwrap()
            .contains("notDefinedAnywhere"),
        "{v}"
    );
    assert!(
        console.iter().any(|l| l.contains("notDefinedAnywhere")),
        "{console:?}"
    );
    // Broken interactive data: the chart cannot be built, the check fails.
    let broken = html.replacen("class=\"tsdata\">{", "class=\"tsdata\">{oops", 1);
    std::fs::write(&page, broken).unwrap();
    let (v, _, _) = selfcheck_raw(&bin, &page);
    assert!(
        !v["errors"].as_array().unwrap().is_empty(),
        "a broken chart must be an error: {v}"
    );
}

#[test]
fn report_opens_in_headless_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIP: report_opens_in_headless_chromium: chromium is not installed and could not be installed (apt-get install -y chromium)");
        return;
    };
    for dir in [lossy_lan(), small_repeat()] {
        let page = dir.join("report.html");
        let html = std::fs::read_to_string(&page).unwrap();
        let (v, b) = selfcheck(&bin, &page);
        println!(
            "{}: self-check {v} (chromium wall {:.2} s)",
            page.display(),
            b.wall.as_secs_f64()
        );
        assert_eq!(v["phase"], "load", "self-check ran at the load event");
        assert_eq!(v["errors"], serde_json::json!([]), "errors in the page");
        assert_eq!(
            v["empty"],
            serde_json::json!([]),
            "plots without drawn content"
        );
        assert_eq!(
            v["plots"].as_u64().unwrap() as usize,
            count(&html, "<figure class=\"plot"),
            "every plot in the DOM"
        );
        assert!(
            v["marks"].as_u64().unwrap() >= v["plots"].as_u64().unwrap(),
            "drawn marks"
        );
        // The summary table, plus the median-over-seeds table when the runs were repeated.
        assert_eq!(
            v["tables"].as_u64().unwrap() as usize,
            count(&html, "<table")
        );
        assert!(v["tables"].as_u64().unwrap() >= 1);
        let rows = count(&html, "<tr class=\"runstart\">");
        assert!(rows > 0 && v["rows"].as_u64().unwrap() as usize >= rows);
        assert!(b.stdout.contains("data-selfcheck=\"ok\""));
        // The screenshot, next to the report.
        let shot = dir.join("report.png");
        let _ = std::fs::remove_file(&shot);
        let b = browse(
            &bin,
            &page,
            &[
                format!("--screenshot={}", shot.display()),
                "--window-size=1400,3000".into(),
            ],
        );
        let png = std::fs::read(&shot).unwrap_or_else(|e| {
            panic!(
                "no screenshot {} ({e}); chromium said: {}",
                shot.display(),
                b.stderr
            )
        });
        assert!(
            png.starts_with(b"\x89PNG") && png.len() > 20_000,
            "screenshot looks empty ({} bytes)",
            png.len()
        );
        println!("screenshot: {} ({} kB)", shot.display(), png.len() / 1000);
    }
}

/// What the 60 s 10-flow report does before its load event, counted in ways that do not
/// depend on the machine: the interactive charts it builds (the open run's four; the others
/// wait until their section opens), the values they hold (decimated series, not every
/// sample), the elements in the page. These are what its load time rests on; the time itself
/// is `cclab bench`'s report case (target 500 ms: 161-211 ms on this machine when nothing
/// else ran, 560 ms once with other browser tests beside it on two cores).
#[test]
fn report_load_work_in_chromium() {
    let d = tmpdir("load");
    let f = d.join("big.toml");
    std::fs::write(&f, cclab::bench::REPORT_SCENARIO).unwrap();
    let out = d.join("res");
    run_out(&f, &out, &[]);
    let page = out.join("report.html");
    let size = std::fs::metadata(&page).unwrap().len();
    let Some(bin) = chromium() else {
        println!("SKIP: report_load_work_in_chromium: chromium is not installed and could not be installed");
        return;
    };
    let (v, b) = selfcheck(&bin, &page);
    assert_eq!(v["phase"], "load");
    assert_eq!(v["empty"], serde_json::json!([]));
    assert_eq!(v["errors"], serde_json::json!([]));
    let (live, points, nodes) = (
        v["live"].as_u64().unwrap(),
        v["points"].as_u64().unwrap(),
        v["nodes"].as_u64().unwrap(),
    );
    println!(
        "60 s 10-flow report ({:.0} kB): {live} interactive charts built at load holding {points} values, {nodes} elements; load event at {} ms, charts at {} ms, chromium {:.2} s (timed by cclab bench, not here)",
        size as f64 / 1e3,
        v["ms"],
        v["ready_ms"],
        b.wall.as_secs_f64()
    );
    assert_eq!(live, 4, "the run's four interactive charts, no more: {v}");
    assert!(
        points <= LOAD_POINTS,
        "{points} values in the charts built at load (budget {LOAD_POINTS}): {v}"
    );
    assert!(
        nodes <= LOAD_NODES,
        "{nodes} elements in the page (budget {LOAD_NODES}): {v}"
    );
}

/// Budgets of [`report_load_work_in_chromium`]: values in the charts built at load, and
/// elements in the page. The 60 s 10-flow report measured 4 charts holding 24,600 values
/// (600 bins of each series) and 734 elements (2026-11-27); each budget is that and half
/// again.
const LOAD_POINTS: u64 = 37_000;
const LOAD_NODES: u64 = 1_100;

/// The export path behind the PNG and SVG buttons works in the browser: every plot of the
/// lossy-lan report converts to a PNG (canvas not tainted, image decodes) and to SVG text.
#[test]
fn plots_export_as_png_and_svg_in_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIP: plots_export_as_png_and_svg_in_chromium: chromium is not installed and could not be installed");
        return;
    };
    let html = std::fs::read_to_string(lossy_lan().join("report.html")).unwrap();
    let probe = r#"<script>
(function(){var figs=document.querySelectorAll('figure.plot'),out=[],left=figs.length;
figs.forEach(function(f,i){var svg=f.querySelector('svg');var t=cclabPlot.svgText(svg);
cclabPlot.toPng(svg,function(b){out[i]={svg:t.length,png:b?b.size:0,type:b?b.type:''};
if(--left===0){var p=document.createElement('pre');p.id='exportcheck';p.textContent=JSON.stringify(out);document.body.appendChild(p);}});});})();
</script></body>"#;
    let page_dir = tmpdir("export");
    let page = page_dir.join("report.html");
    std::fs::write(&page, html.replace("</body>", probe)).unwrap();
    let b = browse(
        &bin,
        &page,
        &["--virtual-time-budget=10000".into(), "--dump-dom".into()],
    );
    let at = b
        .stdout
        .find("<pre id=\"exportcheck\">")
        .unwrap_or_else(|| panic!("export probe did not finish: {}", b.stderr));
    let text = &b.stdout[at + "<pre id=\"exportcheck\">".len()..];
    let v: Value = serde_json::from_str(&text[..text.find("</pre>").unwrap()]).unwrap();
    let n = count(&html, "<figure class=\"plot");
    assert_eq!(v.as_array().unwrap().len(), n);
    for (i, e) in v.as_array().unwrap().iter().enumerate() {
        assert_eq!(e["type"], "image/png", "plot {i}: {e}");
        assert!(
            e["png"].as_u64().unwrap() > 5_000,
            "plot {i} PNG too small: {e}"
        );
        assert!(e["svg"].as_u64().unwrap() > 1_000, "plot {i}: {e}");
    }
    println!(
        "{n} plots exported: PNG sizes {:?}",
        v.as_array()
            .unwrap()
            .iter()
            .map(|e| e["png"].as_u64().unwrap())
            .collect::<Vec<_>>()
    );
}
