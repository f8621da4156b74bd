//! Traces the project makes itself (not downloaded), in Mahimahi's format: one delivery
//! opportunity of [`TRACE_OPPORTUNITY_BYTES`] per line, at a whole millisecond, as
//! [`crate::TraceDesc::parse`] reads them.
//!
//! Each generator gives the link's rate in every millisecond of the trace; a rate `R` over a
//! millisecond is worth `R / 1000` bits, i.e. `R / (1500 * 8)` opportunities per second. The
//! bits are counted whole (the rate rounded to the bit per ms) and turned into opportunities
//! with the remainder carried from millisecond to millisecond, each stamped at the end of the
//! millisecond it completes in (`m + 1` for millisecond `m`), so the count over the trace is
//! exact. The carry starts where it makes the total a whole number of opportunities, so the
//! last millisecond, which always has service, holds the last line: the trace's period (its
//! last timestamp, as the trace loops) is its full length, and its mean rate over one loop is
//! the asked one (within one opportunity over the trace and the rounding to bits per ms).
//!
//! Generators return the text, or a one-line message when a parameter makes no trace.

use crate::elements::TRACE_OPPORTUNITY_BYTES;
use crate::Rng;

const UNIT_BITS: u64 = TRACE_OPPORTUNITY_BYTES as u64 * 8;

/// Bits a rate (bits/s) carries in one millisecond, whole.
fn bits_per_ms(bps: f64) -> u64 {
    (bps / 1000.0).round() as u64
}

fn check_rate(what: &str, bps: f64, zero_ok: bool) -> Result<(), String> {
    if !bps.is_finite() || bps < 0.0 || (bps == 0.0 && !zero_ok) {
        let need = if zero_ok { "0 or more" } else { "above 0" };
        return Err(format!("{what} must be {need} bit/s (got {bps})"));
    }
    Ok(())
}

/// The trace text for these bits per millisecond (see the module docs).
fn render(bits: &[u64]) -> Result<String, String> {
    match bits.last() {
        None => return Err("a trace must last at least 1 ms".into()),
        Some(0) => {
            return Err("a trace must end with service (its last line is its period)".into())
        }
        Some(_) => {}
    }
    let total: u64 = bits.iter().sum();
    let mut credit = (UNIT_BITS - total % UNIT_BITS) % UNIT_BITS;
    let mut out = String::new();
    for (m, &b) in bits.iter().enumerate() {
        credit += b;
        if credit >= UNIT_BITS {
            let stamp = (m + 1).to_string();
            while credit >= UNIT_BITS {
                out.push_str(&stamp);
                out.push('\n');
                credit -= UNIT_BITS;
            }
        }
    }
    debug_assert_eq!(credit, 0);
    Ok(out)
}

/// A rate step down and back up, as when a competing load or a worse radio channel comes and
/// goes: `high_bps` for the first `high_ms`, `low_bps` (0 for an outage) for the next
/// `low_ms`, `high_bps` again until `total_ms` (which must leave some time for it).
pub fn step(
    high_bps: f64,
    low_bps: f64,
    high_ms: u64,
    low_ms: u64,
    total_ms: u64,
) -> Result<String, String> {
    check_rate("the high rate", high_bps, false)?;
    check_rate("the low rate", low_bps, true)?;
    if total_ms <= high_ms + low_ms {
        return Err(format!(
            "a step trace of {total_ms} ms has no time to go back up after {high_ms} + {low_ms} ms"
        ));
    }
    let (hi, lo) = (bits_per_ms(high_bps), bits_per_ms(low_bps));
    let bits: Vec<u64> = (0..total_ms)
        .map(|m| {
            if (high_ms..high_ms + low_ms).contains(&m) {
                lo
            } else {
                hi
            }
        })
        .collect();
    render(&bits)
}

/// A periodic outage, as a handover or a fade that cuts a link off for a moment: `rate_bps`,
/// except no opportunity at all for `outage_ms` of every `period_ms` (`outage_ms` below
/// `period_ms`). The outage sits in the middle of each period (after
/// `(period_ms - outage_ms) / 2` ms of service), so a run starts with service and the trace
/// loops seamlessly; `total_ms` must be a whole number of periods.
pub fn outage(
    rate_bps: f64,
    period_ms: u64,
    outage_ms: u64,
    total_ms: u64,
) -> Result<String, String> {
    check_rate("the rate", rate_bps, false)?;
    if outage_ms == 0 || outage_ms >= period_ms {
        return Err(format!(
            "an outage must last more than 0 ms and less than its period ({outage_ms} ms of {period_ms} ms)"
        ));
    }
    if total_ms == 0 || total_ms / period_ms * period_ms != total_ms {
        return Err(format!(
            "an outage trace must last a whole number of periods ({total_ms} ms, period {period_ms} ms)"
        ));
    }
    let r = bits_per_ms(rate_bps);
    let down = (period_ms - outage_ms) / 2..(period_ms - outage_ms) / 2 + outage_ms;
    let bits: Vec<u64> = (0..total_ms)
        .map(|m| {
            if down.contains(&(m % period_ms)) {
                0
            } else {
                r
            }
        })
        .collect();
    render(&bits)
}

/// The rate of each step of [`random_walk`], bits/s.
fn walk_rates(
    mean_bps: f64,
    min_bps: f64,
    max_bps: f64,
    step_ms: u64,
    sigma: f64,
    total_ms: u64,
    seed: u64,
) -> Result<Vec<f64>, String> {
    check_rate("the minimum rate", min_bps, false)?;
    check_rate("the maximum rate", max_bps, false)?;
    if !(min_bps <= mean_bps && mean_bps <= max_bps) {
        return Err(format!(
            "a random walk's mean rate ({mean_bps} bit/s) must lie between its minimum ({min_bps}) and maximum ({max_bps})"
        ));
    }
    if step_ms == 0 || total_ms == 0 {
        return Err("a random walk needs a step and a length of 1 ms or more".into());
    }
    if !(sigma >= 0.0 && sigma.is_finite()) {
        return Err(format!(
            "a random walk's sigma must be 0 or more (got {sigma})"
        ));
    }
    let (lo, hi) = (min_bps.ln(), max_bps.ln());
    let width = hi - lo;
    let steps = total_ms.div_ceil(step_ms) as usize;
    let mut rng = Rng::new(seed);
    let mut x = mean_bps.ln();
    let mut xs = Vec::with_capacity(steps);
    for _ in 0..steps {
        xs.push(x);
        // Box-Muller: one standard normal per step.
        let (u1, u2) = (1.0 - rng.next_f64(), rng.next_f64());
        x += sigma * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        // Reflect into [lo, hi] (folding, for steps wider than the band).
        x = if width > 0.0 {
            let y = (x - lo).rem_euclid(2.0 * width);
            lo + if y > width { 2.0 * width - y } else { y }
        } else {
            lo
        };
    }
    // Shift the walk (in log) so that its time-average, kept within the bounds, is the mean:
    // the average only grows with the shift, from `min_bps` to `max_bps`.
    let ms_of = |i: usize| (total_ms - i as u64 * step_ms).min(step_ms) as f64;
    let rate = |x: f64, c: f64| (x + c).exp().clamp(min_bps, max_bps);
    let avg = |c: f64| {
        xs.iter()
            .enumerate()
            .map(|(i, &x)| rate(x, c) * ms_of(i))
            .sum::<f64>()
            / total_ms as f64
    };
    let (mut a, mut b) = (-width - 1.0, width + 1.0);
    for _ in 0..200 {
        let m = 0.5 * (a + b);
        if avg(m) < mean_bps {
            a = m;
        } else {
            b = m;
        }
    }
    let c = 0.5 * (a + b);
    Ok(xs.iter().map(|&x| rate(x, c)).collect())
}

/// A cellular-like link: the rate wanders at random, a new one every `step_ms`. Its log
/// takes a normal step of standard deviation `sigma` (0.1 = about 10 %) each time, reflected
/// at `min_bps` and `max_bps`; the walk is then shifted (in log) so that its mean over the
/// trace is `mean_bps`, staying within the bounds. `total_ms` long; the same `seed` gives the
/// same trace.
pub fn random_walk(
    mean_bps: f64,
    min_bps: f64,
    max_bps: f64,
    step_ms: u64,
    sigma: f64,
    total_ms: u64,
    seed: u64,
) -> Result<String, String> {
    let rates = walk_rates(mean_bps, min_bps, max_bps, step_ms, sigma, total_ms, seed)?;
    let bits: Vec<u64> = (0..total_ms)
        .map(|m| bits_per_ms(rates[(m / step_ms) as usize]))
        .collect();
    render(&bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Nanos, TraceDesc};

    const MS: Nanos = 1_000_000;

    fn parse(text: &str) -> TraceDesc {
        TraceDesc::parse("gen", text).unwrap()
    }

    /// Opportunities in (a, b] ms.
    fn count(t: &TraceDesc, a: u64, b: u64) -> usize {
        t.opportunities
            .iter()
            .filter(|&&o| o > a * MS && o <= b * MS)
            .count()
    }

    fn close(got: f64, want: f64) {
        assert!((got / want - 1.0).abs() < 0.01, "{got} vs {want}");
    }

    #[test]
    fn a_step_goes_down_and_back_up() {
        let t = parse(&step(24e6, 6e6, 2000, 1000, 5000).unwrap());
        assert_eq!(t.period(), 5000 * MS);
        close(t.mean_bps(), (24e6 * 4000.0 + 6e6 * 1000.0) / 5000.0);
        // 2000 per s at 24 Mbit/s, 500 per s at 6 Mbit/s.
        assert!(count(&t, 0, 2000).abs_diff(4000) <= 1);
        assert!(count(&t, 2000, 3000).abs_diff(500) <= 1);
        assert!(count(&t, 3000, 5000).abs_diff(4000) <= 1);
        // At a rate that is not a whole number of opportunities per ms, still exact.
        let t = parse(&step(10e6, 1e6, 300, 300, 1000).unwrap());
        assert_eq!(t.period(), 1000 * MS);
        close(t.mean_bps(), 7.3e6);
        assert!(step(1e6, 0.0, 10, 10, 20).is_err(), "never goes back up");
        assert!(step(0.0, 1e6, 10, 10, 30).is_err());
    }

    #[test]
    fn an_outage_leaves_a_gap_every_period() {
        // 12 Mbit/s = one opportunity per ms; down for [400, 600) ms of every second.
        let t = parse(&outage(12e6, 1000, 200, 10_000).unwrap());
        assert_eq!(t.period(), 10_000 * MS);
        close(t.mean_bps(), 12e6 * 0.8);
        let gaps: Vec<(Nanos, Nanos)> = t
            .opportunities
            .windows(2)
            .filter(|w| w[1] - w[0] > MS)
            .map(|w| (w[0] / MS, w[1] / MS))
            .collect();
        let want: Vec<(Nanos, Nanos)> = (0..10).map(|k| (k * 1000 + 400, k * 1000 + 601)).collect();
        assert_eq!(gaps, want);
        assert_eq!(t.opportunities.len(), 8000);
        // A rate of 5/6 opportunity per ms: the same gaps, nothing inside them.
        let t = parse(&outage(10e6, 1000, 200, 5000).unwrap());
        close(t.mean_bps(), 8e6);
        for k in 0..5 {
            assert_eq!(count(&t, k * 1000 + 400, k * 1000 + 600), 0);
            assert!(count(&t, k * 1000 + 390, k * 1000 + 400) > 0);
            assert!(count(&t, k * 1000 + 600, k * 1000 + 610) > 0);
        }
        assert!(outage(10e6, 1000, 200, 1500).is_err());
        assert!(outage(10e6, 1000, 1000, 1000).is_err());
    }

    #[test]
    fn a_random_walk_keeps_its_mean_and_bounds_and_repeats_with_its_seed() {
        let args = (20e6, 5e6, 50e6, 100, 0.2, 60_000);
        let gen = |seed| random_walk(args.0, args.1, args.2, args.3, args.4, args.5, seed);
        let text = gen(42).unwrap();
        assert_eq!(text, gen(42).unwrap(), "reproducible");
        assert_ne!(text, gen(43).unwrap());
        let t = parse(&text);
        assert_eq!(t.period(), 60_000 * MS);
        close(t.mean_bps(), 20e6);
        // Every step within the bounds, and the walk does wander.
        let rates = walk_rates(args.0, args.1, args.2, args.3, args.4, args.5, 42).unwrap();
        assert_eq!(rates.len(), 600);
        assert!(rates.iter().all(|r| (5e6..=50e6).contains(r)));
        let (lo, hi) = rates
            .iter()
            .fold((f64::MAX, 0.0f64), |(a, b), &r| (a.min(r), b.max(r)));
        assert!(hi / lo > 3.0, "{lo} {hi}");
        // In the trace: each 100 ms step carries between the bounds' worth (+-1).
        for k in 0..600 {
            let n = count(&t, k * 100, (k + 1) * 100);
            assert!((40..=418).contains(&n), "step {k}: {n}");
        }
        // A partial last step counts for its length.
        let t = parse(&random_walk(8e6, 1e6, 30e6, 700, 0.3, 10_000, 1).unwrap());
        close(t.mean_bps(), 8e6);
        assert!(random_walk(60e6, 5e6, 50e6, 100, 0.2, 1000, 1).is_err());
    }
}
