//! Unit tests of the fit: the intervals' coverage on synthetic samples, the loss phase's
//! count, the buffer's reads, and a fit's round trip through a document and a scenario.

use super::*;
use cclab_results::testing::{DocBuilder, RunBuilder};

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
    let run = RunBuilder::new().series(ts).build();
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
    let fb =
        |s: &[Sample], rtt: &Estimate, p: f64| fitted_buffer(small.clone(), s, 2.0, rtt, &rate, p);
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
    let doc = DocBuilder::new()
        .backend("host")
        .fit(Some(f.to_value()))
        .build();
    assert_eq!(PathFit::from_doc(&doc, "r.json").unwrap(), f);
    let t = f.scenario_toml("p", "r.json", &["cubic".into(), "bbr3".into()]);
    assert!(t.contains("cc = [\"cubic\", \"bbr3\"]"), "{t}");
    assert!(t.contains("loss = \"0.2000%\""), "{t}");
    assert!(t.contains("(lower bound)"), "{t}");
    // The buffer of a lower bound is at least 1 BDP.
    assert!(f.scenario_buffer() as f64 >= 80e6 / 8.0 * 0.0398 * 0.99);
    assert!(t.lines().filter(|l| !l.starts_with('#')).count() > 8);
    // No fit, another backend, another layout: one line saying what to do.
    let e = PathFit::from_doc(&DocBuilder::new().backend("host").build(), "x").unwrap_err();
    assert!(e.contains("--no-probe") && !e.contains('\n'), "{e}");
    let e = PathFit::from_doc(&DocBuilder::new().backend("sim").build(), "x").unwrap_err();
    assert!(e.contains("simulator results"), "{e}");
    let mut v = f.to_value();
    v["version"] = 99.into();
    let doc = DocBuilder::new().backend("host").fit(Some(v)).build();
    let e = PathFit::from_doc(&doc, "x").unwrap_err();
    assert!(e.contains("layout 99"), "{e}");
}
