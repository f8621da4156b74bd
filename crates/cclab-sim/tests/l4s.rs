//! L4S on the simulator (issue #31): TCP Prague (ECT(1)) in a DualPI2 (RFC 9332) queue,
//! beside classic flows, and in a single classic-ECN FIFO where RFC 9330 warns it does not
//! belong. Each bound is one a wrong classifier, coupling or controller breaks.

mod common;
use cclab_core::cc;
use cclab_path::{AqmDesc, DualPi2Params};
use cclab_results::RunResult;
use cclab_sim::{run, SimConfig, SimFlow};
use common::{share, MS, S};

fn goodput_between(r: &RunResult, from_s: f64, to_s: f64) -> Vec<f64> {
    r.series
        .as_ref()
        .expect("series")
        .mean_goodput_between(from_s, to_s)
}

/// A Prague flow (ECN) from 0 s on `rate` x `rtt_ms` behind DualPI2 with a 4 BDP limit, and
/// `classic` (with or without ECN) from 1 s if given; 30 s.
fn dualq(rate: f64, rtt_ms: u64, classic: Option<(&str, bool)>) -> SimConfig {
    let mut cfg = SimConfig::single("prague", rate, rtt_ms * MS, 4.0, 0.0, 30 * S);
    cfg.link.aqm = AqmDesc::from(DualPi2Params::default());
    cfg.flows[0].ecn = true;
    if let Some((name, ecn)) = classic {
        cfg.flows.push(SimFlow {
            cc: cc::by_name(name).unwrap(),
            group: 1,
            start_ns: S,
            ecn,
            accecn: false,
            ..cfg.flows[0].clone()
        });
    }
    cfg
}

/// Alone in DualPI2 at 100 Mbit/s x 20 ms: the L queue's native step (1 ms) holds Prague's
/// queue (measured: L p50 0.64, p99 1.24 ms; utilisation from 5 s 1.00), and nothing reaches the C
/// queue.
#[test]
fn prague_alone_in_dualpi2_keeps_the_l_queue_under_the_step() {
    let r = run(&dualq(100e6, 20, None));
    let l = &r.link.queues["data.queue.l"];
    let q = &r.link.elements["data.queue"];
    let util = share(goodput_between(&r, 5.0, 30.0)[0], 100e6);
    println!(
        "L p50 {:.2} p99 {:.2} ms, util {util:.3}, {q:?}",
        l.p50, l.p99
    );
    assert!(l.p99 <= 1.5, "L queue delay p99 {:.2} ms", l.p99);
    assert!(util >= 0.95, "utilisation from 5 s {util:.3}");
    assert!(q["l_packets"] > 0 && q["c_packets"] == 0, "{q:?}");
    assert_eq!(r.flows[0].retransmits, 0);
}

/// Beside CUBIC in DualPI2, 50 Mbit/s: the coupling (k = 2) gives the classic flow a fair
/// share once the base RTT dominates the C queue's 15 ms target (50 ms, goodput over
/// 10-30 s: Prague 28.6, CUBIC 19.6 Mbit/s, 1.46x); at 20 ms CUBIC's RTT is 35 ms against
/// Prague's 20 and Prague gets 1.87x — the RTT bias RFC 9332 names. Classic traffic, ECN or
/// not, goes to the C queue and keeps its delay there (C p99 22 ms) while Prague's L queue
/// stays under 1 ms (p99 0.46 ms).
#[test]
fn prague_beside_cubic_in_dualpi2_shares_by_the_coupling() {
    let r = run(&dualq(50e6, 50, Some(("cubic", false))));
    let g = goodput_between(&r, 10.0, 30.0);
    let ratio = g[0] / g[1];
    let (l, c) = (
        &r.link.queues["data.queue.l"],
        &r.link.queues["data.queue.c"],
    );
    println!(
        "50 ms: prague {:.1} cubic {:.1} Mbit/s (x{ratio:.2}), L p99 {:.2} C p99 {:.2} ms",
        g[0] / 1e6,
        g[1] / 1e6,
        l.p99,
        c.p99
    );
    assert!((0.5..=2.0).contains(&ratio), "prague / cubic {ratio:.2}");
    assert!(
        l.p99 <= 1.5 && c.p99 >= 10.0,
        "L {:.2} C {:.2}",
        l.p99,
        c.p99
    );
    // A classic-ECN flow lands in the C queue too: marked there with p'^2, not stepped.
    let e = run(&dualq(50e6, 20, Some(("cubic", true))));
    let ge = goodput_between(&e, 10.0, 30.0);
    let ratio20 = ge[0] / ge[1];
    println!("20 ms, CUBIC with ECN: x{ratio20:.2}");
    assert!(
        (1.5..=4.0).contains(&ratio20),
        "at 20 ms the C queue's target doubles CUBIC's RTT: prague / cubic {ratio20:.2}"
    );
    assert!(e.flows[1].ce_marks > 0 && e.flows[1].retransmits == 0);
    assert!(e.link.queues["data.queue.c"].p50 > 5.0);
}

/// The same pair in one FIFO that marks classic ECN past 5 ms (RFC 3168 style, no L4S
/// queue): Prague answers each mark with alpha/2, CUBIC with a halving, and CUBIC starves
/// (measured over 10-30 s: Prague 46.7, CUBIC 1.6 Mbit/s) — RFC 9330's reason L4S senders need an L4S
/// queue or classic-ECN fallback.
#[test]
fn prague_starves_classic_ecn_in_a_shared_fifo() {
    let mut cfg = dualq(50e6, 20, Some(("cubic", true)));
    cfg.link.aqm = AqmDesc::default();
    cfg.link.ecn_threshold_ns = Some(5 * MS);
    let r = run(&cfg);
    let g = goodput_between(&r, 10.0, 30.0);
    println!(
        "fifo: prague {:.1} cubic {:.1} Mbit/s",
        g[0] / 1e6,
        g[1] / 1e6
    );
    assert!(
        g[1] < 0.1 * g[0],
        "prague {:.1} cubic {:.1}",
        g[0] / 1e6,
        g[1] / 1e6
    );
}
