//! Fitting cclab's path model (rate, base RTT, random loss, buffer) to a measurement, each
//! estimate with a 95% interval, and writing it as a scenario `cclab run` loads.
//!
//! Pure functions over TCP_INFO samples: the probe phase ([`crate::probe`]) collects them,
//! `cclab perf` stores the [`PathFit`] in the results document's `fit` member, `cclab fit`
//! reads it back. The model is cclab's: random loss before the bottleneck queue (lost packets
//! use no bottleneck time), a drop-tail buffer, `link.rtt` the path's round trip without the
//! bottleneck's own packet time.

use crate::protocol::Sample;
use cclab_results::{ResultsDoc, RunResult};
use serde::{Deserialize, Serialize};

/// Layout version of the `fit` member.
pub const FIT_VERSION: u32 = 1;
/// Payload bytes per segment and wire bytes per packet (Ethernet MTU, no options).
pub const MSS: f64 = 1448.0;
pub const PACKET: f64 = 1500.0;
/// The normal quantile of a two-sided 95% interval.
const Z: f64 = 1.959964;

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

// ---- statistics -------------------------------------------------------------------------

/// The `q` quantile (0..=1) of `v` by linear interpolation; 0 for no values.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let x = q.clamp(0.0, 1.0) * (s.len() - 1) as f64;
    let (i, f) = (x.floor() as usize, x.fract());
    if i + 1 < s.len() {
        s[i] + f * (s[i + 1] - s[i])
    } else {
        s[i]
    }
}

/// Student's t quantile for a two-sided 95% interval with `df` degrees of freedom.
pub fn t95(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        _ => Z + 2.4 / df as f64,
    }
}

/// A binomial proportion's 95% interval for `k` events in `n` trials: Wilson's score
/// interval; with no events, Clopper-Pearson's exact `[0, 1 - 0.025^(1/n)]` (about 3.7/n).
pub fn binomial95(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    if k == 0 {
        return (0.0, 1.0 - 0.025f64.powf(1.0 / n as f64));
    }
    let (k, n) = (k.min(n) as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let d = 1.0 + z2 / n;
    let c = (p + z2 / (2.0 * n)) / d;
    let h = Z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / d;
    ((c - h).max(0.0), (c + h).min(1.0))
}

fn srtt_s(samples: &[Sample]) -> Vec<f64> {
    samples
        .iter()
        .filter(|s| s.srtt_us > 0)
        .map(|s| s.srtt_us as f64 / 1e6)
        .collect()
}

/// The last sample at or before `t_s` of the run (samples in time order).
fn sample_at(samples: &[Sample], t_s: f64) -> Option<Sample> {
    let us = (t_s * 1e6).round() as u64;
    let i = samples.partition_point(|s| s.t_us as u64 <= us);
    i.checked_sub(1).map(|i| samples[i])
}

fn min_rtt_s(samples: &[Sample]) -> Option<f64> {
    samples
        .iter()
        .filter(|s| s.min_rtt_us > 0)
        .map(|s| s.min_rtt_us as f64 / 1e6)
        .reduce(f64::min)
}

// ---- estimators -------------------------------------------------------------------------

/// Base RTT from the lowest RTT any ACK showed (`tcpi_min_rtt`, pooled over every run) and
/// the smoothed RTT of flows that kept no queue (the paced probes).
///
/// The lowest RTT includes one packet's time at the bottleneck, which cclab's `link.rtt`
/// does not (the simulator adds it): the value is `min - 1500 B / rate`. The interval runs
/// from `min` less two packet times and 20 us (host timer and scheduling slack) to the 10th
/// percentile of the unqueued flows' smoothed RTT (what most uncongested ACKs saw).
pub fn base_rtt(min_rtt_s: f64, unqueued_srtt_s: &[f64], rate_bps: f64) -> Estimate {
    let pkt = if rate_bps > 0.0 {
        PACKET * 8.0 / rate_bps
    } else {
        0.0
    };
    let value = (min_rtt_s - pkt).max(min_rtt_s * 0.5);
    let low = (min_rtt_s - 2.0 * pkt - 20e-6).max(0.0).min(value);
    let high = quantile(unqueued_srtt_s, 0.1).max(min_rtt_s);
    Estimate {
        value,
        low,
        high: Some(high),
        how: format!(
            "lowest ACK RTT {:.3} ms less one packet's time at the bottleneck ({:.3} ms); upper end: 10th percentile of {} smoothed RTTs of the unqueued probes",
            min_rtt_s * 1e3,
            pkt * 1e3,
            unqueued_srtt_s.len()
        ),
    }
}

/// A sender's window this small (BBR's ProbeRTT holds 4 packets for 200 ms every 10 s; a
/// timeout drops it to 1) leaves the link idle: no measure of its rate.
pub const IDLE_CWND: u32 = 4;
/// Time around such a sample (or series bin) whose windows are left out too, s: the window's
/// fall and its climb back.
const IDLE_MARGIN_S: f64 = 0.1;

/// Windows of the measured runs for [`bottleneck_rate`]: their wire rates, and how many
/// were left out because the link idled in them.
#[derive(Clone, Debug, Default)]
pub struct Pooled {
    pub rates: Vec<f64>,
    pub idle: usize,
}

/// The bottleneck's wire rate from a flow that kept it busy (a BBR run): payload acked per
/// second over the steady part (after `skip_s`), times 1500/1448, in windows of `window_s`
/// (at least 3); the 95% interval is Student's over the windows. Windows in which the
/// sender's window fell to [`IDLE_CWND`] or less are left out (the link idled: BBR's ProbeRTT
/// alone would read a rate 2-4% low), unless fewer than three would be left. `pooled`: more
/// windows of the same controller (the measured runs', [`series_windows`]).
pub fn bottleneck_rate(
    samples: &[Sample],
    skip_s: f64,
    window_s: f64,
    pooled: &Pooled,
) -> Option<Estimate> {
    let end = samples.last()?.t_us as f64 / 1e6;
    let skip = skip_s.min(end / 2.0);
    let span = end - skip;
    if span <= 0.0 {
        return None;
    }
    let nwin = ((span / window_s.max(0.01)).floor() as usize).max(3);
    let w = span / nwin as f64;
    let at = |t: f64| sample_at(samples, t).map_or(0.0, |s| s.bytes_acked as f64);
    let idle_at: Vec<f64> = samples
        .iter()
        .filter(|s| s.cwnd > 0 && s.cwnd <= IDLE_CWND)
        .map(|s| s.t_us as f64 / 1e6)
        .collect();
    let wire = PACKET / MSS * 8.0;
    let all: Vec<(f64, bool)> = (0..nwin)
        .map(|k| {
            let (a, b) = (skip + k as f64 * w, skip + (k + 1) as f64 * w);
            let idle = idle_at
                .iter()
                .any(|&t| t >= a - IDLE_MARGIN_S && t <= b + IDLE_MARGIN_S);
            ((at(b) - at(a)) / w * wire, idle)
        })
        .collect();
    let busy: Vec<f64> = all.iter().filter(|x| !x.1).map(|x| x.0).collect();
    let (probe, probe_idle) = if busy.len() >= 3 {
        let n = all.len() - busy.len();
        (busy, n)
    } else {
        (all.iter().map(|x| x.0).collect(), 0)
    };
    let rates: Vec<f64> = probe.iter().chain(&pooled.rates).copied().collect();
    let n = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return None;
    }
    let sd = (rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let h = t95(rates.len() - 1) * sd / n.sqrt();
    let idle = probe_idle + pooled.idle;
    Some(Estimate {
        value: mean,
        low: (mean - h).max(0.0),
        high: Some(mean + h),
        how: format!(
            "payload acked over {:.1}-{:.1} s of the probe{} x 1500/1448; interval from {} windows of {:.0} ms{}",
            skip,
            end,
            if pooled.rates.is_empty() {
                String::new()
            } else {
                format!(" and {} windows of the measured runs", pooled.rates.len())
            },
            rates.len(),
            w * 1e3,
            if idle > 0 {
                format!(
                    "; {idle} windows where the sender's window fell to {IDLE_CWND} packets or less (BBR's ProbeRTT, a timeout: the link idled) left out"
                )
            } else {
                String::new()
            }
        ),
    })
}

/// Wire rates of one measured run's steady part in windows of about `window_s`: its
/// per-100-ms goodput bins (all flows) after `skip_s`, the last (partial) bin left out, and
/// windows in or next to a bin where every flow's window was [`IDLE_CWND`] or less left out
/// (counted in `idle`).
pub fn series_windows(run: &RunResult, skip_s: f64, window_s: f64, out: &mut Pooled) {
    let Some(ts) = run.series.as_ref() else {
        return;
    };
    let bins = ts.t_s.len().saturating_sub(1);
    let dt = ts.interval_s.max(1e-3);
    let per = ((window_s / dt).round() as usize).max(1);
    let first = ((skip_s / dt).ceil() as usize).min(bins);
    let idle = |i: usize| {
        !ts.flows.is_empty()
            && ts.flows.iter().all(|f| {
                f.cwnd_pkts
                    .get(i)
                    .is_some_and(|&c| c > 0.0 && c <= IDLE_CWND as f64)
            })
    };
    let margin = ((IDLE_MARGIN_S / dt).round() as usize).max(1);
    let mut i = first;
    while i + per <= bins {
        let near_idle = (i.saturating_sub(margin)..(i + per + margin).min(bins + 1)).any(idle);
        if near_idle {
            out.idle += 1;
        } else {
            let sum: f64 = (i..i + per).map(|k| ts.total_goodput_bps(k)).sum();
            out.rates.push(sum / per as f64 * PACKET / MSS);
        }
        i += per;
    }
}

/// Random loss from a flow paced well below the bottleneck (no queue, so no congestion
/// loss): retransmitted / sent data segments, a binomial 95% interval.
pub fn random_loss(retransmits: u64, segments: u64) -> Estimate {
    let (low, high) = binomial95(retransmits, segments);
    let value = if segments == 0 {
        0.0
    } else {
        retransmits.min(segments) as f64 / segments as f64
    };
    Estimate {
        value,
        low,
        high: Some(high),
        how: if retransmits == 0 {
            format!("no retransmission in {segments} segments of the paced probe (95% upper bound, Clopper-Pearson)")
        } else {
            format!(
                "{retransmits} retransmitted of {segments} segments of the paced probe (Wilson)"
            )
        },
    }
}

/// Window in which the loss phase's retransmits are counted, s.
const LOSS_WINDOW_S: f64 = 0.1;

/// The loss phase's count: what random loss is read from, and what was left out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LossCount {
    pub lost: u64,
    pub sent: u64,
    /// Windows left out as congestion episodes, and their retransmits and segments.
    pub episodes: u32,
    pub episode_lost: u64,
    pub episode_sent: u64,
}

/// Count the paced probe's losses (`parts`: each part's samples), leaving out congestion
/// episodes. Random loss is memoryless: the retransmits of a 100 ms window follow a binomial
/// at the rate of the rest. A queue that overflows (a host stall that bunches the paced
/// packets, cross traffic) drops a burst instead, tens of packets in a window where the rest
/// predicts a few; such a window, more than `3e + 6 sqrt(e) + 10` for `e` expected from the
/// other windows, is not random loss, and its losses and segments are left out (repeated
/// until none stands out). Bursty random loss (Gilbert-Elliott bursts of a few packets)
/// stays far below that bound.
pub fn loss_count(parts: &[&[Sample]]) -> LossCount {
    // (retransmits, segments) per window, every part from its own start.
    let mut win: Vec<(u64, u64)> = Vec::new();
    for samples in parts {
        let (mut k0, mut n0, mut t0) = (0u64, 0u64, 0.0f64);
        let mut last = (0u64, 0u64);
        for s in samples.iter() {
            let t = s.t_us as f64 / 1e6;
            last = (s.retrans as u64, s.segs_out as u64);
            if t - t0 >= LOSS_WINDOW_S {
                win.push((last.0.saturating_sub(k0), last.1.saturating_sub(n0)));
                (k0, n0, t0) = (last.0, last.1, t);
            }
        }
        if last.1 > n0 {
            win.push((last.0.saturating_sub(k0), last.1 - n0));
        }
    }
    let mut out_of = vec![false; win.len()];
    loop {
        let (k, n) = win
            .iter()
            .zip(&out_of)
            .filter(|(_, o)| !**o)
            .fold((0u64, 0u64), |(k, n), (w, _)| (k + w.0, n + w.1));
        let mut more = false;
        for (i, &(kw, nw)) in win.iter().enumerate() {
            if out_of[i] || n <= nw {
                continue;
            }
            let e = (k - kw) as f64 / (n - nw) as f64 * nw as f64;
            if kw as f64 > 3.0 * e + 6.0 * e.sqrt() + 10.0 {
                out_of[i] = true;
                more = true;
            }
        }
        if !more {
            break;
        }
    }
    let mut c = LossCount::default();
    for (&(kw, nw), &o) in win.iter().zip(&out_of) {
        if o {
            c.episodes += 1;
            c.episode_lost += kw;
            c.episode_sent += nw;
        } else {
            c.lost += kw;
            c.sent += nw;
        }
    }
    c
}

/// [`loss_count`] over the loss phase's parts among `probe`.
pub fn loss_phase_count(probe: &[ProbeRun]) -> LossCount {
    let parts: Vec<&[Sample]> = probe
        .iter()
        .filter(|r| r.phase == "loss")
        .map(|r| r.samples.as_slice())
        .collect();
    loss_count(&parts)
}

/// Losses the loss phase aims at: a 95% interval of about +-20% of the rate.
pub const LOSS_TARGET: u64 = 100;

/// The loss below which random loss cannot limit a loss-based controller on a path of
/// `bdp_pkts` packets: Reno's window between random losses (about 1.22 / sqrt(p) segments)
/// would be twice the BDP, so the window, not the loss, bounds it.
pub fn loss_that_matters(bdp_pkts: f64) -> f64 {
    (1.22 / (2.0 * bdp_pkts.max(1.0))).powi(2)
}

/// Whether the loss phase has read enough after `k` retransmits of `n` segments on a path of
/// `bdp_pkts`: [`LOSS_TARGET`] losses (a precise rate), or an upper bound below
/// [`loss_that_matters`] (a loss too small to matter here, known to be so).
pub fn loss_read_enough(k: u64, n: u64, bdp_pkts: f64) -> bool {
    k >= LOSS_TARGET || binomial95(k, n).1 < loss_that_matters(bdp_pkts)
}

/// Segments still to send for [`loss_read_enough`], from `k` of `n` so far: at the rate seen
/// (or, with no loss yet, as many again).
pub fn loss_segments_wanted(k: u64, n: u64) -> f64 {
    if k == 0 {
        (n as f64).max(1.0)
    } else {
        LOSS_TARGET.saturating_sub(k) as f64 * n as f64 / k as f64
    }
}

/// The buffer from a CUBIC run's queueing: the smoothed RTT above the base, times the rate.
///
/// `filled`: the run lost more than random loss explains, so its queue reached the buffer;
/// the value is the queue at the 99th percentile of its smoothed RTT, the interval from the
/// 90th percentile's (the smoothed RTT lags the peaks) at the low ends of base RTT and rate
/// to the largest at the high ends, plus three packets. Otherwise no run showed the buffer's
/// end: a lower bound, the largest median queue a probe kept (`other_p50_s`: the other
/// probes' medians of the smoothed RTT; a median, not a peak, because ACK and host delays add
/// to the peaks), at the low end of the rate and the high end of the base RTT, so it holds.
pub fn buffer(
    cubic: &[Sample],
    rtt: &Estimate,
    rate: &Estimate,
    filled: bool,
    other_p50_s: &[f64],
) -> Estimate {
    let srtt = srtt_s(cubic);
    let base_hi = rtt.high.unwrap_or(rtt.value);
    let rate_hi = rate.high.unwrap_or(rate.value);
    let bytes = |d: f64, r: f64| d.max(0.0) * r / 8.0;
    if filled && !srtt.is_empty() {
        let v = bytes(quantile(&srtt, 0.99) - rtt.value, rate.value);
        let low = bytes(quantile(&srtt, 0.9) - base_hi, rate.low).min(v);
        let max = srtt.iter().copied().fold(0.0, f64::max);
        let high = bytes(max - rtt.low, rate_hi) + 3.0 * PACKET;
        Estimate {
            value: v,
            low,
            high: Some(high.max(v)),
            how: format!(
                "the CUBIC probe overflowed it: 99th percentile of its smoothed RTT less the base ({:.2} ms) x rate",
                (quantile(&srtt, 0.99) - rtt.value) * 1e3
            ),
        }
    } else {
        let q = other_p50_s
            .iter()
            .copied()
            .chain(std::iter::once(quantile(&srtt, 0.5)))
            .map(|r| r - base_hi)
            .fold(0.0, f64::max);
        let b = bytes(q, rate.low);
        Estimate {
            value: b,
            low: b,
            high: None,
            how: format!(
                "lower bound: no run overflowed it (the CUBIC probe lost no more than random loss explains); largest median queueing delay of a probe {:.2} ms x rate",
                q * 1e3
            ),
        }
    }
}

/// Shortest a smoothed RTT must last to count as a queue's peak, s: two 10 ms samples.
const SPIKE_S: f64 = 0.02;
/// Shortest round trip on which the rate probe's start-up reads the buffer, s.
pub const STARTUP_MIN_RTT_S: f64 = 0.01;

/// The largest queueing delay a run's smoothed RTT held for `hold_s` or longer between
/// `from_s` and `to_s` of the run, above `base_s`: the highest of the lowest smoothed RTT over
/// every span of `hold_s`. A spike (a late ACK, a host stall) lasts less than a round trip and
/// does not count; a queue held at the buffer's end for a round trip does.
pub fn held_queue_s(samples: &[Sample], from_s: f64, to_s: f64, hold_s: f64, base_s: f64) -> f64 {
    let pts: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.srtt_us > 0)
        .map(|s| (s.t_us as f64 / 1e6, s.srtt_us as f64 / 1e6))
        .filter(|&(t, _)| t >= from_s && t <= to_s)
        .collect();
    let mut best = 0.0f64;
    for (i, &(t0, _)) in pts.iter().enumerate() {
        if t0 + hold_s > pts.last().map_or(0.0, |p| p.0) {
            break;
        }
        let low = pts[i..]
            .iter()
            .take_while(|&&(t, _)| t <= t0 + hold_s)
            .map(|&(_, r)| r)
            .fold(f64::INFINITY, f64::min);
        best = best.max(low - base_s);
    }
    best.max(0.0)
}

/// Linux's pacing-rate share of a TSO chunk (`sk_pacing_shift`'s default 10: about 1 ms of
/// the pacing rate per chunk).
const TSO_PACING_SHARE: f64 = 1.0 / 1024.0;
/// The largest chunk TCP hands the device (`sk_gso_max_size`), bytes.
const TSO_MAX: f64 = 65536.0;

/// The longest a TSO chunk of the run's first `to_s` seconds takes across the bottleneck at
/// `rate_bps`, s. Linux sizes a chunk to about 1 ms of its pacing rate (at least two
/// segments, at most 64 kB) and measures an RTT from the chunk's send time for each of the
/// ACKs that cover it, so a smoothed RTT carries up to one chunk's serialisation beyond the
/// queue: about 2.9 ms in a BBR start-up (pacing at 2.89 times the bottleneck) below a few
/// hundred Mbit/s, 12% of a 20 ms path's 1 BDP buffer.
pub fn tso_chunk_s(samples: &[Sample], to_s: f64, rate_bps: f64) -> f64 {
    if rate_bps <= 0.0 {
        return 0.0;
    }
    let pacing = samples
        .iter()
        .filter(|s| s.t_us as f64 / 1e6 <= to_s)
        .map(|s| s.pacing_rate as f64)
        .fold(0.0, f64::max);
    (pacing * TSO_PACING_SHARE).clamp(2.0 * PACKET, TSO_MAX) * 8.0 / rate_bps
}

/// The buffer from both probes that can reach it: the CUBIC probe ([`buffer`], already read)
/// and the rate probe's start-up (`startup`: its samples, `startup_s` its span as
/// [`rate_windows`] leaves it out of the rate; `p_high` random loss's upper end).
///
/// A BBR start-up (pacing at 2.89 times the rate it has seen, its window doubling each round
/// trip) ignores random loss and overshoots the bottleneck by one to two BDP before it
/// drains, so it reaches the end of a buffer up to about 1.5 BDP deep whatever the random
/// loss, where a loss-based controller on a lossy path takes its first loss well before. The
/// queue its smoothed RTT held for a round trip ([`held_queue_s`], at the high end of the
/// base RTT and the low end of the rate, less one TSO chunk's serialisation,
/// [`tso_chunk_s`]) is at most the buffer: a lower end in every case.
///
/// - The start-up overflowed it (lost more than random loss explains) on a round trip of
///   [`STARTUP_MIN_RTT_S`] or more: the queue it held for a round trip (at least 20 ms) at
///   the fitted base RTT and rate, up to the highest queue that lasted 20 ms (at the other
///   ends) plus three packets. The overshoot keeps the queue at the buffer's end for about
///   three round trips (until start-up sees the rate stop growing), 30 ms or more there; on a
///   shorter round trip it is over between two 10 ms samples, so it is not read.
/// - CUBIC overflowed it: its estimate; with the start-up's as well, the larger value and
///   low end (a CUBIC that overflowed only in its slow start under-reads the buffer and its
///   low end), and the higher high end; else its low end raised to the start-up's held queue.
/// - Neither: a lower bound, the larger of the two.
pub fn fitted_buffer(
    cubic: Estimate,
    startup: &[Sample],
    startup_s: f64,
    rtt: &Estimate,
    rate: &Estimate,
    p_high: f64,
) -> Estimate {
    let bytes = |d: f64, r: f64| d.max(0.0) * r / 8.0;
    let hold = rtt.value.max(SPIKE_S);
    let base_hi = rtt.high.unwrap_or(rtt.value);
    let held_low_s = (held_queue_s(startup, 0.0, startup_s, hold, base_hi)
        - tso_chunk_s(startup, startup_s, rate.low))
    .max(0.0);
    let held_low = bytes(held_low_s, rate.low);
    let end = sample_at(startup, startup_s).unwrap_or_default();
    let overflowed = congestion_loss(end.retrans as u64, end.segs_out as u64, p_high);
    let held_s = held_queue_s(startup, 0.0, startup_s, hold, rtt.value);
    let v = bytes(held_s, rate.value);
    let from_startup = (overflowed && rtt.value >= STARTUP_MIN_RTT_S && v > 0.0).then(|| {
        let peak_s = held_queue_s(startup, 0.0, startup_s, SPIKE_S, rtt.low);
        let high = bytes(peak_s, rate.high.unwrap_or(rate.value)) + 3.0 * PACKET;
        Estimate {
            value: v,
            low: held_low.min(v),
            high: Some(high.max(v)),
            how: format!(
                "the rate probe's start-up overflowed it ({} of {} segments retransmitted): the queue its smoothed RTT held for a round trip ({:.2} ms) x rate",
                end.retrans,
                end.segs_out,
                held_s * 1e3
            ),
        }
    });
    if !cubic.is_lower_bound() {
        // Both read it: a held queue is never above the buffer, so the larger value and the
        // larger low end; the wider high end.
        if let Some(st) = from_startup {
            let value = cubic.value.max(st.value);
            return Estimate {
                value,
                low: cubic.low.max(st.low).min(value),
                high: Some(cubic.high.unwrap_or(value).max(st.high.unwrap_or(value))),
                how: format!("{}; and {}", cubic.how, st.how),
            };
        }
        if held_low <= cubic.low {
            return cubic;
        }
        return Estimate {
            low: held_low.min(cubic.value),
            how: format!(
                "{}; low end: the queue the rate probe's start-up held for a round trip, less a TSO chunk ({:.2} ms)",
                cubic.how,
                held_low_s * 1e3
            ),
            ..cubic
        };
    }
    if let Some(st) = from_startup {
        return st;
    }
    if held_low > cubic.low {
        return Estimate {
            value: held_low,
            low: held_low,
            high: None,
            how: format!(
                "lower bound: no run overflowed it; the queue the rate probe's start-up held for a round trip, less a TSO chunk ({:.2} ms) x rate",
                held_low_s * 1e3
            ),
        };
    }
    cubic
}

/// Whether a run with `k` retransmits of `n` segments lost more than random loss (its 95%
/// upper end `p_high`) explains: more than the mean plus three standard deviations.
pub fn congestion_loss(k: u64, n: u64, p_high: f64) -> bool {
    let m = n as f64 * p_high;
    k as f64 > m + 3.0 * m.sqrt() + 3.0
}

/// The rate phase's start-up to leave out and its window, s, for a path of `rtt_s`: BBR's
/// start-up and the losses of its overshoot settle within about 2 s or 20 round trips; a
/// window spans 8 round trips (one BBR gain cycle), at least 200 ms.
pub fn rate_windows(rtt_s: f64) -> (f64, f64) {
    ((20.0 * rtt_s).max(2.0), (8.0 * rtt_s).max(0.2))
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

impl PathFit {
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a fit serializes")
    }

    /// The fit of a results document, or a one-line reason there is none.
    pub fn from_doc(doc: &ResultsDoc, name: &str) -> Result<PathFit, String> {
        if doc.backend != crate::results::BACKEND {
            return Err(format!(
                "{name} holds {} results (backend \"{}\"): cclab fit reads measurements of real hosts, written by `cclab perf --out DIR`",
                if doc.backend == "sim" { "simulator" } else { "lab" },
                doc.backend
            ));
        }
        let v = doc.fit.as_ref().ok_or_else(|| {
            format!("{name} has no probe phase (measured with --no-probe, or by cclab get): run `cclab perf` without --no-probe")
        })?;
        let f: PathFit = serde_json::from_value(v.clone())
            .map_err(|e| format!("{name}: the fit section is not one this cclab reads ({e})"))?;
        if f.version != FIT_VERSION {
            return Err(format!(
                "{name}: fit layout {} (this cclab reads {FIT_VERSION}); use the cclab that measured it",
                f.version
            ));
        }
        Ok(f)
    }

    /// Buffer for the scenario: the estimate, or with only a lower bound the larger of it and
    /// one BDP (cclab's default), bytes.
    pub fn scenario_buffer(&self) -> u64 {
        let b = &self.buffer_bytes;
        let bdp = self.rate_bps.value / 8.0 * self.rtt_s.value;
        let v = if b.is_lower_bound() {
            b.value.max(bdp)
        } else {
            b.value
        };
        (v.round() as u64).max(2 * PACKET as u64)
    }

    /// A scenario of the fitted path, one flow group of `streams` flows of each of `ccs`
    /// (a matrix over `flows.cc`), as long as the measured runs.
    pub fn scenario_toml(&self, name: &str, source: &str, ccs: &[String]) -> String {
        let iv = |e: &Estimate, f: &dyn Fn(f64) -> String| match e.high {
            Some(h) => format!("{} (95%: {} to {})", f(e.value), f(e.low), f(h)),
            None => format!("at least {} (lower bound)", f(e.low)),
        };
        let mbit = |x: f64| format!("{:.2} Mbit/s", x / 1e6);
        let ms = |x: f64| format!("{:.3} ms", x * 1e3);
        let pct = |x: f64| format!("{:.4}%", x * 100.0);
        let kb = |x: f64| format!("{:.1} kB", x / 1e3);
        let buf = self.scenario_buffer();
        let mut s = String::new();
        s.push_str(&format!(
            "# Fitted by `cclab fit` from {source}\n# ({} {}, probe phase of cclab perf; 95% intervals)\n",
            self.direction, self.peer
        ));
        s.push_str(&format!("#   rate   {}\n", iv(&self.rate_bps, &mbit)));
        s.push_str(&format!("#   rtt    {}\n", iv(&self.rtt_s, &ms)));
        s.push_str(&format!(
            "#   loss   {} ({} of {} segments)\n",
            iv(&self.loss, &pct),
            self.lost,
            self.sent
        ));
        s.push_str(&format!("#   buffer {}\n", iv(&self.buffer_bytes, &kb)));
        if self.buffer_bytes.is_lower_bound() {
            s.push_str(&format!(
                "#   (no run overflowed the buffer: link.buffer is the larger of the bound and 1 BDP, {})\n",
                kb(buf as f64)
            ));
        }
        s.push_str(&format!("name = {}\n", toml_str(name)));
        s.push_str(&format!(
            "description = {}\n",
            toml_str(&format!(
                "The path to {} as measured ({})",
                self.peer, self.direction
            ))
        ));
        s.push_str(&format!(
            "duration = \"{}ms\"\n\n[link]\n",
            (self.duration_s * 1e3).round().max(100.0) as u64
        ));
        s.push_str(&format!(
            "rate = \"{}kbit\"\n",
            (self.rate_bps.value / 1e3).round().max(1.0) as u64
        ));
        s.push_str(&format!(
            "rtt = \"{}us\"\n",
            (self.rtt_s.value * 1e6).round().max(1.0) as u64
        ));
        s.push_str(&format!("loss = \"{:.4}%\"\n", self.loss.value * 100.0));
        s.push_str(&format!("buffer = \"{buf}b\"\n\n[[flows]]\n"));
        let list: Vec<String> = ccs.iter().map(|c| toml_str(c)).collect();
        if list.len() == 1 {
            s.push_str(&format!("cc = {}\n", list[0]));
        } else {
            s.push_str(&format!("cc = [{}]\n", list.join(", ")));
        }
        s.push_str(&format!("count = {}\n", self.streams.max(1)));
        s
    }

    /// The estimates, one per line, each with its interval and how it was read.
    pub fn render_text(&self) -> String {
        let mut s = format!(
            "fitted path ({} {}; 95% intervals)\n",
            self.direction, self.peer
        );
        let line = |name: &str, e: &Estimate, f: &dyn Fn(f64) -> String| match e.high {
            Some(h) => format!(
                "  {name:<7} {:>14}  [{} .. {}]  {}\n",
                f(e.value),
                f(e.low),
                f(h),
                e.how
            ),
            None => format!(
                "  {name:<7} {:>14}  [{} .. ]  {}\n",
                f(e.low),
                f(e.low),
                e.how
            ),
        };
        s += &line("rate", &self.rate_bps, &|x| {
            format!("{:.2} Mbit/s", x / 1e6)
        });
        s += &line("rtt", &self.rtt_s, &|x| format!("{:.3} ms", x * 1e3));
        s += &line("loss", &self.loss, &|x| format!("{:.4}%", x * 100.0));
        s += &line("buffer", &self.buffer_bytes, &|x| {
            format!("{:.1} kB", x / 1e3)
        });
        for n in &self.notes {
            s += &format!("  note: {n}\n");
        }
        s
    }

    /// Measured vs predicted goodput, a line per controller: the measured mean with its
    /// runs' 95% interval, the predicted mean with the seeds' range and the range the loss
    /// interval's ends give.
    pub fn render_predictions(&self) -> String {
        let mb = |x: f64| format!("{:.2}", x / 1e6);
        let mut s = format!(
            "prediction (simulator on the fitted path, {:.1} s x{}; Mbit/s)\n  {:<8} {:>24} {:>10} {:>6}  {:<22} {}\n",
            self.duration_s,
            self.streams,
            "cc",
            "measured [95% of mean]",
            "predicted",
            "ratio",
            "seeds (lowest-highest)",
            "over the loss interval"
        );
        for p in &self.predictions {
            let m = self.measured.iter().find(|m| m.cc == p.cc);
            let measured = match (p.measured_bps, m.and_then(Measured::interval)) {
                (Some(v), Some((l, h))) => format!(
                    "{} [{}-{}] x{}",
                    mb(v),
                    mb(l),
                    mb(h),
                    m.map_or(0, |m| m.runs)
                ),
                (Some(v), None) => format!("{} x{}", mb(v), m.map_or(1, |m| m.runs)),
                (None, _) => "not run".into(),
            };
            s += &format!(
                "  {:<8} {:>24} {:>10} {:>6}  {:<22} {}\n",
                p.cc,
                measured,
                mb(p.goodput_bps),
                p.ratio.map_or("".into(), |r| format!("{r:.2}")),
                format!("{} ({}-{})", p.seeds, mb(p.min_bps), mb(p.max_bps)),
                p.loss_range()
                    .map_or("-".into(), |(l, h)| format!("{}-{}", mb(l), mb(h)))
            );
        }
        s
    }
}

/// `s` as a TOML string (quoted and escaped by the toml crate).
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SplitMix64: a small deterministic generator for synthetic samples.
    struct Rng(u64);
    impl Rng {
        fn u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn f(&mut self) -> f64 {
            (self.u64() >> 11) as f64 / (1u64 << 53) as f64
        }
        /// Standard normal (Box-Muller).
        fn normal(&mut self) -> f64 {
            let (a, b) = (self.f().max(1e-300), self.f());
            (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
        }
    }

    /// 10 ms samples of a flow whose payload rate is `rate_bps` x 1448/1500, with noise.
    fn flow(rng: &mut Rng, rate_bps: f64, secs: f64, noise: f64) -> Vec<Sample> {
        let mut acked = 0.0;
        (1..=(secs * 100.0) as u32)
            .map(|k| {
                let r = rate_bps * MSS / PACKET * (1.0 + noise * rng.normal()).max(0.0);
                acked += r / 8.0 * 0.01;
                Sample {
                    t_us: k * 10_000,
                    bytes_acked: acked as u64,
                    srtt_us: 40_000,
                    min_rtt_us: 40_000,
                    ..Default::default()
                }
            })
            .collect()
    }

    #[test]
    fn rate_interval_covers_the_truth_at_about_95_percent() {
        let mut rng = Rng(7);
        let (truth, trials) = (50e6, 400);
        let mut hit = 0;
        for _ in 0..trials {
            let s = flow(&mut rng, truth, 5.0, 0.3);
            let e = bottleneck_rate(&s, 1.0, 0.3, &Pooled::default()).unwrap();
            assert!(e.low < e.value && e.value < e.high.unwrap());
            assert!((e.value / truth - 1.0).abs() < 0.05, "{e:?}");
            hit += e.contains(truth) as u32;
        }
        let cov = hit as f64 / trials as f64;
        assert!((0.90..=0.99).contains(&cov), "coverage {cov}");
        // A steady flow: a tight interval; a short one still gets three windows.
        let s = flow(&mut rng, 100e6, 3.0, 0.0);
        let e = bottleneck_rate(&s, 1.0, 5.0, &Pooled::default()).unwrap();
        assert!((e.value / 100e6 - 1.0).abs() < 0.002, "{e:?}");
        assert!(e.how.contains("3 windows"), "{}", e.how);
        assert!(bottleneck_rate(&[], 1.0, 1.0, &Pooled::default()).is_none());
        // Pooled windows count in the mean and the interval.
        let pooled = Pooled {
            rates: vec![90e6, 90e6, 90e6],
            idle: 0,
        };
        let e = bottleneck_rate(&s, 1.0, 5.0, &pooled).unwrap();
        assert!((e.value / 95e6 - 1.0).abs() < 0.002, "{e:?}");
        assert!(
            e.how.contains("3 windows of the measured runs"),
            "{}",
            e.how
        );
    }

    #[test]
    fn windows_where_the_link_idled_are_left_out_of_the_rate() {
        // 100 Mbit/s of wire (payload x 1448/1500), 10 s, cwnd 400, but BBR's ProbeRTT from
        // 6.0 to 6.25 s: cwnd 4, nothing acked.
        let per_10ms = 100e6 / 8.0 * MSS / PACKET / 100.0;
        let mut acked = 0.0;
        let s: Vec<Sample> = (1..=1000u32)
            .map(|k| {
                let t = k as f64 / 100.0;
                let probe_rtt = (6.0..6.25).contains(&t);
                if !probe_rtt {
                    acked += per_10ms;
                }
                Sample {
                    t_us: k * 10_000,
                    bytes_acked: acked as u64,
                    cwnd: if probe_rtt { 4 } else { 400 },
                    ..Default::default()
                }
            })
            .collect();
        let e = bottleneck_rate(&s, 2.0, 0.32, &Pooled::default()).unwrap();
        assert!((e.value / 100e6 - 1.0).abs() < 0.002, "{e:?}");
        assert!(e.how.contains("ProbeRTT") && e.contains(100e6), "{e:?}");
        // The same in a measured run's 100 ms series (every flow at 4 in a bin).
        let mut ts = cclab_results::TimeSeries {
            interval_s: 0.1,
            t_s: (1..=100).map(|k| k as f64 / 10.0).collect(),
            ..Default::default()
        };
        let mut f = cclab_results::FlowSeries::default();
        for k in 0..100 {
            let idle = (60..63).contains(&k);
            f.goodput_bps
                .push(if idle { 0.0 } else { 100e6 * MSS / PACKET });
            f.cwnd_pkts.push(if idle { 4.0 } else { 400.0 });
        }
        ts.flows.push(f);
        let run = RunResult {
            series: Some(ts),
            ..Default::default()
        };
        let mut pooled = Pooled::default();
        series_windows(&run, 2.0, 0.3, &mut pooled);
        assert!(pooled.idle >= 1 && pooled.idle <= 3, "{pooled:?}");
        assert!(
            pooled.rates.iter().all(|r| (r / 100e6 - 1.0).abs() < 1e-9),
            "{pooled:?}"
        );
    }

    #[test]
    fn loss_interval_covers_the_truth_and_bounds_zero() {
        let mut rng = Rng(11);
        for (p, n) in [(0.005, 20_000u64), (0.001, 20_000), (0.02, 3_000)] {
            let trials = 300;
            let mut hit = 0;
            for _ in 0..trials {
                let k = (0..n).filter(|_| rng.f() < p).count() as u64;
                let e = random_loss(k, n);
                hit += e.contains(p) as u32;
            }
            let cov = hit as f64 / trials as f64;
            assert!((0.91..=0.99).contains(&cov), "p {p}: coverage {cov}");
        }
        // No loss: value 0, an upper bound of about 3.7/n, and the truth 0 inside.
        let e = random_loss(0, 30_000);
        assert_eq!((e.value, e.low), (0.0, 0.0));
        let h = e.high.unwrap();
        assert!((h * 30_000.0 - 3.689).abs() < 0.01, "{h}");
        assert!(e.contains(0.0) && !e.contains(2e-4));
        assert!(e.how.contains("upper bound"));
        assert_eq!(binomial95(0, 0), (0.0, 1.0));
        let (l, h) = binomial95(50, 10_000);
        assert!(l < 0.005 && 0.005 < h && l > 0.003 && h < 0.007, "{l} {h}");
    }

    /// A paced part of `secs` at `segs_per_s`, losing each segment with probability `p`,
    /// and `burst` segments more at once at `burst_at` s; samples every 10 ms.
    fn paced_part(
        rng: &mut Rng,
        secs: f64,
        segs_per_s: f64,
        p: f64,
        burst: u32,
        burst_at: f64,
    ) -> Vec<Sample> {
        let per = (segs_per_s * 0.01) as u32;
        let (mut k, mut n) = (0u32, 0u32);
        (1..=(secs * 100.0) as u32)
            .map(|i| {
                n += per;
                k += (0..per).filter(|_| rng.f() < p).count() as u32;
                let t = i as f64 * 0.01;
                if (t - burst_at).abs() < 0.005 {
                    k += burst;
                }
                Sample {
                    t_us: (t * 1e6) as u32,
                    retrans: k,
                    segs_out: n,
                    ..Default::default()
                }
            })
            .collect()
    }

    #[test]
    fn a_congestion_burst_is_left_out_of_the_random_loss() {
        let mut rng = Rng(5);
        // Lossless 1 Gbit/s path paced at 700 Mbit/s: a clean part, then one where a stall
        // overflowed the queue (136 losses at once). The count keeps the truth, 0.
        let clean = paced_part(&mut rng, 3.0, 60_000.0, 0.0, 0, 0.0);
        let hit = paced_part(&mut rng, 3.0, 60_000.0, 0.0, 136, 1.2);
        let c = loss_count(&[&clean, &hit]);
        assert_eq!((c.lost, c.episodes, c.episode_lost), (0, 1, 136), "{c:?}");
        assert_eq!(c.sent + c.episode_sent, 360_000);
        assert!(random_loss(c.lost, c.sent).contains(0.0));
        // 0.5% random loss with a burst of 150 on top: the burst goes, the rate stays.
        let part = paced_part(&mut rng, 7.0, 6_000.0, 0.005, 150, 3.0);
        let c = loss_count(&[&part]);
        assert_eq!((c.episodes, c.episode_lost >= 150), (1, true), "{c:?}");
        assert!(random_loss(c.lost, c.sent).contains(0.005), "{c:?}");
        // Random loss alone, even at 2% or in bursts of 4 (Gilbert-like): nothing left out.
        for p in [0.001, 0.005, 0.02] {
            let part = paced_part(&mut rng, 7.0, 6_000.0, p, 0, 0.0);
            assert_eq!(loss_count(&[&part]).episodes, 0, "p {p}");
        }
        let mut bursty = paced_part(&mut rng, 7.0, 6_000.0, 0.0025, 0, 0.0);
        for s in bursty.iter_mut() {
            s.retrans *= 4;
        }
        assert_eq!(loss_count(&[&bursty]).episodes, 0);
    }

    #[test]
    fn the_loss_phase_stops_when_precise_or_too_small_to_matter() {
        // 1 Gbit/s x 2 ms: 167 packets; a loss under ~1.3e-5 cannot limit Reno there.
        let bdp = 1e9 / 8.0 * 0.002 / PACKET;
        let t = loss_that_matters(bdp);
        assert!((t - 1.34e-5).abs() < 0.01e-5, "{t}");
        assert!(loss_read_enough(0, 300_000, bdp));
        assert!(!loss_read_enough(0, 100_000, bdp));
        // 50 Mbit/s x 150 ms (625 packets) at 0.1%: 40 losses are not enough, 100 are.
        let bdp = 50e6 / 8.0 * 0.15 / PACKET;
        assert!(!loss_read_enough(40, 40_000, bdp));
        assert!(loss_read_enough(100, 100_000, bdp));
        // More segments at the rate seen; with none lost, as many again.
        assert_eq!(loss_segments_wanted(40, 40_000), 60_000.0);
        assert_eq!(loss_segments_wanted(0, 25_000), 25_000.0);
        assert_eq!(loss_segments_wanted(150, 25_000), 0.0);
        // 100 losses hold the interval to about +-20%.
        let (l, h) = binomial95(100, 100_000);
        assert!(l > 0.0008 && h < 0.00125, "{l} {h}");
    }

    fn queued(base: f64, q: &[f64]) -> Vec<Sample> {
        q.iter()
            .enumerate()
            .map(|(i, d)| Sample {
                t_us: (i as u32 + 1) * 10_000,
                srtt_us: ((base + d) * 1e6) as u32,
                min_rtt_us: (base * 1e6) as u32,
                ..Default::default()
            })
            .collect()
    }

    fn est(value: f64, low: f64, high: f64) -> Estimate {
        Estimate {
            value,
            low,
            high: Some(high),
            how: String::new(),
        }
    }

    #[test]
    fn buffer_is_an_estimate_when_filled_and_a_lower_bound_otherwise() {
        // 100 Mbit/s, 20 ms base; the queue saws between 5 and 20 ms: a 250 kB buffer.
        let q: Vec<f64> = (0..500)
            .map(|i| 0.005 + 0.015 * (i % 100) as f64 / 99.0)
            .collect();
        let s = queued(0.020, &q);
        let (rtt, rate) = (est(0.020, 0.0199, 0.0202), est(100e6, 98e6, 102e6));
        let e = buffer(&s, &rtt, &rate, true, &[]);
        assert!((e.value - 250e3).abs() < 3e3, "{e:?}");
        assert!(
            e.contains(250e3) && !e.is_lower_bound() && e.low < 240e3,
            "{e:?}"
        );
        // The same run without overflow: only a lower bound below the truth, and the other
        // runs' queueing raises it.
        let e = buffer(&s, &rtt, &rate, false, &[]);
        assert!(e.is_lower_bound() && e.how.starts_with("lower bound"));
        assert!(e.low < 250e3 && e.low > 140e3 && e.contains(1e9), "{e:?}");
        let e = buffer(&s, &rtt, &rate, false, &[0.0502]);
        assert!((e.low - 98e6 / 8.0 * 0.030).abs() < 1.0, "{e:?}");
        // Losses beyond what random loss explains mark an overflow.
        assert!(!congestion_loss(60, 10_000, 0.006));
        assert!(congestion_loss(200, 10_000, 0.006));
        assert!(congestion_loss(10, 10_000, 0.0));
    }

    /// A BBR start-up on 50 Mbit/s x 40 ms with a 200 kB buffer (32 ms of queue): the queue
    /// ramps up over 0.2-0.5 s, holds at the buffer's end for 3 round trips, drains, then
    /// stays small; a 60 ms spike (a host stall) at 1.5 s; `retrans` by the end of start-up.
    fn startup(retrans: u32, full: bool) -> Vec<Sample> {
        let top = if full { 0.032 } else { 0.020 };
        (1..=300)
            .map(|i| {
                let t = i as f64 * 0.01;
                let q = match t {
                    t if t < 0.2 => 0.0,
                    t if t < 0.5 => top * (t - 0.2) / 0.3,
                    t if t < 0.62 => top,
                    t if t < 0.7 => top * (0.7 - t) / 0.08,
                    t if (1.5..1.52).contains(&t) => 0.060,
                    _ => 0.002,
                };
                Sample {
                    t_us: (t * 1e6) as u32,
                    srtt_us: ((0.040 + q) * 1e6) as u32,
                    min_rtt_us: 40_000,
                    retrans: if t > 0.5 { retrans } else { 0 },
                    segs_out: (t * 4000.0) as u32,
                    ..Default::default()
                }
            })
            .collect()
    }

    #[test]
    fn the_rate_probes_start_up_reads_a_buffer_random_loss_hides_from_cubic() {
        let (rtt, rate) = (est(0.040, 0.0399, 0.0402), est(50e6, 49e6, 51e6));
        // The spike is too short to count; the queue held for a round trip is.
        let s = startup(200, true);
        let held = held_queue_s(&s, 0.0, 2.0, 0.040, 0.040);
        assert!((held - 0.032).abs() < 1e-4, "{held}");
        assert!(held_queue_s(&s, 0.0, 2.0, 0.005, 0.040) > 0.059);
        // CUBIC kept below the buffer: a 5 kB lower bound.
        let small = Estimate {
            value: 5e3,
            low: 5e3,
            high: None,
            how: "lower bound".into(),
        };
        let fb = |s: &[Sample], rtt: &Estimate, p: f64| {
            fitted_buffer(small.clone(), s, 2.0, rtt, &rate, p)
        };
        // Overflowed (200 losses of ~8,000 segments against 0.5% random): an estimate.
        let e = fb(&s, &rtt, 0.005);
        assert!((e.value - 200e3).abs() < 2e3, "{e:?}");
        assert!(
            e.contains(200e3) && e.low < e.value && e.how.contains("start-up overflowed"),
            "{e:?}"
        );
        // As many losses as random loss explains, or none: the held queue as a lower bound.
        for e in [fb(&s, &rtt, 0.03), fb(&startup(0, false), &rtt, 0.0)] {
            assert!(
                e.is_lower_bound() && e.low > 100e3 && e.low < 200e3,
                "{e:?}"
            );
        }
        // A 5 ms round trip's overshoot falls between samples: not read as an estimate.
        let short = est(0.005, 0.0049, 0.0052);
        assert!(fb(&s, &short, 0.005).is_lower_bound());
        // Nothing held: CUBIC's bound stands.
        assert_eq!(fb(&queued(0.040, &[0.0; 200]), &rtt, 0.0), small);
        // In the fit: CUBIC (its probe queue-free, as random loss keeps it) gives only a
        // small bound; the start-up's overflow gives the buffer.
        let fit_with_cubic = |rate_samples: Vec<Sample>, cubic: ProbeRun| {
            let mut loss = probe_run("loss", queued(0.040, &[0.0; 300]));
            let last = loss.samples.last_mut().unwrap();
            (last.retrans, last.segs_out) = (50, 10_000);
            let mut r = probe_run("rate", rate_samples);
            // 50 Mbit/s of payload acked.
            for x in r.samples.iter_mut() {
                x.bytes_acked = (x.t_us as f64 / 1e6 * 50e6 / 8.0 * MSS / PACKET) as u64;
            }
            fit(&[r, loss, cubic], &[], FitMeta::default()).unwrap()
        };
        let fit_with = |rate_samples: Vec<Sample>| {
            fit_with_cubic(
                rate_samples,
                probe_run("buffer", queued(0.040, &[0.001; 300])),
            )
        };
        let f = fit_with(startup(200, true));
        assert!(!f.buffer_bytes.is_lower_bound(), "{:?}", f.buffer_bytes);
        assert!(f.buffer_bytes.contains(200e3), "{:?}", f.buffer_bytes);
        // No overflow anywhere: a lower bound, the start-up's held queue (20 ms at the rate's
        // low end), far above CUBIC's 1 ms, below the truth.
        let f = fit_with(startup(0, false));
        let b = &f.buffer_bytes;
        assert!(b.is_lower_bound() && b.how.contains("start-up"), "{b:?}");
        assert!(b.low > 115e3 && b.low <= 125.1e3, "{b:?}");
        // A CUBIC that overflowed in its slow start only (a brief peak, then a small
        // sawtooth) reads an estimate with a wide interval; the start-up raises its low end.
        let mut q = vec![0.002; 300];
        q[20..24].fill(0.032);
        let mut cubic = probe_run("buffer", queued(0.040, &q));
        let last = cubic.samples.last_mut().unwrap();
        (last.retrans, last.segs_out) = (150, 3_000);
        let alone = fit_with_cubic(startup(0, false), cubic.clone()).buffer_bytes;
        assert!(
            !alone.is_lower_bound() && alone.how.contains("CUBIC"),
            "{alone:?}"
        );
        let both = fit_with_cubic(startup(200, true), cubic).buffer_bytes;
        assert!(
            both.how.contains("start-up overflowed")
                && both.contains(200e3)
                && both.value >= alone.value,
            "{both:?}"
        );
        let w = |e: &Estimate| e.high.unwrap() - e.low;
        assert!(w(&both) < w(&alone) / 2.0, "{both:?} {alone:?}");
    }

    #[test]
    fn a_tso_chunks_serialisation_is_taken_off_the_start_ups_low_end() {
        // A BBR start-up paces at 2.89 times the bottleneck: a chunk of about 1 ms of that,
        // 2.9 ms across the bottleneck below a few hundred Mbit/s; 64 kB at most (0.5 ms at
        // 1 Gbit/s); two segments at the least.
        let paced = |bps: f64| {
            vec![Sample {
                t_us: 100_000,
                pacing_rate: (2.89 * bps / 8.0) as u64,
                ..Default::default()
            }]
        };
        let c = tso_chunk_s(&paced(50e6), 1.0, 50e6);
        assert!((c - 2.89e-3 * 1000.0 / 1024.0).abs() < 1e-5, "{c}");
        assert!((tso_chunk_s(&paced(1e9), 1.0, 1e9) - 65536.0 * 8.0 / 1e9).abs() < 1e-9);
        assert!((tso_chunk_s(&paced(1e5), 1.0, 1e5) - 2.0 * PACKET * 8.0 / 1e5).abs() < 1e-9);
        assert_eq!(
            tso_chunk_s(&paced(50e6), 0.05, 50e6),
            2.0 * PACKET * 8.0 / 50e6
        );
        // The lab's 50 Mbit/s x 20 ms, 1 BDP (125 kB, 20 ms of queue): the start-up's
        // smoothed RTT held 22.4 ms of queue, 2.4 ms of it the chunks' serialisation. The
        // estimate reads it; the interval holds the truth.
        let (rtt, rate) = (est(0.01976, 0.0197, 0.0199), est(49.5e6, 48.9e6, 50.1e6));
        let s: Vec<Sample> = (1..=200)
            .map(|i| {
                let t = i as f64 * 0.01;
                let q = if (0.3..0.4).contains(&t) {
                    0.0224
                } else {
                    0.001
                };
                Sample {
                    t_us: (t * 1e6) as u32,
                    srtt_us: ((0.01976 + q) * 1e6) as u32,
                    min_rtt_us: 19_760,
                    retrans: if t > 0.35 { 424 } else { 0 },
                    segs_out: (t * 3800.0) as u32,
                    pacing_rate: (2.89 * 50e6 / 8.0) as u64,
                    ..Default::default()
                }
            })
            .collect();
        let small = Estimate {
            value: 5e3,
            low: 5e3,
            high: None,
            how: "lower bound".into(),
        };
        let e = fitted_buffer(small, &s, 2.0, &rtt, &rate, 0.0113);
        assert!(e.how.contains("start-up overflowed"), "{e:?}");
        assert!(e.value > 130e3 && e.contains(125e3), "{e:?}");
    }

    #[test]
    fn base_rtt_takes_off_one_packet_time_and_brackets_the_truth() {
        // 50 Mbit/s: a packet takes 0.24 ms; ACKs saw 20.25 ms at the lowest.
        let e = base_rtt(0.02025, &[0.0203, 0.0205, 0.021, 0.022], 50e6);
        assert!((e.value - 0.02001).abs() < 1e-6, "{e:?}");
        assert!(e.contains(0.020) && e.low < e.value && e.high.unwrap() >= 0.02025);
        assert!(!e.contains(0.019) && !e.contains(0.0215));
    }

    fn probe_run(phase: &str, s: Vec<Sample>) -> ProbeRun {
        ProbeRun {
            phase: phase.into(),
            cc: "bbr".into(),
            duration_s: 5.0,
            delivered: s.last().map_or(0, |x| x.bytes_acked),
            active_ns: 5_000_000_000,
            samples: s,
            ..Default::default()
        }
    }

    #[test]
    fn a_fit_round_trips_and_writes_a_scenario() {
        let mut rng = Rng(3);
        let rate = probe_run("rate", flow(&mut rng, 80e6, 6.0, 0.05));
        let mut loss = probe_run("loss", flow(&mut rng, 40e6, 5.0, 0.0));
        let last = loss.samples.last_mut().unwrap();
        (last.retrans, last.segs_out) = (20, 10_000);
        let cubic = probe_run("buffer", queued(0.040, &[0.001, 0.002, 0.004]));
        let f = fit(
            &[rate, loss, cubic],
            &[],
            FitMeta {
                peer: "198.18.0.2:5301".into(),
                direction: "download".into(),
                duration_s: 8.0,
                streams: 1,
                notes: vec![],
            },
        )
        .unwrap();
        assert!(
            (f.rate_bps.value / 80e6 - 1.0).abs() < 0.02,
            "{:?}",
            f.rate_bps
        );
        assert!((f.rtt_s.value - (0.040 - 1500.0 * 8.0 / f.rate_bps.value)).abs() < 1e-9);
        assert_eq!((f.lost, f.sent), (20, 10_000));
        assert!(f.loss.contains(0.002));
        assert!(f.buffer_bytes.is_lower_bound());
        let doc = ResultsDoc {
            backend: "host".into(),
            fit: Some(f.to_value()),
            ..Default::default()
        };
        assert_eq!(PathFit::from_doc(&doc, "r.json").unwrap(), f);
        let t = f.scenario_toml("p", "r.json", &["cubic".into(), "bbr3".into()]);
        assert!(t.contains("cc = [\"cubic\", \"bbr3\"]"), "{t}");
        assert!(t.contains("loss = \"0.2000%\""), "{t}");
        assert!(t.contains("(lower bound)"), "{t}");
        // The buffer of a lower bound is at least 1 BDP.
        assert!(f.scenario_buffer() as f64 >= 80e6 / 8.0 * 0.0398 * 0.99);
        assert!(t.lines().filter(|l| !l.starts_with('#')).count() > 8);
        // No fit, another backend, another layout: one line saying what to do.
        let e = PathFit::from_doc(
            &ResultsDoc {
                backend: "host".into(),
                ..Default::default()
            },
            "x",
        )
        .unwrap_err();
        assert!(e.contains("--no-probe") && !e.contains('\n'), "{e}");
        let e = PathFit::from_doc(
            &ResultsDoc {
                backend: "sim".into(),
                ..Default::default()
            },
            "x",
        )
        .unwrap_err();
        assert!(e.contains("simulator results"), "{e}");
        let mut v = f.to_value();
        v["version"] = 99.into();
        let e = PathFit::from_doc(
            &ResultsDoc {
                backend: "host".into(),
                fit: Some(v),
                ..Default::default()
            },
            "x",
        )
        .unwrap_err();
        assert!(e.contains("layout 99"), "{e}");
    }
}
