//! Overlays of documents from two backends, the calibration page, and the interactive
//! charts (zoom, pan, hover, toggle) in Chromium.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::Value;

use crate::common::{cclab, fixture_dir, tmpdir};
use crate::{
    bars, browse, chromium, count, figure, lines_of, lossy_lan, run_figure, run_out, selfcheck,
    tsdata, SMALL,
};

/// `src` copied to `dst` as if another backend had produced it: `backend` set to "kernel",
/// goodput x `gp` in results.json and in the series, srtt x 1.1 in the series.
fn as_kernel(src: &Path, dst: &Path, gp: f64) {
    std::fs::create_dir_all(dst.join("series")).unwrap();
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("results.json")).unwrap()).unwrap();
    doc["backend"] = "kernel".into();
    for r in doc["runs"].as_array_mut().unwrap() {
        for f in r["flows"].as_array_mut().unwrap() {
            f["goodput_bps"] = (f["goodput_bps"].as_f64().unwrap() * gp).into();
        }
    }
    std::fs::write(dst.join("results.json"), doc.to_string()).unwrap();
    std::fs::copy(src.join("meta.json"), dst.join("meta.json")).unwrap();
    for e in std::fs::read_dir(src.join("series")).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        let mut lines = text.lines();
        let head: Vec<&str> = lines.next().unwrap().split(',').collect();
        let (g, r) = (
            head.iter().position(|h| *h == "goodput_bps").unwrap(),
            head.iter().position(|h| *h == "srtt_ms").unwrap(),
        );
        let mut out = head.join(",") + "\n";
        for l in lines {
            let mut f: Vec<String> = l.split(',').map(String::from).collect();
            f[g] = (f[g].parse::<f64>().unwrap() * gp).to_string();
            f[r] = (f[r].parse::<f64>().unwrap() * 1.1).to_string();
            out += &(f.join(",") + "\n");
        }
        std::fs::write(dst.join("series").join(p.file_name().unwrap()), out).unwrap();
    }
}

/// The 3 s matrix run once (seed 1) and its "kernel" twin (goodput x 0.9), and their overlay
/// report (labels "simulator" and "kernel").
fn overlay_page() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = fixture_dir("overlay");
        let f = d.join("small.toml");
        std::fs::write(&f, SMALL).unwrap();
        run_out(&f, &d.join("sim"), &[]);
        as_kernel(&d.join("sim"), &d.join("kernel"), 0.9);
        let page = d.join("both.html");
        let o = cclab()
            .arg("report")
            .arg(d.join("sim"))
            .arg(d.join("kernel"))
            .args(["--label", "simulator", "--label", "kernel", "--out"])
            .arg(&page)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        page
    })
}

#[test]
fn overlay_of_a_simulator_and_a_kernel_document() {
    let page = overlay_page();
    let html = std::fs::read_to_string(page).unwrap();
    // One section for both documents, labelled as asked.
    assert!(html.contains("id=\"overlay0\"") && !html.contains("id=\"doc0\""));
    assert!(html.contains("overlay of 2 results documents"));
    // Headline: grouped by matrix point, one bar per document.
    let b = bars(figure(&html, "small-goodput"));
    assert_eq!(b.len(), 12, "6 runs x 2 documents: {b:?}");
    let bar = |cc: &str, who: &str| {
        b.iter()
            .find(|(_, t)| t.starts_with(&format!("loss 1% · {cc} · {who}:")))
            .unwrap_or_else(|| panic!("{cc} {who} in {b:?}"))
            .0
    };
    let (s, k) = (bar("cubic", "simulator"), bar("cubic", "kernel"));
    assert!((k / s - 0.9).abs() < 0.02, "kernel bar 0.9 x: {k} vs {s}");
    // Goodput vs loss: per controller, the two documents' lines in one colour, another dash.
    let gl = lines_of(figure(&html, "small-goodput-vs-loss"));
    assert_eq!(gl.len(), 4, "{gl:?}");
    for col in ["#1c64d8", "#e8590c"] {
        let mut d: Vec<&str> = gl
            .iter()
            .filter(|(c, _)| c == col)
            .map(|(_, d)| d.as_str())
            .collect();
        d.sort();
        assert_eq!(d, ["", "7 4"], "{col}: solid and dashed");
    }
    let gv = figure(&html, "small-goodput-vs-loss");
    assert!(gv.contains("cubic · simulator") && gv.contains("cubic · kernel"));
    // Summary table: both values side by side, the difference in %.
    let t = &html[html.find("<table class=\"summary overlay\">").unwrap()..];
    let t = &t[..t.find("</table>").unwrap()];
    assert_eq!(count(t, "<tr class=\"runstart\">"), 6);
    assert_eq!(count(t, ">-10.0%</td>"), 6, "goodput B vs A");
    assert!(t.contains(">Δ B</th>"));
    // Run 1 over time: both documents' lines in one chart, static and interactive.
    let g = run_figure(&html, "small", 1, "goodput");
    let l = lines_of(g);
    assert_eq!(l.len(), 2, "{l:?}");
    assert_eq!(l[0].0, l[1].0, "same flow, same colour");
    assert_eq!((l[0].1.as_str(), l[1].1.as_str()), ("", "7 4"));
    let d = tsdata(g);
    let names: Vec<&str> = d["s"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["l"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["flow 0 · cubic · simulator", "flow 0 · cubic · kernel"]
    );
    // One label per document, or an error naming them.
    let d = page.parent().unwrap();
    let o = cclab()
        .arg("report")
        .arg(d.join("sim"))
        .arg(d.join("kernel"))
        .args(["--label", "only-one", "--out"])
        .arg(d.join("x.html"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--label given 1 times for 2"), "{err}");
    // Default labels: backend and directory.
    let o = cclab()
        .arg("report")
        .arg(d.join("sim"))
        .arg(d.join("kernel"))
        .arg("--out")
        .arg(d.join("x.html"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let x = std::fs::read_to_string(d.join("x.html")).unwrap();
    assert!(x.contains(&format!("kernel · {}", d.join("kernel").display())));
    // Documents of different scenarios keep their sections, unless --overlay.
    let o = cclab()
        .arg("report")
        .arg(d.join("sim"))
        .arg(lossy_lan())
        .arg("--overlay")
        .arg("--out")
        .arg(d.join("y.html"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let y = std::fs::read_to_string(d.join("y.html")).unwrap();
    assert!(y.contains("id=\"overlay0\"") && !y.contains("id=\"doc1\""));
}

/// Run `probe` (JS that fills `<pre id="probe">` with JSON) in `html` after the load event;
/// returns that JSON and the page's self-check.
fn probe(bin: &Path, tag: &str, html: &str, probe: &str) -> (Value, Value) {
    let script = format!(
        "<script>window.addEventListener('load',function(){{setTimeout(function(){{function put(out){{var p=document.createElement('pre');p.id='probe';p.textContent=JSON.stringify(out);document.body.appendChild(p);}}(async function(){{{probe}}})().then(put,function(e){{put({{error:String(e&&e.stack||e)}})}});}},50)}});</script></body>"
    );
    let page_dir = tmpdir(tag);
    let page = page_dir.join("report.html");
    std::fs::write(&page, html.replace("</body>", &script)).unwrap();
    let b = browse(
        bin,
        &page,
        &["--virtual-time-budget=5000".into(), "--dump-dom".into()],
    );
    let get = |id: &str| -> Value {
        let open = format!("<pre id=\"{id}\"");
        let at = b
            .stdout
            .find(&open)
            .unwrap_or_else(|| panic!("no {id} in the DOM: {}", b.stderr));
        let t = &b.stdout[at..];
        let json = &t[t.find('>').unwrap() + 1..t.find("</pre>").unwrap()];
        serde_json::from_str(
            &json
                .replace("&amp;", "&")
                .replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&quot;", "\""),
        )
        .unwrap_or_else(|e| panic!("{id} not JSON ({e}): {json}"))
    };
    (get("probe"), get("selfcheck"))
}

#[test]
fn overlay_draws_both_documents_in_one_interactive_chart_in_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIP: overlay_draws_both_documents_in_one_interactive_chart_in_chromium: chromium is not installed and could not be installed");
        return;
    };
    let html = std::fs::read_to_string(overlay_page()).unwrap();
    let (p, check) = probe(
        &bin,
        "overlay-probe",
        &html,
        r#"var f=document.querySelector('figure[data-name="small-run1-loss-0-cubic-goodput"]'),u=cclabPlot.chart(f);
return {live:f.classList.contains('live'),svgHidden:getComputedStyle(f.querySelector('svg')).display==='none',
 series:u.series.slice(1).map(function(s){return {label:s.label,stroke:s.stroke(),dash:s.dash||[],show:s.show,
   n:u.data[u.series.indexOf(s)].filter(function(v){return v!=null}).length}}),
 canvas:[u.ctx.canvas.width,u.ctx.canvas.height]};"#,
    );
    println!("overlay chart: {p}\nself-check: {check}");
    assert_eq!(check["errors"], serde_json::json!([]), "{check}");
    assert_eq!(check["empty"], serde_json::json!([]), "{check}");
    assert!(check["live"].as_u64().unwrap() >= 4, "{check}");
    assert_eq!(p["live"], true, "{p}");
    assert_eq!(p["svgHidden"], true);
    let s = p["series"].as_array().unwrap();
    assert_eq!(s.len(), 2, "{p}");
    assert_eq!(s[0]["label"], "flow 0 · cubic · simulator");
    assert_eq!(s[1]["label"], "flow 0 · cubic · kernel");
    assert_eq!(s[0]["stroke"], s[1]["stroke"], "same colour");
    assert_eq!(s[0]["dash"], serde_json::json!([]));
    assert_eq!(s[1]["dash"], serde_json::json!([7, 4]));
    assert!(s
        .iter()
        .all(|s| s["n"].as_u64().unwrap() >= 29 && s["show"] == true));
    assert!(p["canvas"][0].as_u64().unwrap() > 200);
}

#[test]
fn time_series_zoom_pan_hover_and_toggle_in_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIP: time_series_zoom_pan_hover_and_toggle_in_chromium: chromium is not installed and could not be installed");
        return;
    };
    let html = std::fs::read_to_string(lossy_lan().join("report.html")).unwrap();
    let (p, check) = probe(
        &bin,
        "zoom-probe",
        &html,
        r#"var f=document.querySelector('figure[data-name="lossy-lan-run1-loss-0-cubic-goodput"]'),u=cclabPlot.chart(f),
 peer=cclabPlot.chart(document.querySelector('figure[data-name="lossy-lan-run1-loss-0-cubic-rtt"]'));
/* uPlot applies scale changes in a microtask: let them settle before reading */
function tick(){return new Promise(function(res){setTimeout(res,20)})}
function rng(v){return [v.scales.x.min,v.scales.x.max]}
function ev(type,x,y,o){o=o||{};var e=new MouseEvent(type,{bubbles:true,cancelable:true,clientX:x,clientY:y,movementX:1,button:0,buttons:type==='mouseup'?0:1,shiftKey:!!o.shift});(o.el||u.over).dispatchEvent(e)}
await tick();
var r=u.over.getBoundingClientRect(),y=r.top+r.height/2,out={full:rng(u)};
/* drag from 30% to 60% of the plot: zoom to that range */
/* (uPlot updates the selection at the next frame, as it would between real mouse moves) */
ev('mousemove',r.left+r.width*0.3,y);await tick();ev('mousedown',r.left+r.width*0.3,y);await tick();
ev('mousemove',r.left+r.width*0.6,y);await tick();ev('mouseup',r.left+r.width*0.6,y);
await tick();out.drag=rng(u);out.peer=rng(peer);
/* double-click: back to everything */
u.over.dispatchEvent(new MouseEvent('dblclick',{bubbles:true,clientX:r.left+10,clientY:y}));await tick();out.reset=rng(u);
/* Ctrl+wheel: zoom in at the centre; a plain wheel leaves the chart alone */
u.over.dispatchEvent(new WheelEvent('wheel',{bubbles:true,cancelable:true,clientX:r.left+r.width/2,clientY:y,deltaY:120}));await tick();out.plainWheel=rng(u);
u.over.dispatchEvent(new WheelEvent('wheel',{bubbles:true,cancelable:true,clientX:r.left+r.width/2,clientY:y,deltaY:-120,ctrlKey:true}));await tick();out.wheel=rng(u);
/* Shift+drag: pan right by a tenth of the plot width (earlier times) */
ev('mousedown',r.left+r.width*0.5,y,{shift:true});ev('mousemove',r.left+r.width*0.6,y,{el:document});ev('mouseup',r.left+r.width*0.6,y,{el:document});await tick();out.pan=rng(u);
/* hover: the legend shows the values under the cursor */
ev('mousemove',r.left+r.width*0.5,y);await tick();out.idx=u.cursor.idx;
out.legend=Array.prototype.map.call(u.root.querySelectorAll('.u-legend .u-value'),function(e){return e.textContent});
/* click a legend entry: its line is hidden */
u.root.querySelectorAll('.u-legend .u-series')[1].querySelector('.u-label').dispatchEvent(new MouseEvent('click',{bubbles:true,button:0}));await tick();out.shown=u.series[1].show;
return out;"#,
    );
    println!("zoom probe: {p}\nself-check: {check}");
    assert_eq!(check["errors"], serde_json::json!([]), "{check}");
    let r = |k: &str| -> (f64, f64) {
        (
            p[k][0].as_f64().unwrap_or_else(|| panic!("{k}: {p}")),
            p[k][1].as_f64().unwrap(),
        )
    };
    let (full, drag, reset, plain, wheel, pan) = (
        r("full"),
        r("drag"),
        r("reset"),
        r("plainWheel"),
        r("wheel"),
        r("pan"),
    );
    let span = |r: (f64, f64)| r.1 - r.0;
    assert!(full.0 < 0.2 && full.1 > 4.8, "full range ~0..5 s: {full:?}");
    // The drag zoomed to ~30%..60% of the range, and the run's other chart followed.
    assert!(
        (span(drag) / span(full) - 0.3).abs() < 0.05 && drag.0 > full.0 + 0.25 * span(full),
        "drag zoom: {drag:?} of {full:?}"
    );
    assert_eq!(r("peer"), drag, "the run's charts share the time range");
    assert_eq!(reset, full, "double-click resets");
    assert_eq!(plain, full, "a plain wheel scrolls the page, not the chart");
    assert!(
        (span(wheel) / span(full) - 0.75).abs() < 0.01,
        "ctrl+wheel zooms in: {wheel:?}"
    );
    assert!(
        pan.0 < wheel.0 && (span(pan) - span(wheel)).abs() < 1e-6,
        "shift+drag pans: {pan:?} from {wheel:?}"
    );
    assert!(p["idx"].as_u64().is_some(), "hover sets the cursor: {p}");
    let legend = p["legend"].as_array().unwrap();
    assert!(
        legend
            .iter()
            .any(|v| v.as_str().unwrap().ends_with("bit/s")),
        "values on hover: {legend:?}"
    );
    assert_eq!(p["shown"], false, "legend click hides the line");
}

#[test]
fn calibration_page_shows_the_simulator_against_the_kernel() {
    let root = PathBuf::from(format!("{}/../..", env!("CARGO_MANIFEST_DIR")));
    let d = tmpdir("calpage");
    let scen = d.join("scenarios");
    std::fs::create_dir_all(&scen).unwrap();
    std::fs::copy(
        root.join("scenarios/calibration/c01-10mbit-20ms.toml"),
        scen.join("c01-10mbit-20ms.toml"),
    )
    .unwrap();
    let out = d.join("out");
    let o = cclab()
        .args(["calibrate", "-q", "--dir"])
        .arg(&scen)
        .arg("--kernel-from")
        .arg(root.join("docs/calibration"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = out.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // The targets on top, then a scatter per metric with y = x, the ±10% band, the kernel's
    // range as error bars and a tooltip per point; 6 points (2 losses x 3 controllers).
    let top = html.find("<table class=\"summary targets\">").unwrap();
    for m in ["goodput-bps", "retrans-ratio", "rtt-p50-ms"] {
        let name = format!("calibration-{m}");
        assert!(html.find(&format!("data-name=\"{name}\"")).unwrap() > top);
        let f = figure(&html, &name);
        assert_eq!(count(f, "class=\"pt\""), 6, "{name}");
        assert!(f.contains("class=\"diag\"") && f.contains("class=\"band\""));
        assert!(f.contains("<title>cal-10mbit-20ms · link.loss="), "{name}");
    }
    let g = figure(&html, "calibration-goodput-bps");
    assert!(count(g, "class=\"eb\"") >= 1, "kernel min–max bars");
    for col in ["#2b8a3e", "#1c64d8", "#e8590c"] {
        assert!(
            g.contains(&format!("fill=\"{col}\"")),
            "reno/cubic/bbr {col}"
        );
    }
    assert!(g.contains("kernel goodput (Mbit/s)") && g.contains("simulator goodput (Mbit/s)"));
    let Some(bin) = chromium() else {
        println!("SKIP: calibration page in chromium: chromium is not installed and could not be installed");
        return;
    };
    let (v, _) = selfcheck(&bin, &page);
    println!("calibration page self-check: {v}");
    assert_eq!(v["errors"], serde_json::json!([]));
    assert_eq!(v["empty"], serde_json::json!([]));
    assert_eq!(v["plots"], 3);
    assert!(v["tables"].as_u64().unwrap() >= 2);
}

/// A sweep's collapsed run sections carry data only: opening one draws its charts, the PNG
/// button's export works from the drawn chart, and the self-check passes with them closed.
#[test]
fn lazy_run_sections_draw_when_opened_in_chromium() {
    let Some(bin) = chromium() else {
        println!("SKIP: lazy_run_sections_draw_when_opened_in_chromium: chromium is not installed and could not be installed");
        return;
    };
    let d = tmpdir("lazy");
    let f = d.join("lazy.toml");
    std::fs::write(&f, SMALL).unwrap();
    let out = d.join("res");
    run_out(&f, &out, &["--repeat", "3"]);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<figure class=\"plot ts lazy\""));
    let (p, check) = probe(
        &bin,
        "lazy-probe",
        &html,
        r#"var f=document.querySelector('figure.plot.ts.lazy'),det=f.closest('details'),before=!!f.__u;
det.open=true;await new Promise(function(r){setTimeout(r,50)});
var u=f.__u||cclabPlot.chart(f);
var png=await new Promise(function(r){cclabPlot.canvasPng(f,function(b){r(b?b.size:0)})});
return {name:f.getAttribute('data-name'),before:before,live:f.classList.contains('live'),
 n:u.data[0].length,series:u.data.length-1,png:png,buttons:f.querySelectorAll('button[data-export]').length};"#,
    );
    println!("lazy figure: {p}\nself-check: {check}");
    assert_eq!(check["errors"], serde_json::json!([]), "{check}");
    assert_eq!(check["empty"], serde_json::json!([]), "{check}");
    assert_eq!(p["before"], false, "not drawn while closed: {p}");
    assert_eq!(p["live"], true, "drawn once opened: {p}");
    assert!(p["n"].as_u64().unwrap() >= 29, "{p}");
    assert!(p["png"].as_u64().unwrap() > 2_000, "{p}");
    assert_eq!(p["buttons"], 1, "PNG only: {p}");
}
