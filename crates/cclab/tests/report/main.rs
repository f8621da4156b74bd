//! report.html (`cclab run --out`, `cclab report`): content, self-containment, size, and a
//! real browser: headless Chromium opens the page, the page's self-check must find every plot
//! drawn, the tables present and no errors; a screenshot is saved next to the report.
//!
//! Chromium: Debian's `chromium` package. When it is missing the tests try
//! `apt-get install -y chromium` (as root); when that fails they print `SKIP: ...` for the
//! browser part (never a silent pass).
//!
//! One test binary; its modules: `page` (content, self-containment, size), `chromium` (the
//! page in a browser), `overlay` (two documents in one page, the calibration page, the
//! interactive charts) and `fairness` (fairness, swept sizes, unfinished flows, labels).

#[path = "../common/mod.rs"]
mod common;

mod chromium;
mod fairness;
mod overlay;
mod page;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use cclab::browser::Browse;
use serde_json::Value;

use common::{cclab, fixture_dir};

fn seed(name: &str) -> PathBuf {
    PathBuf::from(format!(
        "{}/../../scenarios/seeds/{name}.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
}

/// `cclab run -q FILE --out DIR ARGS...`, panicking with stderr on failure.
fn run_out(file: &Path, dir: &Path, args: &[&str]) {
    let out = cclab()
        .args(["run", "-q"])
        .arg(file)
        .arg("--out")
        .arg(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cclab run failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const SMALL: &str = r#"
name = "small"
duration = "3s"
[link]
rate = "20mbit"
rtt = "20ms"
loss = [0, "0.1%", "1%"]
[[flows]]
cc = ["cubic", "bbr"]
"#;

/// The lossy-lan seed scenario's results directory, run once for all tests here.
fn lossy_lan() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = fixture_dir("lossy-lan");
        run_out(&seed("lossy-lan"), &d, &[]);
        d
    })
}

/// A 3 s matrix (3 losses x 2 controllers) run with 2 seeds per point.
fn small_repeat() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = fixture_dir("small-repeat");
        let f = d.join("small.toml");
        std::fs::write(&f, SMALL).unwrap();
        let out = d.join("res");
        run_out(&f, &out, &["--repeat", "2"]);
        out
    })
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

/// The text of run `n`'s `what` chart (`goodput`, `rtt`, ...) in scenario `name`'s section:
/// its figure is named `NAME-runN-<point, controllers, seed>-WHAT`.
fn run_figure<'a>(html: &'a str, name: &str, n: usize, what: &str) -> &'a str {
    let key = format!("data-name=\"{name}-run{n}-");
    let mut from = 0;
    while let Some(i) = html[from..].find(&key) {
        let at = from + i;
        let end = html[at + 11..].find('"').unwrap() + at + 11;
        if html[at..end].ends_with(&format!("-{what}")) {
            return figure(html, &html[at + 11..end]);
        }
        from = end;
    }
    panic!("no {what} chart of run {n} of {name}")
}

/// Text of every `<figure ... data-name="NAME">...</figure>` (the SVG inside).
fn figure<'a>(html: &'a str, name: &str) -> &'a str {
    let at = html
        .find(&format!("data-name=\"{name}\""))
        .unwrap_or_else(|| panic!("no figure {name}"));
    let end = html[at..].find("</figure>").unwrap() + at;
    &html[at..end]
}

/// (height, title) of every bar in an SVG.
fn bars(svg: &str) -> Vec<(f64, String)> {
    svg.split("<rect class=\"bar\"")
        .skip(1)
        .map(|b| {
            let h = b
                .split("height=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let t = b
                .split("<title>")
                .nth(1)
                .unwrap()
                .split("</title>")
                .next()
                .unwrap()
                .to_string();
            (h, t)
        })
        .collect()
}
/// The interactive chart data (JSON) of a figure.
fn tsdata(fig: &str) -> Value {
    let tag = "<script type=\"application/json\" class=\"tsdata\">";
    let at = fig.find(tag).expect("no interactive data in the figure") + tag.len();
    let end = fig[at..].find("</script>").unwrap() + at;
    serde_json::from_str(&fig[at..end]).unwrap()
}
/// The Chromium binary; tries `apt-get install -y chromium` once when absent.
fn chromium() -> Option<PathBuf> {
    static C: OnceLock<Option<PathBuf>> = OnceLock::new();
    C.get_or_init(|| {
        if let Some(p) = cclab::browser::find() {
            return Some(p);
        }
        eprintln!("chromium not found; trying: apt-get update && apt-get install -y chromium");
        let ok = Command::new("sh")
            .args(["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium"])
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !ok {
            eprintln!("apt-get install chromium failed");
        }
        cclab::browser::find()
    })
    .clone()
}

/// Run headless Chromium on `page` with `extra` flags and a fresh profile; 90 s limit.
fn browse(bin: &Path, page: &Path, extra: &[String]) -> Browse {
    cclab::browser::browse(bin, page, extra, Duration::from_secs(90))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Open `page`, return the page's self-check (JSON) after the load event; asserts no console
/// messages.
fn selfcheck(bin: &Path, page: &Path) -> (Value, Browse) {
    let (v, b, console) = selfcheck_raw(bin, page);
    assert!(
        console.is_empty(),
        "console messages from the report: {console:#?}"
    );
    (v, b)
}

/// The self-check and the console messages (Chromium logs every level as `CONSOLE`).
fn selfcheck_raw(bin: &Path, page: &Path) -> (Value, Browse, Vec<String>) {
    cclab::browser::load(bin, page, Duration::from_secs(90)).unwrap_or_else(|e| panic!("{e}"))
}

/// `d="..."` and `stroke="..."` and the dash of every `class="ln"` path of an SVG.
fn lines_of(svg: &str) -> Vec<(String, String)> {
    svg.split("<path class=\"ln\"")
        .skip(1)
        .map(|p| {
            let p = &p[..p.find("/>").unwrap()];
            let attr = |a: &str| {
                p.split(&format!("{a}=\""))
                    .nth(1)
                    .map(|v| v.split('"').next().unwrap().to_string())
                    .unwrap_or_default()
            };
            (attr("stroke"), attr("stroke-dasharray"))
        })
        .collect()
}
