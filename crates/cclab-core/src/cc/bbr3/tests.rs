//! Unit tests of the constants, the fixed-point arithmetic, the hooks and the registry entry;
//! each phase's own tests are in its file.

use super::control::bw_bytes_per_sec;
use super::harness::*;
use super::*;

#[test]
fn constants_are_the_kernels() {
    assert_eq!(STARTUP_PACING_GAIN, 710);
    assert_eq!(STARTUP_CWND_GAIN, 512);
    assert_eq!(DRAIN_GAIN, 88);
    assert_eq!(CWND_GAIN, 512);
    assert_eq!(PACING_GAIN, [320, 232, 256, 256]);
    assert_eq!(BETA, 76);
    assert_eq!(BBR_UNIT - BETA, 180); // the cut "to 0.7" is 180/256 = 0.703
    assert_eq!(LOSS_THRESH, 5);
    assert_eq!(ECN_THRESH, 128);
    assert_eq!(ECN_FACTOR, 85);
    assert_eq!(ECN_ALPHA_GAIN, 16);
    assert_eq!(INFLIGHT_HEADROOM, 38);
    assert_eq!(PROBE_RTT_CWND_GAIN, 128);
}

#[test]
fn pacing_rate_fixed_point() {
    let mut tp = TcpState::new(1500, 10);
    // 1 packet per ms = 16777 in pkts/us << 24.
    let bw = ((1u64 << 24) / 1000) as u32;
    // 16777 * 1500 = 25_165_500; gain 1.0; * 990_000 >> 24 = 1_484_980.
    assert_eq!(bw_to_pacing_rate(&tp, bw, BBR_UNIT), 1_484_980);
    // Gain 5/4: 31_456_875 * 990_000 >> 24 = 1_856_226.
    assert_eq!(bw_to_pacing_rate(&tp, bw, 320), 1_856_226);
    // STARTUP 710: 25_165_500 * 710 >> 8 = 69_794_941; * 990_000 >> 24 = 4_118_501.
    assert_eq!(bw_to_pacing_rate(&tp, bw, STARTUP_PACING_GAIN), 4_118_501);
    // DOWN 232: 22_806_234; * 990_000 >> 24 = 1_345_763.
    assert_eq!(bw_to_pacing_rate(&tp, bw, 232), 1_345_763);
    // Without margin (inet_diag's bw): 25_165_500 * 1_000_000 >> 24 = 1_499_980.
    assert_eq!(bw_bytes_per_sec(&tp, bw), 1_499_980);
    // Never 0, and capped.
    assert_eq!(bw_to_pacing_rate(&tp, 0, BBR_UNIT), 1);
    tp.max_pacing_rate = 1_000_000;
    assert_eq!(bw_to_pacing_rate(&tp, bw, BBR_UNIT), 1_000_000);

    // Initial: cwnd 10 over 1 ms: bw 167_772; * 1500 * 710 >> 8 = 697_957_734;
    // * 990_000 >> 24 = 41_185_507.
    let mut tp = TcpState::new(1500, 10);
    let mut cc = Bbr3::new(1, false);
    cc.init(&mut tp);
    assert_eq!(tp.pacing_rate, 41_185_507);
}

#[test]
fn bw_sample_rounds_up() {
    let rs = RateSample {
        delivered: 10,
        interval_us: 3,
        ..RateSample::default()
    };
    // 10 * 2^24 / 3 = 55_924_053.33 -> 55_924_054.
    assert_eq!(bw_sample(&rs), 55_924_054);
    let bad = RateSample {
        delivered: 10,
        interval_us: -1,
        ..RateSample::default()
    };
    assert_eq!(bw_sample(&bad), 0);
}

#[test]
fn bdp_rounds_up_and_budget() {
    let mut tp = TcpState::new(MSS, 10);
    let mut cc = Bbr3::new(0, false);
    cc.init(&mut tp);
    // Before any RTT: the initial cwnd.
    assert_eq!(cc.bdp(123_456, BBR_UNIT), 10);
    cc.min_rtt_us = 20_000;
    // 2^24/100 = 167_772 (truncated) for 20 ms is 199.9995 packets: rounds up to 200.
    let bw = ((1u64 << 24) / 100) as u32;
    assert_eq!(cc.bdp(bw, BBR_UNIT), 200);
    assert_eq!(cc.bdp(bw, CWND_GAIN), 400);
    assert_eq!(cc.bdp(bw, PROBE_RTT_CWND_GAIN), 100);
    // One unit above an exact multiple still adds a packet.
    cc.min_rtt_us = 1;
    assert_eq!(cc.bdp(1 << 24, BBR_UNIT), 1);
    assert_eq!(cc.bdp((1 << 24) + 1, BBR_UNIT), 2);

    // TSO goal: pacing_rate >> 10 plus 64 KB >> (min_rtt >> 9), over mss, at least 2.
    cc.min_rtt_us = 20_000; // r = 39: no RTT allowance
    tp.pacing_rate = 14_480_000; // 14_140 bytes -> 9 segments
    assert_eq!(cc.tso_segs_goal(&tp), 9);
    cc.min_rtt_us = 1_000; // r = 1: + 32_768 bytes -> 46_908 / 1448 = 32
    assert_eq!(cc.tso_segs_goal(&tp), 32);
    tp.pacing_rate = 10_000_000_000; // capped at 65_535 - 320 = 65_215 bytes: 45
    assert_eq!(cc.tso_segs_goal(&tp), 45);
    tp.pacing_rate = 1000;
    cc.min_rtt_us = 100_000;
    assert_eq!(cc.tso_segs_goal(&tp), 2);
    assert_eq!(cc.tso_segs(&tp), Some(2));

    // Budget: max(cwnd, 3 * tso, 4), + 2 in PROBE_BW UP only.
    tp.pacing_rate = 14_480_000;
    cc.min_rtt_us = 20_000;
    assert_eq!(cc.quantization_budget(&tp, 400), 400);
    assert_eq!(cc.quantization_budget(&tp, 10), 27);
    cc.mode = Mode::ProbeBw;
    cc.cycle_idx = Phase::Up;
    assert_eq!(cc.quantization_budget(&tp, 400), 402);
    cc.cycle_idx = Phase::Cruise;
    assert_eq!(cc.quantization_budget(&tp, 400), 400);
}

#[test]
fn mode_names_and_hooks() {
    let mut cc = Bbr3::new(0, false);
    let mut tp = TcpState::new(MSS, 10);
    cc.init(&mut tp);
    assert_eq!(cc.name(), "bbr3");
    assert!(cc.needs_pacing());
    assert!(!cc.needs_ecn());
    assert!(!cc.wants_ce_events());
    assert!(Bbr3::new(0, true).wants_ce_events());
    assert_eq!(cc.sndbuf_expand(), 3);
    assert_eq!(cc.mode_name(), "STARTUP");
    cc.mode = Mode::ProbeBw;
    for (p, n) in [
        (Phase::Up, "PROBE_BW_UP"),
        (Phase::Down, "PROBE_BW_DOWN"),
        (Phase::Cruise, "PROBE_BW_CRUISE"),
        (Phase::Refill, "PROBE_BW_REFILL"),
    ] {
        cc.cycle_idx = p;
        assert_eq!(cc.mode_name(), n);
    }
    cc.mode = Mode::ProbeRtt;
    assert_eq!(cc.mode_name(), "PROBE_RTT");
    cc.mode = Mode::Drain;
    assert_eq!(cc.mode_name(), "DRAIN");
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    assert!(cc.cong_control(&mut tp, &RateSample::default()));
}

#[test]
fn registry_entry() {
    let c = crate::cc::by_name("bbrv3").expect("registered");
    assert_eq!(c.name(), "bbr3");
    assert_eq!(
        CONTROLLER.param("ecn_low").unwrap().default,
        ParamValue::Bool(false)
    );
    let on = CONTROLLER
        .resolve([("ecn_low", ParamValue::Bool(true))])
        .unwrap();
    assert!((CONTROLLER.build)(&on, 1).wants_ce_events());
    assert!(!(CONTROLLER.build)(&CONTROLLER.defaults(), 1).wants_ce_events());
}

#[test]
fn rto_saves_and_restores_cwnd_and_seeds_inflight_lo() {
    let mut path = Path::new(4, 10, 20);
    path.run_until(3_000_000_000);
    let mut tp = path.tp.clone();
    let mut cc = path.cc.clone();
    assert_eq!(cc.mode, Mode::ProbeBw);
    cc.cycle_idx = Phase::Cruise;
    cc.inflight_lo = u32::MAX;
    cc.bw_lo = 12345;
    let cwnd = tp.snd_cwnd;
    // Linux order: ssthresh (saves), cwnd cut to inflight + 1, then set_state(Loss).
    assert_eq!(cc.ssthresh(&tp), tp.snd_ssthresh);
    assert_eq!(cc.prior_cwnd, cwnd);
    assert_eq!(cc.undo_bw_lo, 12345);
    tp.set_cwnd(1);
    cc.set_state(&mut tp, CaState::Loss);
    tp.ca_state = CaState::Loss;
    assert_eq!(cc.prev_ca_state, CaState::Loss);
    assert_eq!(cc.full_bw, 0);
    assert!(!cc.full_bw_now);
    assert_eq!(cc.inflight_lo, cwnd, "max(cwnd after RTO, saved cwnd)");
    // Leaving Loss restores the saved cwnd.
    cc.set_state(&mut tp, CaState::Open);
    assert_eq!(tp.snd_cwnd, cwnd);
    assert!(!cc.try_fast_path);

    // While probing, the RTO does not seed inflight_lo.
    let mut cc = path.cc.clone();
    cc.cycle_idx = Phase::Up;
    cc.inflight_lo = u32::MAX;
    cc.set_state(&mut tp, CaState::Loss);
    assert_eq!(cc.inflight_lo, u32::MAX);
}

#[test]
fn undo_restores_saved_bounds() {
    let mut tp = TcpState::new(MSS, 10);
    let mut cc = Bbr3::new(0, false);
    cc.init(&mut tp);
    cc.bw_lo = 1000;
    cc.inflight_lo = 100;
    cc.inflight_hi = 200;
    tp.snd_cwnd = 150;
    cc.ssthresh(&tp);
    cc.bw_lo = 700;
    cc.inflight_lo = 70;
    cc.inflight_hi = 150;
    cc.loss_in_round = true;
    assert_eq!(cc.undo_cwnd(&mut tp), 150);
    assert_eq!((cc.bw_lo, cc.inflight_lo, cc.inflight_hi), (1000, 100, 200));
    assert!(!cc.loss_in_round);
}

#[test]
fn fast_path_skips_app_limited_samples_that_change_nothing() {
    let mut path = Path::new(2, 10, 20);
    path.run_until(3_000_000_000);
    let mut tp = path.tp.clone();
    let mut cc = path.cc.clone();
    assert_eq!(cc.mode, Mode::ProbeBw);
    cc.try_fast_path = true;
    cc.loss_in_round = false;
    cc.ecn_in_round = false;
    cc.cycle_idx = Phase::Cruise;
    cc.cycle_mstamp = tp.now_us;
    cc.rounds_since_probe = 0;
    let before = cc.clone();
    // A small app-limited sample, not a round end: nothing changes, cwnd untouched even
    // though it is off target.
    tp.snd_cwnd += 50;
    let cwnd = tp.snd_cwnd;
    let rs = RateSample {
        prior_delivered: cc.next_rtt_delivered - 1,
        delivered: 1,
        interval_us: 30_000,
        acked_sacked: 1,
        rtt_us: 25_000,
        is_app_limited: true,
        ..RateSample::default()
    };
    cc.cong_control(&mut tp, &rs);
    assert_eq!(tp.snd_cwnd, cwnd, "fast path leaves cwnd alone");
    assert_eq!(cc.bw_hi, before.bw_hi);
    // The same sample without the app-limited flag takes the slow path: cwnd snaps back.
    let mut cc = before.clone();
    let rs = RateSample {
        is_app_limited: false,
        ..rs
    };
    cc.cong_control(&mut tp, &rs);
    assert!(tp.snd_cwnd < cwnd);
}

#[test]
fn info_reports_bounds_and_phase() {
    let mut tp = TcpState::new(1500, 10);
    let mut cc = Bbr3::new(0, false);
    cc.init(&mut tp);
    let bw = ((1u64 << 24) / 1000) as u32; // 1 packet per ms
    cc.bw_hi = [bw, 0];
    cc.min_rtt_us = 10_000;
    cc.mode = Mode::ProbeBw;
    cc.cycle_idx = Phase::Refill;
    let i = cc.info(&tp);
    assert_eq!(i.bw_bytes_per_sec, 1_499_980);
    assert_eq!(i.bw_hi_bytes_per_sec, 1_499_980);
    assert_eq!(i.bw_lo_bytes_per_sec, u64::MAX, "unset");
    assert_eq!((i.inflight_lo, i.inflight_hi), (u32::MAX, u32::MAX));
    assert_eq!(i.phase, "PROBE_BW_REFILL");
    assert_eq!(i.min_rtt_us, 10_000);
    cc.bw_lo = bw / 2;
    cc.inflight_hi = 80;
    let i = cc.info(&tp);
    assert_eq!(i.bw_bytes_per_sec, i.bw_lo_bytes_per_sec);
    assert!(i.bw_bytes_per_sec < i.bw_hi_bytes_per_sec);
    assert_eq!(i.inflight_hi, 80);
}

#[test]
fn jump_start_fills_the_pipe() {
    let mut tp = TcpState::new(MSS, 10);
    let mut cc = Bbr3::new(0, false);
    cc.init(&mut tp);
    cc.min_rtt_us = 20_000;
    // 1448 * 10_000 bytes/s = 10 pkt/ms.
    cc.jump_start(&mut tp, 14_480_000, 20_000);
    assert!(cc.full_bw_reached);
    assert_eq!(cc.max_bw(), ((10u128 << 24) / 1000) as u32);
    assert_eq!(tp.snd_cwnd, cc.inflight(&tp, cc.max_bw(), CWND_GAIN));
    assert!(tp.snd_cwnd >= 400);
}
