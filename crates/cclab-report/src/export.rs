//! Files for scripts: JSON documents and CSV tables.

use cclab_results::metrics::FLOWS_CSV;
use cclab_results::{ResultsDoc, RunResult};
use std::fmt::Write;

/// The results document as pretty JSON, without time series (they go to CSV).
pub fn json(doc: &ResultsDoc) -> String {
    let mut d = doc.clone();
    for r in &mut d.runs {
        r.drop_series();
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

/// One row per run and flow, with the run's swept params as leading columns, then the
/// metrics of [`FLOWS_CSV`]. The link's columns are empty for a real path (unknown there, not
/// zero).
pub fn flows_csv(doc: &ResultsDoc) -> String {
    let csv = FlowsCsv::of(doc);
    let mut s = csv.header();
    for (i, r) in doc.runs.iter().enumerate() {
        csv.rows(&mut s, i + 1, r);
    }
    s
}

/// `flows.csv` written a run at a time: its columns are the first run's params.
pub struct FlowsCsv {
    keys: Vec<String>,
    known: bool,
}

impl FlowsCsv {
    /// The columns of `doc`'s CSV (its first run's params; its link known or not).
    pub fn of(doc: &ResultsDoc) -> FlowsCsv {
        FlowsCsv::new(doc, doc.runs.first())
    }

    /// The columns for a document whose first run is `first` (its runs may not be there).
    pub fn new(doc: &ResultsDoc, first: Option<&RunResult>) -> FlowsCsv {
        FlowsCsv {
            keys: first
                .map(|r| r.params.keys().cloned().collect())
                .unwrap_or_default(),
            known: crate::host::link_known(doc),
        }
    }

    /// The header line.
    pub fn header(&self) -> String {
        let mut s = String::from("run,seed");
        for k in &self.keys {
            s.push(',');
            s.push_str(&csv_field(k));
        }
        s.push_str(",flow,cc");
        for m in FLOWS_CSV {
            s.push(',');
            s.push_str(m.key);
        }
        s.push('\n');
        s
    }

    /// Run number `run`'s lines (one per flow), appended to `s`.
    pub fn rows(&self, s: &mut String, run: usize, r: &RunResult) {
        for f in &r.flows {
            let _ = write!(s, "{},{}", run, r.seed);
            for k in &self.keys {
                let v = r.params.get(k).map(|v| match v {
                    serde_json::Value::String(x) => x.clone(),
                    other => other.to_string(),
                });
                let _ = write!(s, ",{}", csv_field(&v.unwrap_or_default()));
            }
            let _ = write!(s, ",{},{}", f.id, f.cc);
            for m in FLOWS_CSV {
                // A link field: empty when the link is unknown.
                let v = m.of(r, f).filter(|_| self.known || !m.is_link());
                s.push(',');
                s.push_str(&m.csv(v));
            }
            s.push('\n');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};

    #[test]
    fn real_paths_leave_link_columns_empty() {
        let r = RunBuilder::new().flow("cubic", 5e6).utilization(0.5);
        let mut doc = DocBuilder::new().run(r).build();
        let row = |d: &ResultsDoc| flows_csv(d).lines().nth(1).unwrap().to_string();
        assert!(
            row(&doc).contains(",0.5000,0,0,0.000,0.000,1.0000,0,0,0,0,0"),
            "{}",
            row(&doc)
        );
        doc.backend = "host".into();
        assert!(
            row(&doc).ends_with(",0.000,,,,,,,1.0000,0,0,,,"),
            "{}",
            row(&doc)
        );
        let cols = |s: &str| s.split(',').count();
        let csv = flows_csv(&doc);
        assert_eq!(cols(csv.lines().next().unwrap()), cols(&row(&doc)));
    }
}
