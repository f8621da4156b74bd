//! TCP Prague on the simulator (issue #31): alone on a step-marking (1 ms) bottleneck it
//! keeps the queue near the threshold with the link full, its packets are ECT(1) (which
//! the link marks as it marks any ECT), and RTT independence (`rtt_target`, 25 ms) narrows
//! the rate gap between flows of different RTTs on a shared L4S queue.

mod common;
use cclab_core::cc::ParamValue;
use cclab_sim::{run, SimConfig};
use common::{share, MS, S};

/// Prague with RTT independence targeting `target_us` (0 = off).
fn prague(target_us: i64) -> cclab_core::cc::Params {
    cclab_core::cc::find("prague")
        .unwrap()
        .resolve([("rtt_target", ParamValue::Int(target_us))])
        .unwrap()
}

/// One Prague flow on 100 Mbit/s x `rtt_ms`, a 4 BDP buffer marking CE past 1 ms.
fn alone(rtt_ms: u64, target_us: i64, secs: u64) -> SimConfig {
    let mut cfg = SimConfig::single("prague", 100e6, rtt_ms * MS, 4.0, 0.0, secs * S);
    cfg.flows[0].cc = prague(target_us);
    cfg.link.ecn_threshold_ns = Some(MS);
    cfg
}

/// 100 Mbit/s x 20 ms: after slow start the link is full (measured: 100% of the payload
/// capacity from 5 s to 20 s) and the queue stays at the threshold (p50 0.64 ms, p99 1.24
/// ms), without a drop. A model whose cut were too small (alpha's units) or missing lets
/// the queue grow into the 4 BDP buffer; one that cut too much, or per ACK, empties the
/// link.
#[test]
fn prague_alone_keeps_the_queue_at_a_1ms_step_with_the_link_full() {
    let rate = 100e6;
    let r = run(&alone(20, 25_000, 20));
    let f = &r.flows[0];
    let steady = r.series.as_ref().unwrap().mean_goodput_between(5.0, 20.0)[0];
    let util = share(steady, rate);
    assert!(util >= 0.95, "goodput from 5 s: {util:.3} of the link");
    assert!(r.link.utilization >= 0.85, "{}", r.link.utilization);
    let q = &r.link.queue_delay_ms;
    assert!(q.p50 <= 1.0 && q.p99 <= 1.5, "queue delay {q:?} ms");
    assert_eq!(r.link.drops_buffer, 0);
    assert_eq!(f.retransmits, 0);
    // The flow negotiated ECN by itself (the scenario did not ask) and every mark was
    // echoed: ECT(1) packets are marked like ECT(0) ones.
    assert!(!alone(20, 25_000, 20).flows[0].ecn);
    assert!(r.link.marks > 1000 && f.ce_marks == r.link.marks);
    assert!(f.cwr_events > 20, "{}", f.cwr_events);
}

/// Two Prague flows on one 100 Mbit/s, 1 ms step queue, RTTs `a` and `b` ms: goodput of
/// each from 20 s to 60 s, with RTT independence at 25 ms and without.
fn pair(a: u64, b: u64, target_us: i64) -> (f64, f64) {
    let mut cfg = alone(a, target_us, 60);
    let mut other = cfg.flows[0].clone();
    other.rtt_extra_ns = (b - a) * MS;
    other.group = 1;
    cfg.flows.push(other);
    let r = run(&cfg);
    assert!(
        r.link.utilization > 0.9,
        "{a}/{b} ms: {}",
        r.link.utilization
    );
    let g = r.series.as_ref().unwrap().mean_goodput_between(20.0, 60.0);
    (g[0], g[1])
}

/// The documented effect of RTT independence (measured, short : long goodput):
/// - 10 ms vs 25 ms, both at or below the target: 3.9 : 1 without, 1.3 : 1 with;
/// - 10 ms vs 100 ms: 45 : 1 without, 14 : 1 with (the 100 ms flow's rate triples);
/// - 25 ms vs 100 ms: nothing to scale (11.7 vs 12.0).
///
/// Alone, a 10 ms flow fills the link either way, and with fewer marks when it grows as a
/// 25 ms flow would (12.6k vs 26.3k in 30 s).
#[test]
fn rtt_independence_narrows_the_gap_between_short_and_long_rtt_flows() {
    let (s, l) = pair(10, 25, 25_000);
    let (s0, l0) = pair(10, 25, 0);
    assert!(
        s / l < 1.6,
        "10/25 ms with: {:.1} / {:.1}",
        s / 1e6,
        l / 1e6
    );
    assert!(
        s0 / l0 > 3.0,
        "10/25 ms without: {:.1} / {:.1}",
        s0 / 1e6,
        l0 / 1e6
    );
    let (s, l) = pair(10, 100, 25_000);
    let (s0, l0) = pair(10, 100, 0);
    assert!(
        l > 2.0 * l0,
        "100 ms flow: {:.1} with, {:.1} without",
        l / 1e6,
        l0 / 1e6
    );
    assert!(s / l < 0.5 * (s0 / l0), "{:.1} vs {:.1}", s / l, s0 / l0);
    let (s, l) = pair(25, 100, 25_000);
    let (s0, l0) = pair(25, 100, 0);
    let (with, without) = (s / l, s0 / l0);
    assert!(
        (with / without - 1.0).abs() < 0.15,
        "a flow at the target is not scaled: {with:.1} vs {without:.1}"
    );
    // Alone at 10 ms.
    let scaled = run(&alone(10, 25_000, 30));
    let plain = run(&alone(10, 0, 30));
    for r in [&scaled, &plain] {
        let steady = r.series.as_ref().unwrap().mean_goodput_between(10.0, 30.0)[0];
        assert!(share(steady, 100e6) > 0.97);
    }
    assert!(
        (scaled.link.marks as f64) < 0.6 * plain.link.marks as f64,
        "marks {} with, {} without",
        scaled.link.marks,
        plain.link.marks
    );
}
