//! Path elements on simulated runs (issue #15, item 9): CoDel, FQ-CoDel, PIE, DualPI2, a
//! policer, a varying rate from a trace, Gilbert-Elliott loss, jitter with and without
//! reordering, ACK aggregation and per-GSO-packet loss. The figures in each test's comment are what the
//! simulator measured; `cargo test --release -p cclab-sim --test paths -- --nocapture`
//! prints them again.

mod common;
use std::sync::Arc;

use cclab_core::cc::{self, ParamValue, Params};
use cclab_core::host::HostTcp;
use cclab_path::{
    tracegen, AqmDesc, CodelParams, DualPi2Params, FqCodelParams, LossUnit, PieParams, RateDesc,
    TokenBucket, TraceDesc,
};
use cclab_results::{jain, median, RunResult};
use cclab_sim::{run, SimConfig, SimFlow};
use common::{share, MS, PAYLOAD, S};

/// Each flow's mean goodput over the bins ending in `[from_s, to_s]`.
fn goodput_between(r: &RunResult, from_s: f64, to_s: f64) -> Vec<f64> {
    r.series
        .as_ref()
        .expect("series")
        .mean_goodput_between(from_s, to_s)
}

fn mbps(bps: f64) -> f64 {
    bps / 1e6
}

/// BBRv1 with its long-term (policer) mode on or off (`cc_params = { lt_bw = ... }`).
fn bbr_lt_bw(on: bool) -> Params {
    cc::find("bbr")
        .expect("bbr is registered")
        .resolve([("lt_bw", ParamValue::Bool(on))])
        .expect("bbr takes lt_bw")
}

/// One CUBIC flow on 100 Mbit/s x 50 ms behind `aqm`, its limit `buffer_bdp`, 60 s.
fn cubic_behind(aqm: AqmDesc, buffer_bdp: f64, seed: u64) -> RunResult {
    let mut cfg = SimConfig::single("cubic", 100e6, 50 * MS, buffer_bdp, 0.0, 60 * S);
    cfg.link.aqm = aqm;
    cfg.seed = seed;
    run(&cfg)
}

/// CoDel (Linux defaults: 5 ms target, 100 ms interval) in front of 100 Mbit/s x 50 ms with
/// a 4 BDP limit that never fills, one CUBIC flow, 60 s (no random element: every seed
/// gives the same run). Measured: queue delay p50 0.60 ms, p95 5.10, p99 5.91; 94.0% of
/// the link over 10-60 s (CUBIC's 0.7 cut with an almost empty queue leaves the link
/// short for a while after each of CoDel's 8 drops); no buffer drops. Drop-tail with a
/// 1 BDP buffer on the same path: p50 34.7 ms, p95 48.4 (66 buffer drops), 100% of the link.
#[test]
fn codel_keeps_the_queue_short_and_the_link_full() {
    let codel = cubic_behind(AqmDesc::from(CodelParams::default()), 4.0, 1);
    let droptail = cubic_behind(AqmDesc::default(), 1.0, 1);
    let (q, qd) = (&codel.link.queue_delay_ms, &droptail.link.queue_delay_ms);
    let util = share(goodput_between(&codel, 10.0, 60.0)[0], 100e6);
    let util_dt = share(goodput_between(&droptail, 10.0, 60.0)[0], 100e6);
    println!(
        "codel: queue delay p50 {:.2} p95 {:.2} p99 {:.2} ms, util(10-60 s) {util:.3}, aqm drops {}, buffer drops {}",
        q.p50, q.p95, q.p99, codel.link.drops_aqm, codel.link.drops_buffer
    );
    println!(
        "droptail 1 BDP: queue delay p50 {:.2} p95 {:.2} p99 {:.2} ms, util(10-60 s) {util_dt:.3}, buffer drops {}",
        qd.p50, qd.p95, qd.p99, droptail.link.drops_buffer
    );
    assert!(q.p50 <= 5.0, "codel queue delay p50 {:.2} ms", q.p50);
    assert!(q.p99 <= 10.0, "codel queue delay p99 {:.2} ms", q.p99);
    assert!(util >= 0.9, "codel utilisation {util:.3}");
    // CoDel, not the buffer, does the dropping.
    assert!(codel.link.drops_aqm > 0 && codel.link.drops_buffer == 0);
    assert!(
        (25.0..45.0).contains(&qd.p50),
        "drop-tail 1 BDP queue delay p50 {:.2} ms (about 35 expected)",
        qd.p50
    );
    assert!(
        qd.p50 > 5.0 * q.p50,
        "drop-tail p50 {:.2} vs codel {:.2}",
        qd.p50,
        q.p50
    );
}

/// PIE (Linux defaults: 15 ms target, 15 ms update, alpha 0.125, beta 1.25) with a 4 BDP
/// limit, one CUBIC flow on 100 Mbit/s x 50 ms, 60 s, seeds 1-3 (PIE's drops are random).
/// Measured queue delay p50 7.8 / 8.6 / 8.6 ms, p95 18.9 / 18.9 / 18.8, p99 23.0 / 24.3 /
/// 21.8; utilisation (10-60 s) 0.971 / 0.994 / 0.999; 11-15 PIE drops per run. A single
/// CUBIC flow's sawtooth sits below the target most of the time (PIE lets the queue reach
/// about the target, drops, and CUBIC's cut empties most of it), so the median is about
/// half the target and the 95th percentile a little above it. Drop-tail with the same 4 BDP:
/// p50 163 ms.
#[test]
fn pie_holds_the_queue_near_its_target() {
    let target_ms = PieParams::default().target_ns as f64 / 1e6;
    let droptail = cubic_behind(AqmDesc::default(), 4.0, 1);
    let dt50 = droptail.link.queue_delay_ms.p50;
    println!("droptail 4 BDP: queue delay p50 {dt50:.1} ms");
    for seed in 1..=3 {
        let r = cubic_behind(AqmDesc::from(PieParams::default()), 4.0, seed);
        let q = &r.link.queue_delay_ms;
        let util = share(goodput_between(&r, 10.0, 60.0)[0], 100e6);
        println!(
            "pie seed {seed}: queue delay p50 {:.2} p95 {:.2} p99 {:.2} ms, util(10-60 s) {util:.3}, aqm drops {}, buffer drops {}",
            q.p50, q.p95, q.p99, r.link.drops_aqm, r.link.drops_buffer
        );
        assert!(
            (0.25 * target_ms..=target_ms).contains(&q.p50),
            "seed {seed}: pie queue delay p50 {:.2} ms",
            q.p50
        );
        assert!(
            q.p95 <= 1.5 * target_ms,
            "seed {seed}: pie queue delay p95 {:.2} ms",
            q.p95
        );
        assert!(util >= 0.9, "seed {seed}: utilisation {util:.3}");
        assert!(r.link.drops_aqm > 0 && r.link.drops_buffer == 0);
        assert!(
            dt50 > 10.0 * q.p50,
            "drop-tail p50 {dt50:.1} vs pie {:.2}",
            q.p50
        );
    }
}

/// DualPI2 (Linux defaults: 15 ms target, 16 ms updates, alpha 0.16 Hz, beta 3.2 Hz) in
/// front of 100 Mbit/s x 20 ms with a 4 BDP limit, one CUBIC flow without ECN (all in the
/// C queue), 30 s, seeds 1-3. Measured: C queue delay p50 10.85 / 11.30 / 12.62 ms, p95
/// 16.61 / 16.22 / 16.48, p99 17.50 / 16.97 / 17.10; 7-8 drops by the controller (p'^2 is
/// small: CUBIC's epochs at this BDP last seconds), none by the buffer; the link full over
/// 5-30 s. The PI controller holds the queue's peaks at about the target; drop-tail with
/// the same buffer: p50 64.4 ms.
#[test]
fn dualpi2_holds_a_classic_flow_s_queue_near_its_target() {
    let target_ms = DualPi2Params::default().target_ns as f64 / 1e6;
    let droptail = run(&SimConfig::single(
        "cubic",
        100e6,
        20 * MS,
        4.0,
        0.0,
        30 * S,
    ));
    let dt50 = droptail.link.queue_delay_ms.p50;
    println!("droptail 4 BDP: queue delay p50 {dt50:.1} ms");
    for seed in 1..=3 {
        let mut cfg = SimConfig::single("cubic", 100e6, 20 * MS, 4.0, 0.0, 30 * S);
        cfg.link.aqm = AqmDesc::from(DualPi2Params::default());
        cfg.seed = seed;
        let r = run(&cfg);
        let c = &r.link.queues["data.queue.c"];
        let q = &r.link.elements["data.queue"];
        let util = share(goodput_between(&r, 5.0, 30.0)[0], 100e6);
        println!(
            "dualpi2 seed {seed}: C queue delay p50 {:.2} p95 {:.2} p99 {:.2} ms, util(5-30 s) {util:.3}, c_packets {} c_dropped {} aqm drops {} buffer drops {}",
            c.p50, c.p95, c.p99, q["c_packets"], q["c_dropped"], r.link.drops_aqm, r.link.drops_buffer
        );
        assert!(
            (0.5 * target_ms..=target_ms).contains(&c.p50),
            "seed {seed}: C queue delay p50 {:.2} ms",
            c.p50
        );
        assert!(
            c.p99 <= 1.25 * target_ms,
            "seed {seed}: C queue delay p99 {:.2} ms",
            c.p99
        );
        assert!(util >= 0.95, "seed {seed}: utilisation {util:.3}");
        assert!(r.link.drops_aqm > 0 && r.link.drops_buffer == 0);
        // Everything went through the C queue; the L queue is reported, empty.
        assert_eq!(q["l_packets"], 0);
        assert_eq!(q["c_dropped"], r.link.drops_aqm);
        assert!(q["c_packets"] >= r.link.forwarded_pkts);
        assert_eq!(r.link.queues["data.queue.l"].p50, 0.0);
        assert_eq!(r.link.queue_delay_ms.p50, c.p50);
        assert!(dt50 > 3.0 * c.p50, "drop-tail p50 {dt50:.1} ms");
    }
}

/// One CUBIC and one BBR flow, both from time 0, on 100 Mbit/s x 40 ms behind `aqm` with a
/// limit of `buffer_bdp`, 60 s. Returns each flow's goodput over 10-60 s.
fn cubic_beside_bbr(aqm: AqmDesc, buffer_bdp: f64, seed: u64) -> (Vec<f64>, RunResult) {
    let mut cfg = SimConfig::single("cubic", 100e6, 40 * MS, buffer_bdp, 0.0, 60 * S);
    cfg.link.aqm = aqm;
    cfg.seed = seed;
    cfg.flows.push(SimFlow {
        cc: cc::by_name("bbr").unwrap(),
        ..cfg.flows[0].clone()
    });
    let r = run(&cfg);
    (goodput_between(&r, 10.0, 60.0), r)
}

/// CUBIC beside BBRv1 (both from time 0) on 100 Mbit/s x 40 ms, 60 s, seeds 1-3, goodput
/// over 10-60 s. Measured (cubic / bbr Mbit/s, Jain, BBR's share), seeds 1 / 2 / 3:
/// - FQ-CoDel, 4 BDP limit: 46.3 / 50.1, 46.5 / 49.7, 46.2 / 50.1; Jain 0.998 / 0.999 /
///   0.998; BBR's share 0.52. Each flow has its own queue: CUBIC's RTT p50 is 41.3-41.8 ms,
///   while BBRv1, which does not slow down for CoDel's drops (4,600-5,300 retransmits
///   against CUBIC's 17), keeps a standing queue of its own (RTT p50 48.6-49.7 ms, p95
///   about 91 ms).
/// - drop-tail, 1 BDP: 10.5 / 83.8, 10.7 / 83.8, 11.2 / 83.3; Jain 0.624 / 0.626 / 0.632;
///   BBR's share 0.888 / 0.887 / 0.881: BBR takes most of the link, the literature's
///   shallow-buffer case. (0.5 BDP, seeds 1-3, not run here: share 0.89-0.90, Jain 0.60-0.61.)
/// - drop-tail, the same 4 BDP: 57.4 / 39.1, 56.4 / 40.2, 58.5 / 38.0; Jain 0.965 / 0.973 /
///   0.957; BBR's share 0.405 / 0.416 / 0.394. In a deep buffer CUBIC fills the queue and
///   BBRv1, capped at 2 BDP in flight, gets about 40%, as Ware et al. (IMC 2019) model it.
///   BBR does not get most of the link here, so that part of the issue is asserted at 1 BDP
///   only; at 4 BDP drop-tail is less fair than FQ-CoDel, but only a little (both >= 0.9).
#[test]
fn fq_codel_shares_fairly_where_drop_tail_does_not() {
    let mut jains = [Vec::new(), Vec::new(), Vec::new()];
    let mut bbr_share = [Vec::new(), Vec::new(), Vec::new()];
    let mut cubic_rtt = Vec::new();
    for seed in 1..=3 {
        let cases = [
            (
                "fq_codel 4 BDP",
                AqmDesc::from(FqCodelParams::default()),
                4.0,
            ),
            ("droptail 1 BDP", AqmDesc::default(), 1.0),
            ("droptail 4 BDP", AqmDesc::default(), 4.0),
        ];
        for (i, (name, aqm, bdp)) in cases.into_iter().enumerate() {
            let (g, r) = cubic_beside_bbr(aqm, bdp, seed);
            let j = jain(&g);
            let b = g[1] / (g[0] + g[1]);
            println!(
                "{name} seed {seed}: cubic {:.1} bbr {:.1} Mbit/s, jain {j:.3}, bbr share {b:.3}; rtt p50 cubic {:.1} bbr {:.1} ms, retransmits cubic {} bbr {}",
                mbps(g[0]),
                mbps(g[1]),
                r.flows[0].rtt_ms.p50,
                r.flows[1].rtt_ms.p50,
                r.flows[0].retransmits,
                r.flows[1].retransmits
            );
            jains[i].push(j);
            bbr_share[i].push(b);
            if i == 0 {
                cubic_rtt.push(r.flows[0].rtt_ms.p50);
            }
        }
    }
    let [j_fq, j_dt1, j_dt4] = jains.map(|mut v| median(&mut v));
    let [b_fq, b_dt1, b_dt4] = bbr_share.map(|mut v| median(&mut v));
    println!(
        "medians: jain fq_codel {j_fq:.3}, droptail 1 BDP {j_dt1:.3}, 4 BDP {j_dt4:.3}; bbr share {b_fq:.3}, {b_dt1:.3}, {b_dt4:.3}"
    );
    assert!(j_fq >= 0.9, "fq_codel jain {j_fq:.3}");
    assert!((0.4..0.6).contains(&b_fq), "fq_codel bbr share {b_fq:.3}");
    // FQ keeps CUBIC out of BBR's queue: its RTT stays near the base 40 ms.
    let c50 = median(&mut cubic_rtt);
    assert!(c50 <= 46.0, "cubic rtt p50 behind fq_codel {c50:.1} ms");
    // Drop-tail, 1 BDP: BBR takes most of the link.
    assert!(b_dt1 > 0.75, "droptail 1 BDP bbr share {b_dt1:.3}");
    assert!(j_dt1 < 0.75, "droptail 1 BDP jain {j_dt1:.3}");
    // Drop-tail, 4 BDP: CUBIC gets the larger share; less fair than FQ-CoDel either way.
    assert!(b_dt4 < 0.5, "droptail 4 BDP bbr share {b_dt4:.3}");
    assert!(
        j_dt4 < j_fq,
        "droptail 4 BDP jain {j_dt4:.3} vs fq_codel {j_fq:.3}"
    );
}

/// A 10 Mbit/s token-bucket policer (64 KiB of burst) in front of 100 Mbit/s x 40 ms
/// (1 BDP buffer), BBRv1, 60 s, seeds 1-3. The policer counts wire bytes, so its rate in
/// goodput is 10 x 1448/1500 = 9.653 Mbit/s. Measured goodput over 20-60 s: lt_bw on
/// 9.656 / 9.650 / 9.651, off 9.653 / 9.657 / 9.657 Mbit/s (BBR's delivery-rate samples
/// cannot exceed the policer's rate, so either way it settles on it). Policer drops in 60 s:
/// on 3,615 / 2,536 / 3,667, off 4,249 / 4,189 / 4,189 (retransmits the same within 3);
/// all 3 seeds: 9,818 against 12,627.
///
/// The saving is mostly early. Over 0-30 s: on 1,701 / 1,422 / 1,763, off 2,276 / 2,319 /
/// 2,319 (0.61-0.76 of it): the long-term mode engages after startup's losses and a few
/// times more. Over 30-60 s: on 1,914 / 1,114 / 1,904, off 1,973 / 1,870 / 1,870: once BBR's
/// estimate has settled on the policer's rate, its 1.25x probes lose about 7.5% of what it
/// sends, below the 20% (50/256) per-interval loss that lt sampling asks for
/// (`bbr_lt_bw_sampling`), so the mode rarely engages again (only seed 2 here), and both
/// settings drop at about the same rate. Asserted: lt_bw on loses less in every seed, at
/// most 0.85 of lt_bw off over 0-30 s, at most 0.9 over all 3 seeds' 60 s.
#[test]
fn bbr_settles_on_a_policers_rate_and_lt_bw_saves_losses() {
    let payload_rate = 10e6 * PAYLOAD;
    let go = |on: bool, seed: u64, secs: u64| {
        let mut cfg = SimConfig::single("bbr", 100e6, 40 * MS, 1.0, 0.0, secs * S);
        cfg.flows[0].cc = bbr_lt_bw(on);
        cfg.link.policer = Some(TokenBucket {
            rate_bps: 10e6,
            burst_bytes: 65_536,
        });
        cfg.seed = seed;
        run(&cfg)
    };
    let mut drops = [Vec::new(), Vec::new()];
    let mut late = [Vec::new(), Vec::new()];
    for seed in 1..=3 {
        for (i, on) in [true, false].into_iter().enumerate() {
            let r = go(on, seed, 60);
            let half = go(on, seed, 30);
            let g = goodput_between(&r, 20.0, 60.0)[0];
            let d = r.link.drops_policer;
            let d_late = d - half.link.drops_policer;
            println!(
                "lt_bw {on} seed {seed}: goodput(20-60 s) {:.3} Mbit/s = {:.4} of the policer's, policer drops {d} ({d_late} in 30-60 s), retransmits {}, rtt p50 {:.1} ms",
                mbps(g),
                g / payload_rate,
                r.flows[0].retransmits,
                r.flows[0].rtt_ms.p50
            );
            assert!(
                (g / payload_rate - 1.0).abs() <= 0.15,
                "lt_bw {on} seed {seed}: goodput {:.3} Mbit/s",
                mbps(g)
            );
            // Nothing gets through above the policer's rate (its 64 KiB of burst is
            // 13 kbit/s over 40 s).
            assert!(g <= 1.01 * payload_rate, "lt_bw {on} seed {seed}: {g}");
            // The bottleneck never queues behind a 10 Mbit/s policer.
            assert_eq!(r.link.drops_buffer, 0);
            drops[i].push(d);
            late[i].push(d_late);
        }
    }
    for s in 0..3 {
        let (on, off) = (drops[0][s], drops[1][s]);
        let (on_early, off_early) = (on - late[0][s], off - late[1][s]);
        println!(
            "seed {}: policer drops 0-30 s lt_bw {on_early}, without {off_early}; 30-60 s {}, {}",
            s + 1,
            late[0][s],
            late[1][s]
        );
        assert!(
            on < off,
            "seed {}: policer drops with lt_bw {on}, without {off}",
            s + 1
        );
        assert!(
            (on_early as f64) < 0.85 * off_early as f64,
            "seed {}: policer drops over 0-30 s with lt_bw {on_early}, without {off_early}",
            s + 1
        );
    }
    let (on, off): (u64, u64) = (drops[0].iter().sum(), drops[1].iter().sum());
    println!("policer drops in 60 s, 3 seeds: lt_bw {on}, without {off}");
    assert!(
        (on as f64) < 0.9 * off as f64,
        "policer drops, 3 seeds: lt_bw {on}, without {off}"
    );
}

/// BBRv1 alone on a link whose rate comes from a trace (made with `tracegen`), 40 ms,
/// buffer 1 BDP at the trace's mean rate, 60 s (one loop of the trace).
fn on_trace(cc_name: &str, name: &str, text: &str) -> (SimConfig, RunResult) {
    let rate = RateDesc::Trace(Arc::new(TraceDesc::parse(name, text).unwrap()));
    let mut cfg = SimConfig::single(cc_name, rate.mean_bps(), 40 * MS, 1.0, 0.0, 60 * S);
    cfg.link.rate_varies = Some(rate);
    let r = run(&cfg);
    (cfg, r)
}

/// BBRv1 on traces, 40 ms, 1 BDP at the trace's mean, 60 s.
/// - A step: 48 Mbit/s for 20 s, 12 for 20 s, 48 again (mean 36). Measured goodput
///   34.08 Mbit/s of 34.75 the trace carries in payload (0.981); 46.3 Mbit/s over 5-15 s
///   (all of 48 in payload), 11.3 over 25-35 s (0.976 of 12 in payload). The run's
///   `link_rate_bps` series shows 48 / 12 / 48 and `link.rate_bps` is 36.
/// - A random walk (mean 30 Mbit/s, 5-60, a new rate every 100 ms, sigma 0.2, seed 7):
///   27.44 of 28.96 Mbit/s (0.947; 0.935 before the sender's D-SACK undo); per 5 s window
///   0.83-1.04 of the capacity (above 1 where a repair releases out-of-order data the
///   receiver held, so the bound asserted is on what the application has read by each
///   bin's end). CUBIC, for comparison (before D-SACK undo): step 0.997, walk 0.911.
#[test]
fn bbr_follows_a_trace() {
    let step = tracegen::step(48e6, 12e6, 20_000, 20_000, 60_000).unwrap();
    let walk = tracegen::random_walk(30e6, 5e6, 60e6, 100, 0.2, 60_000, 7).unwrap();
    for (name, text) in [("step", &step), ("walk", &walk)] {
        let (cfg, r) = on_trace("bbr", name, text);
        let mean = cfg.link.rate().mean_bps();
        let cap = cfg.link.capacity_bits(0, 60 * S) / 60.0 * PAYLOAD;
        let g = r.flows[0].goodput_bps;
        let s = r.series.as_ref().unwrap();
        let lr = &s.link_rate_bps;
        println!(
            "{name}: trace mean {:.2} Mbit/s, link.rate_bps {:.2}, payload capacity {:.2}, goodput {:.2} ({:.3}), buffer drops {}, queue delay p50 {:.1} p99 {:.1} ms",
            mbps(mean),
            mbps(r.link.rate_bps),
            mbps(cap),
            mbps(g),
            g / cap,
            r.link.drops_buffer,
            r.link.queue_delay_ms.p50,
            r.link.queue_delay_ms.p99
        );
        assert!(g <= cap, "{name}: goodput {g} above the capacity {cap}");
        assert!(
            g >= 0.8 * cap,
            "{name}: goodput {:.3} of the capacity",
            g / cap
        );
        assert!(
            (r.link.rate_bps / mean - 1.0).abs() < 0.005,
            "{name}: link.rate_bps {} vs the trace's mean {mean}",
            r.link.rate_bps
        );
        // The series is the trace's capacity bin by bin, and averages to the mean.
        assert_eq!(lr.len(), s.t_s.len());
        for (i, (&t, &bps)) in s.t_s.iter().zip(lr).enumerate() {
            let t_ns = (t * 1e9).round() as u64;
            let prev = if i == 0 {
                0
            } else {
                (s.t_s[i - 1] * 1e9).round() as u64
            };
            let want = cfg.link.capacity_bits(prev, t_ns) / ((t_ns - prev) as f64 / 1e9);
            assert!((bps - want).abs() <= 1e-6 * want.max(1.0), "{name} bin {i}");
        }
        let series_mean = lr.iter().sum::<f64>() / lr.len() as f64;
        assert!(
            (series_mean / mean - 1.0).abs() < 0.01,
            "{name}: {series_mean}"
        );
        // Goodput never runs ahead of the link: what the application has read by the end of
        // each bin is at most what the link could carry until then (per window it may be
        // more, when a repair releases out-of-order data the receiver held).
        let mut read_bits = 0.0;
        for (i, (&t, &gbps)) in s.t_s.iter().zip(&s.flows[0].goodput_bps).enumerate() {
            read_bits += gbps * s.interval_s;
            let can = cfg.link.capacity_bits(0, (t * 1e9).round() as u64) * PAYLOAD;
            assert!(
                read_bits <= can * (1.0 + 1e-9) + 1.0,
                "{name}: by {t} s read {read_bits} bits, the link carried at most {can} (bin {i})"
            );
        }
        // Window by window, goodput against the capacity (printed).
        let ratios: Vec<f64> = (0..12u64)
            .map(|w| {
                let (a, b) = (w * 5, (w + 1) * 5);
                let got = s.mean_goodput_between(a as f64 + 0.05, b as f64)[0] * 5.0;
                got / (cfg.link.capacity_bits(a * S, b * S) * PAYLOAD)
            })
            .collect();
        println!(
            "{name}: goodput / capacity per 5 s: {}",
            ratios
                .iter()
                .map(|x| format!("{x:.2}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        if name == "step" {
            let rate_between = |a: f64, b: f64| {
                let v: Vec<f64> = s
                    .t_s
                    .iter()
                    .zip(lr)
                    .filter(|(t, _)| **t >= a && **t <= b)
                    .map(|(_, r)| *r)
                    .collect();
                (
                    v.iter().cloned().fold(f64::MAX, f64::min),
                    v.iter().cloned().fold(0.0, f64::max),
                )
            };
            for (a, b, want) in [(1.0, 19.9, 48e6), (21.0, 39.9, 12e6), (41.0, 59.9, 48e6)] {
                let (lo, hi) = rate_between(a, b);
                assert!(
                    lo >= 0.98 * want && hi <= 1.02 * want,
                    "step: link_rate_bps over {a}-{b} s in [{lo}, {hi}], want {want}"
                );
            }
            let high = goodput_between(&r, 5.0, 15.0)[0];
            let low = goodput_between(&r, 25.0, 35.0)[0];
            println!(
                "step: goodput 5-15 s {:.2} Mbit/s, 25-35 s {:.2}",
                mbps(high),
                mbps(low)
            );
            assert!(share(high, 48e6) >= 0.9, "step: {high} at 48 Mbit/s");
            assert!(
                (0.8..=1.01).contains(&share(low, 12e6)),
                "step: {low} at 12 Mbit/s"
            );
        } else {
            let lo = lr.iter().cloned().fold(f64::MAX, f64::min);
            let hi = lr.iter().cloned().fold(0.0, f64::max);
            assert!(lo < 0.6 * mean && hi > 1.4 * mean, "walk: [{lo}, {hi}]");
        }
    }
}

/// CUBIC on 100 Mbit/s x 40 ms, 1 BDP, 1% random loss, 60 s, seeds 1-3: independent
/// (Bernoulli) loss against Gilbert-Elliott bursts of mean length 4 at the same rate.
/// Measured goodput: Bernoulli 3.16 / 3.23 / 3.11 Mbit/s, bursts 6.08 / 7.34 / 5.88 (median
/// ratio 1.93); random drops per segment sent 1.05% / 1.03% / 1.06% against 1.30% / 0.88% /
/// 1.09%. A burst costs one window reduction where independent losses cost one each, so
/// loss events are about a quarter as frequent and, goodput going as 1/sqrt(event rate),
/// about twice the goodput.
#[test]
fn bursty_loss_of_4_doubles_cubics_goodput() {
    let mut g = [Vec::new(), Vec::new()];
    let mut frac = [Vec::new(), Vec::new()];
    for seed in 1..=3 {
        for (i, burst) in [1.0, 4.0].into_iter().enumerate() {
            let mut cfg = SimConfig::single("cubic", 100e6, 40 * MS, 1.0, 0.01, 60 * S);
            cfg.link.loss_burst = burst;
            cfg.seed = seed;
            let r = run(&cfg);
            let f = &r.flows[0];
            let p = r.link.drops_random as f64 / f.segments_sent as f64;
            println!(
                "loss_burst {burst} seed {seed}: goodput {:.2} Mbit/s, random drops {} of {} sent ({:.2}%), retransmits {}",
                mbps(f.goodput_bps),
                r.link.drops_random,
                f.segments_sent,
                100.0 * p,
                f.retransmits
            );
            g[i].push(f.goodput_bps);
            frac[i].push(p);
        }
    }
    let min_bursty = g[1].iter().cloned().fold(f64::MAX, f64::min);
    let max_iid = g[0].iter().cloned().fold(0.0, f64::max);
    let [m_iid, m_bursty] = g.map(|mut v| median(&mut v));
    let [p_iid, p_bursty] = frac.map(|mut v| median(&mut v));
    let ratio = m_bursty / m_iid;
    println!(
        "median goodput: Bernoulli {:.2}, bursts {:.2} Mbit/s (ratio {ratio:.2}); median drop rate {:.2}% vs {:.2}%",
        mbps(m_iid),
        mbps(m_bursty),
        100.0 * p_iid,
        100.0 * p_bursty
    );
    assert!(
        min_bursty > max_iid,
        "every bursty run beats every Bernoulli run"
    );
    assert!((1.5..=2.6).contains(&ratio), "goodput ratio {ratio:.2}");
    for p in [p_iid, p_bursty] {
        assert!((0.008..0.0125).contains(&p), "drop rate {p}");
    }
}

/// Jitter of 2 ms (uniform in [0, 2 ms] per data packet) on 50 Mbit/s x 20 ms, 1 BDP,
/// CUBIC, 30 s, seeds 1-3.
/// - Without reordering (`reorder = false`) nothing arrives out of order: every
///   retransmission answers a buffer drop (22 / 17 / 23 of each) and goodput is unchanged
///   (48.17 against 48.18 Mbit/s without jitter). A flow held by its receive window (about
///   15.7 Mbit/s, no standing queue) sees its RTT p50 rise from 20.64 to 22.09 ms: 1.44 ms,
///   a little more than half the jitter, as a packet cannot leave before the one ahead of
///   it.
/// - With reordering, packets overtake each other by up to 2 ms (8 packets at 50 Mbit/s)
///   and some retransmissions are spurious (more retransmits than drops). With the sender's
///   reordering detection and D-SACK undo (`tp->reordering`, `reord_seen`, RACK's widening
///   window) the cost is small: spurious retransmits 0 / 18 / 4, goodput 48.16 / 48.16 /
///   45.45 Mbit/s. (Before the sender had them, RACK's window stayed 0 once 3 segments were
///   SACKed and nothing was undone: 297 / 319 / 309 spurious retransmits, no drop at all,
///   and goodput 4.69 / 5.13 / 4.64 Mbit/s.) Asserted: spurious retransmits over the 3
///   seeds, and less goodput in total than in order.
#[test]
fn jitter_reorders_only_when_allowed() {
    let go = |jitter_ns: u64, reorder: bool, seed: u64, host: Option<HostTcp>| {
        let mut cfg = SimConfig::single("cubic", 50e6, 20 * MS, 1.0, 0.0, 30 * S);
        cfg.link.jitter_ns = jitter_ns;
        cfg.link.reorder = reorder;
        cfg.seed = seed;
        if let Some(h) = host {
            cfg.flows[0].host = h;
        }
        run(&cfg)
    };
    // Retransmissions beyond the data packets lost: every drop is repaired at least once.
    let spurious = |r: &RunResult| {
        r.flows[0].retransmits as i64 - (r.link.drops_buffer + r.link.drops_random) as i64
    };
    let g0 = go(0, false, 1, None).flows[0].goodput_bps;
    let (mut g_inorder, mut g_reordered, mut spurious_reordered) = (0.0, 0.0, 0);
    for seed in 1..=3 {
        let (inorder, reordered) = (go(2 * MS, false, seed, None), go(2 * MS, true, seed, None));
        let (a, b) = (&inorder.flows[0], &reordered.flows[0]);
        println!(
            "seed {seed}: no jitter {:.2} Mbit/s; jitter in order {:.2} Mbit/s, {} retransmits, {} drops; reordered {:.2} Mbit/s, {} retransmits, {} drops ({} spurious)",
            mbps(g0),
            mbps(a.goodput_bps),
            a.retransmits,
            inorder.link.drops_buffer,
            mbps(b.goodput_bps),
            b.retransmits,
            reordered.link.drops_buffer,
            spurious(&reordered)
        );
        assert_eq!(
            spurious(&inorder),
            0,
            "seed {seed}: in order, every retransmission answers a drop"
        );
        assert!((a.goodput_bps / g0 - 1.0).abs() < 0.02, "seed {seed}");
        g_inorder += a.goodput_bps;
        g_reordered += b.goodput_bps;
        spurious_reordered += spurious(&reordered);
    }
    println!(
        "3 seeds: goodput in order {:.2}, reordered {:.2} Mbit/s; spurious retransmits reordered {spurious_reordered}",
        mbps(g_inorder / 3.0),
        mbps(g_reordered / 3.0)
    );
    assert!(
        spurious_reordered > 0,
        "reordering, no spurious retransmission"
    );
    assert!(g_reordered < g_inorder, "reordering costs nothing");
    // RTT of a flow that leaves no standing queue (a 64 KiB receive buffer).
    let small = HostTcp {
        tcp_rmem: [4096, 65_536, 65_536],
        ..HostTcp::default()
    };
    let (flat, jittered) = (
        go(0, false, 1, Some(small.clone())),
        go(2 * MS, false, 1, Some(small)),
    );
    let (r0, r1) = (flat.flows[0].rtt_ms, jittered.flows[0].rtt_ms);
    let rise = r1.p50 - r0.p50;
    println!(
        "window-limited ({:.1} Mbit/s): rtt p50 {:.2} -> {:.2} ms (+{rise:.2}), queue delay p50 {:.2} ms",
        mbps(flat.flows[0].goodput_bps),
        r0.p50,
        r1.p50,
        flat.link.queue_delay_ms.p50
    );
    assert!(flat.flows[0].goodput_bps < 0.5 * 50e6, "window-limited");
    assert!((0.7..=2.0).contains(&rise), "rtt p50 rise {rise:.2} ms");
}

/// ACKs released in bursts every 4 ms on 100 Mbit/s x 20 ms, 1 BDP, BBRv1, 30 s, seeds 1-3
/// (identical figures): BBR keeps 98.1% of the link (98.3% without aggregation, 5-30 s);
/// its RTT p50 rises from 22.22 to 23.66 ms (+1.44 ms: an ACK waits up to 4 ms, 2 on
/// average less the ones that arrive just before a release), while the bottleneck's queue
/// delay p50 falls from 2.05 to about 1.3 ms (the wait is on the ACK path, not the data
/// path) and retransmits fall from 586 to 440.
#[test]
fn bbr_keeps_the_link_through_ack_aggregation() {
    for seed in 1..=3 {
        let go = |agg: u64| {
            let mut cfg = SimConfig::single("bbr", 100e6, 20 * MS, 1.0, 0.0, 30 * S);
            cfg.link.ack_aggregation_ns = agg;
            cfg.seed = seed;
            run(&cfg)
        };
        let (plain, agg) = (go(0), go(4 * MS));
        let u = |r: &RunResult| share(goodput_between(r, 5.0, 30.0)[0], 100e6);
        let (u0, u1) = (u(&plain), u(&agg));
        let (p0, p1) = (plain.flows[0].rtt_ms.p50, agg.flows[0].rtt_ms.p50);
        println!(
            "seed {seed}: util(5-30 s) {u0:.3} -> {u1:.3}, rtt p50 {p0:.2} -> {p1:.2} ms, queue delay p50 {:.2} -> {:.2} ms, retransmits {} -> {}",
            plain.link.queue_delay_ms.p50,
            agg.link.queue_delay_ms.p50,
            plain.flows[0].retransmits,
            agg.flows[0].retransmits
        );
        assert!(
            u1 >= 0.9,
            "seed {seed}: utilisation with aggregation {u1:.3}"
        );
        assert!(
            (0.5..=4.0).contains(&(p1 - p0)),
            "seed {seed}: rtt p50 {p0:.2} -> {p1:.2} ms"
        );
        assert!(
            agg.link.queue_delay_ms.p50 <= plain.link.queue_delay_ms.p50 + 0.5,
            "seed {seed}: the data queue does not grow"
        );
    }
}

/// 1% random loss on 10 Gbit/s x 0.2 ms (1 BDP), CUBIC, 5 s, seeds 1-3: drawn per segment
/// (`loss_unit = "segment"`) or once per TSO burst (`"gso"`, which loses the burst whole, as
/// netem as a root qdisc on a TSO sender does). About 1% of segments are lost either way,
/// but a whole burst is one loss event. Measured goodput per segment 835 / 840 / 850
/// Mbit/s, per burst 2,522 / 2,593 / 2,359 (about 3x); random drops 0.98 / 1.01 / 0.99% and
/// 1.01 / 0.98 / 1.04% of the segments sent. Per burst, CUBIC grows far enough to overflow
/// the 250 KB buffer too (4,937 / 4,306 / 4,142 buffer drops beside 11,119 / 11,175 /
/// 10,732 random ones), and retransmits 16,600 / 15,853 / 15,274: 370-540 more than the
/// drops, where per segment retransmits equal drops exactly.
#[test]
fn losing_whole_gso_bursts_costs_cubic_less() {
    for seed in 1..=3 {
        let go = |unit: LossUnit| {
            let mut cfg = SimConfig::single("cubic", 10e9, 200_000, 1.0, 0.01, 5 * S);
            cfg.link.loss_unit = unit;
            cfg.seed = seed;
            run(&cfg)
        };
        let (seg, gso) = (go(LossUnit::Segment), go(LossUnit::Gso));
        let p = |r: &RunResult| r.link.drops_random as f64 / r.flows[0].segments_sent as f64;
        let (a, b) = (&seg.flows[0], &gso.flows[0]);
        println!(
            "seed {seed}: per segment {:.0} Mbit/s ({} dropped, {:.2}%, {} buffer drops, {} retransmits, {} RTOs); per burst {:.0} Mbit/s ({} dropped, {:.2}%, {} buffer drops, {} retransmits, {} RTOs)",
            mbps(a.goodput_bps),
            seg.link.drops_random,
            100.0 * p(&seg),
            seg.link.drops_buffer,
            a.retransmits,
            a.rto_count,
            mbps(b.goodput_bps),
            gso.link.drops_random,
            100.0 * p(&gso),
            gso.link.drops_buffer,
            b.retransmits,
            b.rto_count
        );
        assert!(
            b.goodput_bps > 2.0 * a.goodput_bps,
            "seed {seed}: per burst {} vs per segment {}",
            b.goodput_bps,
            a.goodput_bps
        );
        for r in [&seg, &gso] {
            assert!((0.008..0.0125).contains(&p(r)), "seed {seed}: {}", p(r));
        }
    }
}
