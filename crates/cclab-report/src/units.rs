//! Human-readable numbers.

use cclab_results::metrics::{Kind, MetricDef};
use cclab_results::{FlowResult, RunResult};

/// `93.4 Mbit/s`, `9.41 Gbit/s`, `812 kbit/s`: three significant digits.
pub fn rate(bps: f64) -> String {
    let (v, u) = if bps >= 1e9 {
        (bps / 1e9, "Gbit/s")
    } else if bps >= 1e6 {
        (bps / 1e6, "Mbit/s")
    } else if bps >= 1e3 {
        (bps / 1e3, "kbit/s")
    } else {
        (bps, "bit/s")
    };
    format!("{} {u}", sig3(v))
}

/// Bytes per second in the unit a field report used: `MB/s`, `KB/s`, `Gbit/s`, `Mbit/s`.
pub fn rate_in(bps: f64, unit: &str) -> String {
    let u = unit.to_ascii_lowercase();
    let v = match u.as_str() {
        "mb/s" => bps / 8e6,
        "kb/s" => bps / 8e3,
        "gb/s" => bps / 8e9,
        "gbit/s" => bps / 1e9,
        "mbit/s" => bps / 1e6,
        "kbit/s" => bps / 1e3,
        _ => return rate(bps),
    };
    format!("{} {unit}", sig3(v))
}

/// Milliseconds with sensible precision.
pub fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

pub fn secs(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0} s")
    } else if v >= 1.0 {
        format!("{v:.2} s")
    } else {
        format!("{:.0} ms", v * 1e3)
    }
}

pub fn pct(ratio: f64) -> String {
    let p = ratio * 100.0;
    if p == 0.0 {
        "0%".into()
    } else if p < 0.01 {
        "<0.01%".into()
    } else if p < 10.0 {
        format!("{p:.2}%")
    } else {
        format!("{p:.1}%")
    }
}

/// Three significant digits, no exponent.
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A swept parameter value for a table cell: rates, times and probabilities read naturally.
/// The value of `key` in a run's params, formatted as [`param`] does; empty if absent.
pub fn param_in(params: &serde_json::Map<String, serde_json::Value>, key: &str) -> String {
    params.get(key).map(|v| param(key, v)).unwrap_or_default()
}

pub fn param(key: &str, v: &serde_json::Value) -> String {
    use serde_json::Value;
    let leaf = key.rsplit('.').next().unwrap_or(key);
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(0.0);
            match leaf {
                "rate" => rate(x),
                "rtt" | "rtt_extra" | "duration" | "start" => {
                    if x < 1.0 {
                        ms(x * 1e3)
                    } else {
                        secs(x)
                    }
                }
                "loss" | "ack_loss" => {
                    if x == 0.0 {
                        "0".into()
                    } else {
                        // Three significant digits however small (0.008% stays 0.008%).
                        let p = x * 100.0;
                        let text = if p.abs() < 1.0 {
                            let decimals = (2 - p.abs().log10().floor() as i32).clamp(0, 12);
                            format!("{p:.*}", decimals as usize)
                        } else {
                            sig3(p)
                        };
                        let text = if text.contains('.') {
                            text.trim_end_matches('0').trim_end_matches('.')
                        } else {
                            &text
                        };
                        format!("{text}%")
                    }
                }
                "size" => size(x),
                _ => n.to_string(),
            }
        }
        Value::String(s) => s.clone(),
        Value::Null => "-".into(),
        other => other.to_string(),
    }
}

/// Decimal bytes: `640 kB`, `25 MB`, `1 GB`.
pub fn size(b: f64) -> String {
    if b >= 1e9 {
        format!("{} GB", sig3(b / 1e9))
    } else if b >= 1e6 {
        format!("{} MB", sig3(b / 1e6))
    } else if b >= 1e3 {
        format!("{} kB", sig3(b / 1e3))
    } else {
        format!("{b:.0} B")
    }
}

/// A value of a metric of this kind for people (`93.4 Mbit/s`, `12.5 ms`, `0.41%`, `17`).
pub fn of(kind: Kind, v: f64) -> String {
    match kind {
        Kind::Rate => rate(v),
        Kind::Ms => ms(v),
        Kind::Secs => secs(v),
        Kind::Ratio => pct(v),
        Kind::Count => format!("{v:.0}"),
        Kind::Bytes => size(v),
        Kind::Plain => format!("{v:.3}"),
    }
}

/// A flow's metric for people; empty when the flow has none (or it is not a flow metric).
pub fn flow_metric(m: &MetricDef, f: &FlowResult) -> String {
    m.of_flow(f).map(|v| of(m.kind, v)).unwrap_or_default()
}

/// A run's or its link's metric for people; empty for a flow metric.
pub fn run_metric(m: &MetricDef, r: &RunResult) -> String {
    m.of_run(r).map(|v| of(m.kind, v)).unwrap_or_default()
}

/// Within x1.5 of the published figure: 1/1.5 <= cclab / published <= 1.5.
pub const WITHIN: f64 = 1.5;

/// "x1.07": cclab's figure over the published one (a third decimal next to the x1.5 bounds,
/// so that "x1.50" never hides which side a ratio is on).
pub fn ratio_text(r: f64) -> String {
    if (r - WITHIN).abs() < 0.005 || (r - 1.0 / WITHIN).abs() < 0.005 {
        format!("x{r:.3}")
    } else if r >= 9.995 {
        format!("x{r:.1}")
    } else {
        format!("x{r:.2}")
    }
}

/// Whether a ratio cclab / published is within x1.5.
pub fn within(r: f64) -> bool {
    (1.0 / WITHIN..=WITHIN).contains(&r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(rate(93.44e6), "93.4 Mbit/s");
        assert_eq!(rate(9.414e9), "9.41 Gbit/s");
        assert_eq!(rate_in(909e6 * 8.0, "MB/s"), "909 MB/s");
        assert_eq!(pct(0.0123), "1.23%");
        assert_eq!(param("link.loss", &serde_json::json!(0.01)), "1%");
        assert_eq!(param("link.loss", &serde_json::json!(0.00008)), "0.008%");
        assert_eq!(param("link.loss", &serde_json::json!(0.005)), "0.5%");
        assert_eq!(param("link.loss", &serde_json::json!(0.0123)), "1.23%");
        assert_eq!(param("link.loss", &serde_json::json!(0.5)), "50%");
        assert_eq!(param("link.loss", &serde_json::json!(1.0)), "100%");
        assert_eq!(param("link.rtt", &serde_json::json!(0.099)), "99.0 ms");
        assert_eq!(size(640e3), "640 kB");
    }
}
