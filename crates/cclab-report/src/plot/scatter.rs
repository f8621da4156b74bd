//! Scatter charts of y against x on equal log axes: the y = x line, a relative band around
//! it and horizontal error bars (model against measurement).

use super::axis::{axis_title, build_axis, tick_label, x_grid, y_grid, Axis, Unit};
use super::line::Marker;
use super::{esc, frame, legend, r1, svg_open, LegendItem, INK, MUTED};
use std::fmt::Write;

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
        items.push(LegendItem::range(format!(
            "{} min–max",
            c.x_label.split(' ').next().unwrap_or("x")
        )));
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
    frame(&mut s, px0, py1, py0, px1);
    let _ = write!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text><text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\" font-size=\"12\" fill=\"{INK}\">{}</text>",
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
