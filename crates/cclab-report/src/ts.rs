//! Time-series charts drawn twice: as a static SVG line chart (what the page shows without
//! script, and what the SVG and PNG buttons export) and as data for the interactive chart
//! the page's script builds over it with uPlot (zoom, pan, values on hover, series toggled
//! from the legend).
//!
//! The lines of one chart may come from several results documents (an overlay) whose time
//! bins need not coincide: the data is put on the union of their times, a line having no
//! value (`null`) at the others' times, and decimated on that shared grid (each bucket keeps
//! every line's minimum and maximum, so spikes survive) to at most `max_points` times.

use crate::plot::{self, Axis, Line, LineChart, Marker, RightAxis, Unit};
use serde_json::{json, Value};

/// One line of a time-series chart.
#[derive(Clone, Debug)]
pub struct TsLine<'a> {
    pub name: String,
    pub color: String,
    /// `stroke-dasharray` ("" solid).
    pub dash: &'static str,
    pub width: f64,
    /// Listed in the static chart's legend (the interactive legend lists every line).
    pub legend: bool,
    /// The name in the static chart's legend, when not `name`.
    pub legend_name: Option<String>,
    /// Times (s), increasing.
    pub t: &'a [f64],
    /// Values (SI units), one per time.
    pub v: Vec<f64>,
}

impl<'a> TsLine<'a> {
    pub fn new(name: &str, color: &str, t: &'a [f64], v: Vec<f64>) -> TsLine<'a> {
        TsLine {
            name: name.to_string(),
            color: color.to_string(),
            dash: "",
            width: 1.6,
            legend: true,
            legend_name: None,
            t,
            v,
        }
    }
}

#[derive(Clone, Debug)]
pub struct TsChart<'a> {
    pub title: String,
    pub y: Axis,
    pub y2: Option<RightAxis>,
    /// The time axis spans 0..dur (s).
    pub dur: f64,
    pub lines: Vec<TsLine<'a>>,
    /// Legend-only entries of the static chart.
    pub notes: Vec<(String, String, Marker, &'static str)>,
}

impl<'a> TsChart<'a> {
    pub fn new(title: &str, y: Axis, dur: f64) -> TsChart<'a> {
        TsChart {
            title: title.to_string(),
            y,
            y2: None,
            dur,
            lines: Vec::new(),
            notes: Vec::new(),
        }
    }
}

/// The union of the lines' times and each line's values on it (NaN where it has none).
fn shared_grid(lines: &[TsLine]) -> (Vec<f64>, Vec<Vec<f64>>) {
    let Some(first) = lines.first() else {
        return (Vec::new(), Vec::new());
    };
    let same = lines
        .iter()
        .all(|l| std::ptr::eq(l.t, first.t) || l.t == first.t);
    let grid: Vec<f64> = if same {
        first.t.to_vec()
    } else {
        let mut g: Vec<f64> = lines.iter().flat_map(|l| l.t.iter().copied()).collect();
        g.sort_by(f64::total_cmp);
        g.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        g
    };
    let vals = lines
        .iter()
        .map(|l| {
            let mut out = vec![f64::NAN; grid.len()];
            let mut j = 0;
            for (i, t) in l.t.iter().enumerate() {
                while j < grid.len() && grid[j] < *t - 1e-9 {
                    j += 1;
                }
                if j < grid.len() {
                    out[j] = l.v.get(i).copied().unwrap_or(f64::NAN);
                }
            }
            out
        })
        .collect();
    (grid, vals)
}

/// Decimate a shared grid to at most `max` times: per bucket, the first and last time, and
/// for every line its minimum and maximum in the order they occur.
fn decimate(grid: &[f64], vals: &[Vec<f64>], max: usize) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = grid.len();
    if n <= max || max < 4 {
        return (grid.to_vec(), vals.to_vec());
    }
    let size = n.div_ceil(max / 2);
    let mut x = Vec::with_capacity(max);
    let mut out: Vec<Vec<f64>> = vals.iter().map(|_| Vec::with_capacity(max)).collect();
    let mut i = 0;
    while i < n {
        let end = (i + size).min(n);
        let two = end - i >= 2;
        x.push(grid[i]);
        if two {
            x.push(grid[end - 1]);
        }
        for (v, o) in vals.iter().zip(out.iter_mut()) {
            let (mut lo, mut hi): (Option<usize>, Option<usize>) = (None, None);
            for k in i..end {
                if v[k].is_nan() {
                    continue;
                }
                if lo.is_none_or(|l| v[k] < v[l]) {
                    lo = Some(k);
                }
                if hi.is_none_or(|h| v[k] > v[h]) {
                    hi = Some(k);
                }
            }
            let (a, b) = match (lo, hi) {
                (Some(l), Some(h)) if l <= h => (v[l], v[h]),
                (Some(l), Some(h)) => (v[h], v[l]),
                _ => (f64::NAN, f64::NAN),
            };
            o.push(a);
            if two {
                o.push(b);
            }
        }
        i = end;
    }
    (x, out)
}

/// A number with 4 significant digits, as short as JSON allows (`null` for NaN).
fn num4(v: f64) -> Value {
    if !v.is_finite() {
        return Value::Null;
    }
    if v == 0.0 {
        return json!(0);
    }
    let e = v.abs().log10().floor() as i32 - 3;
    if e >= 0 {
        let p = 10f64.powi(e);
        return json!(((v / p).round() * p) as i64);
    }
    let d = (-e).min(15) as usize;
    let f: f64 = format!("{v:.d$}").parse().unwrap_or(v);
    if f == f.trunc() {
        json!(f as i64)
    } else {
        json!(f)
    }
}

/// The step of evenly spaced times (within a millionth of a step), None otherwise or when
/// there are fewer than three.
fn uniform_step(x: &[f64]) -> Option<f64> {
    let n = x.len();
    if n < 3 {
        return None;
    }
    let step = (x[n - 1] - x[0]) / (n - 1) as f64;
    let even = step > 0.0
        && x.iter()
            .enumerate()
            .all(|(i, t)| (t - (x[0] + i as f64 * step)).abs() <= step * 1e-6);
    even.then_some(step)
}

/// The times of a chart's data: `x`, or `xr` = [first, step, count] expanded.
#[cfg(test)]
pub(crate) fn times(d: &Value) -> Vec<f64> {
    if let Some(r) = d["xr"].as_array() {
        let (a, s, n) = (
            r[0].as_f64().unwrap(),
            r[1].as_f64().unwrap(),
            r[2].as_u64().unwrap(),
        );
        return (0..n).map(|i| a + i as f64 * s).collect();
    }
    d["x"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

fn dash_array(d: &str) -> Value {
    Value::Array(
        d.split_whitespace()
            .filter_map(|x| x.parse::<f64>().ok())
            .map(|x| json!(x))
            .collect(),
    )
}

/// The static SVG chart and the interactive chart's data (JSON, safe inside `<script>`).
/// `sync`: charts with the same key share the cursor and the time range (a run's charts).
pub fn render(c: &TsChart, max_points: usize, id: &str, sync: &str) -> (String, String) {
    let (grid, vals) = shared_grid(&c.lines);
    let (x, vals) = decimate(&grid, &vals, max_points);
    let mut lc = LineChart::new(
        &c.title,
        Axis::new("time", Unit::Secs).range(0.0, c.dur),
        c.y.clone(),
    );
    lc.y2 = c.y2.clone();
    lc.notes = c.notes.clone();
    for (l, v) in c.lines.iter().zip(&vals) {
        let pts: Vec<(f64, f64)> = x
            .iter()
            .zip(v)
            .filter(|(_, y)| y.is_finite())
            .map(|(t, y)| (*t, *y))
            .collect();
        let mut line = Line::new(l.legend_name.as_ref().unwrap_or(&l.name), &l.color, pts);
        line.dash = l.dash;
        line.width = l.width;
        line.legend = l.legend;
        lc.lines.push(line);
    }
    let svg = plot::line_chart(&lc, id);
    // Interactive data: values in the axis' display unit.
    let max = vals
        .iter()
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let (div, unit) = c.y.unit.pick(max);
    let label = |l: &str, u: &str| {
        if u.is_empty() {
            l.to_string()
        } else {
            format!("{l} ({u})")
        }
    };
    let series: Vec<Value> = c
        .lines
        .iter()
        .zip(&vals)
        .map(|(l, v)| {
            json!({
                "l": l.name,
                "c": l.color,
                "d": dash_array(l.dash),
                "w": l.width,
                "v": v.iter().map(|y| num4(y / div)).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut d = json!({
        "t": c.title,
        "k": sync,
        "y": label(&c.y.label, unit),
        "u": unit,
        "s": series,
    });
    // Evenly spaced times (the usual undecimated bins) as [first, step, count]: every chart
    // of a run would otherwise repeat the same few kB of times.
    match uniform_step(&x) {
        Some(step) => d["xr"] = json!([x[0], step, x.len()]),
        None => d["x"] = json!(x.iter().map(|t| num4(*t)).collect::<Vec<_>>()),
    }
    if let Some(r) = &c.y2 {
        let (div2, unit2) = r.unit.pick(max * r.factor);
        d["y2"] = json!({"l": label(&r.label, unit2), "f": div * r.factor / div2, "u": unit2});
    }
    let data = d.to_string().replace("</", "<\\/");
    (svg, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlaid_lines_share_the_union_of_their_times() {
        let a = [0.1, 0.2, 0.3];
        let b = [0.15, 0.3];
        let mut c = TsChart::new("g", Axis::new("goodput", Unit::Rate), 0.3);
        c.lines
            .push(TsLine::new("a", "#000", &a, vec![1e6, 2e6, 3e6]));
        c.lines.push(TsLine::new("b", "#111", &b, vec![5e6, 6e6]));
        let (svg, data) = render(&c, 1000, "x", "run1");
        let v: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(v["x"], json!([0.1, 0.15, 0.2, 0.3]));
        assert_eq!(v["s"][0]["v"], json!([1, null, 2, 3]));
        assert_eq!(v["s"][1]["v"], json!([null, 5, null, 6]));
        assert_eq!(v["y"], "goodput (Mbit/s)");
        // The static chart draws each line through its own points only.
        assert_eq!(svg.matches("class=\"ln\"").count(), 2);
    }

    #[test]
    fn decimation_keeps_spikes_on_a_shared_grid() {
        let t: Vec<f64> = (0..10_000).map(|i| i as f64 * 0.01).collect();
        let mut v = vec![1.0; 10_000];
        v[5_001] = 99.0;
        let mut c = TsChart::new("g", Axis::new("x", Unit::Plain), 100.0);
        c.lines.push(TsLine::new("a", "#000", &t, v));
        let (_, data) = render(&c, 500, "x", "k");
        let d: Value = serde_json::from_str(&data).unwrap();
        let x = times(&d);
        assert!(x.len() <= 500, "{}", x.len());
        assert!(d["s"][0]["v"].as_array().unwrap().contains(&json!(99)));
    }

    #[test]
    fn even_times_are_sent_as_first_step_count() {
        let t: Vec<f64> = (1..=600).map(|i| i as f64 * 0.1).collect();
        let mut c = TsChart::new("g", Axis::new("y", Unit::Plain), 60.0);
        c.lines.push(TsLine::new("a", "#000", &t, vec![1.0; 600]));
        let (_, data) = render(&c, 1000, "x", "k");
        let d: Value = serde_json::from_str(&data).unwrap();
        assert!(d.get("x").is_none(), "{data}");
        let x = times(&d);
        assert_eq!(x.len(), 600);
        assert!((x[599] - 60.0).abs() < 1e-9 && (x[0] - 0.1).abs() < 1e-12);
        // Uneven times keep the list.
        assert_eq!(uniform_step(&[0.1, 0.15, 0.2, 0.3]), None);
    }

    #[test]
    fn numbers_are_short() {
        assert_eq!(num4(9_648_123.0), json!(9_648_000));
        assert_eq!(num4(0.012345), json!(0.01235));
        assert_eq!(num4(f64::NAN), Value::Null);
    }
}
