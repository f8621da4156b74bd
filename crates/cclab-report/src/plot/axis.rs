//! Axes: scales and units, nice linear and log ticks, the mapping of values to pixels, and
//! the grid lines.

use super::{r1, GRID};
use std::fmt::Write;

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
pub(super) struct Map1 {
    pub(super) scale: Scale,
    pub(super) d0: f64,
    pub(super) d1: f64,
    pub(super) p0: f64,
    pub(super) p1: f64,
    /// Log axes: where 0 is drawn (a position left of the first decade), if used.
    pub(super) zero_at: Option<f64>,
}

impl Map1 {
    pub(super) fn px(&self, v: f64) -> f64 {
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

pub(super) struct Ticks {
    pub(super) map: Map1,
    pub(super) ticks: Vec<f64>,
    pub(super) div: f64,
    pub(super) unit: &'static str,
}

/// Domain, ticks and unit for an axis given its data values; `p0`..`p1` is the pixel span
/// (p0 at the data minimum). `zero_room`: reserve pixels for a 0 on log axes.
pub(super) fn build_axis(
    ax: &Axis,
    vals: &[f64],
    p0: f64,
    p1: f64,
    extend: bool,
    n: usize,
) -> Ticks {
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

pub(super) fn axis_title(label: &str, unit: &str) -> String {
    if unit.is_empty() {
        label.to_string()
    } else {
        format!("{label} ({unit})")
    }
}

/// Horizontal grid lines and their tick labels on the left of the plot area.
/// Vertical grid lines at the x ticks, with their labels under the plot.
pub(super) fn x_grid(s: &mut String, xt: &Ticks, py0: f64, py1: f64) {
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

pub(super) fn y_grid(s: &mut String, yt: &Ticks, px0: f64, px1: f64) {
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
