//! Read results directories back: what `cclab report` and `cclab compare` start from.
//!
//! A results directory (written by `cclab run FILE --out DIR`) holds `results.json` (the
//! document, without time series), `series/run-<k>.csv` (run k's 100 ms time series, k from
//! 1, in `results.json` order) and optionally `meta.json` (`{"file": ..., "description": ...}`
//! of the scenario, used for the report's heading). A `cclab run` of several files writes one
//! such directory per scenario under DIR; loading DIR then loads each of them.

use cclab_results::{FlowSeries, ResultsDoc, TimeSeries};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// One results document and where it came from.
#[derive(Clone, Debug)]
pub struct Source {
    pub doc: ResultsDoc,
    /// The directory or file it was read from (for labels), if any.
    pub origin: Option<PathBuf>,
    /// The scenario's description, if known.
    pub description: Option<String>,
    /// The scenario file, if known.
    pub file: Option<String>,
}

impl Source {
    pub fn new(doc: ResultsDoc) -> Source {
        Source {
            doc,
            origin: None,
            description: None,
            file: None,
        }
    }
}

/// Load every results document under `path`: a results directory, a directory of results
/// directories, or a `results.json` file (an object or an array of documents).
pub fn load(path: &Path) -> Result<Vec<Source>, String> {
    if path.is_file() {
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        return load_file(path, &dir);
    }
    if !path.is_dir() {
        return Err(format!("{}: no such file or directory", path.display()));
    }
    let direct = path.join("results.json");
    if direct.is_file() {
        return load_file(&direct, path);
    }
    let mut subs: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| format!("{}: {e}", path.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("results.json").is_file())
        .collect();
    subs.sort();
    if subs.is_empty() {
        return Err(format!(
            "{}: no results.json here or in its sub-directories (write one with `cclab run FILE --out {}`)",
            path.display(),
            path.display()
        ));
    }
    let mut out = Vec::new();
    for s in subs {
        out.extend(load_file(&s.join("results.json"), &s)?);
    }
    Ok(out)
}

fn load_file(file: &Path, dir: &Path) -> Result<Vec<Source>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", file.display()))?;
    let (docs, single) = match v {
        Value::Array(a) => (a, false),
        other => (vec![other], true),
    };
    let meta: Option<Value> = std::fs::read_to_string(dir.join("meta.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let mut out = Vec::new();
    for d in docs {
        let mut doc: ResultsDoc = serde_json::from_value(d)
            .map_err(|e| format!("{}: not a cclab results document: {e}", file.display()))?;
        if single {
            for (i, r) in doc.runs.iter_mut().enumerate() {
                if r.series.is_none() {
                    let p = dir.join("series").join(format!("run-{}.csv", i + 1));
                    if let Ok(t) = std::fs::read_to_string(&p) {
                        r.series =
                            Some(series_from_csv(&t).map_err(|e| format!("{}: {e}", p.display()))?);
                    }
                }
                let p = dir.join("series").join(format!("run-{}-probes.csv", i + 1));
                if !r.probes.is_empty() {
                    if let Ok(t) = std::fs::read_to_string(&p) {
                        cclab_results::probe::read_probes_csv(&t, &mut r.probes)
                            .map_err(|e| format!("{}: {e}", p.display()))?;
                    }
                }
            }
        }
        let m = meta.as_ref().filter(|m| {
            m.get("scenario")
                .and_then(Value::as_str)
                .is_none_or(|s| s == doc.scenario)
        });
        out.push(Source {
            origin: Some(if single {
                dir.to_path_buf()
            } else {
                file.to_path_buf()
            }),
            description: m
                .and_then(|m| m.get("description"))
                .and_then(Value::as_str)
                .map(String::from),
            file: m
                .and_then(|m| m.get("file"))
                .and_then(Value::as_str)
                .map(String::from),
            doc,
        });
    }
    Ok(out)
}

/// The `meta.json` written next to `results.json`: the scenario's name, file and description;
/// where it came from (the file's SHA-256, the `--set` overrides as given); and every matrix
/// point's fully resolved scenario (each key after defaults and overrides, host settings
/// included), once per point rather than per seed.
pub fn meta_json(
    scenario: &str,
    file: &str,
    description: Option<&str>,
    doc: &ResultsDoc,
) -> String {
    let mut m = serde_json::Map::new();
    m.insert("scenario".into(), Value::from(scenario));
    m.insert("file".into(), Value::from(file));
    if let Some(d) = description {
        m.insert("description".into(), Value::from(d.trim()));
    }
    if let Some(src) = &doc.source {
        m.insert("sha256".into(), Value::from(src.sha256.clone()));
        m.insert("overrides".into(), Value::from(src.overrides.clone()));
    }
    let mut points: Vec<Value> = Vec::new();
    let mut seen: Vec<&serde_json::Map<String, Value>> = Vec::new();
    for r in &doc.runs {
        if r.resolved.is_empty() || seen.contains(&&r.params) {
            continue;
        }
        seen.push(&r.params);
        let mut resolved = r.resolved.clone();
        // The seed is the run's, not the point's.
        resolved.remove("seed");
        points.push(serde_json::json!({
            "params": r.params,
            "resolved": resolved,
            "settings": r.settings,
        }));
    }
    if !points.is_empty() {
        m.insert("points".into(), Value::from(points));
    }
    serde_json::to_string_pretty(&Value::Object(m)).expect("json")
}

/// Parse the long-format CSV written by [`TimeSeries::to_csv`] (columns found by name, so
/// added columns are fine).
pub fn series_from_csv(text: &str) -> Result<TimeSeries, String> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines
        .next()
        .ok_or("empty series file")?
        .split(',')
        .collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let need = |name: &str| col(name).ok_or_else(|| format!("series CSV has no column {name}"));
    let (ct, cf, ccc) = (need("t_s")?, need("flow")?, need("cc")?);
    let num_cols = [
        "goodput_bps",
        "cwnd_pkts",
        "inflight_pkts",
        "pacing_rate_bps",
        "srtt_ms",
        "delivery_rate_bps",
    ]
    .map(col);
    let cq = col("link_queue_bytes");
    let crate_ = col("link_rate_bps");
    let cdelay: Vec<(String, usize)> = header
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            h.strip_prefix("queue_delay_ms.")
                .map(|k| (k.to_string(), i))
        })
        .collect();
    let mut ts = TimeSeries {
        interval_s: 0.1,
        ..Default::default()
    };
    let mut last_t = f64::NAN;
    for (ln, line) in lines.enumerate() {
        if line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let num = |i: Option<usize>| -> f64 {
            i.and_then(|i| f.get(i))
                .and_then(|s| s.parse().ok())
                .unwrap_or(0.0)
        };
        let t: f64 = f
            .get(ct)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("line {}: bad t_s", ln + 2))?;
        let id: u32 = f
            .get(cf)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("line {}: bad flow", ln + 2))?;
        if t != last_t {
            ts.t_s.push(t);
            ts.link_queue_bytes.push(num(cq));
            if crate_.is_some() {
                ts.link_rate_bps.push(num(crate_));
            }
            for (k, i) in &cdelay {
                ts.queue_delay_ms
                    .entry(k.clone())
                    .or_default()
                    .push(num(Some(*i)));
            }
            last_t = t;
        }
        let bin = ts.t_s.len() - 1;
        let k = match ts.flows.iter().position(|s| s.id == id) {
            Some(k) => k,
            None => {
                ts.flows.push(FlowSeries {
                    id,
                    cc: f.get(ccc).unwrap_or(&"").to_string(),
                    ..Default::default()
                });
                ts.flows.len() - 1
            }
        };
        let fs = &mut ts.flows[k];
        let vals = num_cols.map(num);
        for (v, x) in [
            &mut fs.goodput_bps,
            &mut fs.cwnd_pkts,
            &mut fs.inflight_pkts,
            &mut fs.pacing_rate_bps,
            &mut fs.srtt_ms,
            &mut fs.delivery_rate_bps,
        ]
        .into_iter()
        .zip(vals)
        {
            // A flow missing from earlier bins is padded with zeros.
            v.resize(bin, 0.0);
            v.push(x);
        }
    }
    if ts.t_s.len() >= 2 {
        ts.interval_s = ((ts.t_s[1] - ts.t_s[0]) * 1e6).round() / 1e6;
    }
    Ok(ts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trip() {
        let ts = TimeSeries {
            interval_s: 0.1,
            t_s: vec![0.1, 0.2],
            flows: vec![
                FlowSeries {
                    id: 0,
                    cc: "cubic".into(),
                    goodput_bps: vec![1e6, 2e6],
                    cwnd_pkts: vec![10.0, 20.0],
                    inflight_pkts: vec![9.0, 19.0],
                    pacing_rate_bps: vec![0.0, 0.0],
                    srtt_ms: vec![20.5, 21.25],
                    delivery_rate_bps: vec![1e6, 2e6],
                },
                FlowSeries {
                    id: 1,
                    cc: "bbr".into(),
                    goodput_bps: vec![3e6, 4e6],
                    cwnd_pkts: vec![30.0, 40.0],
                    inflight_pkts: vec![29.0, 39.0],
                    pacing_rate_bps: vec![5e6, 5e6],
                    srtt_ms: vec![22.0, 23.0],
                    delivery_rate_bps: vec![3e6, 4e6],
                },
            ],
            link_queue_bytes: vec![1500.0, 3000.0],
            queue_delay_ms: [
                ("data.queue".to_string(), vec![1.5, 2.25]),
                ("data.shaper".to_string(), vec![0.0, 4.5]),
            ]
            .into_iter()
            .collect(),
            link_rate_bps: vec![1e8, 2e7],
        };
        let back = series_from_csv(&ts.to_csv()).unwrap();
        assert_eq!(back.t_s, ts.t_s);
        assert_eq!(back.link_queue_bytes, ts.link_queue_bytes);
        assert_eq!(back.queue_delay_ms, ts.queue_delay_ms);
        assert_eq!(back.link_rate_bps, ts.link_rate_bps);
        assert_eq!(back.flows.len(), 2);
        assert_eq!(back.flows[1].cc, "bbr");
        assert_eq!(back.flows[1].cwnd_pkts, vec![30.0, 40.0]);
        assert_eq!(back.flows[0].srtt_ms, vec![20.5, 21.25]);
        assert_eq!(back.interval_s, 0.1);
    }
}
