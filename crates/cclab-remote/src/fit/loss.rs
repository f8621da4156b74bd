//! Random loss: the paced loss phase's retransmits over its segments (congestion episodes
//! left out), a binomial 95% interval, and when the phase has read enough.

use super::stats::binomial95;
use super::{Estimate, ProbeRun};
use crate::protocol::Sample;

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
