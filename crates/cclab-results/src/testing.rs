//! Results made by hand, for tests: [`RunBuilder`] builds a [`RunResult`] and [`DocBuilder`]
//! a [`ResultsDoc`] (what the report, the tables, the CSV and `cclab compare` read), so a test
//! names only what it varies.
//!
//! Everything a test does not set is the type's `Default` (zero, empty, `None`), with two
//! exceptions: a document's backend is `"sim"`, and a run's `jain` is Jain's index over its
//! flows' goodputs (as [`RunRecord::build`](crate::RunRecord::build) computes it) unless
//! [`RunBuilder::jain`] sets it.
//!
//! ```
//! use cclab_results::testing::{DocBuilder, RunBuilder};
//!
//! let doc = DocBuilder::new()
//!     .scenario("s")
//!     .run(
//!         RunBuilder::new()
//!             .seed(2)
//!             .param("link.loss", 0.01)
//!             .flow("cubic", 10e6)
//!             .rtt_ms(20.0, 21.0, 25.0, 30.0)
//!             .flow("bbr", 30e6)
//!             .utilization(0.8),
//!     )
//!     .build();
//! let r = &doc.runs[0];
//! assert_eq!((r.flows[1].id, r.flows[1].cc.as_str()), (1, "bbr"));
//! assert_eq!(r.flows[0].rtt_ms.p95, 25.0);
//! assert!((r.jain - 0.8).abs() < 1e-12);
//! ```

use crate::{FlowResult, LabConditions, Percentiles, ResultsDoc, RunResult, Source, TimeSeries};
use serde_json::Value;

/// A [`RunResult`] made by chained setters; the setters of a flow's figures apply to the
/// flow added last (they panic when there is none).
#[derive(Clone, Debug, Default)]
pub struct RunBuilder {
    run: RunResult,
    jain: Option<f64>,
}

impl RunBuilder {
    /// A run with no flows, every figure zero.
    pub fn new() -> Self {
        Self::default()
    }

    pub fn seed(mut self, seed: u64) -> Self {
        self.run.seed = seed;
        self
    }

    /// The time the run covered, s.
    pub fn duration(mut self, secs: f64) -> Self {
        self.run.duration_s = secs;
        self
    }

    /// A swept value of the run's matrix point (`params`), after those set before.
    pub fn param(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.run.params.insert(key.into(), value.into());
        self
    }

    /// A scenario value the run had (`resolved`), after those set before.
    pub fn resolved(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.run.resolved.insert(key.into(), value.into());
        self
    }

    /// Every key of the JSON object `values` as a resolved value, in its order.
    pub fn resolved_all(mut self, values: Value) -> Self {
        let Value::Object(map) = values else {
            panic!("resolved_all takes a JSON object, not {values}");
        };
        self.run.resolved.extend(map);
        self
    }

    /// A backend setting of the run (`settings`, such as `host.peer`).
    pub fn setting(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.run.settings.insert(key.into(), value.into());
        self
    }

    /// One more flow of `cc` with this goodput; its id is its index.
    pub fn flow(mut self, cc: &str, goodput_bps: f64) -> Self {
        self.run.flows.push(FlowResult {
            id: self.run.flows.len() as u32,
            cc: cc.into(),
            goodput_bps,
            ..Default::default()
        });
        self
    }

    /// One more flow for each `(cc, goodput)`, in order.
    pub fn flows(self, flows: &[(&str, f64)]) -> Self {
        flows.iter().fold(self, |b, (cc, gp)| b.flow(cc, *gp))
    }

    fn last_flow(&mut self) -> &mut FlowResult {
        self.run
            .flows
            .last_mut()
            .expect("add a flow before setting its figures")
    }

    /// The RTT percentiles of the flow added last, ms.
    pub fn rtt_ms(mut self, min: f64, p50: f64, p95: f64, p99: f64) -> Self {
        self.last_flow().rtt_ms = Percentiles { min, p50, p95, p99 };
        self
    }

    /// The retransmitted segments of the flow added last.
    pub fn retransmits(mut self, n: u64) -> Self {
        self.last_flow().retransmits = n;
        self
    }

    /// The share of the flow added last's segments that were retransmitted (0..1).
    pub fn retrans_ratio(mut self, ratio: f64) -> Self {
        self.last_flow().retrans_ratio = ratio;
        self
    }

    /// The flow added last is sized: `size` bytes to send, `delivered` of them arrived, and
    /// its completion time (None: it did not finish).
    pub fn sized(mut self, size: u64, fct_s: Option<f64>, delivered: u64) -> Self {
        let f = self.last_flow();
        f.size_bytes = Some(size);
        f.fct_s = fct_s;
        f.bytes_delivered = delivered;
        self
    }

    /// The bottleneck's rate, bit/s.
    pub fn link_rate(mut self, bps: f64) -> Self {
        self.run.link.rate_bps = bps;
        self
    }

    /// The share of the bottleneck's capacity used (0..1).
    pub fn utilization(mut self, share: f64) -> Self {
        self.run.link.utilization = share;
        self
    }

    /// Packets the bottleneck dropped for a full buffer.
    pub fn drops_buffer(mut self, n: u64) -> Self {
        self.run.link.drops_buffer = n;
        self
    }

    /// Packets the bottleneck marked CE.
    pub fn marks(mut self, n: u64) -> Self {
        self.run.link.marks = n;
        self
    }

    /// Jain's index as given, instead of the one over the flows' goodputs.
    pub fn jain(mut self, jain: f64) -> Self {
        self.jain = Some(jain);
        self
    }

    /// Kernel-lab conditions: CPU time stolen (ms over `cpus` CPUs) and element stalls.
    pub fn lab(mut self, steal_ms: f64, cpus: u32, element_stalls: u64) -> Self {
        self.run.lab = Some(LabConditions {
            steal_ms: Some(steal_ms),
            cpus,
            element_stalls,
            retries: 0,
        });
        self
    }

    /// The published figures of the scenario's `[reference]` table.
    pub fn reference(mut self, reference: Value) -> Self {
        self.run.reference = Some(reference);
        self
    }

    /// The run's time series.
    pub fn series(mut self, series: TimeSeries) -> Self {
        self.run.series = Some(series);
        self
    }

    pub fn build(self) -> RunResult {
        let mut run = self.run;
        run.jain = self.jain.unwrap_or_else(|| {
            let goodputs: Vec<f64> = run.flows.iter().map(|f| f.goodput_bps).collect();
            crate::jain(&goodputs)
        });
        run
    }
}

impl From<RunBuilder> for RunResult {
    fn from(b: RunBuilder) -> RunResult {
        b.build()
    }
}

/// A [`ResultsDoc`] made by chained setters: backend `"sim"`, no runs until added.
#[derive(Clone, Debug)]
pub struct DocBuilder(ResultsDoc);

impl Default for DocBuilder {
    fn default() -> Self {
        DocBuilder(ResultsDoc {
            backend: "sim".into(),
            ..Default::default()
        })
    }
}

impl DocBuilder {
    pub fn new() -> Self {
        Self::default()
    }

    /// `"sim"`, `"kernel"` or `"host"`.
    pub fn backend(mut self, backend: &str) -> Self {
        self.0.backend = backend.into();
        self
    }

    pub fn scenario(mut self, name: &str) -> Self {
        self.0.scenario = name.into();
        self
    }

    /// The cclab version said to have written the document.
    pub fn cclab(mut self, version: &str) -> Self {
        self.0.cclab = version.into();
        self
    }

    /// One more run (a [`RunResult`] or a [`RunBuilder`]).
    pub fn run(mut self, run: impl Into<RunResult>) -> Self {
        self.0.runs.push(run.into());
        self
    }

    /// More runs, in order.
    pub fn runs<R: Into<RunResult>>(mut self, runs: impl IntoIterator<Item = R>) -> Self {
        self.0.runs.extend(runs.into_iter().map(Into::into));
        self
    }

    /// The scenario file the runs came from (its SHA-256 `"0"`), with these `--set`s.
    pub fn source(mut self, file: &str, overrides: &[&str]) -> Self {
        self.0.source = Some(Source {
            file: file.into(),
            sha256: "0".into(),
            overrides: overrides.iter().map(|s| s.to_string()).collect(),
        });
        self
    }

    /// A measurement's probe phase and fitted path (`fit`).
    pub fn fit(mut self, fit: Option<Value>) -> Self {
        self.0.fit = fit;
        self
    }

    pub fn build(self) -> ResultsDoc {
        self.0
    }
}
