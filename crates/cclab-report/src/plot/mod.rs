//! A small SVG plotting module: line charts (linear or log axes with nice ticks, bands,
//! markers, a second y axis as a rescaling of the first) and grouped bar charts with error
//! bars and reference markers. Output is a self-contained `<svg>` element: every style is an
//! attribute, so a plot exported on its own (SVG or PNG) looks as it does in the page.
//!
//! Coordinates are rounded to 0.1 px, which keeps long series compact.
//!
//! Here: the colours, font and pieces every chart shares (escaping, text widths, the legend,
//! markers, the `<svg>` element); `axis` scales, ticks and grids; `line` line charts;
//! `bar` bar charts; `scatter` scatter charts.

mod axis;
mod bar;
mod line;
mod scatter;
#[cfg(test)]
mod tests;

pub use axis::{linear_ticks, log_ticks, nice_step, tick_label, Axis, Scale, Unit};
pub use bar::{bar_chart, Bar, BarChart};
pub use line::{downsample, line_chart, Line, LineChart, Marker, RightAxis, DASH, DOT};
pub use scatter::{scatter, Scatter, ScatterPoint};

use std::fmt::Write;

/// Font stack used by every text element.
pub const FONT: &str =
    "system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif";
const INK: &str = "#1f2328";
const MUTED: &str = "#57606a";
const GRID: &str = "#e6e8eb";

fn dash_attr(d: &str) -> String {
    if d.is_empty() {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{d}\"")
    }
}

/// Round to 0.1 and drop a trailing `.0`.
fn r1(v: f64) -> String {
    let x = (v * 10.0).round() / 10.0;
    if x == x.trunc() {
        format!("{}", x as i64)
    } else {
        format!("{x:.1}")
    }
}

pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Text width in px at font size `size`, from per-character widths of a wide sans-serif
/// (DejaVu Sans, the usual fallback on Linux): an upper bound for the narrower system fonts,
/// so that labels placed with it do not overlap wherever the page is opened.
pub fn text_w(s: &str, size: f64) -> f64 {
    s.chars()
        .map(|c| match c {
            'i' | 'l' | 'j' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.3,
            ' ' | '·' => 0.33,
            'f' | 't' | 'r' | '/' | '(' | ')' | '[' | ']' | '-' | 'I' => 0.42,
            'm' => 0.98,
            'w' => 0.83,
            'M' | 'W' | '%' => 0.99,
            '0'..='9' => 0.64,
            'a'..='z' => 0.63,
            'A'..='Z' => 0.78,
            _ => 0.85,
        })
        .sum::<f64>()
        * size
}

/// [`text_w`] of bold text.
pub fn text_w_bold(s: &str, size: f64) -> f64 {
    text_w(s, size) * 1.1
}

struct LegendItem {
    name: String,
    color: String,
    marker: Marker,
    dash: &'static str,
    line: bool,
    swatch: bool,
}

impl LegendItem {
    /// A plain line in ink: what the error bars show.
    fn range(name: String) -> LegendItem {
        LegendItem {
            name,
            color: INK.into(),
            marker: Marker::None,
            dash: "",
            line: true,
            swatch: false,
        }
    }
}

/// The frame of the plot area: the y axis (`px0`, from `py1` down to `py0`) and the x axis
/// (along `py0` to `px1`) as one path.
fn frame(s: &mut String, px0: f64, py1: f64, py0: f64, px1: f64) {
    let _ = write!(
        s,
        "<path d=\"M{},{}V{}H{}\" fill=\"none\" stroke=\"#8c959f\"/>",
        r1(px0),
        r1(py1),
        r1(py0),
        r1(px1)
    );
}

/// Lay the legend out in rows under the title; returns (svg, height used).
fn legend(items: &[LegendItem], x0: f64, y0: f64, width: f64) -> (String, f64) {
    if items.is_empty() {
        return (String::new(), 0.0);
    }
    let mut s = String::from("<g class=\"legend\">");
    let (mut x, mut y) = (x0, y0);
    for it in items {
        let w = 26.0 + text_w(&it.name, 11.0) + 14.0;
        if x + w > x0 + width && x > x0 {
            x = x0;
            y += 16.0;
        }
        let cy = y + 5.0;
        if it.swatch {
            let _ = write!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"18\" height=\"9\" rx=\"1.5\" fill=\"{}\"/>",
                r1(x),
                r1(cy - 4.5),
                it.color
            );
        } else if it.line {
            let _ = write!(
                s,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                r1(x),
                r1(cy),
                r1(x + 18.0),
                r1(cy),
                it.color,
                dash_attr(it.dash)
            );
        }
        s.push_str(&marker_svg(it.marker, x + 9.0, cy, &it.color, ""));
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" font-size=\"11\" fill=\"{INK}\">{}</text>",
            r1(x + 24.0),
            r1(cy + 4.0),
            esc(&it.name)
        );
        x += w;
    }
    s.push_str("</g>");
    (s, y - y0 + 16.0)
}

fn marker_svg(m: Marker, x: f64, y: f64, color: &str, tip: &str) -> String {
    let title = if tip.is_empty() {
        String::new()
    } else {
        format!("<title>{}</title>", esc(tip))
    };
    match m {
        Marker::None => String::new(),
        Marker::Dot => format!("<circle class=\"mk\" cx=\"{}\" cy=\"{}\" r=\"3.2\" fill=\"{color}\" stroke=\"#fff\" stroke-width=\"1\">{title}</circle>", r1(x), r1(y)),
        Marker::Diamond => format!(
            "<path class=\"mk\" d=\"M{},{}l5,5l-5,5l-5,-5z\" fill=\"#fff\" stroke=\"{color}\" stroke-width=\"1.8\">{title}</path>",
            r1(x),
            r1(y - 5.0)
        ),
    }
}

fn svg_open(w: f64, h: f64, title: &str) -> String {
    format!(
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" font-family=\"{}\" role=\"img\" aria-label=\"{}\"><rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><text x=\"12\" y=\"20\" font-size=\"13\" font-weight=\"600\" fill=\"{INK}\">{}</text>",
        r1(w),
        r1(h),
        r1(w),
        r1(h),
        esc(FONT),
        esc(title),
        esc(title)
    )
}
