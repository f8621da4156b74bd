//! Fairness and swept sizes (a buffer sweep on a numeric axis), unfinished sized flows, and
//! chart labels that never overlap or clip in Chromium.

use std::path::PathBuf;
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{fixture_dir, tmpdir};
use crate::{browse, chromium, count, figure, lines_of, lossy_lan, run_out, small_repeat};

const BUFFER_SWEEP: &str = r#"
name = "buf"
duration = "3s"
[link]
rate = "20mbit"
rtt = "20ms"
buffer = ["0.5bdp", "1bdp", "4bdp"]
[[flows]]
cc = "cubic"
[[flows]]
cc = "bbr"
"#;

/// A CUBIC + BBR pair over three buffer sizes given in BDPs.
fn buffer_sweep() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = fixture_dir("buffer-sweep");
        let f = d.join("buf.toml");
        std::fs::write(&f, BUFFER_SWEEP).unwrap();
        let out = d.join("res");
        run_out(&f, &out, &[]);
        out
    })
}

/// `units::pct` as the report writes a share.
fn pct(r: f64) -> String {
    let p = r * 100.0;
    if p < 10.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.1}%")
    }
}

#[test]
fn buffer_sweep_report_shows_fairness_and_a_numeric_buffer_axis() {
    let d = buffer_sweep();
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("results.json")).unwrap()).unwrap();
    // Goodput and each controller's share against the buffer, in BDPs on a numeric axis.
    let g = figure(&html, "buf-goodput-vs-buffer");
    let sh = figure(&html, "buf-share-vs-buffer");
    for f in [g, sh] {
        assert!(f.contains("buffer (× BDP)"), "{f}");
        assert_eq!(lines_of(f).len(), 2, "a line per controller");
    }
    assert!(sh.contains("share of the goodput (%)"));
    let tbl = &html[html.find("<table class=\"summary\">").unwrap()..];
    let tbl = &tbl[..tbl.find("</table>").unwrap()];
    assert!(
        tbl.contains(">Jain</th>")
            && tbl.contains(">cubic share</th>")
            && tbl.contains(">bbr share</th>")
    );
    for r in doc["runs"].as_array().unwrap() {
        let buf = r["params"]["link.buffer"].as_str().unwrap();
        let gp = |cc: &str| -> f64 {
            r["flows"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["cc"] == cc)
                .map(|f| f["goodput_bps"].as_f64().unwrap())
                .sum()
        };
        let total = gp("cubic") + gp("bbr");
        let jain = r["jain"].as_f64().unwrap();
        // In the table: the run's Jain index and both shares; in the chart: the shares.
        assert!(
            tbl.contains(&format!(">{jain:.3}</td>")),
            "jain {jain:.3} of {buf}"
        );
        for cc in ["cubic", "bbr"] {
            let share = pct(gp(cc) / total);
            assert!(
                tbl.contains(&format!(">{share}</td>")),
                "{cc} share {share} at {buf}"
            );
            assert!(
                sh.contains(&format!("{cc}, buffer {buf}: {share}")),
                "{cc} at {buf} in the share chart ({share})"
            );
        }
        // The run's section says it too.
        assert!(
            html.contains(&format!("Jain {jain:.3}")),
            "run section of {buf}"
        );
    }
    // The three buffers at their multiples of the BDP: 0.5 at the left end, 4 at the right.
    let xs: Vec<f64> = g[g.find("class=\"data\"").unwrap()..]
        .split("class=\"mk\" cx=\"")
        .skip(1)
        .map(|t| t.split('"').next().unwrap().parse().unwrap())
        .collect();
    let (lo, hi) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let mid: Vec<f64> = xs
        .iter()
        .copied()
        .filter(|x| *x > lo + 1.0 && *x < hi - 1.0)
        .collect();
    assert!(!mid.is_empty(), "{xs:?}");
    assert!(
        mid.iter()
            .all(|x| ((x - lo) / (hi - lo) - 0.5 / 3.5).abs() < 0.01),
        "1bdp at (1 - 0.5) / (4 - 0.5) of the axis: {xs:?}"
    );
}

const UNFINISHED: &str = r#"
name = "unfinished"
duration = "2s"
[link]
rate = "10mbit"
rtt = "40ms"
[[flows]]
cc = "cubic"
size = "50MB"
[[flows]]
cc = "bbr"
size = "100kB"
"#;

#[test]
fn unfinished_sized_flows_are_flagged_in_the_report() {
    let d = tmpdir("unfinished");
    let f = d.join("u.toml");
    std::fs::write(&f, UNFINISHED).unwrap();
    let out = d.join("res");
    run_out(&f, &out, &[]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.contains("⚠ 1 sized flow unfinished") && html.contains("#1 flow 0 (cubic)"),
        "a warning over the charts"
    );
    assert_eq!(
        count(&html, ">unfinished</td>"),
        1,
        "the FCT cell of the cubic flow"
    );
    assert!(
        html.contains("of 50.0 MB delivered"),
        "how much got through"
    );
    // The finished flow keeps its FCT.
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let fct = doc["runs"][0]["flows"][1]["fct_s"].as_f64().unwrap();
    assert!(fct < 2.0 && doc["runs"][0]["flows"][0]["fct_s"].is_null());
}

/// Every text of every chart inside its chart and apart from every other text, measured by
/// the browser (real fonts): value labels, ticks, legends, group labels, titles.
#[test]
fn chart_labels_never_overlap_or_clip_in_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIP: chart_labels_never_overlap_or_clip_in_chromium: chromium is not installed and could not be installed");
        return;
    };
    let probe = r#"<script>
(function(){document.querySelectorAll('details').forEach(function(d){d.open=true});
var bad=[],n=0;document.querySelectorAll('svg.chart').forEach(function(svg){svg.style.display='block';
var b=svg.getBoundingClientRect(),name=svg.getAttribute('aria-label'),t=[];
svg.querySelectorAll('text').forEach(function(e){var r=e.getBoundingClientRect();if(r.width>0)t.push([r,e.textContent])});
n+=t.length;
t.forEach(function(a,i){var r=a[0];
 if(r.left<b.left-1||r.right>b.right+1||r.top<b.top-1||r.bottom>b.bottom+1)bad.push(name+': clipped '+a[1]);
 for(var j=i+1;j<t.length;j++){var q=t[j][0],w=Math.min(r.right,q.right)-Math.max(r.left,q.left),h=Math.min(r.bottom,q.bottom)-Math.max(r.top,q.top);
  if(w>1&&h>3)bad.push(name+': '+a[1]+' overlaps '+t[j][1]);}});});
var p=document.createElement('pre');p.id='labelcheck';p.textContent=JSON.stringify({texts:n,bad:bad});document.body.appendChild(p);})();
</script></body>"#;
    let check = |html: &str| -> Value {
        let page_dir = tmpdir("labels");
        let page = page_dir.join("report.html");
        std::fs::write(&page, html.replace("</body>", probe)).unwrap();
        let b = browse(
            &bin,
            &page,
            &["--window-size=1400,3000".into(), "--dump-dom".into()],
        );
        let at = b
            .stdout
            .find("<pre id=\"labelcheck\">")
            .unwrap_or_else(|| panic!("label probe did not run: {}", b.stderr));
        let text = &b.stdout[at + "<pre id=\"labelcheck\">".len()..];
        serde_json::from_str(
            &text[..text.find("</pre>").unwrap()]
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">"),
        )
        .unwrap()
    };
    for dir in [buffer_sweep(), small_repeat(), lossy_lan()] {
        let v = check(&std::fs::read_to_string(dir.join("report.html")).unwrap());
        println!("{}: {} chart texts checked", dir.display(), v["texts"]);
        assert!(v["texts"].as_u64().unwrap() > 100);
        assert_eq!(v["bad"], serde_json::json!([]), "{}", dir.display());
    }
    // The check can fail: a text over the first chart's title and one past its right edge.
    let html = std::fs::read_to_string(lossy_lan().join("report.html")).unwrap();
    let v = check(&html.replacen(
        "</svg>",
        "<text x=\"14\" y=\"20\" font-size=\"13\">on the title</text><text x=\"600\" y=\"60\" font-size=\"13\">past the right edge of the chart</text></svg>",
        1,
    ));
    let bad = v["bad"].to_string();
    assert!(
        bad.contains("on the title overlaps") || bad.contains("overlaps on the title"),
        "{bad}"
    );
    assert!(bad.contains("clipped past the right edge"), "{bad}");
}
