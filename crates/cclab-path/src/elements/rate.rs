//! The link's rate: fixed, a schedule of steps (`link.rate = [{at, rate}, ...]`), or a
//! Mahimahi trace of delivery opportunities (`link.trace`). [`RateDesc`] describes it;
//! [`Rate`] is the running state the link asks when a packet on the wire is done.
//!
//! Times in a schedule or a trace count from the run's time zero ([`Rate::set_origin`]).
//!
//! - Fixed: a packet of `len` bytes takes `len * 8 / rate` s; the fraction of a ns is
//!   carried to the next packet, so a long run keeps the exact rate.
//! - Schedule: the packet's bits are served at the rate in force at each instant, crossing
//!   step boundaries exactly (the rate is integrated), with the same carry. The last rate
//!   holds forever.
//! - Trace: as Mahimahi's `LinkQueue` (`src/frontend/link_queue.cc`): each line is a delivery
//!   opportunity of [`TRACE_OPPORTUNITY_BYTES`] at that millisecond; the trace loops with a
//!   period equal to its last timestamp (Mahimahi adds the last timestamp to its base at each
//!   wrap, so the first opportunity of a loop and the last of the one before may coincide).
//!   The packet at the head of the queue takes the bytes of successive opportunities at or
//!   after it started waiting; it leaves at the opportunity that carries its last byte.
//!   What that opportunity has left serves the next packet only if it was already waiting
//!   then; opportunities that pass while nothing waits are lost.

use crate::Nanos;
use std::sync::Arc;

/// Bytes one delivery opportunity of a trace carries: one whole 1500-byte IP packet.
///
/// Mahimahi's `LinkQueue::PACKET_SIZE` is 1504 ("default max TUN payload size"): Mahimahi
/// opens its TUN devices with `IFF_TUN` and without `IFF_NO_PI`, so what it reads per packet
/// (and charges against an opportunity) is the 4-byte `tun_pi` header plus the IP packet.
/// Rates here count IP packets alone, so an opportunity carries 1500 bytes of them: a
/// full-size packet takes exactly one opportunity, as in Mahimahi.
pub const TRACE_OPPORTUNITY_BYTES: u32 = 1500;

/// A Mahimahi trace: one delivery opportunity per line, at millisecond timestamps, repeating.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceDesc {
    /// Where it came from (a file name), for messages and results.
    pub name: String,
    /// Opportunity times within one loop, ns, non-decreasing; the last is the loop's length.
    pub opportunities: Vec<Nanos>,
}

impl TraceDesc {
    /// Parse a trace in Mahimahi's format: one opportunity per line, an integer number of
    /// milliseconds, non-decreasing (a timestamp repeated is several opportunities at once);
    /// blank lines are ignored. The last timestamp, the loop's period, must be above 0.
    /// Errors are one line, naming the line at fault.
    pub fn parse(name: &str, text: &str) -> Result<TraceDesc, String> {
        let mut opportunities: Vec<Nanos> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            let s = line.trim();
            if s.is_empty() {
                continue;
            }
            let ms: u64 = Some(s)
                .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| {
                    format!(
                        "{name}: line {n}: expected a whole number of milliseconds, found {:?}",
                        clip(s)
                    )
                })?;
            let ns = ms
                .checked_mul(1_000_000)
                .ok_or_else(|| format!("{name}: line {n}: {ms} ms is too large"))?;
            if let Some(&last) = opportunities.last() {
                if ns < last {
                    return Err(format!(
                        "{name}: line {n}: {ms} ms is before the line above ({} ms): timestamps must not decrease",
                        last / 1_000_000
                    ));
                }
            }
            opportunities.push(ns);
        }
        let t = TraceDesc {
            name: name.to_string(),
            opportunities,
        };
        t.check()?;
        Ok(t)
    }

    /// Whether the trace can run: at least one opportunity, non-decreasing, lasting > 0.
    fn check(&self) -> Result<(), String> {
        let name = &self.name;
        match self.opportunities.last() {
            None => Err(format!("{name}: no timestamps in the trace")),
            Some(0) => Err(format!(
                "{name}: the trace must last more than 0 ms (its last timestamp is its period)"
            )),
            Some(_) if self.opportunities.windows(2).any(|w| w[1] < w[0]) => {
                Err(format!("{name}: timestamps must not decrease"))
            }
            Some(_) => Ok(()),
        }
    }

    /// The loop's length, ns (its last timestamp).
    pub fn period(&self) -> Nanos {
        self.opportunities.last().copied().unwrap_or(0)
    }

    /// The mean rate over one loop, bits/s.
    pub fn mean_bps(&self) -> f64 {
        let p = self.period();
        if p == 0 {
            return 0.0;
        }
        self.opportunities.len() as f64 * OPPORTUNITY_BITS as f64 * 1e9 / p as f64
    }

    /// The time (ns from time zero) of opportunity `j` of loop `k`.
    fn time(&self, k: u64, j: usize) -> Nanos {
        k.saturating_mul(self.period())
            .saturating_add(self.opportunities[j])
    }

    /// The first opportunity at or after `t` (ns from time zero): its loop and index.
    fn first_at_or_after(&self, t: Nanos) -> (u64, usize) {
        if t == 0 {
            return (0, 0);
        }
        // Loop k spans (kL, (k+1)L] at most (its first opportunity may be at kL, which the
        // loop before also ends on): the first at or after t is in the loop k with
        // kL < t <= (k+1)L, and there is one there (the loop's last is at (k+1)L).
        let l = self.period();
        let k = (t - 1) / l;
        let r = t - k * l;
        (k, self.opportunities.partition_point(|&o| o < r))
    }

    /// Opportunities before `t` (ns from time zero), over the loops.
    fn count_before(&self, t: Nanos) -> u128 {
        let (k, j) = self.first_at_or_after(t);
        k as u128 * self.opportunities.len() as u128 + j as u128
    }
}

/// A line of a trace, cut short for an error message.
fn clip(s: &str) -> String {
    s.chars().take(40).collect()
}

const OPPORTUNITY_BITS: u64 = TRACE_OPPORTUNITY_BYTES as u64 * 8;

/// How the link's rate varies.
#[derive(Clone, Debug, PartialEq)]
pub enum RateDesc {
    /// One rate, bits/s of whole IP packets.
    Fixed(f64),
    /// From each time on (ns from time zero), that rate (bits/s): sorted, the first at 0.
    /// Build it with [`RateDesc::schedule`], which checks it.
    Schedule(Vec<(Nanos, f64)>),
    /// A trace, looping.
    Trace(Arc<TraceDesc>),
}

/// Whether a schedule can run (see [`RateDesc::schedule`]).
fn check_schedule(steps: &[(Nanos, f64)]) -> Result<(), String> {
    let Some(&(first, _)) = steps.first() else {
        return Err("a rate schedule needs at least one step".into());
    };
    if first != 0 {
        return Err(format!(
            "a rate schedule must start at 0 (its first step is at {first} ns)"
        ));
    }
    if let Some(w) = steps.windows(2).find(|w| w[1].0 <= w[0].0) {
        return Err(format!(
            "the steps of a rate schedule must be in increasing time order ({} ns comes after {} ns)",
            w[1].0, w[0].0
        ));
    }
    if let Some(&(at, r)) = steps.iter().find(|s| !(s.1 > 0.0 && s.1.is_finite())) {
        return Err(format!(
            "a rate schedule's rates must be above 0 ({r} bit/s at {at} ns)"
        ));
    }
    Ok(())
}

impl RateDesc {
    /// A schedule: from each `at` (ns from time zero) on, `bps`. The steps must be in
    /// increasing time order, the first at 0, every rate above 0; otherwise a one-line
    /// message says what is wrong.
    pub fn schedule(steps: Vec<(Nanos, f64)>) -> Result<RateDesc, String> {
        check_schedule(&steps)?;
        Ok(RateDesc::Schedule(steps))
    }

    /// Bits the link can carry between `t0` and `t1` (ns from time zero): the rate's
    /// integral for a schedule; for a trace, the bits of its opportunities in `[t0, t1)`.
    pub fn capacity_bits(&self, t0: Nanos, t1: Nanos) -> f64 {
        if t1 <= t0 {
            return 0.0;
        }
        match self {
            RateDesc::Fixed(bps) => *bps * t1.saturating_sub(t0) as f64 / 1e9,
            RateDesc::Schedule(s) => {
                let mut i = s.partition_point(|x| x.0 <= t0).saturating_sub(1);
                let mut bits = 0.0;
                while i < s.len() {
                    let from = s[i].0.max(t0);
                    let to = s.get(i + 1).map_or(t1, |x| x.0.min(t1));
                    if from >= t1 {
                        break;
                    }
                    bits += s[i].1 * (to - from) as f64 / 1e9;
                    i += 1;
                }
                bits
            }
            RateDesc::Trace(t) => {
                if t.check().is_err() {
                    return 0.0;
                }
                (t.count_before(t1) - t.count_before(t0)) as f64 * OPPORTUNITY_BITS as f64
            }
        }
    }

    /// The rate at `t` (ns from time zero), bits/s: for a schedule the step in force; for a
    /// trace, the mean rate of its loop.
    pub fn bps_at(&self, t: Nanos) -> f64 {
        match self {
            RateDesc::Fixed(bps) => *bps,
            RateDesc::Schedule(s) => {
                let i = s.partition_point(|x| x.0 <= t).saturating_sub(1);
                s.get(i).map_or(0.0, |x| x.1)
            }
            RateDesc::Trace(tr) => tr.mean_bps(),
        }
    }

    /// One rate that stands for the whole run, bits/s, for sizing what is given in BDP
    /// (buffers). Fixed: its rate. Schedule: its highest rate (a schedule's mean is not
    /// defined, its last rate holding forever; the highest rate gives a buffer of at least
    /// the asked BDP at every step, as a router's buffer sized for its line rate). Trace:
    /// its mean rate over one loop (what Mahimahi users quote for a trace).
    pub fn mean_bps(&self) -> f64 {
        match self {
            RateDesc::Fixed(bps) => *bps,
            RateDesc::Schedule(s) => s.iter().map(|x| x.1).fold(0.0, f64::max),
            RateDesc::Trace(t) => t.mean_bps(),
        }
    }
}

/// A time of `x` >= 0 ns as whole nanoseconds and the fraction left. The cast truncates,
/// which for `x` >= 0 is `x.floor()`, the same numbers without a call to the C library's
/// `floor` (baseline x86-64 has no rounding instruction), once per packet on the wire.
/// The casts go through `i64`, which baseline x86-64 converts to and from `f64` in one
/// instruction each (`u64` takes a branchy sequence both ways); any time below 2^63 ns
/// (292 years) gives the same numbers.
fn whole_ns(x: f64) -> (Nanos, f64) {
    debug_assert!((0.0..9.2e18).contains(&x));
    let whole = x as i64;
    (whole as Nanos, x - whole as f64)
}

/// The link's rate as it runs.
pub struct Rate {
    desc: RateDesc,
    origin: Nanos,
    /// Fractional nanoseconds carried between packets so long runs keep the exact rate.
    carry: f64,
    /// Schedule: the step in force at the last packet's finish (never after the next start).
    step: usize,
    /// Trace: the next opportunity not used yet (loop, index within the loop).
    opp: (u64, usize),
    /// Trace: bytes left in the last opportunity used, and its time (ns from time zero).
    left: u32,
    left_at: Nanos,
    /// Fixed rate: the last packet length and its exact time on the wire, ns (a direction
    /// carries mostly one length, full segments or ACKs: the division is kept for the next
    /// packet of the same length).
    last_len: u32,
    last_ns: f64,
}

impl Rate {
    /// The running rate of `desc`.
    ///
    /// # Panics
    /// If `desc` cannot run: a schedule [`RateDesc::schedule`] would refuse, a trace that is
    /// empty, decreasing or lasts 0 ms.
    pub fn new(desc: RateDesc) -> Self {
        match &desc {
            RateDesc::Fixed(_) => {}
            RateDesc::Schedule(s) => {
                if let Err(e) = check_schedule(s) {
                    panic!("{e}");
                }
            }
            RateDesc::Trace(t) => {
                if let Err(e) = t.check() {
                    panic!("{e}");
                }
            }
        }
        Rate {
            desc,
            origin: 0,
            carry: 0.0,
            step: 0,
            opp: (0, 0),
            left: 0,
            left_at: 0,
            last_len: 0,
            last_ns: 0.0,
        }
    }

    /// A fixed rate, bits/s (> 0).
    pub fn fixed(bps: f64) -> Self {
        assert!(bps > 0.0, "a link needs a positive rate");
        Self::new(RateDesc::Fixed(bps))
    }

    /// The run's time zero, in the caller's clock (schedules and traces count from it). It
    /// may be set again once packets have passed (the kernel lab's element runs before the
    /// run's clock starts): the schedule or trace then starts over from its beginning at `t0`.
    pub fn set_origin(&mut self, t0: Nanos) {
        self.origin = t0;
        self.step = 0;
        self.opp = (0, 0);
        self.left = 0;
        self.left_at = 0;
    }

    /// The rate at `t`, bits/s (what a GSO packet on the wire has left is estimated with it).
    pub fn bps_at(&self, t: Nanos) -> f64 {
        self.desc.bps_at(t.saturating_sub(self.origin))
    }

    /// A packet of `len` wire bytes goes on the wire at `start`: when its last byte is sent.
    /// The link calls it once per packet, with `start` not before the last one's finish.
    pub fn finish(&mut self, start: Nanos, len: u32) -> Nanos {
        match &self.desc {
            RateDesc::Fixed(bps) => {
                if len != self.last_len {
                    self.last_len = len;
                    self.last_ns = len as f64 * 8.0 * 1e9 / bps;
                }
                let exact = self.last_ns + self.carry;
                let whole;
                (whole, self.carry) = whole_ns(exact);
                start + whole.max(1)
            }
            RateDesc::Schedule(steps) => {
                let rel = start.saturating_sub(self.origin);
                let mut i = self.step;
                if steps[i].0 > rel {
                    // Only if the caller went back in time.
                    i = steps.partition_point(|x| x.0 <= rel) - 1;
                }
                while steps.get(i + 1).is_some_and(|x| x.0 <= rel) {
                    i += 1;
                }
                // `pos`: ns after `start` where the packet's next bit is (the carry first);
                // a boundary is a whole ns, so the carry never crosses one.
                let mut bits = len as f64 * 8.0;
                let mut pos = self.carry;
                loop {
                    let bps = steps[i].1;
                    let need = bits * 1e9 / bps;
                    match steps.get(i + 1) {
                        Some(&(at, _)) if pos + need > (at - rel) as f64 => {
                            let edge = (at - rel) as f64;
                            bits -= (edge - pos) * bps / 1e9;
                            pos = edge;
                            i += 1;
                        }
                        // The fixed rate's sum (`need + carry`), so one step gives its results.
                        _ => {
                            pos += need;
                            break;
                        }
                    }
                }
                self.step = i;
                let whole;
                (whole, self.carry) = whole_ns(pos);
                start + whole.max(1)
            }
            RateDesc::Trace(tr) => {
                let rel = start.saturating_sub(self.origin);
                let b = TRACE_OPPORTUNITY_BYTES as u64;
                let mut need = len.max(1) as u64;
                // What the last opportunity used has left, if this packet was waiting then.
                if self.left > 0 && self.left_at == rel {
                    let take = need.min(self.left as u64);
                    need -= take;
                    self.left -= take as u32;
                    if need == 0 {
                        return start;
                    }
                }
                self.left = 0;
                // Skip what passed while nothing waited: step by step for a short wait,
                // otherwise straight to the first opportunity at or after `rel`.
                let n = tr.opportunities.len();
                let (mut k, mut j) = self.opp;
                let mut steps = 0;
                while tr.time(k, j) < rel {
                    if steps == 16 {
                        (k, j) = tr.first_at_or_after(rel);
                        break;
                    }
                    steps += 1;
                    j += 1;
                    if j == n {
                        (k, j) = (k + 1, 0);
                    }
                }
                // Whole opportunities, then the one carrying the last byte.
                let q = (need - 1) / b;
                let idx = j as u64 + q;
                let (k, j) = (k + idx / n as u64, (idx % n as u64) as usize);
                let at = tr.time(k, j);
                self.left = ((q + 1) * b - need) as u32;
                self.left_at = at;
                self.opp = if j + 1 == n { (k + 1, 0) } else { (k, j + 1) };
                self.origin.saturating_add(at)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    fn sched(steps: &[(Nanos, f64)]) -> Rate {
        Rate::new(RateDesc::schedule(steps.to_vec()).unwrap())
    }

    fn trace(text: &str) -> Rate {
        Rate::new(RateDesc::Trace(Arc::new(
            TraceDesc::parse("t", text).unwrap(),
        )))
    }

    /// Packets arriving at these times, served back to back as the link does (each starts
    /// when it arrived or when the one before finished): their finish times.
    fn serve(r: &mut Rate, pkts: &[(Nanos, u32)]) -> Vec<Nanos> {
        let mut done = 0;
        pkts.iter()
            .map(|&(arr, len)| {
                done = r.finish(arr.max(done), len);
                done
            })
            .collect()
    }

    #[test]
    fn a_packet_across_a_step_finishes_at_the_integrated_time() {
        // 12 Mbit/s (1500 bytes in 1 ms), then 6 Mbit/s from 0.5 ms, 24 Mbit/s from 1 ms.
        let steps = [(0, 12e6), (500_000, 6e6), (1_000_000, 24e6)];
        // Two steps, from 0: 6000 bits by 0.5 ms, the other 6000 at 6 Mbit/s take 1 ms.
        assert_eq!(sched(&steps[..2]).finish(0, 1500), 1_500_000);
        // Three: 6000 bits by 0.5 ms, 3000 by 1 ms, the last 3000 at 24 Mbit/s: 125 us.
        assert_eq!(sched(&steps).finish(0, 1500), 1_125_000);
        // From 0.25 ms: 3000 bits by 0.5 ms, 3000 more by 1 ms, 6000 at 24 Mbit/s: 0.25 ms.
        assert_eq!(sched(&steps).finish(250_000, 1500), 1_250_000);
        // After the last step, its rate holds.
        assert_eq!(sched(&steps).finish(7_000_000, 1500), 7_500_000);
        // Counted from time zero.
        let mut r = sched(&steps);
        r.set_origin(1_000);
        assert_eq!(r.finish(1_000, 1500), 1_126_000);
        assert_eq!(r.bps_at(500_999), 12e6);
        assert_eq!(r.bps_at(501_000), 6e6);
    }

    #[test]
    fn a_schedule_keeps_the_exact_rate_across_a_step() {
        // 10_000 packets of 1500 bytes, all waiting at 0: 100 Mbit/s for 50 ms (5 Mbit),
        // then 20 Mbit/s for the other 115 Mbit: 5.75 s more.
        let steps = [(0, 100e6), (50_000_000, 20e6)];
        let mut r = sched(&steps);
        let done = serve(&mut r, &vec![(0, 1500); 10_000]);
        let last = *done.last().unwrap();
        assert!(last.abs_diff(5_800_000_000) <= 2, "{last}");
        // The packet that crosses the step: the 416th ends at 49.92 ms (120 us each); the
        // 417th sends 8000 bits by 50 ms, its other 4000 at 20 Mbit/s take 200 us.
        assert_eq!(done[415], 49_920_000);
        assert_eq!(done[416], 50_200_000);
        let d = RateDesc::Schedule(steps.to_vec());
        assert!((d.capacity_bits(0, 5_800_000_000) - 120e6).abs() < 1e-3);
        // 25 ms at each rate.
        assert!((d.capacity_bits(25_000_000, 75_000_000) - 3e6).abs() < 1e-6);
        assert_eq!(d.capacity_bits(60_000_000, 60_000_000), 0.0);
        assert_eq!((d.bps_at(49_999_999), d.bps_at(50_000_000)), (100e6, 20e6));
        assert_eq!(d.mean_bps(), 100e6);
    }

    #[test]
    fn a_one_step_schedule_is_the_fixed_rate_bit_for_bit() {
        let mut f = Rate::fixed(7e6);
        let mut s = sched(&[(0, 7e6)]);
        let mut rng = Rng::new(3);
        let pkts: Vec<(Nanos, u32)> = (0..10_000)
            .map(|i| (i * 1_500_000, 40 + (rng.next_u64() % 1461) as u32))
            .collect();
        assert_eq!(serve(&mut f, &pkts), serve(&mut s, &pkts));
    }

    #[test]
    fn schedules_are_checked() {
        let err = |s: &[(Nanos, f64)]| RateDesc::schedule(s.to_vec()).unwrap_err();
        assert!(err(&[]).contains("at least one step"));
        assert!(err(&[(5, 1e6)]).contains("must start at 0"));
        assert!(err(&[(0, 1e6), (9, 2e6), (9, 3e6)]).contains("increasing time order"));
        assert!(err(&[(0, 1e6), (9, 0.0)]).contains("above 0"));
        assert!(err(&[(0, -1.0)]).contains("above 0"));
        assert!(RateDesc::schedule(vec![(0, 1e6), (9, 2e6)]).is_ok());
        assert!(!err(&[(0, 1e6), (9, f64::NAN)]).contains('\n'));
    }

    #[test]
    fn a_one_per_ms_trace_delivers_one_full_packet_per_ms() {
        let mut r = trace("1\n");
        assert_eq!(r.bps_at(123), 12e6);
        let done = serve(&mut r, &[(0, 1500); 5]);
        assert_eq!(
            done,
            [1_000_000, 2_000_000, 3_000_000, 4_000_000, 5_000_000]
        );
        // A packet of two opportunities' bytes leaves with the second.
        assert_eq!(r.finish(5_000_000, 3000), 7_000_000);
    }

    #[test]
    fn packets_waiting_together_share_an_opportunity() {
        let mut r = trace("1\n");
        // Two 750-byte packets waiting at 0: both leave at 1 ms; a third at 2 ms.
        assert_eq!(
            serve(&mut r, &[(0, 750), (0, 750), (0, 750)]),
            [1_000_000, 1_000_000, 2_000_000]
        );
        // 1000 + 1000: the second takes 500 bytes at 3 ms, 500 at 4 ms.
        let mut r = trace("1\n");
        assert_eq!(
            serve(&mut r, &[(2_500_000, 1000), (2_500_000, 1000)]),
            [3_000_000, 4_000_000]
        );
    }

    #[test]
    fn opportunities_that_pass_while_nothing_waits_are_lost() {
        let mut r = trace("1\n");
        assert_eq!(r.finish(0, 1500), 1_000_000);
        // Opportunities at 2..5 ms passed unused: the next packet takes the one at 6 ms.
        assert_eq!(r.finish(5_500_000, 1500), 6_000_000);
        // One arriving at the very time of an opportunity takes it.
        assert_eq!(r.finish(7_000_000, 1500), 7_000_000);
        // 750 bytes at 10 ms leave 750 there, lost to a packet that came 1 ns later...
        assert_eq!(r.finish(10_000_000, 750), 10_000_000);
        assert_eq!(r.finish(10_000_001, 750), 11_000_000);
        // ...but not to one already waiting at 11 ms.
        assert_eq!(r.finish(11_000_000, 750), 11_000_000);
        assert_eq!(r.finish(11_000_000, 1), 12_000_000);
    }

    #[test]
    fn a_trace_loops_with_its_last_timestamp_as_period() {
        // Opportunities at 2, 2, 5 ms, then 7, 7, 10, 12, 12, 15...
        let mut r = trace("2\n2\n5\n");
        assert_eq!(r.bps_at(0), 7.2e6, "3 x 12000 bits per 5 ms");
        let ms = 1_000_000;
        assert_eq!(
            serve(&mut r, &[(0, 1500); 7]),
            [2 * ms, 2 * ms, 5 * ms, 7 * ms, 7 * ms, 10 * ms, 12 * ms]
        );
        // 1000 loops on: from 5003 ms the next is the loop's last, at 5005 ms; then 5007
        // twice (the next loop's first two), 5010.
        assert_eq!(
            serve(&mut r, &[(5003 * ms, 1500); 4]),
            [5005 * ms, 5007 * ms, 5007 * ms, 5010 * ms]
        );
        // Far on (2e8 loops): an opportunity ends every loop, so one lies at 1e15 ns itself.
        let far = 1_000_000_000_000_000;
        assert_eq!(r.finish(far, 1500), far);
        assert_eq!(r.finish(far + 1, 1500), far + 2 * ms);
        // A trace starting at 0: its first opportunity and the loop before's last coincide.
        let mut r = trace("0\n3\n");
        assert_eq!(
            serve(&mut r, &[(0, 1500); 5]),
            [0, 3 * ms, 3 * ms, 6 * ms, 6 * ms]
        );
        // Counted from time zero.
        let mut r = trace("2\n2\n5\n");
        r.set_origin(100);
        assert_eq!(r.finish(100, 1500), 2 * ms + 100);
    }

    #[test]
    fn trace_capacity_counts_the_opportunities_in_the_interval() {
        let d = RateDesc::Trace(Arc::new(TraceDesc::parse("t", "2\n2\n5\n").unwrap()));
        let ms = 1_000_000;
        let bits = 12_000.0;
        // 10 loops: 30 opportunities in (0, 50 ms]; [0, 50 ms) leaves out the one at 50.
        assert_eq!(d.capacity_bits(0, 50 * ms), 29.0 * bits);
        assert_eq!(d.capacity_bits(ms, 50 * ms + 1), 30.0 * bits);
        assert_eq!(d.capacity_bits(2 * ms, 2 * ms + 1), 2.0 * bits);
        assert_eq!(d.capacity_bits(3 * ms, 5 * ms), 0.0);
        assert_eq!(
            d.capacity_bits(0, 2_000_000 * ms),
            1_200_000.0 * bits - bits
        );
        // The mean over many loops is the loop's mean rate.
        let mean = d.capacity_bits(0, 1_000_000 * ms + 1) / 1000.0;
        assert!((mean - d.mean_bps()).abs() < 1e-6, "{mean}");
        assert_eq!(d.mean_bps(), 7.2e6);
    }

    /// Mahimahi's link queue as it is written: opportunities in time order, each of 1500
    /// bytes given to the packets waiting (arrived at or before it) in order, a packet
    /// leaving at the opportunity carrying its last byte; what is left with nothing waiting
    /// is lost.
    fn mahimahi(opps: &[Nanos], pkts: &[(Nanos, u32)]) -> Vec<Nanos> {
        let mut out = Vec::new();
        let mut next = 0;
        let mut in_transit: Option<u64> = None;
        for &t in opps {
            let mut bytes = TRACE_OPPORTUNITY_BYTES as u64;
            while bytes > 0 {
                let left = match in_transit {
                    Some(l) => l,
                    None if next < pkts.len() && pkts[next].0 <= t => {
                        next += 1;
                        pkts[next - 1].1 as u64
                    }
                    None => break,
                };
                let send = left.min(bytes);
                bytes -= send;
                in_transit = Some(left - send).filter(|&l| l > 0);
                if in_transit.is_none() {
                    out.push(t);
                }
            }
            if out.len() == pkts.len() {
                break;
            }
        }
        out
    }

    #[test]
    fn a_trace_serves_as_mahimahi_does() {
        let text = "3\n3\n3\n4\n9\n9\n14\n20\n20\n20\n20\n21\n";
        let t = TraceDesc::parse("t", text).unwrap();
        let period = t.period();
        let opps: Vec<Nanos> = (0..10_000)
            .flat_map(|k| t.opportunities.iter().map(move |&o| k * period + o))
            .collect();
        let mut rng = Rng::new(9);
        let mut at = 0;
        let pkts: Vec<(Nanos, u32)> = (0..20_000)
            .map(|_| {
                // Bunches, gaps of many loops, arrivals on opportunity times.
                at += match rng.next_u64() % 10 {
                    0..=3 => 0,
                    4..=6 => rng.next_u64() % 3_000_000,
                    7 => rng.next_u64() % 30 * 1_000_000,
                    8 => rng.next_u64() % 100_000_000,
                    _ => 1,
                };
                let len = match rng.next_u64() % 4 {
                    0 => 1500,
                    1 => 40 + (rng.next_u64() % 1000) as u32,
                    2 => 750,
                    _ => 1 + (rng.next_u64() % 6000) as u32,
                };
                (at, len)
            })
            .collect();
        let expect = mahimahi(&opps, &pkts);
        assert_eq!(expect.len(), pkts.len(), "the reference ran out of trace");
        let mut r = Rate::new(RateDesc::Trace(Arc::new(t)));
        assert_eq!(serve(&mut r, &pkts), expect);
    }

    #[test]
    fn trace_errors_name_the_line() {
        let err = |s: &str| TraceDesc::parse("up.trace", s).unwrap_err();
        assert_eq!(
            err("1\n2\nx\n"),
            "up.trace: line 3: expected a whole number of milliseconds, found \"x\""
        );
        assert!(err("1\n\n1.5\n").contains("line 3:"), "blank lines count");
        assert!(err("5\n-3\n").contains("line 2:"));
        assert!(err("5\n3\n").starts_with("up.trace: line 2: 3 ms is before"));
        assert!(err("99999999999999999999\n").contains("line 1:"));
        assert!(err("").contains("no timestamps"));
        assert!(err("\n  \n").contains("no timestamps"));
        assert!(err("0\n0\n").contains("more than 0 ms"));
        let t = TraceDesc::parse("t", " 1 \r\n\n2\r\n").unwrap();
        assert_eq!(t.opportunities, [1_000_000, 2_000_000]);
    }
}
