//! Latency probes' results: what a sparse UDP echo (a ping, a game's or a call's packets) saw
//! beside the TCP flows. One [`ProbeResult`] per `[[flows]]` group of `kind = "probe"`.

use serde::{Deserialize, Serialize};

/// How long an echo may take before its probe counts as lost, ns. A probe sent less than
/// this before the run's end and not echoed by then is neither echoed nor lost: it was still
/// in flight (`unanswered_at_end`).
pub const PROBE_LOST_AFTER_NS: u64 = 1_000_000_000;

/// One probe group's record.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// Index of its `[[flows]]` group in the scenario file.
    pub group: u32,
    /// Time between two probes, s.
    pub interval_s: f64,
    /// Payload of each datagram, bytes (28 bytes of UDP/IP headers on top).
    pub size_bytes: u32,
    pub start_s: f64,
    /// Probes sent.
    pub sent: u64,
    /// Probes whose echo did not come back within [`PROBE_LOST_AFTER_NS`].
    pub lost: u64,
    /// Probes sent less than [`PROBE_LOST_AFTER_NS`] before the run's end whose echo had not
    /// come back by then: in flight, neither echoed nor lost.
    #[serde(default)]
    pub unanswered_at_end: u64,
    /// RTT of the echoed probes (each probe weighs the same), ms; zeros when none came back.
    pub rtt_ms: ProbePercentiles,
    /// Each echoed probe's send time and RTT; omitted from results.json (the CLI writes
    /// it to `series/run-N-probes.csv`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<ProbeSeries>,
}

/// Exact percentiles over the probes (nearest rank).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbePercentiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// One point per echoed probe, in send order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeSeries {
    /// When the probe was sent, s from the start of the run.
    pub t_s: Vec<f64>,
    pub rtt_ms: Vec<f64>,
}

/// What a backend measured of one probe group.
#[derive(Clone, Debug, Default)]
pub struct ProbeRecord {
    pub group: u32,
    pub interval_ns: u64,
    pub size_bytes: u32,
    pub start_ns: u64,
    /// Every probe sent: its send time, and its RTT if its echo came back (at any time).
    pub probes: Vec<(u64, Option<u64>)>,
    /// The run's end, ns: a probe sent within [`PROBE_LOST_AFTER_NS`] of it without an echo
    /// was still in flight.
    pub end_ns: u64,
}

impl ProbeRecord {
    /// The result: an echo later than [`PROBE_LOST_AFTER_NS`] counts as lost.
    pub fn build(&self) -> ProbeResult {
        let mut series = ProbeSeries::default();
        for &(t, rtt) in &self.probes {
            if let Some(r) = rtt.filter(|&r| r <= PROBE_LOST_AFTER_NS) {
                series.t_s.push(t as f64 / 1e9);
                series.rtt_ms.push(r as f64 / 1e6);
            }
        }
        let mut sorted = series.rtt_ms.clone();
        sorted.sort_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least q of the probes at or below it.
        let rank = |q: f64| {
            let n = sorted.len();
            let i = ((q * n as f64).ceil() as usize).clamp(1, n.max(1)) - 1;
            sorted.get(i).copied().unwrap_or(0.0)
        };
        let sent = self.probes.len() as u64;
        let in_flight = self
            .probes
            .iter()
            .filter(|(t, rtt)| rtt.is_none() && t.saturating_add(PROBE_LOST_AFTER_NS) > self.end_ns)
            .count() as u64;
        ProbeResult {
            group: self.group,
            interval_s: self.interval_ns as f64 / 1e9,
            size_bytes: self.size_bytes,
            start_s: self.start_ns as f64 / 1e9,
            sent,
            lost: sent - series.t_s.len() as u64 - in_flight,
            unanswered_at_end: in_flight,
            rtt_ms: ProbePercentiles {
                p50: rank(0.5),
                p90: rank(0.9),
                p99: rank(0.99),
                max: sorted.last().copied().unwrap_or(0.0),
            },
            series: Some(series),
        }
    }
}

impl ProbeSeries {
    /// CSV text: `t_s,group,rtt_ms`, one line per echoed probe.
    pub fn csv_lines(&self, group: u32, out: &mut String) {
        for (t, r) in self.t_s.iter().zip(&self.rtt_ms) {
            out.push_str(&format!("{t:.6},{group},{r:.3}\n"));
        }
    }
}

/// The probes' series of a run as CSV (`t_s,group,rtt_ms`), or `None` without probes.
pub fn probes_csv(probes: &[ProbeResult]) -> Option<String> {
    if probes.is_empty() {
        return None;
    }
    let mut s = String::from("t_s,group,rtt_ms\n");
    for p in probes {
        if let Some(ser) = &p.series {
            ser.csv_lines(p.group, &mut s);
        }
    }
    Some(s)
}

/// Reads [`probes_csv`]'s text back into the series of `probes` (matched by group).
pub fn read_probes_csv(text: &str, probes: &mut [ProbeResult]) -> Result<(), String> {
    for p in probes.iter_mut() {
        p.series = Some(ProbeSeries::default());
    }
    for (n, line) in text.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let bad = || {
            format!(
                "line {}: expected t_s,group,rtt_ms numbers, found {line:?}",
                n + 1
            )
        };
        let [t, g, r] = f.as_slice() else {
            return Err(bad());
        };
        let (t, g, r): (f64, u32, f64) = match (t.parse(), g.parse(), r.parse()) {
            (Ok(t), Ok(g), Ok(r)) => (t, g, r),
            _ => return Err(bad()),
        };
        if let Some(s) = probes
            .iter_mut()
            .find(|p| p.group == g)
            .and_then(|p| p.series.as_mut())
        {
            s.t_s.push(t);
            s.rtt_ms.push(r);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_and_missing_echoes_count_as_lost_and_percentiles_are_nearest_rank() {
        let ms = 1_000_000;
        let mut probes: Vec<(u64, Option<u64>)> =
            (1..=100).map(|i| (i * 10 * ms, Some(i * ms))).collect();
        probes.push((2000 * ms, None));
        probes.push((2010 * ms, Some(1500 * ms)));
        // Sent 0.5 s before the end, no echo yet: in flight, not lost.
        probes.push((3000 * ms, None));
        let r = ProbeRecord {
            group: 1,
            interval_ns: 10 * ms,
            size_bytes: 64,
            start_ns: 0,
            probes,
            end_ns: 3500 * ms,
        }
        .build();
        assert_eq!((r.sent, r.lost, r.unanswered_at_end), (103, 2, 1));
        assert_eq!(r.rtt_ms.p50, 50.0);
        assert_eq!(r.rtt_ms.p90, 90.0);
        assert_eq!(r.rtt_ms.p99, 99.0);
        assert_eq!(r.rtt_ms.max, 100.0);
        let csv = probes_csv(std::slice::from_ref(&r)).unwrap();
        assert_eq!(csv.lines().count(), 101);
        assert_eq!(csv.lines().nth(1), Some("0.010000,1,1.000"));
        let mut back = vec![ProbeResult {
            series: None,
            ..r.clone()
        }];
        read_probes_csv(&csv, &mut back).unwrap();
        assert_eq!(back[0], r);
        assert!(read_probes_csv("t_s,group,rtt_ms\n1,x,2\n", &mut back).is_err());
    }
}
