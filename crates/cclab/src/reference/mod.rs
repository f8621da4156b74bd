//! Published figures beside cclab's.
//!
//! A scenario may carry the numbers a field report published:
//! ```toml
//! [reference]
//! source = "title of the report, site (year)"   # where the figures come from
//! unit = "MB/s"                          # how the report stated rates (used for display)
//! note = "..."                           # optional, carried to every row
//! miss = "..."                           # optional: why rows may miss (default for every row)
//! [[reference.results]]
//! "flows.cc" = "cubic"                   # keys select runs (any scenario key, as written in the file)
//! "link.loss" = "1%"
//! goodput = "142MB/s"                    # the published figure
//! retransmits = 4680                     # optional
//! miss = "the path's rate is a guess"    # optional: the known reason cclab misses this figure
//! ```
//! A row applies to a run when every selecting key equals the run's value of that key.
//! The matching row is attached to the run as `reference` (with `goodput_bps` parsed, and the
//! table's `source`, `unit`, `note` and `miss` unless the row sets its own), so the table and
//! the JSON carry the published figure next to the measured one. `miss` is printed next to
//! the ratio cclab / published when that ratio is outside x1.5 (the terminal table); rows
//! within x1.5 do not show it.
//!
//! `score` holds every published figure of the table, and the claims the report makes in
//! `[[reference.relations]]`, against cclab's runs, with a verdict each.

pub mod score;

/// The overrides (`KEY=VALUE`, as `--set` takes them) that change what a scenario's
/// published figures were measured on: its path, hosts or flows. A scenario run with any of
/// them is not compared with its `[reference]`; another duration or seed still is.
pub fn setup_overrides(overrides: &[String]) -> Vec<String> {
    overrides
        .iter()
        .filter(|kv| {
            let key = kv.split('=').next().unwrap_or("").trim();
            ["link.", "hosts.", "flows."]
                .iter()
                .any(|p| key.starts_with(p))
        })
        .cloned()
        .collect()
}

use cclab_scenario::units::{parse_loss_str, parse_rate, parse_size, parse_time};
use serde_json::{Map, Value};

/// Keys of a results row that are figures, not selectors.
pub(crate) const FIGURE_KEYS: &[&str] = &["goodput", "retransmits", "note", "miss", "fct", "rtt"];

/// Turn a selector value into the SI number the resolved scenario map holds for `key`.
pub(crate) fn normalise(key: &str, v: &Value) -> Value {
    let leaf = key.rsplit('.').next().unwrap_or(key);
    let Value::String(s) = v else {
        return v.clone();
    };
    let parsed = match leaf {
        "rate" => parse_rate(s).ok().map(|b| b as f64),
        "rtt" | "rtt_extra" | "duration" | "start" => parse_time(s).ok().map(|ns| ns as f64 / 1e9),
        "loss" | "ack_loss" => parse_loss_str(s).ok(),
        "size" => parse_size(s).ok().map(|b| b as f64),
        _ => None,
    };
    parsed.map(Value::from).unwrap_or_else(|| v.clone())
}

pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-12),
        _ => match (a.as_str(), b.as_str()) {
            (Some(x), Some(y)) => x.eq_ignore_ascii_case(y),
            _ => a == b,
        },
    }
}

/// The reference figures for the run whose resolved scenario values are `resolved`.
pub fn for_run(reference: &Value, resolved: &Map<String, Value>) -> Option<Value> {
    let rows = reference.get("results")?.as_array()?;
    let row = rows.iter().filter_map(|r| r.as_object()).find(|row| {
        row.iter()
            .filter(|(k, _)| !FIGURE_KEYS.contains(&k.as_str()))
            .all(|(k, v)| {
                resolved
                    .get(k)
                    .is_some_and(|have| same(&normalise(k, v), have))
            })
    })?;
    let mut out = Map::new();
    if let Some(s) = reference.get("source") {
        out.insert("source".into(), s.clone());
    }
    for key in ["unit", "note", "miss"] {
        if let Some(v) = reference.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    for (k, v) in row {
        out.insert(k.clone(), v.clone());
    }
    if let Some(g) = row.get("goodput") {
        let bps = match g {
            Value::String(s) => parse_rate(s).ok().map(|b| b as f64),
            other => other.as_f64(),
        };
        if let Some(b) = bps {
            out.insert("goodput_bps".into(), Value::from(b));
        }
    }
    Some(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn matches_rows_by_selectors_in_file_units() {
        let reference = json!({
            "unit": "MB/s",
            "results": [
                {"flows.cc": "cubic", "link.loss": "1%", "goodput": "142MB/s"},
                {"flows.cc": "bbr", "link.loss": "1%", "goodput": "896MB/s"}
            ]
        });
        let mut resolved = Map::new();
        resolved.insert("flows.cc".into(), json!("bbr"));
        resolved.insert("link.loss".into(), json!(0.01));
        let r = for_run(&reference, &resolved).unwrap();
        assert_eq!(r["goodput_bps"], json!(896e6 * 8.0));
        assert_eq!(r["unit"], json!("MB/s"));
        resolved.insert("link.loss".into(), json!(0.0));
        assert!(for_run(&reference, &resolved).is_none());
    }

    /// `miss` is a figure key, not a selector; the table-wide one is a default for every row.
    #[test]
    fn miss_is_carried_and_rows_override_it() {
        let reference = json!({
            "miss": "the path is a guess",
            "note": "published as a gain",
            "results": [
                {"flows.cc": "cubic", "goodput": "95mbit"},
                {"flows.cc": "bbr", "goodput": "147mbit", "miss": "BBR's own reason"}
            ]
        });
        let mut resolved = Map::new();
        resolved.insert("flows.cc".into(), json!("cubic"));
        let r = for_run(&reference, &resolved).unwrap();
        assert_eq!(r["miss"], json!("the path is a guess"));
        assert_eq!(r["note"], json!("published as a gain"));
        resolved.insert("flows.cc".into(), json!("bbr"));
        let r = for_run(&reference, &resolved).unwrap();
        assert_eq!(r["miss"], json!("BBR's own reason"));
        assert_eq!(r["goodput_bps"], json!(147e6));
    }
}
