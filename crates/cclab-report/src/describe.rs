//! The path a document ran, in one line: rate, RTT, BDP, buffer, loss and its model, path
//! elements, hosts. Read from each run's `resolved` values (never from the scenario's free-text
//! description), so a `--set link.loss=2%` shows as 2%, marked `*` as set on the command line.
//!
//! A part that differs between the document's runs (a swept key) lists its values.

use crate::units;
use cclab_path::SettingKind;
use cclab_results::ResultsDoc;
use serde_json::{Map, Value};

/// Values shown of a part that differs between runs, before "+N more".
const MAX_LISTED: usize = 4;

/// The document's path in one line, or None when its runs carry no path (documents from
/// before `resolved` existed). Measurements of real hosts name the peer measured and the
/// fitted path, or why there is none ([`crate::host::path_line`]).
pub fn path_line(doc: &ResultsDoc) -> Option<String> {
    if crate::host::is_host(doc) {
        return Some(crate::host::path_line(doc));
    }
    let runs: Vec<&Map<String, Value>> = doc
        .runs
        .iter()
        .map(|r| &r.resolved)
        .filter(|r| r.contains_key("link.rtt"))
        .collect();
    if runs.is_empty() {
        return None;
    }
    let overrides: Vec<&str> = doc
        .source
        .as_ref()
        .map(|s| s.overrides.iter().map(String::as_str).collect())
        .unwrap_or_default();
    let set_keys: Vec<&str> = overrides
        .iter()
        .filter_map(|o| o.split_once('=').map(|(k, _)| k.trim()))
        .collect();
    let bucket_keys: Vec<String> = cclab_path::BUCKETS
        .iter()
        .map(|b| format!("link.{}", b.name))
        .collect();
    let mut parts = Vec::new();
    for part in PARTS {
        let mut seen: Vec<String> = Vec::new();
        for r in &runs {
            let s = (part.show)(r);
            if !s.is_empty() && !seen.contains(&s) {
                seen.push(s);
            }
        }
        if seen.is_empty() {
            continue;
        }
        let mut text = if seen.len() == 1 {
            seen.remove(0)
        } else {
            // "loss {0 | 1% random}" rather than "{no loss | loss 1% random}".
            for v in seen.iter_mut() {
                if let Some(rest) = v.strip_prefix("no loss") {
                    *v = format!("loss 0{rest}");
                }
            }
            // "buffer {250 kB | 500 kB}" rather than "{buffer 250 kB | buffer 500 kB}".
            let word = seen[0].split_once(' ').map(|(w, _)| format!("{w} "));
            let word = word.filter(|w| seen.iter().all(|s| s.starts_with(w.as_str())));
            let prefix = word.as_deref().unwrap_or("");
            let more = seen.len().saturating_sub(MAX_LISTED);
            let mut t = seen[..seen.len().min(MAX_LISTED)]
                .iter()
                .map(|s| &s[prefix.len()..])
                .collect::<Vec<_>>()
                .join(" | ");
            if more > 0 {
                t.push_str(&format!(" | +{more} more"));
            }
            format!("{prefix}{{{t}}}")
        };
        // The path elements' part reads the token buckets' keys too (`link.policer`, ...).
        let buckets = if part.keys.contains(&"link.aqm") {
            &bucket_keys[..]
        } else {
            &[]
        };
        let keys: Vec<&str> = part
            .keys
            .iter()
            .copied()
            .chain(buckets.iter().map(String::as_str))
            .collect();
        if set_keys.iter().any(|k| {
            keys.iter()
                .any(|p| k == p || k.starts_with(&format!("{p}.")))
        }) {
            text.push('*');
        }
        parts.push((part.sep, text));
    }
    let mut line = String::from("path: ");
    for (i, (sep, t)) in parts.iter().enumerate() {
        if i > 0 {
            line.push_str(sep);
        }
        line.push_str(t);
    }
    Some(line)
}

/// What the `*` of [`path_line`] means: the overrides as given, or None without any.
pub fn overrides_line(doc: &ResultsDoc) -> Option<String> {
    let o = &doc.source.as_ref()?.overrides;
    (!o.is_empty()).then(|| format!("* set on the command line: --set {}", o.join(" --set ")))
}

/// One part of the line: the resolved keys it reads (for marking overrides), the separator
/// before it, and how one run's values read.
struct Part {
    keys: &'static [&'static str],
    sep: &'static str,
    show: fn(&Map<String, Value>) -> String,
}

const PARTS: &[Part] = &[
    Part {
        keys: &["link.rate", "link.trace"],
        sep: ", ",
        show: show_rate,
    },
    Part {
        keys: &["link.rtt"],
        sep: ", ",
        show: |r| format!("RTT {}", units::ms(num(r, "link.rtt") * 1e3)),
    },
    Part {
        keys: &["link.rate", "link.rtt"],
        sep: ", ",
        show: |r| {
            let pkt = num(r, "link.packet_bytes").max(1.0);
            format!("BDP {} pkts", pkts(num(r, "link.bdp_bytes") / pkt))
        },
    },
    Part {
        keys: &["link.buffer"],
        sep: ", ",
        show: show_buffer,
    },
    Part {
        keys: &[
            "link.loss",
            "link.loss_burst",
            "link.loss_unit",
            "link.ack_loss",
        ],
        sep: ", ",
        show: show_loss,
    },
    Part {
        keys: &[
            "link.aqm",
            "link.jitter",
            "link.reorder",
            "link.ack_aggregation",
            "link.ecn_threshold",
        ],
        sep: ", ",
        show: show_elements,
    },
    Part {
        keys: &["hosts"],
        sep: "; ",
        show: show_hosts,
    },
];

fn num(r: &Map<String, Value>, k: &str) -> f64 {
    r.get(k).and_then(Value::as_f64).unwrap_or(0.0)
}

fn text<'a>(r: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    r.get(k).and_then(Value::as_str)
}

/// A packet count: whole above 10, one decimal below.
fn pkts(n: f64) -> String {
    if n >= 10.0 {
        format!("{n:.0}")
    } else {
        format!("{n:.1}")
    }
}

fn show_rate(r: &Map<String, Value>) -> String {
    let rate = units::rate(num(r, "link.rate"));
    if let Some(t) = text(r, "link.trace") {
        let name = t.rsplit('/').next().unwrap_or(t);
        format!("trace {name} (mean {rate})")
    } else if let Some(steps) = r.get("link.rate_schedule").and_then(Value::as_array) {
        let top = steps
            .iter()
            .filter_map(|s| s.get("rate").and_then(Value::as_f64))
            .fold(0.0, f64::max);
        format!(
            "rate schedule of {} steps up to {} (mean {rate})",
            steps.len(),
            units::rate(top)
        )
    } else {
        rate
    }
}

fn show_buffer(r: &Map<String, Value>) -> String {
    let bytes = num(r, "link.buffer_bytes");
    let pkt = num(r, "link.packet_bytes").max(1.0);
    let mut s = format!("buffer {} ({} pkts", units::size(bytes), pkts(bytes / pkt));
    if let Some(given) = text(r, "link.buffer") {
        s.push_str(&format!(", {given}"));
    }
    s.push(')');
    s
}

fn show_loss(r: &Map<String, Value>) -> String {
    let loss = num(r, "link.loss");
    let ack = num(r, "link.ack_loss");
    let mut s = if loss == 0.0 {
        "no loss".to_string()
    } else {
        let burst = num(r, "link.loss_burst");
        let model = if burst > 1.0 {
            format!("in bursts of {} (Gilbert)", units::sig3(burst))
        } else {
            "random".to_string()
        };
        let unit = if text(r, "link.loss_unit") == Some("gso") {
            " per GSO packet"
        } else {
            ""
        };
        format!(
            "loss {} {model}{unit}",
            units::param("link.loss", &Value::from(loss))
        )
    };
    if ack > 0.0 {
        s.push_str(&format!(
            ", ACK loss {}",
            units::param("link.ack_loss", &Value::from(ack))
        ));
    }
    s
}

fn show_elements(r: &Map<String, Value>) -> String {
    let mut e: Vec<String> = Vec::new();
    match text(r, "link.aqm") {
        None | Some("droptail") => e.push("drop-tail".into()),
        Some(aqm) => {
            let name = cclab_path::Aqm::by_name(aqm).map_or(aqm, |a| a.title);
            let mut s = name.to_string();
            if r.contains_key("link.aqm.target") {
                s.push_str(&format!(
                    " target {}",
                    units::ms(num(r, "link.aqm.target") * 1e3)
                ));
            }
            if r.get("link.aqm.ecn").and_then(Value::as_bool) == Some(true) {
                s.push_str(" ECN");
            }
            e.push(s);
        }
    }
    // Each token bucket by its rate (its declared rate setting).
    for b in cclab_path::BUCKETS {
        let rates = b.settings.iter().filter(|s| s.kind == SettingKind::Rate);
        for k in rates.map(|s| format!("link.{}.{}", b.name, s.name)) {
            if r.get(&k).and_then(Value::as_f64).is_some() {
                e.push(format!("{} {}", b.name, units::rate(num(r, &k))));
            }
        }
    }
    if let Some(t) = r.get("link.ecn_threshold").and_then(Value::as_f64) {
        e.push(format!("ECN marks above {}", units::ms(t * 1e3)));
    }
    if num(r, "link.jitter") > 0.0 {
        e.push(format!("jitter {}", units::ms(num(r, "link.jitter") * 1e3)));
    }
    if r.get("link.reorder").and_then(Value::as_bool) == Some(true) {
        e.push("reordering".into());
    }
    if num(r, "link.ack_aggregation") > 0.0 {
        e.push(format!(
            "ACK aggregation {}",
            units::ms(num(r, "link.ack_aggregation") * 1e3)
        ));
    }
    e.join(", ")
}

/// The largest of a "min default max" buffer triple, as a size.
fn buf_max(s: &str) -> Option<String> {
    let max: f64 = s.split_whitespace().last()?.parse().ok()?;
    Some(units::size(max))
}

fn show_hosts(r: &Map<String, Value>) -> String {
    let mut s = format!(
        "hosts {}",
        text(r, "hosts.profile").unwrap_or("(profile not recorded)")
    );
    let mut d: Vec<String> = Vec::new();
    if let Some(c) = r.get("hosts.init_cwnd").and_then(Value::as_f64) {
        d.push(format!("init cwnd {c:.0}"));
    }
    for (k, name) in [("hosts.tcp_rmem", "rmem"), ("hosts.tcp_wmem", "wmem")] {
        if let Some(m) = text(r, k).and_then(buf_max) {
            d.push(format!("{name} up to {m}"));
        }
    }
    for (k, name) in [("hosts.rcvbuf", "SO_RCVBUF"), ("hosts.sndbuf", "SO_SNDBUF")] {
        if let Some(b) = r.get(k).and_then(Value::as_f64) {
            d.push(format!("{name} {}", units::size(b)));
        }
    }
    if r.get("hosts.pacing").and_then(Value::as_bool) == Some(true) {
        d.push("fq pacing".into());
    }
    if let Some(n) = r.get("hosts.nic_rate").and_then(Value::as_f64) {
        d.push(format!("{} interface", units::rate(n)));
    }
    if !d.is_empty() {
        s.push_str(&format!(" ({})", d.join(", ")));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};
    use serde_json::json;

    fn run(loss: f64, buffer: &str, bytes: f64) -> RunBuilder {
        RunBuilder::new().resolved_all(json!({
            "link.rate": 100e6, "link.rtt": 0.04, "link.bdp_bytes": 500000.0,
            "link.packet_bytes": 1500, "link.buffer": buffer, "link.buffer_bytes": bytes,
            "link.loss": loss, "link.loss_burst": 1.0, "link.loss_unit": "segment",
            "link.ack_loss": 0.0, "link.aqm": "droptail", "link.policer": null,
            "link.jitter": 0.0, "link.reorder": false, "link.ack_aggregation": 0.0,
            "hosts.profile": "linux", "hosts.init_cwnd": 10,
            "hosts.tcp_rmem": "4096 131072 6291456", "hosts.tcp_wmem": "4096 16384 4194304",
        }))
    }

    fn doc(runs: Vec<RunBuilder>, overrides: &[&str]) -> ResultsDoc {
        DocBuilder::new()
            .runs(runs)
            .source("s.toml", overrides)
            .build()
    }

    #[test]
    fn one_point_reads_as_one_line_with_overrides_marked() {
        let l = path_line(&doc(vec![run(0.02, "1bdp", 500e3)], &["link.loss=2%"])).unwrap();
        assert_eq!(
            l,
            "path: 100 Mbit/s, RTT 40.0 ms, BDP 333 pkts, buffer 500 kB (333 pkts, 1bdp), \
             loss 2% random*, drop-tail; hosts linux (init cwnd 10, rmem up to 6.29 MB, \
             wmem up to 4.19 MB)"
        );
        assert_eq!(
            overrides_line(&doc(vec![], &["link.loss=2%", "seed=3"])).unwrap(),
            "* set on the command line: --set link.loss=2% --set seed=3"
        );
        assert_eq!(overrides_line(&doc(vec![], &[])), None);
        assert!(!l.contains('\n'));
    }

    #[test]
    fn swept_parts_list_their_values_and_unswept_parts_stay_single() {
        let runs = vec![
            run(0.0, "0.5bdp", 250e3),
            run(0.0, "1bdp", 500e3),
            run(0.01, "0.5bdp", 250e3),
            run(0.01, "1bdp", 500e3),
        ];
        let l = path_line(&doc(runs, &[])).unwrap();
        assert!(
            l.contains("buffer {250 kB (167 pkts, 0.5bdp) | 500 kB (333 pkts, 1bdp)}"),
            "{l}"
        );
        assert!(l.contains("loss {0 | 1% random}"), "{l}");
        assert_eq!(l.matches("RTT").count(), 1, "{l}");
        assert!(!l.contains('*'), "{l}");
    }

    #[test]
    fn documents_without_a_path_have_no_line() {
        let r = RunBuilder::new().resolved("duration", 10.0);
        assert_eq!(path_line(&doc(vec![r], &[])), None);
    }
}
