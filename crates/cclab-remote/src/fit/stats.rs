//! Small statistics of the fit: quantiles, Student's and binomial 95% intervals, and the
//! reads of a run's TCP_INFO samples (smoothed and lowest RTT, the sample at a time).

use crate::protocol::Sample;

/// The normal quantile of a two-sided 95% interval.
const Z: f64 = 1.959964;

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

pub(super) fn srtt_s(samples: &[Sample]) -> Vec<f64> {
    samples
        .iter()
        .filter(|s| s.srtt_us > 0)
        .map(|s| s.srtt_us as f64 / 1e6)
        .collect()
}

/// The last sample at or before `t_s` of the run (samples in time order).
pub(super) fn sample_at(samples: &[Sample], t_s: f64) -> Option<Sample> {
    let us = (t_s * 1e6).round() as u64;
    let i = samples.partition_point(|s| s.t_us as u64 <= us);
    i.checked_sub(1).map(|i| samples[i])
}

pub(super) fn min_rtt_s(samples: &[Sample]) -> Option<f64> {
    samples
        .iter()
        .filter(|s| s.min_rtt_us > 0)
        .map(|s| s.min_rtt_us as f64 / 1e6)
        .reduce(f64::min)
}
