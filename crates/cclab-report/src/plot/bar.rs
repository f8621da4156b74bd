//! Grouped bar charts with error bars, reference markers and value labels that never
//! overlap.

use super::axis::{axis_title, build_axis, y_grid, Axis};
use super::line::Marker;
use super::{
    esc, frame, legend, marker_svg, r1, svg_open, text_w, text_w_bold, LegendItem, INK, MUTED,
};
use std::fmt::Write;

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
pub(super) fn group_labels(groups: &[String], width: f64) -> (Vec<Vec<String>>, f64) {
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
        items.push(LegendItem::range("min–max over seeds".into()));
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
    frame(&mut s, px0, py1, py0, px1);
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
