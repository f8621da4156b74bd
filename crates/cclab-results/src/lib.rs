//! # cclab-results: one schema for every backend
//!
//! A results document ([`ResultsDoc`]) holds one [`RunResult`] per matrix point (and seed):
//! per-flow records, the bottleneck's record, Jain's fairness index, and optional time series.
//! Field names carry their unit (`_bps`, `_ms`, `_s`); values are SI. This layout is an
//! interface contract (issue #2): fields may be added, never renamed or removed.
//!
//! Also here: [`Histogram`] (bounded-memory percentiles), [`median`] and [`jain`], and
//! [`metrics`]: the table of metrics every view (compare, CSV, tables) reads, and [`testing`]:
//! runs and documents made by hand for tests.

mod backend;
mod builder;
mod histogram;
pub mod metrics;
pub mod probe;
mod series;
pub mod testing;
pub mod trace;

pub use backend::{Backend, BackendError, RunContext};
pub use builder::{FlowRecord, LinkRecord, RunRecord};
pub use histogram::Histogram;
pub use probe::{ProbeRecord, ProbeResult};
pub use series::{DelayBins, FlowSeries, TimeSeries};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Version string written into every document.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ResultsDoc {
    /// cclab version that produced the document.
    pub cclab: String,
    pub scenario: String,
    /// `"sim"`, `"kernel"` or `"host"`.
    pub backend: String,
    pub runs: Vec<RunResult>,
    /// Where the scenario came from: its file, the file's SHA-256, the overrides as given.
    /// Absent from measurements of real hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<Source>,
    /// Measurements of real hosts: the probe phase and the path fitted from it
    /// (written by `cclab perf`, read by `cclab fit`; layout in cclab-remote's `fit` module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fit: Option<Value>,
}

/// The scenario a document ran: enough to know whether two documents ran the same thing.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The scenario file as named on the command line.
    pub file: String,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// `--set KEY=VALUE` overrides as given on the command line, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunResult {
    /// The swept scenario values of this matrix point, flattened (`"link.loss": 0.01`).
    pub params: Map<String, Value>,
    pub seed: u64,
    /// Simulated (or wall) time the run covered, s.
    pub duration_s: f64,
    pub flows: Vec<FlowResult>,
    pub link: LinkResult,
    /// Jain's fairness index over the flows' goodputs (1 = equal shares).
    pub jain: f64,
    /// Published figures from the scenario's `[reference]` table, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Value>,
    /// Time series (100 ms bins); written to CSV by the CLI, omitted from JSON unless asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<TimeSeries>,
    /// Kernel backend: the conditions the run had on this machine (absent from simulator runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<LabConditions>,
    /// Every scenario value this run had, after defaults and overrides (`"link.rtt": 0.05`,
    /// `"hosts.wake": 0.0001`, `"flows.cc_params.hystart": true`), in the units of `params`.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub resolved: Map<String, Value>,
    /// The backend's own settings that shaped the run (the simulator's TSO and GRO models,
    /// the kernel lab's element mode...): with `resolved`, everything the run depended on.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub settings: Map<String, Value>,
    /// Latency probes (`[[flows]]` groups of `kind = "probe"`), absent without any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub probes: Vec<ProbeResult>,
}

impl RunResult {
    /// Drops the time series (the flows' and the probes'), as results.json holds none.
    pub fn drop_series(&mut self) {
        self.series = None;
        for p in &mut self.probes {
            p.series = None;
        }
    }
}

/// How undisturbed a kernel-backend run was. A run whose machine was busy elsewhere measured
/// the machine as much as the path: see [`LabConditions::disturbed`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LabConditions {
    /// CPU time the hypervisor took from this (virtual) machine during the run, ms summed over
    /// its CPUs (/proc/stat `steal`); None where the kernel does not report it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steal_ms: Option<f64>,
    /// CPUs of the machine (the denominator of the steal share).
    pub cpus: u32,
    /// Times the link element released packets more than 0.5 ms late (it lost its CPU).
    pub element_stalls: u64,
    /// Earlier attempts of this run that the machine disturbed and that were run again
    /// (`--retry-disturbed`); these conditions are the kept attempt's.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl LabConditions {
    /// Share of the CPU time the hypervisor may take before a run counts as disturbed.
    pub const MAX_STEAL_SHARE: f64 = 0.05;
    /// Element stalls per second of run beyond which a run counts as disturbed.
    pub const MAX_STALLS_PER_S: f64 = 2.0;

    /// Share of the machine's CPU time taken by the hypervisor over `duration_s`.
    pub fn steal_share(&self, duration_s: f64) -> Option<f64> {
        let total_ms = duration_s * 1e3 * self.cpus.max(1) as f64;
        self.steal_ms
            .filter(|_| total_ms > 0.0)
            .map(|s| s / total_ms)
    }

    /// How disturbed the run was, relative to the thresholds of [`Self::disturbed`]: above
    /// 1.0 it is disturbed. For choosing the least disturbed of several attempts.
    pub fn disturbance(&self, duration_s: f64) -> f64 {
        let share = self.steal_share(duration_s).unwrap_or(0.0);
        let stalls_per_s = self.element_stalls as f64 / duration_s.max(1e-9);
        (share / Self::MAX_STEAL_SHARE).max(stalls_per_s / Self::MAX_STALLS_PER_S)
    }

    /// Why this run's timing cannot be trusted, if it cannot: more than 5% of the CPU time
    /// stolen, or the element stalled more than twice a second. (Measured on the lab's 2-vCPU
    /// machine: undisturbed 20 s runs have 0.2-0.6 s of steal and 0-10 stalls; a run with
    /// 8.9 s and 320 stalls turned a CUBIC-vs-BBR contest the other way round.)
    pub fn disturbed(&self, duration_s: f64) -> Option<String> {
        let share = self.steal_share(duration_s).unwrap_or(0.0);
        (self.disturbance(duration_s) > 1.0).then(|| {
            format!(
                "the hypervisor took {:.0}% of the CPU time and the link element stalled {} times",
                share * 100.0,
                self.element_stalls
            )
        })
    }
}

/// The first of up to `1 + retries` attempts of a run that the machine did not disturb
/// ([`LabConditions::disturbed`]; a run without lab conditions counts as quiet), else the
/// least disturbed, with `retries` in its conditions set to the attempts before it.
/// `on_disturbed(n, run, why)` hears of each disturbed attempt `n` (from 0) before the next
/// is made: to warn, or to pause.
pub fn first_quiet<E>(
    retries: u32,
    mut attempt: impl FnMut() -> Result<RunResult, E>,
    mut on_disturbed: impl FnMut(u32, &RunResult, &str),
) -> Result<RunResult, E> {
    let mut best: Option<(f64, RunResult)> = None;
    for n in 0..=retries {
        let mut res = attempt()?;
        let Some(lab) = res.lab.as_mut() else {
            return Ok(res);
        };
        lab.retries = n;
        let Some(why) = lab.disturbed(res.duration_s) else {
            return Ok(res);
        };
        let score = lab.disturbance(res.duration_s);
        on_disturbed(n, &res, &why);
        if best.as_ref().is_none_or(|(b, _)| score < *b) {
            best = Some((score, res));
        }
    }
    Ok(best.expect("at least one attempt ran").1)
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FlowResult {
    pub id: u32,
    pub cc: String,
    /// Index of the `[[flows]]` group this flow came from.
    pub group: u32,
    pub start_s: f64,
    /// Bytes delivered in order to the receiving application, per second of the flow's
    /// active time (start to completion for sized flows, start to end of run for bulk).
    pub goodput_bps: f64,
    /// Bytes this flow put through the bottleneck (retransmissions included) per active second.
    pub throughput_bps: f64,
    pub bytes_delivered: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// retransmits / segments_sent.
    pub retrans_ratio: f64,
    /// RTT samples seen by the sender.
    pub rtt_ms: Percentiles,
    /// Flow completion time (sized flows that completed), s.
    pub fct_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_bytes: Option<u64>,
    #[serde(default)]
    pub rto_count: u64,
    /// Data segments that reached the receiver marked CE (ECN).
    #[serde(default)]
    pub ce_marks: u64,
    /// Window reductions for an ECN echo (`tcp_enter_cwr()`; segments sent with CWR).
    #[serde(default)]
    pub cwr_events: u64,
    /// The flow's data segments by the ECN field they entered the path with, when it used
    /// ECN (kernel lab: counted by the element).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_in: Option<EcnCounts>,
    /// Accurate ECN's feedback, when the flow negotiated it (kernel lab: the sender's
    /// TCP_INFO).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accecn: Option<AccEcnCounts>,
}

/// Packets by the ECN field of their IP header (RFC 3168, RFC 9331).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EcnCounts {
    pub not_ect: u64,
    /// ECT(0): classic ECN.
    pub ect0: u64,
    /// ECT(1): L4S.
    pub ect1: u64,
    /// Congestion Experienced (marked before the count was taken).
    pub ce: u64,
}

/// What Accurate ECN fed back to the sender: the payload bytes the receiver got with each
/// ECN field (from the AccECN option), and the CE-marked segments the sender counted from
/// the ACE field (`tp->delivered_ce`).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct AccEcnCounts {
    pub delivered_ce_segments: u64,
    pub delivered_ect0_bytes: u64,
    pub delivered_ect1_bytes: u64,
    pub delivered_ce_bytes: u64,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Percentiles {
    pub min: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct QueuePercentiles {
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LinkResult {
    /// The bottleneck's rate; when it varies (a schedule, a trace), its mean over the run.
    pub rate_bps: f64,
    /// Fraction of the run's capacity used (bytes forwarded / (rate x duration)).
    pub utilization: f64,
    /// Data packets dropped because a buffer was full (the bottleneck's, a shaper's).
    pub drops_buffer: u64,
    /// Data packets the bottleneck's AQM dropped (CoDel, FQ-CoDel, PIE).
    #[serde(default)]
    pub drops_aqm: u64,
    /// Data packets a policer dropped.
    #[serde(default)]
    pub drops_policer: u64,
    /// Data packets dropped by the random-loss model.
    pub drops_random: u64,
    /// ACKs dropped by the random ACK-loss model.
    #[serde(default)]
    pub drops_ack: u64,
    /// Data packets the bottleneck marked CE instead of dropping (its AQM, or
    /// `link.ecn_threshold`).
    #[serde(default)]
    pub marks: u64,
    /// Packets forwarded by the bottleneck.
    #[serde(default)]
    pub forwarded_pkts: u64,
    /// Time packets waited in the bottleneck buffer.
    pub queue_delay_ms: QueuePercentiles,
    /// Time packets waited in each queue of the path (`"data.queue"`, `"data.shaper"`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub queues: BTreeMap<String, QueuePercentiles>,
    /// Each path element's counters by element (`"data.loss": {"dropped": 12}`,
    /// `"data.queue": {"dropped": 3, "forwarded": 9000}`); an open map, elements and
    /// counters may be added.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub elements: BTreeMap<String, BTreeMap<String, u64>>,
}

/// Median of a non-empty set of values (sorts `v` in place; mean of the middle two when even).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Jain's fairness index: (sum x)^2 / (n * sum x^2); 1 for one flow or equal shares.
pub fn jain(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if n == 0.0 || s2 == 0.0 {
        return 1.0;
    }
    s * s / (n * s2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lab_conditions_flag_disturbed_runs() {
        let lab = |steal_ms: Option<f64>, element_stalls| LabConditions {
            steal_ms,
            cpus: 2,
            element_stalls,
            retries: 0,
        };
        // The measured cases: a quiet 20 s run, and the one whose result flipped.
        assert_eq!(lab(Some(440.0), 9).disturbed(20.0), None);
        let why = lab(Some(8900.0), 320).disturbed(20.0).unwrap();
        assert!(why.contains("22%") && why.contains("320"), "{why}");
        assert!((lab(Some(8900.0), 0).steal_share(20.0).unwrap() - 0.2225).abs() < 1e-9);
        // Either sign alone is enough; no steal figure (not reported) is not a disturbance.
        assert!(lab(Some(2100.0), 0).disturbed(20.0).is_some());
        assert!(lab(None, 50).disturbed(20.0).is_some());
        assert_eq!(lab(None, 30).disturbed(20.0), None);
        // Simulator documents have no `lab`; kernel ones round-trip it.
        let json = serde_json::to_string(&lab(Some(1.5), 3)).unwrap();
        assert_eq!(
            serde_json::from_str::<LabConditions>(&json).unwrap(),
            lab(Some(1.5), 3)
        );
    }

    #[test]
    fn jain_index() {
        assert!((jain(&[1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[1.0, 0.0]) - 0.5).abs() < 1e-12);
        assert!((jain(&[3.0, 1.0]) - 0.8).abs() < 1e-12);
    }

    #[test]
    fn median_odd_and_even() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    }
}
