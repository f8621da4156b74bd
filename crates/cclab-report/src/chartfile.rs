//! Every chart of a report as a file: standalone SVG and PNG, rendered in Rust (resvg), for
//! `cclab report DIR --svg/--png`.
//!
//! The charts are read back from the rendered page: each `<svg class="chart">` element, named
//! after the `data-name` of the `<figure>` around it (or, for a chart outside a figure, the
//! heading before it and the chart's title). Reading the page rather than a second list means
//! every chart the page shows is exported, and no chart is exported the page does not show.
//!
//! Files are numbered in page order: `NN-NAME.svg` / `NN-NAME.png`.

use resvg::{tiny_skia, usvg};
use std::path::{Path, PathBuf};

/// The renderer, re-exported so callers (and tests) decode PNGs with the same version.
pub use resvg;

/// One chart of the page.
#[derive(Clone, Debug)]
pub struct Chart {
    /// File name without extension: its number in page order and a slug of its name,
    /// e.g. `03-small-loss-goodput`; unique in the page.
    pub stem: String,
    /// The chart's title (its `aria-label`).
    pub title: String,
    /// The chart as a standalone SVG document (XML declaration + the `<svg>` element).
    pub svg: String,
}

/// The PNG scale `--png` uses by default: 2 device pixels per SVG unit, sharp on a HiDPI
/// screen and in a ticket.
pub const DEFAULT_SCALE: f32 = 2.0;

/// Largest PNG scale accepted (a wide chart at 8x is already ~10k pixels across).
pub const MAX_SCALE: f32 = 8.0;

/// Font families tried, in order, for the charts' generic `sans-serif` when the system's
/// font configuration names none that is installed.
const SANS: &[&str] = &[
    "DejaVu Sans",
    "Liberation Sans",
    "Arial",
    "Helvetica",
    "Noto Sans",
    "Roboto",
    "Open Sans",
    "FreeSans",
];

/// The error when no font can draw the charts' text.
pub const NO_FONT: &str = "no usable font for chart text: install one (Debian/Ubuntu: apt-get install fonts-dejavu-core; Fedora: dnf install dejavu-sans-fonts) and retry";

/// Every chart of `page` (an HTML report), in page order.
pub fn charts(page: &str) -> Vec<Chart> {
    let mut found: Vec<(String, String, String)> = Vec::new();
    let mut from = 0;
    while let Some(rel) = page[from..].find("<svg") {
        let start = from + rel;
        let Some(tag_end) = page[start..].find('>').map(|i| start + i + 1) else {
            break;
        };
        let tag = &page[start..tag_end];
        from = tag_end;
        if !attr(tag, "class").is_some_and(|c| c.split_whitespace().any(|w| w == "chart")) {
            continue;
        }
        let Some(end) = element_end(page, start) else {
            break;
        };
        from = end;
        let title = attr(tag, "aria-label").map(unescape).unwrap_or_default();
        let before = &page[..start];
        let name = enclosing_figure_name(before).unwrap_or_else(|| {
            let h = last_heading(before);
            format!("{h} {title}")
        });
        let svg = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n",
            &page[start..end]
        );
        found.push((name, title, svg));
    }
    let width = found.len().to_string().len().max(2);
    found
        .into_iter()
        .enumerate()
        .map(|(i, (name, title, svg))| {
            let mut s = file_slug(&name);
            if s.is_empty() {
                s.push_str("chart");
            }
            Chart {
                stem: format!("{:0width$}-{s}", i + 1),
                title,
                svg,
            }
        })
        .collect()
}

/// Byte offset just past the `</svg>` that closes the `<svg` at `start` (nested `<svg>`
/// elements counted).
fn element_end(page: &str, start: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = start;
    loop {
        let open = page[i..].find("<svg").map(|k| i + k);
        let close = page[i..].find("</svg>").map(|k| i + k)?;
        match open {
            Some(o) if o < close => {
                depth += 1;
                i = o + 4;
            }
            _ => {
                depth -= 1;
                i = close + 6;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
    }
}

/// The value of attribute `name` in an opening tag (as written, still escaped).
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let at = tag.find(&key)? + key.len();
    let len = tag[at..].find('"')?;
    Some(&tag[at..at + len])
}

/// The `data-name` of the `<figure>` that `before` (the page up to a chart) is inside of.
fn enclosing_figure_name(before: &str) -> Option<String> {
    let open = before.rfind("<figure")?;
    if before.rfind("</figure>").is_some_and(|close| close > open) {
        return None;
    }
    let tag_end = before[open..].find('>')? + open;
    attr(&before[open..tag_end], "data-name").map(unescape)
}

/// Text of the last `<h2>`/`<h3>` in `before`, tags stripped ("" when there is none).
fn last_heading(before: &str) -> String {
    let Some(open) = ["<h2", "<h3"].iter().filter_map(|h| before.rfind(h)).max() else {
        return String::new();
    };
    let rest = &before[open..];
    let body_start = rest.find('>').map_or(rest.len(), |i| i + 1);
    let body_end = rest.find("</h").unwrap_or(rest.len()).max(body_start);
    let mut text = String::new();
    let mut in_tag = false;
    for c in rest[body_start..body_end].chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    unescape(&text)
}

/// Undo the page's HTML escaping (the five entities `plot::esc` writes).
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// A file-name-safe slug: lower-case ASCII letters and digits, runs of anything else as one
/// `-`, at most 80 characters.
fn file_slug(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            o.push(c.to_ascii_lowercase());
        } else if !o.is_empty() && !o.ends_with('-') {
            o.push('-');
        }
    }
    if o.len() > 80 {
        o.truncate(80);
    }
    o.trim_end_matches('-').to_string()
}

/// Rasterizes charts with system fonts; build once, render many.
pub struct Renderer {
    opt: usvg::Options<'static>,
    /// The family drawing the charts' text.
    pub family: String,
}

impl Renderer {
    /// Load the system's fonts and check one can draw text; [`NO_FONT`] when none can.
    pub fn new() -> Result<Renderer, String> {
        let mut db = usvg::fontdb::Database::new();
        db.load_system_fonts();
        Renderer::with_fonts(db)
    }

    /// A renderer drawing text with the fonts of `db`; [`NO_FONT`] when they draw none.
    pub fn with_fonts(db: usvg::fontdb::Database) -> Result<Renderer, String> {
        let mut opt = usvg::Options {
            fontdb: std::sync::Arc::new(db),
            ..usvg::Options::default()
        };
        let db = opt.fontdb_mut();
        let has = |db: &usvg::fontdb::Database, name: &str| {
            db.faces()
                .any(|f| f.families.iter().any(|(n, _)| n == name))
        };
        let configured = db.family_name(&usvg::fontdb::Family::SansSerif).to_string();
        let family = if has(db, &configured) {
            Some(configured)
        } else if let Some(f) = SANS.iter().find(|f| has(db, f)) {
            Some(f.to_string())
        } else {
            db.faces()
                .filter_map(|f| f.families.first().map(|(n, _)| n.clone()))
                .min()
        };
        let family = family.ok_or_else(|| NO_FONT.to_string())?;
        db.set_sans_serif_family(family.clone());
        // The charts name their families (`plot::FONT`); the first installed one wins.
        let used = crate::plot::FONT
            .split(',')
            .map(|f| f.trim().trim_matches(|c| c == '\'' || c == '"'))
            .find(|f| has(db, f))
            .map_or(family.clone(), str::to_string);
        opt.font_family = family;
        let family = used;
        let r = Renderer { opt, family };
        // The fonts found must draw text: a chart without its labels is worse than none.
        let probe = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"60\" height=\"20\"><text x=\"2\" y=\"15\" font-family=\"sans-serif\" font-size=\"12\">Ag 0.5</text></svg>";
        let tree = r.parse(probe)?;
        if count_text(tree.root()) == 0 {
            return Err(format!(
                "{NO_FONT} (fonts found, family {}, draw no text)",
                r.family
            ));
        }
        Ok(r)
    }

    fn parse(&self, svg: &str) -> Result<usvg::Tree, String> {
        usvg::Tree::from_str(svg, &self.opt).map_err(|e| format!("invalid SVG: {e}"))
    }

    /// `svg` as a PNG, `scale` device pixels per SVG unit. Fails when the SVG is invalid or
    /// has text that the fonts could not draw.
    pub fn png(&self, svg: &str, scale: f32) -> Result<Vec<u8>, String> {
        let tree = self.parse(svg)?;
        if svg.contains("<text") && count_text(tree.root()) == 0 {
            return Err(format!(
                "{NO_FONT} (family {} drew none of the chart's text)",
                self.family
            ));
        }
        let size = tree.size();
        let (w, h) = (
            (size.width() * scale).ceil() as u32,
            (size.height() * scale).ceil() as u32,
        );
        let mut pixmap = tiny_skia::Pixmap::new(w.max(1), h.max(1))
            .ok_or_else(|| format!("cannot allocate a {w}x{h} image (lower --png-scale)"))?;
        resvg::render(
            &tree,
            tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| format!("cannot encode PNG: {e}"))
    }
}

/// Text nodes under `g` (usvg drops the text it has no font for).
fn count_text(g: &usvg::Group) -> usize {
    g.children()
        .iter()
        .map(|n| match n {
            usvg::Node::Text(_) => 1,
            usvg::Node::Group(g) => count_text(g),
            _ => 0,
        })
        .sum()
}

/// What [`write`] wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// Charts written (each as SVG and/or PNG).
    pub charts: usize,
    /// Every file, in page order (a chart's SVG before its PNG).
    pub files: Vec<PathBuf>,
    /// Their total size in bytes.
    pub bytes: u64,
    /// The font family of the PNGs' text (None without PNGs).
    pub family: Option<String>,
}

/// Check a `--png-scale` value.
pub fn check_scale(scale: f32) -> Result<(), String> {
    if scale.is_finite() && scale > 0.0 && scale <= MAX_SCALE {
        Ok(())
    } else {
        Err(format!(
            "PNG scale {scale} is out of range: give a number above 0 and at most {MAX_SCALE} (2 = two pixels per SVG unit)"
        ))
    }
}

/// Write `charts` into `dir` (created if missing): `STEM.svg` when `svg`, `STEM.png` at
/// `png_scale` when given. Existing files of the same names are replaced; others are left.
pub fn write(
    charts: &[Chart],
    dir: &Path,
    svg: bool,
    png_scale: Option<f32>,
) -> Result<Written, String> {
    if let Some(s) = png_scale {
        check_scale(s)?;
    }
    // Fonts first: a missing font fails before anything is written.
    let renderer = match png_scale {
        Some(_) if !charts.is_empty() => Some(Renderer::new()?),
        _ => None,
    };
    let mut out = Written {
        charts: charts.len(),
        family: renderer.as_ref().map(|r| r.family.clone()),
        ..Written::default()
    };
    if charts.is_empty() {
        return Ok(out);
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        format!(
            "cannot create the charts directory {}: {e} (choose another with --charts-dir)",
            dir.display()
        )
    })?;
    let mut put = |name: String, bytes: &[u8]| -> Result<(), String> {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|e| {
            format!(
                "cannot write {}: {e} (choose another directory with --charts-dir)",
                path.display()
            )
        })?;
        out.bytes += bytes.len() as u64;
        out.files.push(path);
        Ok(())
    };
    for c in charts {
        if svg {
            put(format!("{}.svg", c.stem), c.svg.as_bytes())?;
        }
        if let (Some(r), Some(scale)) = (&renderer, png_scale) {
            let png = r
                .png(&c.svg, scale)
                .map_err(|e| format!("chart {} ({}): {e}", c.stem, c.title))?;
            put(format!("{}.png", c.stem), &png)?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SVG: &str = "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 200 100\" width=\"200\" height=\"100\" font-family=\"sans-serif\" aria-label=\"A &amp; B\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><text x=\"12\" y=\"20\" font-size=\"13\" fill=\"#000\">A &amp; B</text></svg>";

    fn page() -> String {
        format!(
            "<h2>Scenario x</h2><figure class=\"plot\" data-name=\"x-goodput\">{SVG}<figcaption></figcaption></figure>\
             <ul><li><svg width=\"30\" height=\"10\"><line/></svg></li></ul>\
             <h3>Odd <span>one</span></h3><div>{SVG}</div>\
             <figure class=\"plot ts\" data-name=\"x-run1-rtt\">{SVG}<script>[]</script></figure>\
             <figure data-name=\"x-goodput\">{SVG}</figure>"
        )
    }

    #[test]
    fn finds_every_chart_in_page_order_with_unique_names() {
        let c = charts(&page());
        let stems: Vec<&str> = c.iter().map(|c| c.stem.as_str()).collect();
        // The legend swatch (an <svg> without class "chart") is not a chart; the chart outside
        // a figure is named after the heading before it; the repeated name stays unique.
        assert_eq!(
            stems,
            [
                "01-x-goodput",
                "02-odd-one-a-b",
                "03-x-run1-rtt",
                "04-x-goodput"
            ]
        );
        assert!(c.iter().all(|c| c.title == "A & B"));
        assert!(c[0]
            .svg
            .starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg class=\"chart\""));
        assert!(c[0].svg.trim_end().ends_with("</svg>"));
    }

    #[test]
    fn numbers_widen_past_99_charts() {
        let p: String = (0..120)
            .map(|i| format!("<figure data-name=\"c{i}\">{SVG}</figure>"))
            .collect();
        let c = charts(&p);
        assert_eq!(c.len(), 120);
        assert_eq!(c[0].stem, "001-c0");
        assert_eq!(c[119].stem, "120-c119");
    }

    #[test]
    fn nested_svg_stays_inside_its_chart() {
        let inner =
            "<svg class=\"chart\" aria-label=\"t\"><svg x=\"1\"><rect/></svg><text>z</text></svg>";
        let c = charts(&format!("<figure data-name=\"n\">{inner}</figure>"));
        assert_eq!(c.len(), 1);
        assert!(c[0].svg.contains("<text>z</text></svg>"));
    }

    #[test]
    fn slugs_are_file_safe_and_bounded() {
        assert_eq!(file_slug("../A b/ç:*?"), "a-b");
        assert_eq!(file_slug(&"ab-".repeat(60)).len(), 80);
        assert!(!file_slug(&"ab-".repeat(60)).ends_with('-'));
    }

    #[test]
    fn no_font_is_an_error_naming_what_to_install() {
        let e = Renderer::with_fonts(usvg::fontdb::Database::new())
            .err()
            .expect("no fonts, no renderer");
        assert!(e.contains("fonts-dejavu-core"), "{e}");
        assert_eq!(e.lines().count(), 1);
    }

    #[test]
    fn renders_text_with_system_fonts() {
        let r = Renderer::new().expect("this test needs a font, e.g. fonts-dejavu-core");
        let png = r.png(&charts(&page())[0].svg, 1.5).unwrap();
        let p = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((p.width(), p.height()), (300, 150));
        let dark = p.pixels().iter().filter(|c| c.red() < 100).count();
        assert!(dark > 20, "title text drawn: {dark} dark pixels");
        // Text the fonts cannot draw is an error, not a text-less image.
        let empty = Renderer {
            opt: usvg::Options::default(),
            family: "none".into(),
        };
        let e = empty.png(SVG, 1.0).unwrap_err();
        assert!(e.contains("fonts-dejavu-core"), "{e}");
    }

    #[test]
    fn scale_is_checked() {
        assert!(check_scale(2.0).is_ok());
        for bad in [0.0, -1.0, f32::NAN, f32::INFINITY, 9.0] {
            let e = check_scale(bad).unwrap_err();
            assert!(e.contains("at most 8"), "{e}");
        }
    }
}
