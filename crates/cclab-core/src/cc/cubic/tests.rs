//! CUBIC against the kernel's numbers: constants, the cube root, the curve, fast
//! convergence, the Reno emulation, HyStart and the hooks.

use super::curve::{BETA_SCALE_FRIENDLY, CUBE_FACTOR, CUBE_RTT_SCALE};
use super::*;
use crate::cc::reno::Reno;

const MS: u64 = 1_000_000;
/// Start tests at 1 s so nothing sits at time 0.
const T0: u64 = 1_000 * MS;

fn set_now(tp: &mut TcpState, ns: u64) {
    tp.now_ns = ns;
    tp.now_us = ns / 1000;
}

/// A flow in congestion avoidance: `cwnd` packets, cwnd-limited.
fn ca_flow(cwnd: u32) -> TcpState {
    let mut tp = TcpState::new(1448, cwnd);
    tp.snd_ssthresh = cwnd;
    tp.is_cwnd_limited = true;
    tp.max_packets_out = cwnd;
    set_now(&mut tp, T0);
    tp
}

/// The sender's part of a loss: ssthresh, then (after recovery) cwnd = ssthresh.
fn loss(cc: &mut dyn CongestionControl, tp: &mut TcpState) -> u32 {
    let ss = cc.ssthresh(tp);
    tp.snd_ssthresh = ss;
    tp.snd_cwnd = ss;
    tp.snd_cwnd_cnt = 0;
    ss
}

/// Drive `dur_ns` of ACK clocking at a fixed RTT: each round, cwnd single-packet ACKs
/// evenly spaced over one RTT. Calls `pkts_acked` then `cong_avoid` per ACK (Linux order).
/// Returns (time since start in s, cwnd after the ACK) for every ACK.
fn run(
    cc: &mut dyn CongestionControl,
    tp: &mut TcpState,
    rtt_us: u64,
    dur_ns: u64,
    rtt_samples: bool,
) -> Vec<(f64, u32)> {
    let start = tp.now_ns;
    let mut now = start;
    let mut trace = Vec::new();
    while now - start < dur_ns {
        let n = tp.snd_cwnd as u64;
        tp.max_packets_out = tp.snd_cwnd;
        for i in 0..n {
            let t = now + (i + 1) * rtt_us * 1000 / n;
            set_now(tp, t);
            tp.snd_una += 1;
            tp.snd_nxt += 1;
            let s = AckSample {
                pkts_acked: 1,
                rtt_us: if rtt_samples { rtt_us as i64 } else { -1 },
                in_flight: n as u32,
            };
            cc.pkts_acked(tp, &s);
            let una = tp.snd_una;
            cc.cong_avoid(tp, una, 1);
            trace.push(((t - start) as f64 / 1e9, tp.snd_cwnd));
        }
        now += rtt_us * 1000;
    }
    trace
}

fn first_time_at_least(trace: &[(f64, u32)], w: u32) -> f64 {
    trace
        .iter()
        .find(|&&(_, c)| c >= w)
        .map(|&(t, _)| t)
        .expect("level never reached")
}

fn cwnd_at(trace: &[(f64, u32)], t: f64) -> u32 {
    trace
        .iter()
        .take_while(|&&(tt, _)| tt <= t)
        .last()
        .unwrap()
        .1
}

#[test]
fn constants_match_linux() {
    assert_eq!(BETA_SCALE_FRIENDLY, 15);
    assert_eq!(CUBE_RTT_SCALE, 410);
    assert_eq!(CUBE_FACTOR, 2_681_735_677);
    assert_eq!(jiffies32(0, 1000), 0xFFFB_6C20);
}

#[test]
fn cubic_root_matches_kernel() {
    // Reference outputs of the kernel's cubic_root(), compiled in user space.
    let reference: [(u64, u32); 9] = [
        (0, 0),
        (1, 1),
        (7, 2),
        (8, 2),
        (63, 4),
        (64, 4),
        (1000, 10),
        (1 << 40, 10323),
        (u64::MAX, 2_641_850),
    ];
    for (a, r) in reference {
        assert_eq!(cubic_root(a), r, "a={a}");
    }
    // K (in 1/1024 s) for W_max - cwnd = d packets, as the kernel computes it.
    let k_ref: [(u64, u32); 7] = [
        (1, 1388),
        (12, 3179),
        (30, 4316),
        (300, 9294),
        (3000, 20033),
        (30_000, 43169),
        (300_000, 92967),
    ];
    for (d, k) in k_ref {
        assert_eq!(cubic_root(CUBE_FACTOR * d), k, "d={d}");
    }
    // Against the exact root: within ~1 for small inputs, and within 0.3% over the range
    // CUBIC uses (CUBE_FACTOR * d >= 2^31).
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..20_000u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let a = x >> (i % 64);
        let r = cubic_root(a) as f64;
        let e = (a as f64).cbrt();
        assert!((r - e).abs() < 1.0 + 0.003 * e, "a={a} r={r} e={e}");
        if a >= 1 << 31 {
            assert!((r - e).abs() / e < 0.003, "a={a} r={r} e={e}");
        }
    }
    // K for 30 packets: cbrt(75) s = 4.217 s.
    assert!((cubic_root(CUBE_FACTOR * 30) as f64 / 1024.0 - 75f64.cbrt()).abs() < 0.01);
}

/// (5) ssthresh after loss = max(cwnd * 717 / 1024, 2).
#[test]
fn ssthresh_is_beta_times_cwnd_floor_two() {
    for cwnd in [1u32, 2, 3, 4, 10, 100, 1000, 12345] {
        let mut cc = Cubic::new();
        let tp = ca_flow(cwnd);
        let want = (cwnd * 717 / 1024).max(2);
        assert_eq!(cc.ssthresh(&tp), want, "cwnd={cwnd}");
    }
    let mut cc = Cubic::new();
    assert_eq!(cc.ssthresh(&ca_flow(100)), 70);
    assert_eq!(cc.ssthresh(&ca_flow(1000)), 700);
    assert_eq!(cc.ssthresh(&ca_flow(2)), 2);
}

/// (1) Loss at W_max = 100: cwnd 70, then back to W_max around K = cbrt(30 / 0.4) s.
#[test]
fn cubic_curve_returns_to_wmax_at_k() {
    let mut cc = Cubic::new();
    // Isolate the curve from the Reno-emulation floor.
    cc.tcp_friendliness = false;
    let mut tp = ca_flow(100);
    cc.init(&mut tp);
    tp.snd_ssthresh = 100;
    assert_eq!(loss(&mut cc, &mut tp), 70);
    assert_eq!(tp.snd_cwnd, 70);
    assert_eq!(cc.last_max_cwnd(), 100);

    let k = (100.0 * (1.0 - 717.0 / 1024.0) / 0.4f64).cbrt();
    let trace = run(&mut cc, &mut tp, 100_000, 9_000 * MS, true);
    assert_eq!(cc.delay_min_us(), 100_000);

    // The curve is point-symmetric about (K, W_max): the midpoint of the times it
    // crosses W_max - 10 and W_max + 10 estimates K.
    let t_lo = first_time_at_least(&trace, 90);
    let t_hi = first_time_at_least(&trace, 110);
    let k_est = (t_lo + t_hi) / 2.0;
    assert!(
        (k_est - k).abs() / k < 0.03,
        "K est {k_est:.3} s vs {k:.3} s"
    );
    // And each crossing sits where C (t - K)^3 = +-10 says it should.
    let d = (10.0 / 0.4f64).cbrt();
    assert!((t_lo - (k - d)).abs() < 0.25, "t_lo {t_lo}");
    assert!((t_hi - (k + d)).abs() < 0.25, "t_hi {t_hi}");
    // At K the window is on the plateau at W_max.
    let w_k = cwnd_at(&trace, k);
    assert!((99..=101).contains(&w_k), "cwnd at K = {w_k}");
    // Concave then convex: slower growth near the plateau than early on.
    let early = cwnd_at(&trace, 1.0) - 70;
    let plateau = cwnd_at(&trace, k + 0.5) - cwnd_at(&trace, k - 0.5);
    assert!(
        early >= 10 && plateau <= 2,
        "early {early}, plateau {plateau}"
    );
}

/// (2) Fast convergence: a loss below the previous W_max remembers a lower W_max.
#[test]
fn fast_convergence_lowers_wmax() {
    let mut cc = Cubic::new();
    let mut tp = ca_flow(100);
    cc.init(&mut tp);
    loss(&mut cc, &mut tp);
    assert_eq!(cc.last_max_cwnd(), 100);

    // Next loss at 80 < 100: W_max = 80 * (1 + 0.7) / 2 = 68, not 80.
    tp.snd_cwnd = 80;
    assert_eq!(loss(&mut cc, &mut tp), 56);
    assert_eq!(cc.last_max_cwnd(), 68);

    // The next epoch's curve is anchored at the lowered W_max.
    run(&mut cc, &mut tp, 100_000, 200 * MS, false);
    assert_eq!(cc.bic_origin_point, 68);
    assert_eq!(cc.bic_k, cubic_root(CUBE_FACTOR * 12));

    // A loss above the previous W_max keeps cwnd as W_max.
    tp.snd_cwnd = 90;
    loss(&mut cc, &mut tp);
    assert_eq!(cc.last_max_cwnd(), 90);

    // With fast convergence off, the loss point is kept as is.
    let mut cc = Cubic::new();
    cc.fast_convergence = false;
    let mut tp = ca_flow(100);
    loss(&mut cc, &mut tp);
    tp.snd_cwnd = 80;
    loss(&mut cc, &mut tp);
    assert_eq!(cc.last_max_cwnd(), 80);
}

/// (3) TCP-friendly region: at a small RTT the Reno emulation (AIMD with beta = 0.7 and
/// alpha = 3(1-beta)/(1+beta) ~ 0.53 per RTT) drives cwnd, far above the cubic curve.
#[test]
fn tcp_friendly_region_grows_like_reno_emulation() {
    let rtt_us = 2_000;
    let rounds = 500.0; // 1 s
    let grow = |friendly: bool| {
        let mut cc = Cubic::new();
        cc.tcp_friendliness = friendly;
        let mut tp = ca_flow(20);
        cc.init(&mut tp);
        loss(&mut cc, &mut tp);
        assert_eq!(tp.snd_cwnd, 14);
        run(&mut cc, &mut tp, rtt_us, 1_000 * MS, true);
        tp.snd_cwnd
    };
    let with = grow(true);
    let without = grow(false);

    // Pure cubic: K = cbrt(6 / 0.4) = 2.47 s, so after 1 s it is still below W_max = 20.
    assert!(without <= 20, "cubic-only cwnd {without}");
    // Reno emulation: 14 + 0.53 * 500 = 279; allow lag from cnt updates and rounding.
    let alpha = 3.0 * (1.0 - 717.0 / 1024.0) / (1.0 + 717.0 / 1024.0);
    let reno_est = 14.0 + alpha * rounds;
    assert!(
        with as f64 >= 0.9 * reno_est,
        "friendly cwnd {with} vs Reno estimate {reno_est}"
    );
    assert!(
        with as f64 <= 1.1 * reno_est,
        "friendly cwnd {with} vs Reno estimate {reno_est}"
    );

    // Over the same ACK stream, a real Reno flow restarting from the same window grows
    // by ~1 per RTT: CUBIC's emulated-Reno rate is about half of that, by design.
    let mut reno = Reno::new();
    let mut tp = ca_flow(14);
    run(&mut reno, &mut tp, rtt_us, 1_000 * MS, false);
    assert!(tp.snd_cwnd > with, "reno {} cubic {with}", tp.snd_cwnd);
}

/// Set up a slow-start flow for HyStart tests: cwnd fixed, one round of `cwnd` ACKs.
fn hystart_flow(cwnd: u32) -> (Cubic, TcpState) {
    let mut tp = TcpState::new(1448, cwnd);
    set_now(&mut tp, T0);
    tp.snd_nxt = cwnd as u64;
    let mut cc = Cubic::new();
    cc.init(&mut tp);
    (cc, tp)
}

/// Deliver `n` ACKs `spacing_us` apart, each with RTT `rtt_us`. New data is sent as each
/// ACK arrives, so snd_nxt stays cwnd ahead of snd_una.
fn acks(cc: &mut Cubic, tp: &mut TcpState, n: u32, spacing_us: u64, rtt_us: i64) {
    for _ in 0..n {
        let t = tp.now_ns + spacing_us * 1000;
        set_now(tp, t);
        tp.snd_una += 1;
        let s = AckSample {
            pkts_acked: 1,
            rtt_us,
            in_flight: tp.snd_cwnd,
        };
        cc.pkts_acked(tp, &s);
        tp.snd_nxt = tp.snd_una + tp.snd_cwnd as u64;
    }
}

/// (4) HyStart delay detection.
#[test]
fn hystart_delay_exits_slow_start() {
    // ACKs 5 ms apart: never an ACK train, so only the delay test can fire.
    let (mut cc, mut tp) = hystart_flow(20);
    // Round 1: base RTT 10 ms.
    acks(&mut cc, &mut tp, 20, 5000, 10_000);
    assert_eq!(cc.delay_min_us(), 10_000);
    assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    // Round 2: RTT 15 ms, above delay_min + clamp(10000/8, 4000, 16000) = 14 ms.
    // The first HYSTART_MIN_SAMPLES samples only count...
    acks(&mut cc, &mut tp, 8, 5000, 15_000);
    assert!(!cc.hystart_found());
    assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    // ...and the next one triggers.
    acks(&mut cc, &mut tp, 1, 5000, 15_000);
    assert!(cc.hystart_found());
    assert_eq!(tp.snd_ssthresh, 20);
    assert!(!tp.in_slow_start());
}

#[test]
fn hystart_delay_needs_rise_above_threshold() {
    // A rise of 3.9 ms stays under the 4 ms floor of the threshold.
    let (mut cc, mut tp) = hystart_flow(20);
    acks(&mut cc, &mut tp, 20, 5000, 10_000);
    acks(&mut cc, &mut tp, 40, 5000, 13_900);
    assert!(!cc.hystart_found());
    assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);

    // With a large base RTT the threshold is delay_min/8 (here 100 ms -> 12.5 ms).
    let (mut cc, mut tp) = hystart_flow(20);
    acks(&mut cc, &mut tp, 20, 5000, 100_000);
    acks(&mut cc, &mut tp, 40, 5000, 112_000);
    assert!(!cc.hystart_found());
    let (mut cc, mut tp) = hystart_flow(20);
    acks(&mut cc, &mut tp, 20, 5000, 100_000);
    acks(&mut cc, &mut tp, 40, 5000, 113_000);
    assert!(cc.hystart_found());
}

#[test]
fn hystart_inactive_below_low_window() {
    let (mut cc, mut tp) = hystart_flow(15);
    acks(&mut cc, &mut tp, 15, 5000, 10_000);
    acks(&mut cc, &mut tp, 60, 5000, 30_000);
    assert!(!cc.hystart_found());
    assert_eq!(tp.snd_ssthresh, crate::cc::TCP_INFINITE_SSTHRESH);
    // Rounds are still tracked below the low window (6.13+ behaviour): the round that
    // started at the last reset ends at snd_nxt then.
    assert!(cc.end_seq > 15);
}

#[test]
fn hystart_ack_train_exits_slow_start() {
    let (mut cc, mut tp) = hystart_flow(200);
    // Round 1 with spaced ACKs establishes delay_min = 10 ms.
    acks(&mut cc, &mut tp, 200, 5000, 10_000);
    assert!(!cc.hystart_found());
    // Round 2: a dense train (100 us apart) at constant RTT. Without pacing the
    // threshold is delay_min / 2 = 5 ms after the round start.
    // The first ACK of the round restarts it; the train must then last > 5000 us.
    acks(&mut cc, &mut tp, 51, 100, 10_000);
    assert!(!cc.hystart_found(), "fired too early");
    acks(&mut cc, &mut tp, 1, 100, 10_000);
    assert!(cc.hystart_found());
    assert_eq!(tp.snd_ssthresh, 200);

    // With fq pacing the threshold is the full delay_min (plus the GSO allowance).
    let (mut cc, mut tp) = hystart_flow(200);
    cc.fq_pacing = true;
    tp.pacing_rate = 1_000_000_000; // 65536*4 B at 1 GB/s = 262 us allowance
    acks(&mut cc, &mut tp, 200, 5000, 10_000);
    // Threshold 10262 us: the 104th ACK of the round (at +10300 us) is the first past it.
    acks(&mut cc, &mut tp, 103, 100, 10_000);
    assert!(!cc.hystart_found());
    acks(&mut cc, &mut tp, 1, 100, 10_000);
    assert!(cc.hystart_found());

    // A sender that paces every connection (`SO_MAX_PACING_RATE`: `SK_PACING_NEEDED`)
    // keeps the full threshold too.
    let (mut cc, mut tp) = hystart_flow(200);
    tp.paced = true;
    tp.pacing_rate = 1_000_000_000;
    acks(&mut cc, &mut tp, 200, 5000, 10_000);
    acks(&mut cc, &mut tp, 103, 100, 10_000);
    assert!(!cc.hystart_found(), "halved although paced");
    acks(&mut cc, &mut tp, 1, 100, 10_000);
    assert!(cc.hystart_found());
}

#[test]
fn ack_delay_allowance() {
    let cc = Cubic::new();
    let mut tp = TcpState::new(1448, 10);
    assert_eq!(cc.hystart_ack_delay(&tp), 0);
    tp.pacing_rate = 1_000_000_000;
    assert_eq!(cc.hystart_ack_delay(&tp), 262);
    tp.pacing_rate = 1_000_000; // slow: capped at 1 ms
    assert_eq!(cc.hystart_ack_delay(&tp), 1000);
}

#[test]
fn rto_resets_state_and_undo_is_reno() {
    let mut cc = Cubic::new();
    let mut tp = ca_flow(100);
    cc.init(&mut tp);
    loss(&mut cc, &mut tp);
    run(&mut cc, &mut tp, 100_000, 2_000 * MS, true);
    assert!(cc.epoch_start != 0 && cc.delay_min_us() > 0);
    cc.found = true;
    tp.snd_nxt = 5000;
    cc.set_state(&mut tp, CaState::Loss);
    assert_eq!(cc.last_max_cwnd(), 0);
    assert_eq!(cc.epoch_start, 0);
    assert_eq!(cc.delay_min_us(), 0);
    assert!(!cc.hystart_found());
    assert_eq!(cc.end_seq, 5000);
    // Other transitions leave state alone.
    cc.last_max_cwnd = 42;
    cc.set_state(&mut tp, CaState::Recovery);
    assert_eq!(cc.last_max_cwnd(), 42);
}

#[test]
fn tx_start_after_idle_shifts_epoch() {
    let mut cc = Cubic::new();
    let mut tp = ca_flow(100);
    cc.init(&mut tp);
    loss(&mut cc, &mut tp);
    run(&mut cc, &mut tp, 100_000, 500 * MS, false);
    let e0 = cc.epoch_start;
    assert_ne!(e0, 0);
    // Last send just now, then 300 ms of idle before the next transmission.
    tp.lsndtime_ns = tp.now_ns;
    let resume = tp.now_ns + 300 * MS;
    set_now(&mut tp, resume);
    cc.cwnd_event(&mut tp, CaEvent::TxStart);
    // 300 ms of jiffies (75 at HZ = 250).
    let idle = 300 * tp.hz / 1000;
    assert_eq!(cc.epoch_start, e0.wrapping_add(idle));
    // Other events do nothing.
    cc.cwnd_event(&mut tp, CaEvent::CompleteCwr);
    assert_eq!(cc.epoch_start, e0.wrapping_add(idle));
    // The shift never moves the epoch past now.
    let mut cc2 = cc.clone();
    cc2.epoch_start = jiffies32(tp.now_ns, tp.hz) - 5;
    tp.lsndtime_ns = tp.now_ns - 100 * MS;
    cc2.cwnd_event(&mut tp, CaEvent::TxStart);
    assert_eq!(cc2.epoch_start, jiffies32(tp.now_ns, tp.hz));
}

#[test]
fn no_growth_when_not_cwnd_limited_and_rtt_samples_gated() {
    let mut cc = Cubic::new();
    let mut tp = ca_flow(50);
    cc.init(&mut tp);
    tp.is_cwnd_limited = false;
    cc.cong_avoid(&mut tp, 0, 100);
    assert_eq!(tp.snd_cwnd, 50);
    // Within 1 s of an epoch start, RTT samples are ignored.
    tp.is_cwnd_limited = true;
    loss(&mut cc, &mut tp);
    cc.cong_avoid(&mut tp, 0, 1);
    assert_ne!(cc.epoch_start, 0);
    cc.pkts_acked(
        &mut tp,
        &AckSample {
            pkts_acked: 1,
            rtt_us: 5000,
            in_flight: 30,
        },
    );
    assert_eq!(cc.delay_min_us(), 0);
    let later = tp.now_ns + 1_001 * MS;
    set_now(&mut tp, later);
    cc.pkts_acked(
        &mut tp,
        &AckSample {
            pkts_acked: 1,
            rtt_us: 5000,
            in_flight: 30,
        },
    );
    assert_eq!(cc.delay_min_us(), 5000);
    // rtt -1: no sample; rtt 0 counts as 1 us.
    cc.pkts_acked(
        &mut tp,
        &AckSample {
            pkts_acked: 1,
            rtt_us: -1,
            in_flight: 30,
        },
    );
    assert_eq!(cc.delay_min_us(), 5000);
    cc.pkts_acked(
        &mut tp,
        &AckSample {
            pkts_acked: 1,
            rtt_us: 0,
            in_flight: 30,
        },
    );
    assert_eq!(cc.delay_min_us(), 1);
}

#[test]
fn slow_start_before_first_loss_then_5_percent_floor() {
    // Without HyStart firing (spaced ACKs, constant RTT) slow start doubles per RTT;
    // past ssthresh with no W_max yet, cnt is capped at 20 (>= 5% per RTT).
    let mut cc = Cubic::new();
    let mut tp = TcpState::new(1448, 10);
    set_now(&mut tp, T0);
    tp.snd_ssthresh = 40;
    tp.is_cwnd_limited = true;
    cc.init(&mut tp);
    run(&mut cc, &mut tp, 100_000, 200 * MS, false);
    assert!(tp.snd_cwnd >= 40);
    let w = tp.snd_cwnd;
    run(&mut cc, &mut tp, 100_000, 1_000 * MS, false);
    // 10 RTTs at >= 5% each.
    assert!(
        tp.snd_cwnd as f64 >= w as f64 * 1.05f64.powi(9),
        "{w} -> {}",
        tp.snd_cwnd
    );
}
