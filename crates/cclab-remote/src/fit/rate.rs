//! The bottleneck's rate and the base round trip: the rate probe's windows (and the measured
//! runs' pooled with them), less those where the link idled, and the lowest RTT less a
//! packet's time at the bottleneck.

use super::stats::{quantile, sample_at, t95};
use super::{Estimate, MSS, PACKET};
use crate::protocol::Sample;
use cclab_results::RunResult;

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

/// The rate phase's start-up to leave out and its window, s, for a path of `rtt_s`: BBR's
/// start-up and the losses of its overshoot settle within about 2 s or 20 round trips; a
/// window spans 8 round trips (one BBR gain cycle), at least 200 ms.
pub fn rate_windows(rtt_s: f64) -> (f64, f64) {
    ((20.0 * rtt_s).max(2.0), (8.0 * rtt_s).max(0.2))
}
