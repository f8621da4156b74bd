//! `cclab report DIR --svg/--png`: every chart of report.html as a file, rendered in Rust.
//!
//! The contract: one file per format for every chart the page shows (`<svg class="chart">`),
//! named `NN-<figure data-name>` in page order; SVGs are standalone documents, PNGs decode at
//! the chosen scale and carry their text (dark pixels where the title is).

mod common;
use cclab_report::chartfile::resvg::{tiny_skia::Pixmap, usvg};
use common::{cclab, fixture_dir, tmpdir};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::OnceLock;

/// Two 2 s runs (cubic at two loss rates): a headline chart, charts against loss and four
/// time-series charts per run.
const SCENARIO: &str = r#"
name = "charts demo"
duration = "2s"
[link]
rate = "10mbit"
rtt = "20ms"
loss = [0, "1%"]
[[flows]]
cc = "cubic"
"#;

/// A results directory of [`SCENARIO`], run once for every test here.
fn results() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = fixture_dir("chartfiles");
        let f = d.join("demo.toml");
        std::fs::write(&f, SCENARIO).unwrap();
        let out = d.join("res");
        let o = cclab()
            .args(["run", "-q"])
            .arg(&f)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        out
    })
}

fn report(args: &[&str]) -> Output {
    cclab().arg("report").args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The `data-name` of every `<figure class="plot...">` of the page, in order, and the number
/// of `<svg class="chart"` elements.
fn page_charts(html: &str) -> (Vec<String>, usize) {
    let names = html
        .split("<figure class=\"plot")
        .skip(1)
        .map(|f| {
            f.split("data-name=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    (names, html.matches("<svg class=\"chart\"").count())
}

/// Sorted file names in `dir`.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

/// (width, height) of a standalone SVG, parsed as usvg does (strict XML).
fn svg_size(text: &str) -> (f32, f32) {
    let t = usvg::Tree::from_str(text, &usvg::Options::default())
        .unwrap_or_else(|e| panic!("SVG does not parse: {e}"));
    (t.size().width(), t.size().height())
}

/// Pixels darker than light grey in the rectangle (x0..x1, y0..y1) of `p`.
fn dark(p: &Pixmap, x0: u32, x1: u32, y0: u32, y1: u32) -> usize {
    let mut n = 0;
    for y in y0..y1.min(p.height()) {
        for x in x0..x1.min(p.width()) {
            let c = p.pixel(x, y).unwrap().demultiply();
            let luma = (c.red() as u32 * 3 + c.green() as u32 * 6 + c.blue() as u32) / 10;
            if luma < 110 {
                n += 1;
            }
        }
    }
    n
}

#[test]
fn svg_and_png_files_for_every_chart_of_the_page() {
    let d = results();
    let o = report(&[s(d), "--svg", "--png"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(d.join("report.html")).unwrap();
    let (names, nsvg) = page_charts(&html);
    // 1 headline + charts against loss + 4 time-series charts for each of the 2 runs.
    assert!(names.len() >= 10, "figures in the page: {names:?}");
    assert_eq!(nsvg, names.len(), "every figure holds one chart");
    assert_eq!(
        html.matches("<svg").count(),
        nsvg,
        "every <svg> of this page must be a chart (class=\"chart\" in a <figure data-name>), or it escapes --svg/--png"
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    let charts = d.join("charts");
    assert!(
        stdout.contains(&format!(
            "{} charts written to {} as SVG + PNG (2x, font ",
            names.len(),
            charts.display()
        )),
        "{stdout}"
    );
    // Exactly the page's charts, numbered in page order, named after their figure.
    let mut want: Vec<String> = names
        .iter()
        .enumerate()
        .flat_map(|(i, n)| {
            [
                format!("{:02}-{n}.png", i + 1),
                format!("{:02}-{n}.svg", i + 1),
            ]
        })
        .collect();
    want.sort();
    assert_eq!(listing(&charts), want);
    assert_eq!(names[0], "charts-demo-goodput");
    assert!(
        // Which run, point and controller a chart shows is in its file name.
        names
            .iter()
            .any(|n| n == "charts-demo-run2-loss-1-cubic-rtt"),
        "{names:?}"
    );

    for (i, n) in names.iter().enumerate() {
        let stem = charts.join(format!("{:02}-{n}", i + 1));
        let svg = std::fs::read_to_string(stem.with_extension("svg")).unwrap();
        assert!(svg.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "));
        assert!(svg.contains("xmlns=\"http://www.w3.org/2000/svg\""));
        // The same chart as in the page, byte for byte.
        assert!(
            html.contains(svg.lines().nth(1).unwrap()),
            "{n} differs from the page"
        );
        let (w, h) = svg_size(&svg);
        let png = Pixmap::load_png(stem.with_extension("png")).unwrap();
        assert_eq!(
            (png.width(), png.height()),
            ((w * 2.0).ceil() as u32, (h * 2.0).ceil() as u32),
            "{n}: 2x the SVG's {w}x{h}"
        );
        // Not blank, and text drawn: the title (x 12, baseline 20, 13 px) is dark ink.
        let all = dark(&png, 0, png.width(), 0, png.height());
        assert!(all > 1000, "{n}: only {all} dark pixels");
        let title = dark(&png, 20, 300, 12, 50);
        assert!(title > 100, "{n}: {title} dark pixels in the title band");
        // ...and the band above the title is empty, so the check above can fail.
        assert_eq!(
            dark(&png, 0, png.width(), 0, 8),
            0,
            "{n}: ink above the title"
        );
    }
}

#[test]
fn charts_dir_and_scale_options() {
    let d = results();
    let t = tmpdir("chartfiles-opts");
    let page = t.join("page.html");
    let dir = t.join("figs");
    let o = report(&[
        s(d),
        "--out",
        s(&page),
        "--png",
        "--png-scale",
        "1",
        "--charts-dir",
        s(&dir),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    let (names, _) = page_charts(&html);
    let files = listing(&dir);
    assert_eq!(files.len(), names.len(), "PNG only: {files:?}");
    assert!(files.iter().all(|f| f.ends_with(".png")));
    assert!(
        !t.join("charts").exists(),
        "--charts-dir replaces the default"
    );
    let svg = html
        .split("<svg class=\"chart\"")
        .nth(1)
        .map(|r| {
            format!(
                "<svg class=\"chart\"{}</svg>",
                r.split("</svg>").next().unwrap()
            )
        })
        .unwrap();
    let (w, h) = svg_size(&svg);
    let png = Pixmap::load_png(dir.join(&files[0])).unwrap();
    assert_eq!(
        (png.width(), png.height()),
        (w.ceil() as u32, h.ceil() as u32)
    );
    // Without --out the charts go next to the page: DIR/charts.
    let o = report(&[s(d), "--svg", "--charts-dir", s(&t.join("svg-only"))]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(listing(&t.join("svg-only"))
        .iter()
        .all(|f| f.ends_with(".svg")));
}

#[test]
fn bad_chart_options_are_one_line_errors() {
    let d = results();
    let t = tmpdir("chartfiles-bad");
    let check = |args: &[&str], want: &str| {
        let o = report(args);
        let e = stderr(&o);
        assert!(!o.status.success(), "{args:?} must fail");
        assert_eq!(e.trim_end().lines().count(), 1, "one line: {e}");
        assert!(e.contains(want), "{args:?}: {e}");
    };
    // A charts directory under a regular file cannot be created.
    let file = t.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let under = file.join("charts");
    check(
        &[
            s(d),
            "--out",
            s(&t.join("r.html")),
            "--svg",
            "--charts-dir",
            s(&under),
        ],
        "cannot create the charts directory",
    );
    check(
        &[s(d), "--out", s(&t.join("r.html")), "--charts-dir", s(&t)],
        "add --svg and/or --png",
    );
    for bad in ["0", "-1", "100", "nan"] {
        check(
            &[
                s(d),
                "--out",
                s(&t.join("r.html")),
                "--png",
                &format!("--png-scale={bad}"),
            ],
            "at most 8",
        );
    }
}

#[test]
fn overlay_page_exports_its_charts_and_not_its_legend_swatches() {
    let d = results();
    let t = tmpdir("chartfiles-overlay");
    let page = t.join("ov.html");
    let o = report(&[
        s(d),
        s(d),
        "--out",
        s(&page),
        "--label",
        "a",
        "--label",
        "b",
        "--svg",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&page).unwrap();
    let (names, nsvg) = page_charts(&html);
    assert!(
        html.matches("<svg").count() > nsvg,
        "the overlay list has swatches"
    );
    let files = listing(&t.join("charts"));
    assert_eq!(files.len(), nsvg);
    assert_eq!(names.len(), nsvg);
    for (i, n) in names.iter().enumerate() {
        assert_eq!(files[i], format!("{:02}-{n}.svg", i + 1));
    }
}
