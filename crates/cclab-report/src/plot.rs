//! A small SVG plotting module: line charts (linear or log axes with nice ticks, bands,
//! markers, a second y axis as a rescaling of the first) and grouped bar charts with error
//! bars and reference markers. Output is a self-contained `<svg>` element: every style is an
//! attribute, so a plot exported on its own (SVG or PNG) looks as it does in the page.
//!
//! Coordinates are rounded to 0.1 px, which keeps long series compact.

use std::fmt::Write;

/// Font stack used by every text element.
pub const FONT: &str =
    "system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif";
const INK: &str = "#1f2328";
const MUTED: &str = "#57606a";
const GRID: &str = "#e6e8eb";

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    Linear,
    Log,
}

/// What an axis measures; values come in SI units and are shown in a readable unit chosen
/// from the axis range (`Gbit/s`, `ms`, `%`, ...), named once in the axis label.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Unit {
    /// bit/s
    Rate,
    /// milliseconds (already ms)
    Ms,
    /// seconds
    Secs,
    /// bytes
    Bytes,
    /// packets
    Pkts,
    /// a probability shown in %
    Loss,
    /// a fraction of a whole (a share of the link's goodput) shown in %
    Share,
    /// a plain number
    Plain,
}

impl Unit {
    /// Divisor and unit name for values up to `max`.
    pub fn pick(self, max: f64) -> (f64, &'static str) {
        let m = max.abs();
        match self {
            Unit::Rate => {
                if m >= 1e9 {
                    (1e9, "Gbit/s")
                } else if m >= 1e6 {
                    (1e6, "Mbit/s")
                } else if m >= 1e3 {
                    (1e3, "kbit/s")
                } else {
                    (1.0, "bit/s")
                }
            }
            Unit::Ms => {
                if m >= 10_000.0 {
                    (1e3, "s")
                } else {
                    (1.0, "ms")
                }
            }
            Unit::Secs => {
                if m < 1.0 && m > 0.0 {
                    (1e-3, "ms")
                } else {
                    (1.0, "s")
                }
            }
            Unit::Bytes => {
                if m >= 1e9 {
                    (1e9, "GB")
                } else if m >= 1e6 {
                    (1e6, "MB")
                } else if m >= 1e3 {
                    (1e3, "kB")
                } else {
                    (1.0, "B")
                }
            }
            Unit::Pkts => (1.0, "packets"),
            Unit::Loss | Unit::Share => (0.01, "%"),
            Unit::Plain => (1.0, ""),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Axis {
    pub label: String,
    pub unit: Unit,
    pub scale: Scale,
    /// Linear axes: include 0 in the range.
    pub from_zero: bool,
    /// Fixed range (SI units); otherwise from the data.
    pub range: Option<(f64, f64)>,
}

impl Axis {
    pub fn new(label: &str, unit: Unit) -> Axis {
        Axis {
            label: label.to_string(),
            unit,
            scale: Scale::Linear,
            from_zero: true,
            range: None,
        }
    }
    pub fn log(mut self) -> Axis {
        self.scale = Scale::Log;
        self.from_zero = false;
        self
    }
    /// [`Axis::log`] when `log` holds.
    pub fn log_if(self, log: bool) -> Axis {
        if log {
            self.log()
        } else {
            self
        }
    }
    pub fn range(mut self, lo: f64, hi: f64) -> Axis {
        self.range = Some((lo, hi));
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Marker {
    None,
    Dot,
    /// Hollow diamond: a published figure.
    Diamond,
}

#[derive(Clone, Debug)]
pub struct Line {
    pub name: String,
    pub color: String,
    /// SVG `stroke-dasharray` of the line ("" = solid; [`DASH`] is the usual dashes).
    pub dash: &'static str,
    /// Draw the connecting line (false: markers only).
    pub line: bool,
    pub marker: Marker,
    pub width: f64,
    /// (x, y) in SI units; NaN y breaks the line.
    pub points: Vec<(f64, f64)>,
    /// Optional spread: (x, lo, hi).
    pub band: Vec<(f64, f64, f64)>,
    /// Optional tooltip per point (same length as `points`, or empty).
    pub tips: Vec<String>,
    /// Listed in the legend.
    pub legend: bool,
}

impl Line {
    pub fn new(name: &str, color: &str, points: Vec<(f64, f64)>) -> Line {
        Line {
            name: name.to_string(),
            color: color.to_string(),
            dash: "",
            line: true,
            marker: Marker::None,
            width: 1.6,
            points,
            band: Vec::new(),
            tips: Vec::new(),
            legend: true,
        }
    }
}

/// A second y axis on the right: the left axis' values times `factor`, in `unit`.
#[derive(Clone, Debug)]
pub struct RightAxis {
    pub label: String,
    pub unit: Unit,
    pub factor: f64,
}

#[derive(Clone, Debug)]
pub struct LineChart {
    pub title: String,
    pub x: Axis,
    pub y: Axis,
    pub y2: Option<RightAxis>,
    pub lines: Vec<Line>,
    /// Extra legend-only entries (name, color, marker, dash pattern: "" = solid).
    pub notes: Vec<(String, String, Marker, &'static str)>,
    pub width: f64,
    pub height: f64,
}

impl LineChart {
    pub fn new(title: &str, x: Axis, y: Axis) -> LineChart {
        LineChart {
            title: title.to_string(),
            x,
            y,
            y2: None,
            lines: Vec::new(),
            notes: Vec::new(),
            width: 640.0,
            height: 300.0,
        }
    }
}

/// The usual dashes (`stroke-dasharray`).
pub const DASH: &str = "5 3";

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

/// A "nice" step (1, 2, 2.5 or 5 times a power of ten) near `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if raw.is_nan() || raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    let m = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 2.5 {
        2.5
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * p
}

/// Linear ticks covering `[lo, hi]` with about `n` intervals; returns (domain lo, domain hi, ticks).
pub fn linear_ticks(lo: f64, hi: f64, n: usize, extend: bool) -> (f64, f64, Vec<f64>) {
    let (mut lo, mut hi) = (lo, hi);
    if hi <= lo {
        let d = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        lo -= if lo == 0.0 { 0.0 } else { d };
        hi += d;
    }
    let step = nice_step((hi - lo) / n.max(1) as f64);
    let (a, b) = if extend {
        (
            (lo / step + 1e-9).floor() * step,
            (hi / step - 1e-9).ceil() * step,
        )
    } else {
        (lo, hi)
    };
    let mut t = (a / step - 1e-9).ceil() * step;
    let mut ticks = Vec::new();
    while t <= b + step * 1e-9 {
        ticks.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        t += step;
    }
    (a, b, ticks)
}

/// Log ticks for data from `lo` to `hi`: the domain ends at the data (not at the next
/// decade), with the decades inside it, plus 2 and 5 times them when it spans under three
/// decades; the ends themselves when fewer than two ticks fall inside. A span under 2x is
/// widened around its middle to 2.25x.
pub fn log_ticks(lo: f64, hi: f64) -> (f64, f64, Vec<f64>) {
    let mut lo = lo.max(1e-300);
    let mut hi = hi.max(lo);
    let narrow = hi / lo < 2.0;
    let m = (lo * hi).sqrt();
    if narrow {
        (lo, hi) = (m / 1.5, m * 1.5);
    }
    let mults: &[f64] = if (hi / lo).log10() < 3.0 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    let (e0, e1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    for e in e0..=e1 {
        for m in mults {
            let t = m * 10f64.powi(e);
            if t >= lo * (1.0 - 1e-9) && t <= hi * (1.0 + 1e-9) {
                ticks.push(t);
            }
        }
    }
    if narrow && ticks.is_empty() {
        ticks.push(m);
    } else if !narrow && ticks.len() < 2 {
        for end in [lo, hi] {
            if !ticks.iter().any(|t| (t / end - 1.0).abs() < 0.05) {
                ticks.push(end);
            }
        }
        ticks.sort_by(f64::total_cmp);
    }
    (lo, hi, ticks)
}

/// A tick label: up to 3 significant digits, no trailing zeros.
pub fn tick_label(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    let s = if a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        let d = (-a.log10()).floor() as usize + 3;
        format!("{v:.d$}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Maps data to pixels along one axis.
struct Map1 {
    scale: Scale,
    d0: f64,
    d1: f64,
    p0: f64,
    p1: f64,
    /// Log axes: where 0 is drawn (a position left of the first decade), if used.
    zero_at: Option<f64>,
}

impl Map1 {
    fn px(&self, v: f64) -> f64 {
        match self.scale {
            Scale::Linear => self.p0 + (v - self.d0) / (self.d1 - self.d0) * (self.p1 - self.p0),
            Scale::Log => {
                if v <= 0.0 {
                    return self.zero_at.unwrap_or(self.p0);
                }
                let (l0, l1) = (self.d0.log10(), self.d1.log10());
                self.p0 + (v.log10() - l0) / (l1 - l0) * (self.p1 - self.p0)
            }
        }
    }
}

struct Ticks {
    map: Map1,
    ticks: Vec<f64>,
    div: f64,
    unit: &'static str,
}

/// Domain, ticks and unit for an axis given its data values; `p0`..`p1` is the pixel span
/// (p0 at the data minimum). `zero_room`: reserve pixels for a 0 on log axes.
fn build_axis(ax: &Axis, vals: &[f64], p0: f64, p1: f64, extend: bool, n: usize) -> Ticks {
    let finite: Vec<f64> = vals.iter().copied().filter(|v| v.is_finite()).collect();
    match ax.scale {
        Scale::Linear => {
            let (mut lo, mut hi) = ax.range.unwrap_or_else(|| {
                let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if lo.is_finite() {
                    (lo, hi)
                } else {
                    (0.0, 1.0)
                }
            });
            if ax.from_zero {
                lo = lo.min(0.0);
                hi = hi.max(0.0);
            }
            if hi == lo {
                hi = lo + if lo == 0.0 { 1.0 } else { lo.abs() };
            }
            let (div, unit) = ax.unit.pick(lo.abs().max(hi.abs()));
            let (a, b, ticks) = linear_ticks(lo / div, hi / div, n, extend && ax.range.is_none());
            let ticks = ticks.into_iter().map(|t| t * div).collect();
            Ticks {
                map: Map1 {
                    scale: Scale::Linear,
                    d0: a * div,
                    d1: b * div,
                    p0,
                    p1,
                    zero_at: None,
                },
                ticks,
                div,
                unit,
            }
        }
        Scale::Log => {
            let pos: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
            let has_zero = finite.iter().any(|v| *v <= 0.0);
            let (lo, hi) = ax.range.unwrap_or_else(|| {
                let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                if lo.is_finite() {
                    (lo, hi)
                } else {
                    (1.0, 10.0)
                }
            });
            let (div, unit) = ax.unit.pick(hi);
            let (a, b, ticks) = log_ticks(lo / div, hi / div);
            let ticks: Vec<f64> = ticks.into_iter().map(|t| t * div).collect();
            // A 0 gets its own slot before the first decade, a decade's width wide at most.
            let (q0, zero_at) = if has_zero {
                let decades = (b / a).log10().max(1.0);
                let slot = ((p1 - p0) / (decades + 1.0)).min((p1 - p0) * 0.25);
                (p0 + slot, Some(p0))
            } else {
                (p0, None)
            };
            let mut ticks = ticks;
            if has_zero {
                ticks.insert(0, 0.0);
            }
            Ticks {
                map: Map1 {
                    scale: Scale::Log,
                    d0: a * div,
                    d1: b * div,
                    p0: q0,
                    p1,
                    zero_at,
                },
                ticks,
                div,
                unit,
            }
        }
    }
}

fn axis_title(label: &str, unit: &str) -> String {
    if unit.is_empty() {
        label.to_string()
    } else {
        format!("{label} ({unit})")
    }
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

/// Render a line chart as an `<svg>` element; `id` must be unique in the page (clip path).
pub fn line_chart(c: &LineChart, id: &str) -> String {
    let (w, h) = (c.width, c.height);
    let left = 62.0;
    let right = if c.y2.is_some() { 62.0 } else { 18.0 };
    let mut items: Vec<LegendItem> = c
        .lines
        .iter()
        .filter(|l| l.legend)
        .map(|l| LegendItem {
            name: l.name.clone(),
            color: l.color.clone(),
            marker: l.marker,
            dash: l.dash,
            line: l.line,
            swatch: false,
        })
        .collect();
    for (n, col, m, d) in &c.notes {
        items.push(LegendItem {
            name: n.clone(),
            color: col.clone(),
            marker: *m,
            dash: d,
            line: *m == Marker::None,
            swatch: false,
        });
    }
    let (leg, leg_h) = legend(&items, left, 32.0, w - left - right);
    let top = 34.0 + leg_h + 6.0;
    let bottom = 44.0;
    let (px0, px1, py0, py1) = (left, w - right, h - bottom, top);

    let xs: Vec<f64> = c
        .lines
        .iter()
        .flat_map(|l| {
            l.points
                .iter()
                .map(|p| p.0)
                .chain(l.band.iter().map(|b| b.0))
        })
        .collect();
    let ys: Vec<f64> = c
        .lines
        .iter()
        .flat_map(|l| {
            l.points
                .iter()
                .map(|p| p.1)
                .chain(l.band.iter().flat_map(|b| [b.1, b.2]))
        })
        .filter(|v| c.y.scale == Scale::Linear || *v > 0.0)
        .collect();
    // The x axis ends at the data (a fixed range aside); y extends to its next tick.
    let xt = build_axis(&c.x, &xs, px0, px1, false, 6);
    let yt = build_axis(&c.y, &ys, py0, py1, true, 5);
    // A 0 on a log x axis sits left of an axis break: nothing is drawn across it.
    let broken = |a: f64, b: f64| xt.map.zero_at.is_some() && ((a <= 0.0) != (b <= 0.0));

    let mut s = svg_open(w, h, &c.title);
    s.push_str(&leg);
    // Grid and y ticks.
    let _ = write!(s, "<g font-size=\"11\" fill=\"{MUTED}\">");
    y_grid(&mut s, &yt, px0, px1);
    x_grid(&mut s, &xt, py0, py1);
    if let Some(z) = xt.map.zero_at {
        // Axis break between 0 and the first decade.
        let xb = (z + xt.map.p0) / 2.0;
        let _ = write!(
            s,
            "<path d=\"M{},{}l4,-8M{},{}l4,-8\" stroke=\"{MUTED}\" fill=\"none\"/>",
            r1(xb - 4.0),
            r1(py0 + 4.0),
            r1(xb),
            r1(py0 + 4.0)
        );
    }
    if let Some(r) = &c.y2 {
        let lo = yt.map.d0 * r.factor;
        let hi = yt.map.d1 * r.factor;
        let (div, unit) = r.unit.pick(lo.abs().max(hi.abs()));
        let (_, _, ticks) = linear_ticks(lo / div, hi / div, 5, false);
        for t in ticks {
            let y = py0 + (t * div - lo) / (hi - lo) * (py1 - py0);
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\">{}</text>",
                r1(px1 + 6.0),
                r1(y + 4.0),
                tick_label(t)
            );
        }
        let _ = write!(
            s,
            "<text transform=\"translate({},{}) rotate(90)\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text>",
            r1(w - 12.0),
            r1((py0 + py1) / 2.0),
            esc(&axis_title(&r.label, unit))
        );
    }
    s.push_str("</g>");
    // Frame and axis titles.
    let _ = write!(
        s,
        "<path d=\"M{},{}V{}H{}\" fill=\"none\" stroke=\"#8c959f\"/>",
        r1(px0),
        r1(py1),
        r1(py0),
        r1(px1)
    );
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text>",
        r1((px0 + px1) / 2.0),
        r1(h - 8.0),
        esc(&axis_title(&c.x.label, xt.unit))
    );
    let _ = write!(
        s,
        "<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text>",
        r1((py0 + py1) / 2.0),
        esc(&axis_title(&c.y.label, yt.unit))
    );
    // Data, clipped to the plot area.
    let _ = write!(
        s,
        "<clipPath id=\"clip-{id}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath><g class=\"data\" clip-path=\"url(#clip-{id})\">",
        r1(px0 - 6.0),
        r1(py1 - 6.0),
        r1(px1 - px0 + 12.0),
        r1(py0 - py1 + 12.0)
    );
    let ypx = |v: f64| -> f64 {
        if c.y.scale == Scale::Log && v <= 0.0 {
            py0 + 4.0
        } else {
            yt.map.px(v)
        }
    };
    for l in &c.lines {
        // The band in pieces that do not cross an axis break.
        let mut pieces: Vec<&[(f64, f64, f64)]> = Vec::new();
        let mut from = 0;
        for i in 1..=l.band.len() {
            if i == l.band.len() || broken(l.band[i - 1].0, l.band[i].0) {
                pieces.push(&l.band[from..i]);
                from = i;
            }
        }
        for band in pieces {
            band_svg(&mut s, band, &l.color, &|x| xt.map.px(x), &ypx);
        }
        if l.line && l.points.len() >= 2 {
            // Runs of finite points, broken at NaN and at an axis break.
            let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
            let mut last_x = f64::NAN;
            for &(x, y) in &l.points {
                if !y.is_finite() || broken(last_x, x) {
                    runs.push(Vec::new());
                }
                last_x = x;
                if y.is_finite() {
                    runs.last_mut().expect("a run").push((x, y));
                }
            }
            let mut d = String::new();
            for run in runs.iter().filter(|r| r.len() >= 2) {
                for (i, (x, y)) in run.iter().enumerate() {
                    let _ = write!(
                        d,
                        "{}{},{}",
                        match (i, d.is_empty()) {
                            (0, true) => "M",
                            (0, false) => " M",
                            (1, _) => "L",
                            _ => " ",
                        },
                        r1(xt.map.px(*x)),
                        r1(ypx(*y))
                    );
                }
            }
            let _ = write!(
                s,
                "<path class=\"ln\" d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" stroke-linejoin=\"round\"{}/>",
                l.color,
                l.width,
                dash_attr(l.dash)
            );
        }
        if l.marker != Marker::None || l.points.len() == 1 {
            let m = if l.marker == Marker::None {
                Marker::Dot
            } else {
                l.marker
            };
            for (i, (x, y)) in l.points.iter().enumerate() {
                if y.is_finite() {
                    let tip = l.tips.get(i).map(String::as_str).unwrap_or("");
                    s.push_str(&marker_svg(m, xt.map.px(*x), ypx(*y), &l.color, tip));
                }
            }
        }
    }
    s.push_str("</g></svg>");
    s
}

/// A min-max band: a filled area over two or more x values, an error bar over one.
fn band_svg(
    s: &mut String,
    band: &[(f64, f64, f64)],
    color: &str,
    xpx: &dyn Fn(f64) -> f64,
    ypx: &dyn Fn(f64) -> f64,
) {
    if band.len() >= 2 {
        let mut d = String::new();
        for (i, (x, lo, _)) in band.iter().enumerate() {
            let _ = write!(
                d,
                "{}{},{}",
                if i == 0 { "M" } else { " " },
                r1(xpx(*x)),
                r1(ypx(*lo))
            );
        }
        for (x, _, hi) in band.iter().rev() {
            let _ = write!(d, " {},{}", r1(xpx(*x)), r1(ypx(*hi)));
        }
        let _ = write!(
            s,
            "<path d=\"{d}Z\" fill=\"{color}\" fill-opacity=\"0.16\" stroke=\"none\"/>"
        );
    } else if band.len() == 1 {
        let (x, lo, hi) = band[0];
        let x = xpx(x);
        let _ = write!(
                s,
                "<path d=\"M{},{}V{}M{},{}h8M{},{}h8\" stroke=\"{}\" stroke-width=\"1.4\" fill=\"none\"/>",
                r1(x),
                r1(ypx(lo)),
                r1(ypx(hi)),
                r1(x - 4.0),
                r1(ypx(lo)),
                r1(x - 4.0),
                r1(ypx(hi)),
                color
            );
    }
}

#[derive(Clone, Debug)]
pub struct Bar {
    /// Index into `BarChart::groups`.
    pub group: usize,
    pub color: String,
    /// Series name (legend).
    pub series: String,
    pub value: f64,
    /// Spread (min, max) over repeats.
    pub spread: Option<(f64, f64)>,
    /// A published figure drawn as a marker on the bar.
    pub reference: Option<f64>,
    pub label: String,
    pub tip: String,
}

#[derive(Clone, Debug)]
pub struct BarChart {
    pub title: String,
    pub y: Axis,
    /// Group labels under the x axis; `\n` separates lines.
    pub groups: Vec<String>,
    pub x_label: String,
    pub bars: Vec<Bar>,
    pub width: f64,
    pub height: f64,
}

/// A box on the chart (px), for keeping labels apart.
#[derive(Clone, Copy, Debug)]
struct Rect {
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
}

impl Rect {
    /// Overlaps `o` or comes within `gap` px of it.
    fn hits(&self, o: &Rect, gap: f64) -> bool {
        self.x0 < o.x1 + gap && o.x0 < self.x1 + gap && self.y0 < o.y1 + gap && o.y0 < self.y1 + gap
    }
}

/// The lines of the bar groups' labels and their font size, so that every line fits in
/// `width` px: as given; else each `key value` line split into two; else smaller (down to
/// 8 px).
fn group_labels(groups: &[String], width: f64) -> (Vec<Vec<String>>, f64) {
    let widest = |g: &[Vec<String>], size: f64| {
        g.iter()
            .flatten()
            .map(|l| text_w(l, size))
            .fold(0.0, f64::max)
    };
    let mut lines: Vec<Vec<String>> = groups
        .iter()
        .map(|g| g.lines().map(String::from).collect())
        .collect();
    if widest(&lines, 11.0) > width {
        lines = lines
            .into_iter()
            .map(|g| {
                g.into_iter()
                    .flat_map(|l| match l.split_once(' ') {
                        Some((k, v)) => vec![k.to_string(), v.to_string()],
                        None => vec![l],
                    })
                    .collect()
            })
            .collect();
    }
    let w = widest(&lines, 11.0);
    let size = if w > width && w > 0.0 {
        (11.0 * width / w).max(8.0)
    } else {
        11.0
    };
    (lines, size)
}

/// Grouped bars: within a group, bars in the order given.
pub fn bar_chart(c: &BarChart, id: &str) -> String {
    let (w, h) = (c.width, c.height);
    let left = 62.0;
    let right = 18.0;
    let mut items: Vec<LegendItem> = Vec::new();
    for b in &c.bars {
        if !items.iter().any(|i| i.name == b.series) {
            items.push(LegendItem {
                name: b.series.clone(),
                color: b.color.clone(),
                marker: Marker::None,
                dash: "",
                line: false,
                swatch: true,
            });
        }
    }
    if c.bars.iter().any(|b| b.reference.is_some()) {
        items.push(LegendItem {
            name: "published figure".into(),
            color: INK.into(),
            marker: Marker::Diamond,
            dash: "",
            line: false,
            swatch: false,
        });
    }
    if c.bars.iter().any(|b| b.spread.is_some()) {
        items.push(LegendItem {
            name: "min–max over seeds".into(),
            color: INK.into(),
            marker: Marker::None,
            dash: "",
            line: true,
            swatch: false,
        });
    }
    let (leg, leg_h) = legend(&items, left, 32.0, w - left - right);
    // Room above the bars for their value labels.
    let top = 34.0 + leg_h + 20.0;
    let ng = c.groups.len().max(1) as f64;
    let gw = (w - right - left) / ng;
    let (glines, gsize) = group_labels(&c.groups, gw - 6.0);
    let max_lines = glines.iter().map(Vec::len).max().unwrap_or(1) as f64;
    let bottom =
        10.0 + (gsize + 3.0) * max_lines + 8.0 + if c.x_label.is_empty() { 0.0 } else { 16.0 };
    let (px0, px1, py0, py1) = (left, w - right, h - bottom, top);
    let ys: Vec<f64> = c
        .bars
        .iter()
        .flat_map(|b| [Some(b.value), b.reference, b.spread.map(|s| s.1)])
        .flatten()
        .collect();
    let yt = build_axis(&c.y, &ys, py0, py1, true, 5);
    let mut s = svg_open(w, h, &c.title);
    s.push_str(&leg);
    let _ = write!(s, "<g font-size=\"11\" fill=\"{MUTED}\">");
    y_grid(&mut s, &yt, px0, px1);
    for (i, g) in glines.iter().enumerate() {
        let cx = px0 + gw * (i as f64 + 0.5);
        for (j, line) in g.iter().enumerate() {
            let _ = write!(
                s,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"{}\"{}>{}</text>",
                r1(cx),
                r1(py0 + 6.0 + gsize + (gsize + 3.0) * j as f64),
                r1(gsize),
                if j == 0 {
                    format!(" fill=\"{INK}\"")
                } else {
                    String::new()
                },
                esc(line)
            );
        }
    }
    s.push_str("</g>");
    let _ = write!(
        s,
        "<path d=\"M{},{}V{}H{}\" fill=\"none\" stroke=\"#8c959f\"/>",
        r1(px0),
        r1(py1),
        r1(py0),
        r1(px1)
    );
    if !c.x_label.is_empty() {
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text>",
            r1((px0 + px1) / 2.0),
            r1(h - 8.0),
            esc(&c.x_label)
        );
    }
    let _ = write!(
        s,
        "<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text>",
        r1((py0 + py1) / 2.0),
        esc(&axis_title(&c.y.label, yt.unit))
    );
    let _ = write!(s, "<g class=\"data\">");
    // Bars, error bars and published markers; then the value labels, each where it
    // overlaps nothing (in full, else without the axis' unit, else left to the tooltip).
    let mut placed: Vec<Rect> = Vec::new();
    let mut obstacles: Vec<(usize, Rect)> = Vec::new();
    let mut labels: Vec<(usize, f64, f64, &Bar, f64)> = Vec::new();
    for (gi, _) in c.groups.iter().enumerate() {
        let bars: Vec<&Bar> = c.bars.iter().filter(|b| b.group == gi).collect();
        let n = bars.len().max(1) as f64;
        let inner = gw * 0.76;
        let bw = (inner / n).min(90.0);
        let x0 = px0 + gw * gi as f64 + (gw - bw * n) / 2.0;
        for (k, b) in bars.iter().enumerate() {
            let x = x0 + bw * k as f64 + bw * 0.08;
            let bwi = bw * 0.84;
            let y = yt.map.px(b.value.max(0.0));
            let _ = write!(
                s,
                "<rect class=\"bar\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"2\" fill=\"{}\"><title>{}</title></rect>",
                r1(x),
                r1(y),
                r1(bwi),
                r1((py0 - y).max(0.0)),
                b.color,
                esc(&b.tip)
            );
            let cx = x + bwi / 2.0;
            let mut label_y = y;
            if let Some((lo, hi)) = b.spread {
                let (ylo, yhi) = (yt.map.px(lo), yt.map.px(hi));
                let _ = write!(
                    s,
                    "<path d=\"M{},{}V{}M{},{}h10M{},{}h10\" stroke=\"{INK}\" stroke-width=\"1.3\" fill=\"none\"/>",
                    r1(cx),
                    r1(ylo),
                    r1(yhi),
                    r1(cx - 5.0),
                    r1(ylo),
                    r1(cx - 5.0),
                    r1(yhi)
                );
                label_y = label_y.min(yhi);
            }
            if let Some(rv) = b.reference {
                let yr = yt.map.px(rv);
                let _ = write!(
                    s,
                    "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{INK}\" stroke-width=\"1.5\" stroke-dasharray=\"3 2\"/>",
                    r1(x - 3.0),
                    r1(yr),
                    r1(x + bwi + 3.0),
                    r1(yr)
                );
                s.push_str(&marker_svg(
                    Marker::Diamond,
                    cx,
                    yr,
                    INK,
                    &format!(
                        "published: {}",
                        b.tip.split(" · published ").nth(1).unwrap_or("")
                    ),
                ));
                label_y = label_y.min(yr - 6.0);
            }
            let i = labels.len();
            obstacles.push((
                i,
                Rect {
                    x0: x - 3.0,
                    y0: label_y,
                    x1: x + bwi + 3.0,
                    y1: py0,
                },
            ));
            labels.push((i, cx, label_y, b, bw));
        }
    }
    // Labels with their unit when every one fits its bar's slot, else all without it (the
    // axis names the unit); then each only where it overlaps nothing.
    let short_unit = format!(" {}", yt.unit);
    let full_fits = labels
        .iter()
        .all(|(_, _, _, b, slot)| text_w_bold(&b.label, 11.0) <= *slot);
    for (i, cx, label_y, b, slot) in labels {
        if b.label.is_empty() {
            continue;
        }
        let base = label_y - 5.0;
        let short = b.label.strip_suffix(&short_unit);
        let mut texts = Vec::new();
        if full_fits || short.is_none() {
            texts.push(b.label.as_str());
        }
        texts.extend(short);
        for t in texts {
            let tw = text_w_bold(t, 11.0);
            let r = Rect {
                x0: cx - tw / 2.0,
                y0: base - 10.0,
                x1: cx + tw / 2.0,
                y1: base + 3.0,
            };
            let fits = tw <= slot + 4.0
                && r.x0 >= 1.0
                && r.x1 <= w - 1.0
                && r.y0 >= 30.0 + leg_h
                && !placed.iter().any(|p| p.hits(&r, 2.0))
                && !obstacles.iter().any(|(j, o)| *j != i && o.hits(&r, 1.0));
            if fits {
                let _ = write!(
                    s,
                    "<text class=\"vl\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" font-weight=\"600\" fill=\"{INK}\">{}</text>",
                    r1(cx),
                    r1(base),
                    esc(t)
                );
                placed.push(r);
                break;
            }
        }
    }
    let _ = id;
    s.push_str("</g></svg>");
    s
}

/// One point of a [`Scatter`]: x and y in SI units; an optional x range (error bar).
#[derive(Clone, Debug)]
pub struct ScatterPoint {
    pub x: f64,
    pub y: f64,
    /// Drawn as a horizontal error bar (min, max).
    pub x_range: Option<(f64, f64)>,
    pub color: String,
    pub tip: String,
}

/// A scatter of y against x on equal log axes (the same unit on both), with the y = x line
/// and a relative band around it: model against measurement.
#[derive(Clone, Debug)]
pub struct Scatter {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub unit: Unit,
    pub points: Vec<ScatterPoint>,
    /// Half-width of the band around y = x, relative (0.1: ±10%); 0 for none.
    pub band: f64,
    /// Legend entries for the point colours (name, colour).
    pub legend: Vec<(String, String)>,
    pub width: f64,
    pub height: f64,
}

/// Render a [`Scatter`] as an `<svg>` element (log axes; values <= 0 are drawn hollow at the
/// axis minimum). `id` must be unique in the page (clip path).
pub fn scatter(c: &Scatter, id: &str) -> String {
    let (w, h) = (c.width, c.height);
    let (left, right, bottom) = (62.0, 18.0, 44.0);
    let mut items: Vec<LegendItem> = c
        .legend
        .iter()
        .map(|(n, col)| LegendItem {
            name: n.clone(),
            color: col.clone(),
            marker: Marker::Dot,
            dash: "",
            line: false,
            swatch: false,
        })
        .collect();
    items.push(LegendItem {
        name: "y = x".into(),
        color: MUTED.into(),
        marker: Marker::None,
        dash: "4 3",
        line: true,
        swatch: false,
    });
    if c.band > 0.0 {
        items.push(LegendItem {
            name: format!("±{}%", tick_label(c.band * 100.0)),
            color: "#cfe8d5".into(),
            marker: Marker::None,
            dash: "",
            line: false,
            swatch: true,
        });
    }
    if c.points.iter().any(|p| p.x_range.is_some()) {
        items.push(LegendItem {
            name: format!("{} min–max", c.x_label.split(' ').next().unwrap_or("x")),
            color: INK.into(),
            marker: Marker::None,
            dash: "",
            line: true,
            swatch: false,
        });
    }
    let (leg, leg_h) = legend(&items, left, 32.0, w - left - right);
    let top = 34.0 + leg_h + 6.0;
    let (px0, px1, py0, py1) = (left, w - right, h - bottom, top);
    let pos: Vec<f64> = c
        .points
        .iter()
        .flat_map(|p| {
            let (a, b) = p.x_range.unwrap_or((p.x, p.x));
            [p.x, p.y, a, b]
        })
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let lo = pos.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = pos.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // A little room around the points: the axes end near the data, not on it.
    let (lo, hi) = if lo.is_finite() {
        (lo / 1.15, hi * 1.15)
    } else {
        (1.0, 10.0)
    };
    let ax = |label: &str| Axis::new(label, c.unit).log().range(lo, hi);
    let xt = build_axis(&ax(&c.x_label), &[lo, hi], px0, px1, true, 6);
    let yt = build_axis(&ax(&c.y_label), &[lo, hi], py0, py1, true, 5);
    let (d0, d1) = (xt.map.d0, xt.map.d1);
    let fx = |v: f64| xt.map.px(v.max(d0));
    let fy = |v: f64| yt.map.px(v.max(d0));
    let mut s = svg_open(w, h, &c.title);
    s.push_str(&leg);
    let _ = write!(s, "<g font-size=\"11\" fill=\"{MUTED}\">");
    y_grid(&mut s, &yt, px0, px1);
    x_grid(&mut s, &xt, py0, py1);
    s.push_str("</g>");
    let _ = write!(
        s,
        "<path d=\"M{},{}V{}H{}\" fill=\"none\" stroke=\"#8c959f\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text><text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text>",
        r1(px0),
        r1(py1),
        r1(py0),
        r1(px1),
        r1((px0 + px1) / 2.0),
        r1(h - 8.0),
        esc(&axis_title(&c.x_label, xt.unit)),
        r1((py0 + py1) / 2.0),
        esc(&axis_title(&c.y_label, yt.unit))
    );
    let _ = write!(
        s,
        "<clipPath id=\"clip-{id}\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath><g clip-path=\"url(#clip-{id})\">",
        r1(px0),
        r1(py1),
        r1(px1 - px0),
        r1(py0 - py1)
    );
    if c.band > 0.0 {
        let (a, b) = (1.0 - c.band, 1.0 + c.band);
        let _ = write!(
            s,
            "<path class=\"band\" d=\"M{},{}L{},{}L{},{}L{},{}Z\" fill=\"#cfe8d5\" fill-opacity=\"0.7\" stroke=\"none\"/>",
            r1(xt.map.px(d0)),
            r1(yt.map.px(d0 * a)),
            r1(xt.map.px(d1)),
            r1(yt.map.px(d1 * a)),
            r1(xt.map.px(d1)),
            r1(yt.map.px(d1 * b)),
            r1(xt.map.px(d0)),
            r1(yt.map.px(d0 * b))
        );
    }
    let _ = write!(
        s,
        "<path class=\"diag\" d=\"M{},{}L{},{}\" stroke=\"{MUTED}\" stroke-width=\"1.2\" stroke-dasharray=\"4 3\" fill=\"none\"/></g><g class=\"data\" clip-path=\"url(#clip-{id})\">",
        r1(xt.map.px(d0)),
        r1(yt.map.px(d0)),
        r1(xt.map.px(d1)),
        r1(yt.map.px(d1))
    );
    for p in &c.points {
        let y = fy(p.y);
        if let Some((a, b)) = p.x_range {
            let _ = write!(
                s,
                "<path class=\"eb\" d=\"M{},{}H{}M{},{}v6M{},{}v6\" stroke=\"{}\" stroke-width=\"1.2\" stroke-opacity=\"0.7\" fill=\"none\"/>",
                r1(fx(a)),
                r1(y),
                r1(fx(b)),
                r1(fx(a)),
                r1(y - 3.0),
                r1(fx(b)),
                r1(y - 3.0),
                p.color
            );
        }
        let hollow = p.x <= 0.0 || p.y <= 0.0;
        let _ = write!(
            s,
            "<circle class=\"pt\" cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.85\" stroke=\"{}\" stroke-width=\"{}\"><title>{}</title></circle>",
            r1(fx(p.x)),
            r1(y),
            if hollow { "#fff" } else { &p.color },
            if hollow { &p.color } else { "#fff" },
            if hollow { "1.6" } else { "0.8" },
            esc(&p.tip)
        );
    }
    s.push_str("</g></svg>");
    s
}

/// Reduce a series to at most `max` points, keeping each bucket's min and max (in time
/// order) so that spikes survive.
pub fn downsample(t: &[f64], v: &[f64], max: usize) -> Vec<(f64, f64)> {
    let n = t.len().min(v.len());
    if n <= max || max < 4 {
        return (0..n).map(|i| (t[i], v[i])).collect();
    }
    let buckets = max / 2;
    let size = n.div_ceil(buckets);
    let mut out = Vec::with_capacity(max);
    let mut i = 0;
    while i < n {
        let end = (i + size).min(n);
        let (mut lo, mut hi) = (i, i);
        for k in i..end {
            if v[k] < v[lo] {
                lo = k;
            }
            if v[k] > v[hi] {
                hi = k;
            }
        }
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push((t[a], v[a]));
        if b != a {
            out.push((t[b], v[b]));
        }
        i = end;
    }
    out
}

/// Horizontal grid lines and their tick labels on the left of the plot area.
/// Vertical grid lines at the x ticks, with their labels under the plot.
fn x_grid(s: &mut String, xt: &Ticks, py0: f64, py1: f64) {
    for t in &xt.ticks {
        let x = xt.map.px(*t);
        let _ = write!(
            s,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{GRID}\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            r1(x),
            r1(py1),
            r1(x),
            r1(py0),
            r1(x),
            r1(py0 + 16.0),
            tick_label(t / xt.div)
        );
    }
}

fn y_grid(s: &mut String, yt: &Ticks, px0: f64, px1: f64) {
    for t in &yt.ticks {
        let y = yt.map.px(*t);
        let _ = write!(
            s,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{GRID}\"/>",
            r1(px0),
            r1(y),
            r1(px1),
            r1(y)
        );
        let _ = write!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            r1(px0 - 6.0),
            r1(y + 4.0),
            tick_label(t / yt.div)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_linear_ticks() {
        let (a, b, t) = linear_ticks(0.0, 9.65, 5, true);
        assert_eq!((a, b), (0.0, 10.0));
        assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        let (_, _, t) = linear_ticks(0.0, 0.37, 5, true);
        assert_eq!(t.len(), 5, "{t:?}"); // 0, 0.1 .. 0.4
        assert!((t[4] - 0.4).abs() < 1e-12);
    }

    #[test]
    fn log_ticks_end_at_the_data() {
        let (a, b, t) = log_ticks(1e-4, 0.01);
        assert!((a - 1e-4).abs() < 1e-18 && (b - 0.01).abs() < 1e-15);
        assert_eq!(t.len(), 7, "{t:?}"); // 1, 2, 5 x 1e-4 .. 1e-2
        let (a, b, t) = log_ticks(6.0, 40.0);
        assert_eq!((a, b), (6.0, 40.0));
        assert_eq!(t, vec![10.0, 20.0]);
        // Five decades: decades only.
        let (_, _, t) = log_ticks(1.0, 1e5);
        assert_eq!(t.len(), 6);
        // Fewer than two ticks inside: the ends.
        assert_eq!(log_ticks(3.0, 8.0), (3.0, 8.0, vec![3.0, 5.0, 8.0]));
        // One value: a tick at it, the axis around it.
        let (a, b, t) = log_ticks(0.01, 0.01);
        assert!(
            a < 0.01 && b > 0.01 && t.len() == 1 && (t[0] - 0.01).abs() < 1e-12,
            "{a} {b} {t:?}"
        );
    }

    #[test]
    fn labels() {
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(tick_label(0.001), "0.001");
        assert_eq!(tick_label(1000.0), "1000");
        assert_eq!(tick_label(0.0), "0");
    }

    #[test]
    fn downsample_keeps_extremes() {
        let t: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
        let mut v = vec![1.0; 10_000];
        v[5_000] = 99.0;
        let d = downsample(&t, &v, 1000);
        assert!(d.len() <= 1000);
        assert!(d.iter().any(|p| p.1 == 99.0));
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn chart_has_lines_legend_and_units() {
        let mut c = LineChart::new(
            "goodput",
            Axis::new("time", Unit::Secs).range(0.0, 5.0),
            Axis::new("goodput", Unit::Rate),
        );
        c.lines.push(Line::new(
            "flow 0 (cubic)",
            "#2563eb",
            vec![(0.1, 9e9), (0.2, 9.6e9)],
        ));
        let s = line_chart(&c, "t");
        assert!(s.contains("goodput (Gbit/s)"), "{s}");
        assert!(s.contains("time (s)"));
        assert!(s.contains("flow 0 (cubic)"));
        assert!(s.contains("class=\"ln\""));
    }

    #[test]
    fn scatter_has_diagonal_band_error_bars_and_tips() {
        let c = Scatter {
            title: "goodput".into(),
            x_label: "kernel".into(),
            y_label: "simulator".into(),
            unit: Unit::Rate,
            points: vec![
                ScatterPoint {
                    x: 9e6,
                    y: 9.2e6,
                    x_range: Some((8e6, 9.5e6)),
                    color: "#1c64d8".into(),
                    tip: "cal-a · cubic".into(),
                },
                ScatterPoint {
                    x: 90e6,
                    y: 0.0,
                    x_range: None,
                    color: "#e8590c".into(),
                    tip: "cal-b · bbr".into(),
                },
            ],
            band: 0.1,
            legend: vec![("cubic".into(), "#1c64d8".into())],
            width: 500.0,
            height: 460.0,
        };
        let s = scatter(&c, "s");
        assert_eq!(s.matches("class=\"pt\"").count(), 2);
        assert_eq!(s.matches("class=\"eb\"").count(), 1);
        assert!(s.contains("class=\"diag\"") && s.contains("class=\"band\""));
        assert!(s.contains("<title>cal-a · cubic</title>") && s.contains("±10%"));
        assert!(
            s.contains("kernel (Mbit/s)") && s.contains("simulator (Mbit/s)"),
            "{s}"
        );
        // A 0 is drawn hollow at the axis minimum.
        assert!(s.contains("fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#e8590c\""));
    }

    /// The `d` of every `class="ln"` path.
    fn paths(svg: &str) -> Vec<&str> {
        svg.split("class=\"ln\" d=\"")
            .skip(1)
            .map(|p| p.split('"').next().unwrap())
            .collect()
    }

    #[test]
    fn loss_axis_ends_at_the_data_and_no_line_crosses_the_break() {
        let mut c = LineChart::new(
            "g vs loss",
            Axis::new("loss", Unit::Loss).log(),
            Axis::new("goodput", Unit::Rate),
        );
        let mut l = Line::new(
            "cubic",
            "#000",
            vec![(0.0, 47e6), (0.005, 10e6), (0.01, 5e6), (0.02, 3.5e6)],
        );
        l.band = vec![(0.0, 46e6, 48e6), (0.005, 9e6, 11e6), (0.01, 4e6, 6e6)];
        c.lines.push(l);
        let s = line_chart(&c, "t");
        // Ticks 0, 0.5, 1, 2 (%), nothing up to 10%.
        let xt = |t: &str| format!("text-anchor=\"middle\">{t}<");
        for t in ["0", "0.5", "1", "2"] {
            assert!(s.contains(&xt(t)), "tick {t}: {s}");
        }
        assert!(!s.contains(&xt("10")) && !s.contains(&xt("5")), "{s}");
        // One line from 0.5% on: three points, one move.
        let p = paths(&s);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].matches('M').count(), 1, "{}", p[0]);
        assert_eq!(p[0].matches(',').count(), 3, "{}", p[0]);
        // The band: an error bar at 0, an area from 0.5% on (no area across the break).
        assert_eq!(s.matches("fill-opacity=\"0.16\"").count(), 1);
        assert_eq!(s.matches("h8M").count(), 1);
        // A linear x axis ends at the data too (no 0, no round-up past 4).
        let mut c = LineChart::new(
            "g vs buffer",
            Axis {
                from_zero: false,
                ..Axis::new("buffer (× BDP)", Unit::Plain)
            },
            Axis::new("goodput", Unit::Rate),
        );
        c.lines.push(Line::new(
            "bbr",
            "#000",
            vec![(0.5, 1e6), (1.0, 2e6), (4.0, 3e6)],
        ));
        let s = line_chart(&c, "t");
        let xs: Vec<&str> = s
            .split("text-anchor=\"middle\">")
            .skip(1)
            .map(|t| t.split('<').next().unwrap())
            .collect();
        assert_eq!(xs, ["1", "2", "3", "4"]);
    }

    /// (x, y, text) of every value label.
    fn value_labels(svg: &str) -> Vec<(f64, f64, String)> {
        svg.split("<text class=\"vl\" x=\"")
            .skip(1)
            .map(|t| {
                let x: f64 = t.split('"').next().unwrap().parse().unwrap();
                let y: f64 = t
                    .split("y=\"")
                    .nth(1)
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                let text = t.split('>').nth(1).unwrap().split('<').next().unwrap();
                (x, y, text.to_string())
            })
            .collect()
    }

    fn bars(values: &[(usize, &str, f64)], groups: usize, width: f64) -> BarChart {
        BarChart {
            title: "g".into(),
            y: Axis::new("goodput", Unit::Rate),
            groups: (0..groups)
                .map(|g| format!("loss {g}%\nrtt 231 ms"))
                .collect(),
            x_label: String::new(),
            bars: values
                .iter()
                .map(|(g, cc, v)| Bar {
                    group: *g,
                    color: "#000".into(),
                    series: cc.to_string(),
                    value: *v,
                    spread: None,
                    reference: None,
                    label: format!("{:.1} Mbit/s", v / 1e6),
                    tip: String::new(),
                })
                .collect(),
            width,
            height: 300.0,
        }
    }

    #[test]
    fn bar_labels_never_overlap_or_leave_the_chart() {
        // Wide enough: full labels.
        let c = bars(&[(0, "cubic", 47.0e6), (0, "bbr", 46.3e6)], 1, 640.0);
        let v = value_labels(&bar_chart(&c, "b"));
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|l| l.2.ends_with("Mbit/s")), "{v:?}");
        // Narrow slots (the "47.0 Mbi46.3 Mbit/s" case): numbers only, apart.
        let many: Vec<(usize, &str, f64)> = (0..8)
            .flat_map(|g| [(g, "cubic", 47.0e6), (g, "bbr", 46.3e6)])
            .collect();
        let c = bars(&many, 8, 640.0);
        let s = bar_chart(&c, "b");
        let v = value_labels(&s);
        assert!(!v.is_empty());
        assert!(v.iter().all(|l| !l.2.contains("Mbit")), "{v:?}");
        let boxes: Vec<(f64, f64, f64)> = v
            .iter()
            .map(|(x, y, t)| {
                let w = text_w_bold(t, 11.0);
                (x - w / 2.0, x + w / 2.0, *y)
            })
            .collect();
        for (i, a) in boxes.iter().enumerate() {
            assert!(a.0 >= 0.0 && a.1 <= 640.0 && a.2 > 20.0, "{a:?}");
            for b in &boxes[i + 1..] {
                let apart = a.1 <= b.0 || b.1 <= a.0 || (a.2 - b.2).abs() >= 13.0;
                assert!(apart, "labels overlap: {a:?} {b:?}");
            }
        }
        // Group labels too wide for their slot are split (key over value) to fit.
        let (lines, size) = group_labels(&c.groups, 64.0);
        assert_eq!(
            (&lines[0][..], size),
            (&["loss 0%", "rtt 231 ms"].map(String::from)[..], 11.0)
        );
        let (lines, size) = group_labels(&c.groups, 40.0);
        assert_eq!(lines[0], ["loss", "0%", "rtt", "231 ms"]);
        assert!(lines[0].iter().all(|l| text_w(l, size) <= 40.0), "{size}");
    }

    #[test]
    fn log_axis_places_zero_left_of_first_decade() {
        let mut c = LineChart::new(
            "g vs loss",
            Axis::new("loss", Unit::Loss).log(),
            Axis::new("goodput", Unit::Rate),
        );
        c.lines.push(Line::new(
            "cubic",
            "#000",
            vec![(0.0, 9e9), (0.001, 5e9), (0.01, 2e8)],
        ));
        let s = line_chart(&c, "t");
        assert!(s.contains("loss (%)"));
        assert!(
            s.contains(">0.1<") && s.contains(">1<") && s.contains(">0<"),
            "{s}"
        );
    }
}
