//! The bottleneck buffer: read from the CUBIC probe's queueing and the rate probe's start-up
//! (the queue each held, whether it overflowed), an estimate or a lower bound.

use super::stats::{quantile, sample_at, srtt_s};
use super::{Estimate, PACKET};
use crate::protocol::Sample;

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
/// [`rate_windows`](super::rate_windows) leaves it out of the rate; `p_high` random loss's
/// upper end).
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
