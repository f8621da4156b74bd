//! Results as typed tables for data tools: `flows`, `runs` and `series`, one column per
//! field with one type each. The Parquet files of a results directory ([`crate::parquet`])
//! and the Python package's data frames hold exactly these tables.
//!
//! - **flows**: one row per run and flow, the columns of `flows.csv` in its order: `run`,
//!   `seed`, the swept params, `flow`, `cc`, then the metrics of
//!   [`cclab_results::metrics::FLOWS_CSV`]. Values at full precision (the CSV rounds them).
//! - **runs**: one row per run: `run`, `seed`, the swept params, `flows` (their count), the
//!   bottleneck's rate, and every run and link metric of [`cclab_results::metrics::ALL`].
//! - **series**: one row per run, time bin and flow: `run`, `seed`, then the columns of
//!   `series/run-N.csv`; a queue's delay column is null in the runs that lack that queue.
//!
//! Counts and byte totals are integers, every other metric a float; a swept param is an
//! integer or float column when every run's value is one, else text (as the CSV writes it).
//! The link's columns are null for a real path (unknown there, not zero), as in the CSV.

use crate::host::link_known;
use cclab_results::metrics::{Kind, MetricDef, ALL, FLOWS_CSV};
use cclab_results::{ResultsDoc, RunResult};
use serde_json::Value;

/// One column's values; None is a null.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

impl Values {
    /// The number of rows.
    pub fn len(&self) -> usize {
        match self {
            Values::Int(v) => v.len(),
            Values::Float(v) => v.len(),
            Values::Text(v) => v.len(),
        }
    }

    /// Whether the column has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A named column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub values: Values,
}

/// A table: columns of equal length.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub columns: Vec<Column>,
}

impl Table {
    /// The number of rows (0 for a table without columns).
    pub fn rows(&self) -> usize {
        self.columns.first().map_or(0, |c| c.values.len())
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    fn push(&mut self, name: impl Into<String>, values: Values) {
        self.columns.push(Column {
            name: name.into(),
            values,
        });
    }
}

/// The table names, in the order a results directory lists them.
pub const TABLES: [&str; 3] = ["flows", "runs", "series"];

/// The table called `name` (one of [`TABLES`]).
pub fn table(doc: &ResultsDoc, name: &str) -> Option<Table> {
    table_in(doc, name, 0, &Layout::of(doc))
}

/// [`table`] of a part of a document's runs: its first run is run `first + 1` of the whole,
/// and `layout` is the whole's, so the parts' tables are rows of one table (row groups of
/// one Parquet file written as the runs come).
pub fn table_in(doc: &ResultsDoc, name: &str, first: usize, layout: &Layout) -> Option<Table> {
    match name {
        "flows" => Some(flows_in(doc, first, layout)),
        "runs" => Some(runs_in(doc, first, layout)),
        "series" => Some(series_in(doc, first, layout)),
        _ => None,
    }
}

/// A param column's type.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ParamType {
    Int,
    Float,
    Text,
}

impl ParamType {
    fn of(v: &Value) -> ParamType {
        if v.is_i64() {
            ParamType::Int
        } else if v.is_number() {
            ParamType::Float
        } else {
            ParamType::Text
        }
    }

    /// The type that holds both.
    fn join(self, other: ParamType) -> ParamType {
        match (self, other) {
            (a, b) if a == b => a,
            (ParamType::Text, _) | (_, ParamType::Text) => ParamType::Text,
            _ => ParamType::Float,
        }
    }
}

/// What the columns of a document's tables are, beyond the fixed ones: the swept params
/// (the first run's, as `flows.csv` has them) with the type every run's value fits, and the
/// queues whose delays the series hold. Learnt run by run ([`Layout::observe`]), so a
/// document written as its runs come has one layout for all its parts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// None until a run is seen.
    params: Option<Vec<(String, ParamType)>>,
    queues: Vec<String>,
}

impl Layout {
    /// The layout of a whole document.
    pub fn of(doc: &ResultsDoc) -> Layout {
        let mut l = Layout::default();
        for r in &doc.runs {
            l.observe(r);
        }
        l
    }

    /// Take one more run into account.
    pub fn observe(&mut self, r: &RunResult) {
        match &mut self.params {
            None => {
                self.params = Some(
                    r.params
                        .iter()
                        .map(|(k, v)| (k.clone(), ParamType::of(v)))
                        .collect(),
                )
            }
            Some(params) => {
                for (k, t) in params {
                    if let Some(v) = r.params.get(k) {
                        *t = t.join(ParamType::of(v));
                    }
                }
            }
        }
        if let Some(s) = &r.series {
            for k in s.queue_delay_ms.keys() {
                if !self.queues.contains(k) {
                    self.queues.push(k.clone());
                }
            }
        }
    }
}

/// Whether a metric is a whole number (a count or a byte total).
fn is_integer(m: &MetricDef) -> bool {
    matches!(m.kind, Kind::Count | Kind::Bytes)
}

/// One metric's column over `rows`.
fn metric_column(m: &MetricDef, rows: impl Iterator<Item = Option<f64>>) -> Values {
    if is_integer(m) {
        Values::Int(rows.map(|v| v.map(|x| x as i64)).collect())
    } else {
        Values::Float(rows.collect())
    }
}

/// A param's values, one per row, as a column of type `t`.
fn param_column<'a>(t: ParamType, values: impl Iterator<Item = Option<&'a Value>>) -> Values {
    match t {
        ParamType::Int => Values::Int(values.map(|v| v.and_then(Value::as_i64)).collect()),
        ParamType::Float => Values::Float(values.map(|v| v.and_then(Value::as_f64)).collect()),
        ParamType::Text => Values::Text(
            values
                .map(|v| {
                    v.map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                })
                .collect(),
        ),
    }
}

/// `run` (from `first + 1`) and `seed` of rows that each belong to run `runs[row]` of `doc`.
fn run_and_seed(t: &mut Table, doc: &ResultsDoc, runs: &[usize], first: usize) {
    t.push(
        "run",
        Values::Int(runs.iter().map(|&i| Some((first + i) as i64 + 1)).collect()),
    );
    t.push(
        "seed",
        Values::Int(
            runs.iter()
                .map(|&i| Some(doc.runs[i].seed as i64))
                .collect(),
        ),
    );
}

/// [`run_and_seed`], then the swept params.
fn run_columns(t: &mut Table, doc: &ResultsDoc, runs: &[usize], first: usize, layout: &Layout) {
    run_and_seed(t, doc, runs, first);
    for (k, ty) in layout.params.iter().flatten() {
        let values = runs.iter().map(|&i| doc.runs[i].params.get(k));
        t.push(k.clone(), param_column(*ty, values));
    }
}

/// One row per run and flow: `flows.csv` at full precision.
pub fn flows(doc: &ResultsDoc) -> Table {
    flows_in(doc, 0, &Layout::of(doc))
}

fn flows_in(doc: &ResultsDoc, first: usize, layout: &Layout) -> Table {
    let known = link_known(doc);
    let rows: Vec<(usize, usize)> = doc
        .runs
        .iter()
        .enumerate()
        .flat_map(|(i, r)| (0..r.flows.len()).map(move |j| (i, j)))
        .collect();
    let mut t = Table::default();
    let runs: Vec<usize> = rows.iter().map(|&(i, _)| i).collect();
    run_columns(&mut t, doc, &runs, first, layout);
    let flow = |&(i, j): &(usize, usize)| (&doc.runs[i], &doc.runs[i].flows[j]);
    t.push(
        "flow",
        Values::Int(rows.iter().map(|x| Some(flow(x).1.id as i64)).collect()),
    );
    t.push(
        "cc",
        Values::Text(rows.iter().map(|x| Some(flow(x).1.cc.clone())).collect()),
    );
    for m in FLOWS_CSV {
        let values = rows.iter().map(|x| {
            let (r, f) = flow(x);
            m.of(r, f).filter(|_| known || !m.is_link())
        });
        t.push(m.key, metric_column(m, values));
    }
    t
}

/// One row per run: the run's and the bottleneck's figures.
pub fn runs(doc: &ResultsDoc) -> Table {
    runs_in(doc, 0, &Layout::of(doc))
}

fn runs_in(doc: &ResultsDoc, first: usize, layout: &Layout) -> Table {
    let known = link_known(doc);
    let runs: Vec<usize> = (0..doc.runs.len()).collect();
    let mut t = Table::default();
    run_columns(&mut t, doc, &runs, first, layout);
    t.push(
        "flows",
        Values::Int(
            doc.runs
                .iter()
                .map(|r| Some(r.flows.len() as i64))
                .collect(),
        ),
    );
    t.push(
        "link_rate_bps",
        Values::Float(
            doc.runs
                .iter()
                .map(|r| Some(r.link.rate_bps).filter(|_| known))
                .collect(),
        ),
    );
    for m in ALL
        .iter()
        .filter(|m| m.of_flow(&Default::default()).is_none())
    {
        let values = doc
            .runs
            .iter()
            .map(|r| m.of_run(r).filter(|_| known || !m.is_link()));
        t.push(m.key, metric_column(m, values));
    }
    t
}

/// The series columns after `run`, `seed`, `t_s`, `flow` and `cc`: a flow's figure or the
/// link's, with its CSV name.
type SeriesField = (&'static str, fn(&cclab_results::FlowSeries) -> &Vec<f64>);

const FLOW_SERIES: [SeriesField; 6] = [
    ("goodput_bps", |f| &f.goodput_bps),
    ("cwnd_pkts", |f| &f.cwnd_pkts),
    ("inflight_pkts", |f| &f.inflight_pkts),
    ("pacing_rate_bps", |f| &f.pacing_rate_bps),
    ("srtt_ms", |f| &f.srtt_ms),
    ("delivery_rate_bps", |f| &f.delivery_rate_bps),
];

/// One row per run, time bin and flow.
pub fn series(doc: &ResultsDoc) -> Table {
    series_in(doc, 0, &Layout::of(doc))
}

fn series_in(doc: &ResultsDoc, first: usize, layout: &Layout) -> Table {
    // (run, bin, flow index) of every row.
    let mut rows: Vec<(usize, usize, usize)> = Vec::new();
    for (i, r) in doc.runs.iter().enumerate() {
        let Some(s) = &r.series else { continue };
        for b in 0..s.t_s.len() {
            rows.extend((0..s.flows.len()).map(|j| (i, b, j)));
        }
    }
    let ts = |i: usize| {
        doc.runs[i]
            .series
            .as_ref()
            .expect("a run with rows has series")
    };
    let at = |v: &Vec<f64>, b: usize| v.get(b).copied().unwrap_or(0.0);
    let mut t = Table::default();
    let runs: Vec<usize> = rows.iter().map(|&(i, _, _)| i).collect();
    run_and_seed(&mut t, doc, &runs, first);
    t.push(
        "t_s",
        Values::Float(rows.iter().map(|&(i, b, _)| Some(ts(i).t_s[b])).collect()),
    );
    t.push(
        "flow",
        Values::Int(
            rows.iter()
                .map(|&(i, _, j)| Some(ts(i).flows[j].id as i64))
                .collect(),
        ),
    );
    t.push(
        "cc",
        Values::Text(
            rows.iter()
                .map(|&(i, _, j)| Some(ts(i).flows[j].cc.clone()))
                .collect(),
        ),
    );
    for (name, get) in FLOW_SERIES {
        let values = rows
            .iter()
            .map(|&(i, b, j)| Some(at(get(&ts(i).flows[j]), b)))
            .collect();
        t.push(name, Values::Float(values));
    }
    t.push(
        "link_queue_bytes",
        Values::Float(
            rows.iter()
                .map(|&(i, b, _)| Some(at(&ts(i).link_queue_bytes, b)))
                .collect(),
        ),
    );
    // The capacity when it varies, else null (a fixed rate is the runs table's).
    t.push(
        "link_rate_bps",
        Values::Float(
            rows.iter()
                .map(|&(i, b, _)| {
                    let s = ts(i);
                    (!s.link_rate_bps.is_empty()).then(|| at(&s.link_rate_bps, b))
                })
                .collect(),
        ),
    );
    for k in &layout.queues {
        let values = rows
            .iter()
            .map(|&(i, b, _)| ts(i).queue_delay_ms.get(k).map(|v| at(v, b)))
            .collect();
        t.push(format!("queue_delay_ms.{k}"), Values::Float(values));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::{FlowResult, FlowSeries, TimeSeries};

    fn doc() -> ResultsDoc {
        let mut doc = ResultsDoc {
            backend: "sim".into(),
            ..Default::default()
        };
        for (i, (loss, cc)) in [
            (serde_json::json!(0), "cubic"),
            (serde_json::json!("1%"), "bbr"),
        ]
        .into_iter()
        .enumerate()
        {
            let mut r = RunResult {
                seed: 7 + i as u64,
                ..Default::default()
            };
            r.params.insert("link.loss".into(), loss);
            r.params.insert("flows.count".into(), serde_json::json!(2));
            r.link.drops_buffer = 3 + i as u64;
            for id in 0..2 {
                r.flows.push(FlowResult {
                    id,
                    cc: cc.into(),
                    goodput_bps: 1e6 * (id + 1) as f64 + 0.25,
                    retransmits: 5,
                    ..Default::default()
                });
            }
            if i == 1 {
                let mut s = TimeSeries {
                    interval_s: 0.1,
                    t_s: vec![0.1, 0.2],
                    link_queue_bytes: vec![10.0, 20.0],
                    ..Default::default()
                };
                s.flows.push(FlowSeries {
                    id: 0,
                    cc: cc.into(),
                    goodput_bps: vec![1.0, 2.0],
                    ..Default::default()
                });
                s.queue_delay_ms
                    .insert("data.queue".into(), vec![0.5, 0.75]);
                r.series = Some(s);
            }
            doc.runs.push(r);
        }
        doc
    }

    #[test]
    fn flows_table_has_the_csv_columns_typed_at_full_precision() {
        let d = doc();
        let t = flows(&d);
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        let csv = crate::export::flows_csv(&d);
        let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        assert_eq!(names, header, "same columns as flows.csv, same order");
        assert_eq!(t.rows(), 4);
        assert_eq!(
            t.column("link.loss").unwrap().values,
            Values::Text(vec![
                Some("0".into()),
                Some("0".into()),
                Some("1%".into()),
                Some("1%".into())
            ]),
            "a param mixing numbers and text is text, as the CSV writes it"
        );
        assert_eq!(
            t.column("flows.count").unwrap().values,
            Values::Int(vec![Some(2); 4])
        );
        assert_eq!(
            t.column("goodput_bps").unwrap().values,
            Values::Float(vec![
                Some(1e6 + 0.25),
                Some(2e6 + 0.25),
                Some(1e6 + 0.25),
                Some(2e6 + 0.25)
            ]),
            "full precision: the CSV rounds to whole bits per second"
        );
        assert_eq!(
            t.column("retransmits").unwrap().values,
            Values::Int(vec![Some(5); 4])
        );
        assert_eq!(
            t.column("fct_s").unwrap().values,
            Values::Float(vec![None; 4]),
            "an unsized flow has no completion time"
        );
    }

    #[test]
    fn runs_table_has_one_row_per_run_and_no_flow_metric() {
        let d = doc();
        let t = runs(&d);
        assert_eq!(t.rows(), 2);
        assert!(t.column("goodput_bps").is_none());
        assert_eq!(
            t.column("drops_buffer").unwrap().values,
            Values::Int(vec![Some(3), Some(4)])
        );
        assert_eq!(
            t.column("total_goodput_bps").unwrap().values,
            Values::Float(vec![Some(3e6 + 0.5), Some(3e6 + 0.5)])
        );
        assert_eq!(
            t.column("run").unwrap().values,
            Values::Int(vec![Some(1), Some(2)])
        );
        // A real path's link is unknown: null, not zero.
        let mut host = d.clone();
        host.backend = "host".into();
        assert_eq!(
            runs(&host).column("drops_buffer").unwrap().values,
            Values::Int(vec![None, None])
        );
    }

    #[test]
    fn series_table_has_a_row_per_bin_and_flow_of_runs_with_series() {
        let d = doc();
        let t = series(&d);
        assert_eq!(
            t.rows(),
            2,
            "only the second run has series: 2 bins x 1 flow"
        );
        assert_eq!(
            t.column("run").unwrap().values,
            Values::Int(vec![Some(2), Some(2)])
        );
        assert_eq!(
            t.column("queue_delay_ms.data.queue").unwrap().values,
            Values::Float(vec![Some(0.5), Some(0.75)])
        );
        assert_eq!(
            t.column("link_rate_bps").unwrap().values,
            Values::Float(vec![None, None]),
            "a fixed rate has no per-bin capacity"
        );
        assert!(t.columns.iter().all(|c| c.values.len() == 2));
    }
}
