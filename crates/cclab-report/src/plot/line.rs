//! Line charts: lines with markers and min-max bands, an optional second y axis, and the
//! downsampling of long series.

use super::axis::{
    axis_title, build_axis, linear_ticks, tick_label, x_grid, y_grid, Axis, Scale, Unit,
};
use super::{dash_attr, esc, frame, legend, marker_svg, r1, svg_open, LegendItem, INK, MUTED};
use std::fmt::Write;

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
/// Dots (`stroke-dasharray`): a secondary estimate drawn beside a measured line.
pub const DOT: &str = "1.5 2.5";

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
    frame(&mut s, px0, py1, py0, px1);
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
