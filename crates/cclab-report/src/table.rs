//! The terminal table.

use crate::units;
use cclab_results::ResultsDoc;

/// Column-aligned text table.
struct Grid {
    rows: Vec<Vec<String>>,
    right: Vec<bool>,
}

impl Grid {
    fn render(&self, out: &mut String, indent: &str) {
        let n = self.rows.iter().map(|r| r.len()).max().unwrap_or(0);
        let mut w = vec![0; n];
        for r in &self.rows {
            for (i, c) in r.iter().enumerate() {
                w[i] = w[i].max(c.chars().count());
            }
        }
        for r in &self.rows {
            let mut line = String::from(indent);
            for (i, c) in r.iter().enumerate() {
                let pad = w[i] - c.chars().count();
                if self.right.get(i).copied().unwrap_or(false) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    line.push_str(&" ".repeat(pad));
                }
                line.push_str("  ");
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
}

/// Render one results document. `title` is printed above (scenario name, file, description).
pub fn render(doc: &ResultsDoc, title: &str) -> String {
    let mut out = String::new();
    out.push_str(title);
    out.push('\n');
    let param_keys: Vec<String> = doc.runs.first().map(|r| r.params.keys().cloned().collect()).unwrap_or_default();
    let has_ref = doc.runs.iter().any(|r| r.reference.as_ref().is_some_and(|v| v.get("goodput_bps").is_some()));
    let has_fct = doc.runs.iter().any(|r| r.flows.iter().any(|f| f.size_bytes.is_some()));
    let multi_seed = {
        let mut seeds: Vec<u64> = doc.runs.iter().map(|r| r.seed).collect();
        seeds.dedup();
        seeds.len() > 1
    };
    let mut header = vec!["#".to_string()];
    header.extend(param_keys.iter().cloned());
    if multi_seed {
        header.push("seed".into());
    }
    header.extend(["flow", "cc", "goodput"].map(String::from));
    if has_ref {
        header.push("published".into());
    }
    header.extend(["retrans", "rtt p50", "rtt p99"].map(String::from));
    if has_fct {
        header.push("fct".into());
    }
    let mut right = vec![true];
    right.extend(param_keys.iter().map(|_| false));
    if multi_seed {
        right.push(true);
    }
    right.extend([true, false, true]);
    if has_ref {
        right.push(true);
    }
    right.extend([true, true, true]);
    if has_fct {
        right.push(true);
    }
    let mut grid = Grid { rows: vec![header], right };
    let mut link_lines = Vec::new();
    for (i, run) in doc.runs.iter().enumerate() {
        for (j, f) in run.flows.iter().enumerate() {
            let first = j == 0;
            let mut row = vec![if first { (i + 1).to_string() } else { String::new() }];
            for k in &param_keys {
                row.push(if first { run.params.get(k).map(|v| units::param(k, v)).unwrap_or_default() } else { String::new() });
            }
            if multi_seed {
                row.push(if first { run.seed.to_string() } else { String::new() });
            }
            row.push(f.id.to_string());
            row.push(f.cc.clone());
            row.push(units::rate(f.goodput_bps));
            if has_ref {
                let cell = run
                    .reference
                    .as_ref()
                    .and_then(|r| {
                        let bps = r.get("goodput_bps")?.as_f64()?;
                        let unit = r.get("unit").and_then(|u| u.as_str()).unwrap_or("Mbit/s");
                        let cc_ok = r.get("flows.cc").and_then(|c| c.as_str()).is_none_or(|c| c == f.cc);
                        (first || run.flows.len() == 1 || cc_ok).then(|| {
                            let own = units::rate_in(bps, unit);
                            let bits = units::rate(bps);
                            if own.ends_with("bit/s") { own } else { format!("{bits} ({own})") }
                        })
                    })
                    .filter(|_| first)
                    .unwrap_or_default();
                row.push(cell);
            }
            row.push(format!("{} ({})", f.retransmits, units::pct(f.retrans_ratio)));
            row.push(units::ms(f.rtt_ms.p50));
            row.push(units::ms(f.rtt_ms.p99));
            if has_fct {
                row.push(f.fct_s.map(units::secs).unwrap_or_else(|| "-".into()));
            }
            grid.rows.push(row);
        }
        let l = &run.link;
        link_lines.push(format!(
            "#{}: link {} used, drops {} buffer / {} random, queue delay p50 {} p99 {}, jain {:.3}",
            i + 1,
            units::pct(l.utilization),
            l.drops_buffer,
            l.drops_random,
            units::ms(l.queue_delay_ms.p50),
            units::ms(l.queue_delay_ms.p99),
            run.jain
        ));
    }
    grid.render(&mut out, "  ");
    out.push('\n');
    for l in link_lines {
        out.push_str("  ");
        out.push_str(&l);
        out.push('\n');
    }
    out
}
