//! Fitting cclab's path model (rate, base RTT, random loss, buffer) to a measurement, each
//! estimate with a 95% interval, and writing it as a scenario `cclab run` loads.
//!
//! Pure functions over TCP_INFO samples: the probe phase (`client::probe`) collects them,
//! `cclab perf` stores the [`PathFit`] in the results document's `fit` member, `cclab fit`
//! reads it back. The model is cclab's: random loss before the bottleneck queue (lost packets
//! use no bottleneck time), a drop-tail buffer, `link.rtt` the path's round trip without the
//! bottleneck's own packet time.
//!
//! The estimators by concern, one child module each: `rate` (the bottleneck's rate and the
//! base RTT), `loss` (random loss), `buffer` (the bottleneck buffer) and `stats` (the
//! intervals they use); `render` reads the fit from a document and writes it as a scenario
//! and as text.

mod buffer;
mod loss;
mod rate;
mod render;
mod stats;
#[cfg(test)]
mod tests;

pub use buffer::{
    buffer, congestion_loss, fitted_buffer, held_queue_s, tso_chunk_s, STARTUP_MIN_RTT_S,
};
pub use loss::{
    loss_count, loss_phase_count, loss_read_enough, loss_segments_wanted, loss_that_matters,
    random_loss, LossCount, LOSS_TARGET,
};
pub use rate::{base_rtt, bottleneck_rate, rate_windows, series_windows, Pooled, IDLE_CWND};
pub use stats::{binomial95, quantile, t95};

use crate::protocol::Sample;
use cclab_results::RunResult;
use serde::{Deserialize, Serialize};
use stats::{min_rtt_s, srtt_s};

/// Layout version of the `fit` member.
pub const FIT_VERSION: u32 = 1;
/// Payload bytes per segment and wire bytes per packet (Ethernet MTU, no options).
pub const MSS: f64 = 1448.0;
pub const PACKET: f64 = 1500.0;

/// One estimate: the value cclab's scenario takes, a 95% interval, and how it was read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    /// `None`: a lower bound only (the truth is `low` or more).
    pub high: Option<f64>,
    /// How it was read, one line.
    pub how: String,
}

impl Estimate {
    /// Whether `x` lies inside the interval.
    pub fn contains(&self, x: f64) -> bool {
        x >= self.low && self.high.is_none_or(|h| x <= h)
    }
    pub fn is_lower_bound(&self) -> bool {
        self.high.is_none()
    }
}

/// One probe phase as it ran (a summary; the samples stay out of the document).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PhaseSummary {
    /// `rtt`, `rate`, `loss` or `buffer`.
    pub phase: String,
    pub cc: String,
    /// The pacing cap, bit/s of packets (0: none).
    pub pace_bps: f64,
    pub duration_s: f64,
    /// Payload read by the receiver per second of the run.
    pub goodput_bps: f64,
    pub min_rtt_ms: f64,
    pub srtt_p50_ms: f64,
    pub srtt_max_ms: f64,
    pub retransmits: u64,
    pub segments_sent: u64,
}

/// A measured controller: payload goodput per run (all streams), mean over its runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub cc: String,
    pub goodput_bps: f64,
    pub runs: usize,
    /// Each run's goodput (fits from before this field have none).
    #[serde(default)]
    pub runs_bps: Vec<f64>,
}

impl Measured {
    /// Student's 95% interval of the mean over the runs (none from fewer than two).
    pub fn interval(&self) -> Option<(f64, f64)> {
        let n = self.runs_bps.len();
        if n < 2 {
            return None;
        }
        let m = self.runs_bps.iter().sum::<f64>() / n as f64;
        let var = self.runs_bps.iter().map(|g| (g - m).powi(2)).sum::<f64>() / (n - 1) as f64;
        let h = t95(n - 1) * (var / n as f64).sqrt();
        Some(((m - h).max(0.0), m + h))
    }
}

/// The simulator's goodput for a controller on the fitted path.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    pub cc: String,
    /// Mean over the seeds, payload bit/s per run (all streams).
    pub goodput_bps: f64,
    /// Lowest and highest seed.
    pub min_bps: f64,
    pub max_bps: f64,
    pub seeds: u32,
    /// What the host measured with this controller (none: it did not run there).
    pub measured_bps: Option<f64>,
    /// predicted / measured.
    pub ratio: Option<f64>,
    /// The mean over the same seeds with the loss at its interval's low and high ends: how
    /// far the fit's uncertainty moves the prediction (older fits have none).
    #[serde(default)]
    pub at_loss_low_bps: Option<f64>,
    #[serde(default)]
    pub at_loss_high_bps: Option<f64>,
}

impl Prediction {
    /// The prediction's range over the loss interval, low to high.
    pub fn loss_range(&self) -> Option<(f64, f64)> {
        let (a, b) = (self.at_loss_low_bps?, self.at_loss_high_bps?);
        Some((a.min(b), a.max(b)))
    }
}

/// The fitted path: what `cclab perf` stores as the results' `fit`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathFit {
    pub version: u32,
    /// `HOST:PORT` measured and the direction (`download`: the server sent).
    pub peer: String,
    pub direction: String,
    /// Bottleneck rate, bit/s on the wire (1500-byte packets).
    pub rate_bps: Estimate,
    /// Base round trip, seconds (`link.rtt`).
    pub rtt_s: Estimate,
    /// Random loss probability of a data packet.
    pub loss: Estimate,
    /// Segments the loss phase retransmitted and sent.
    pub lost: u64,
    pub sent: u64,
    /// Bottleneck buffer, bytes (a lower bound when no run overflowed it).
    pub buffer_bytes: Estimate,
    pub phases: Vec<PhaseSummary>,
    pub measured: Vec<Measured>,
    /// Length of the measured runs, s, and their streams.
    pub duration_s: f64,
    pub streams: u16,
    #[serde(default)]
    pub notes: Vec<String>,
    #[serde(default)]
    pub predictions: Vec<Prediction>,
}

/// One probe phase's raw data: the sending socket's samples of its (single) stream.
#[derive(Clone, Debug, Default)]
pub struct ProbeRun {
    pub phase: String,
    pub cc: String,
    pub pace_bps: f64,
    pub duration_s: f64,
    /// Payload the receiver read, and from the start to its last byte, ns.
    pub delivered: u64,
    pub active_ns: u64,
    pub samples: Vec<Sample>,
}

impl ProbeRun {
    pub fn summary(&self) -> PhaseSummary {
        let srtt: Vec<f64> = srtt_s(&self.samples);
        let last = self.samples.last().copied().unwrap_or_default();
        PhaseSummary {
            phase: self.phase.clone(),
            cc: self.cc.clone(),
            pace_bps: self.pace_bps,
            duration_s: self.duration_s,
            goodput_bps: self.delivered as f64 * 8.0 / (self.active_ns.max(1) as f64 / 1e9),
            min_rtt_ms: min_rtt_s(&self.samples).unwrap_or(0.0) * 1e3,
            srtt_p50_ms: quantile(&srtt, 0.5) * 1e3,
            srtt_max_ms: srtt.iter().copied().fold(0.0, f64::max) * 1e3,
            retransmits: last.retrans as u64,
            segments_sent: last.segs_out as u64,
        }
    }
}

/// What the fit needs besides the probe runs.
#[derive(Clone, Debug, Default)]
pub struct FitMeta {
    pub peer: String,
    pub direction: String,
    pub duration_s: f64,
    pub streams: u16,
    pub notes: Vec<String>,
}

/// Fit the path to the probe runs (phases `rtt`, `rate`, `loss`, `buffer`) and the measured
/// runs (their lowest RTT sharpens the base RTT; the runs of the rate probe's controller add
/// windows to the rate; their goodput is what predictions are held against).
pub fn fit(probe: &[ProbeRun], runs: &[RunResult], meta: FitMeta) -> Result<PathFit, String> {
    let phase = |p: &str| probe.iter().find(|r| r.phase == p);
    let rate_run = phase("rate").ok_or("the probe has no rate phase")?;
    // The loss phase may run in several parts (until enough losses): their counts add
    // ([`loss_phase_count`]).
    if phase("loss").is_none() {
        return Err("the probe has no loss phase".into());
    }
    let min_rtt = probe
        .iter()
        .filter_map(|r| min_rtt_s(&r.samples))
        .chain(
            runs.iter()
                .flat_map(|r| r.flows.iter())
                .map(|f| f.rtt_ms.min / 1e3)
                .filter(|&m| m > 0.0),
        )
        .reduce(f64::min)
        .ok_or("no RTT sample in the probe")?;
    let rough_rtt = min_rtt.max(1e-4);
    let (skip, window) = rate_windows(rough_rtt);
    let mut pooled = Pooled::default();
    for r in runs.iter().filter(|r| {
        r.flows.iter().all(|f| f.cc == rate_run.cc) && r.flows.iter().all(|f| f.fct_s.is_none())
    }) {
        series_windows(r, skip, window, &mut pooled);
    }
    let rate = bottleneck_rate(&rate_run.samples, skip, window, &pooled)
        .ok_or("the rate probe delivered nothing")?;
    let unqueued: Vec<f64> = probe
        .iter()
        .filter(|r| r.phase == "rtt" || r.phase == "loss")
        .flat_map(|r| srtt_s(&r.samples))
        .collect();
    let rtt = base_rtt(min_rtt, &unqueued, rate.value);
    let count = loss_phase_count(probe);
    let (lost, sent) = (count.lost, count.sent);
    let mut loss = random_loss(lost, sent);
    let (buffer_est, notes) = {
        let mut notes = meta.notes.clone();
        if count.episodes > 0 {
            let left_out = format!(
                "{} retransmits of {} segments in {} burst{} of 100 ms left out: congestion episodes (a queue overflowed: a host stall or cross traffic), not random loss",
                count.episode_lost,
                count.episode_sent,
                count.episodes,
                if count.episodes == 1 { "" } else { "s" }
            );
            loss.how = format!("{}; {left_out}", loss.how);
            notes.push(format!("the loss phase: {left_out}"));
        }
        // The single-stream probes only: the measured runs' streams (and their hosts'
        // queues) add delay beyond the bottleneck's buffer.
        let other_q: Vec<f64> = probe
            .iter()
            .filter(|r| r.phase != "buffer")
            .map(|r| quantile(&srtt_s(&r.samples), 0.5))
            .collect();
        let p_high = loss.high.unwrap_or(1.0);
        let cubic = match phase("buffer") {
            Some(c) => {
                let l = c.samples.last().copied().unwrap_or_default();
                let filled = congestion_loss(l.retrans as u64, l.segs_out as u64, p_high);
                buffer(&c.samples, &rtt, &rate, filled, &other_q)
            }
            None => {
                notes.push("no CUBIC probe: the buffer is read from the rate probe alone".into());
                buffer(&[], &rtt, &rate, false, &other_q)
            }
        };
        let b = fitted_buffer(cubic, &rate_run.samples, skip, &rtt, &rate, p_high);
        (b, notes)
    };
    let mut measured: Vec<Measured> = Vec::new();
    for r in runs {
        let cc = r
            .params
            .get("flows.cc")
            .and_then(|v| v.as_str())
            .map(String::from)
            .or_else(|| r.flows.first().map(|f| f.cc.clone()))
            .unwrap_or_default();
        let g: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
        match measured.iter_mut().find(|m| m.cc == cc) {
            Some(m) => {
                m.goodput_bps = (m.goodput_bps * m.runs as f64 + g) / (m.runs + 1) as f64;
                m.runs += 1;
                m.runs_bps.push(g);
            }
            None => measured.push(Measured {
                cc,
                goodput_bps: g,
                runs: 1,
                runs_bps: vec![g],
            }),
        }
    }
    Ok(PathFit {
        version: FIT_VERSION,
        peer: meta.peer,
        direction: meta.direction,
        rate_bps: rate,
        rtt_s: rtt,
        loss,
        lost,
        sent,
        buffer_bytes: buffer_est,
        phases: probe.iter().map(ProbeRun::summary).collect(),
        measured,
        duration_s: meta.duration_s,
        streams: meta.streams,
        notes,
        predictions: Vec::new(),
    })
}
