//! Files for scripts: JSON documents and CSV tables.

use cclab_results::ResultsDoc;
use std::fmt::Write;

/// The results document as pretty JSON, without time series (they go to CSV).
pub fn json(doc: &ResultsDoc) -> String {
    let mut d = doc.clone();
    for r in &mut d.runs {
        r.series = None;
    }
    serde_json::to_string_pretty(&d).expect("results serialise")
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per run and flow, with the run's swept params as leading columns.
pub fn flows_csv(doc: &ResultsDoc) -> String {
    let keys: Vec<String> = doc
        .runs
        .first()
        .map(|r| r.params.keys().cloned().collect())
        .unwrap_or_default();
    let mut s = String::from("run,seed");
    for k in &keys {
        s.push(',');
        s.push_str(&csv_field(k));
    }
    s.push_str(",flow,cc,goodput_bps,throughput_bps,bytes_delivered,retransmits,retrans_ratio,rtt_min_ms,rtt_p50_ms,rtt_p95_ms,rtt_p99_ms,fct_s,link_utilization,drops_buffer,drops_random,queue_p50_ms,queue_p99_ms,jain,ce_marks,cwr_events,link_marks,drops_aqm,drops_policer\n");
    for (i, r) in doc.runs.iter().enumerate() {
        for f in &r.flows {
            let _ = write!(s, "{},{}", i + 1, r.seed);
            for k in &keys {
                let v = r.params.get(k).map(|v| match v {
                    serde_json::Value::String(x) => x.clone(),
                    other => other.to_string(),
                });
                let _ = write!(s, ",{}", csv_field(&v.unwrap_or_default()));
            }
            let _ = writeln!(
                s,
                ",{},{},{:.0},{:.0},{},{},{:.6},{:.3},{:.3},{:.3},{:.3},{},{:.4},{},{},{:.3},{:.3},{:.4},{},{},{},{},{}",
                f.id,
                f.cc,
                f.goodput_bps,
                f.throughput_bps,
                f.bytes_delivered,
                f.retransmits,
                f.retrans_ratio,
                f.rtt_ms.min,
                f.rtt_ms.p50,
                f.rtt_ms.p95,
                f.rtt_ms.p99,
                f.fct_s.map(|x| format!("{x:.4}")).unwrap_or_default(),
                r.link.utilization,
                r.link.drops_buffer,
                r.link.drops_random,
                r.link.queue_delay_ms.p50,
                r.link.queue_delay_ms.p99,
                r.jain,
                f.ce_marks,
                f.cwr_events,
                r.link.marks,
                r.link.drops_aqm,
                r.link.drops_policer
            );
        }
    }
    s
}
