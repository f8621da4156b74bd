//! Unit tests of TCP Prague: the controller alone, its ACKs made by hand.

use super::*;

/// A connection out of slow start at `cwnd`, with `srtt_ms` of smoothed RTT, ECN on, and a
/// full window (`cwnd` segments) in flight.
fn conn(cwnd: u32, srtt_ms: u32) -> TcpState {
    let mut tp = TcpState::new(1448, cwnd);
    tp.ecn_ok = true;
    tp.snd_ssthresh = cwnd;
    tp.srtt_us = srtt_ms * 1000;
    tp.is_cwnd_limited = true;
    tp.now_us = 1;
    tp.snd_nxt = cwnd as u64;
    tp.packets_out = cwnd;
    tp
}

fn prague(p: PragueParams, tp: &mut TcpState) -> Prague {
    let mut c = Prague::new(p);
    c.init(tp);
    c
}

/// One ACK of `acked` segments, `marked` of them CE, `dt_us` after the previous one; the
/// sender keeps `inflight` segments out.
fn ack(c: &mut Prague, tp: &mut TcpState, acked: u32, marked: u32, dt_us: u64, inflight: u32) {
    tp.now_us += dt_us;
    tp.snd_una += acked as u64;
    tp.delivered += acked as u64;
    tp.delivered_ce += marked as u64;
    tp.snd_nxt = tp.snd_una + inflight as u64;
    tp.packets_out = inflight;
    let rs = RateSample {
        acked_sacked: acked,
        ..RateSample::default()
    };
    assert!(c.cong_control(tp, &rs));
}

/// A round of 100 segments in 50 ACKs of two over `rtt_us`, the first `marked` CE.
fn round(c: &mut Prague, tp: &mut TcpState, marked: u32, rtt_us: u64) {
    for i in 0..50 {
        let m = marked.saturating_sub(2 * i).min(2);
        ack(c, tp, 2, m, rtt_us / 50, 100);
    }
}

#[test]
fn alpha_is_an_ewma_of_the_marked_fraction_once_per_round() {
    let mut tp = conn(100, 40);
    tp.snd_nxt = 100;
    let mut c = prague(PragueParams::default(), &mut tp);
    assert_eq!(c.alpha(), 0, "alpha_mode 0: alpha starts at 0");
    // No marks yet: alpha is not touched (no proof of an AQM on the path).
    round(&mut c, &mut tp, 0, 40_000);
    assert_eq!(c.upscaled_alpha, 0);
    // 24 of 100 marked: alpha = 24% x g. Stored x16 in 2^-24: 24 x 2^24 / 100.
    round(&mut c, &mut tp, 24, 40_000);
    assert_eq!(c.upscaled_alpha, 4_026_531);
    assert_eq!(c.alpha(), 251_658, "0.24 / 16 = 0.015 of 2^24");
    // Mid-round ACKs leave it alone.
    ack(&mut c, &mut tp, 2, 2, 800, 100);
    assert_eq!(c.upscaled_alpha, 4_026_531);
    // The rest of that round (49 ACKs, 98 segments) unmarked: 2 of 100 marked.
    for _ in 0..49 {
        ack(&mut c, &mut tp, 2, 0, 800, 100);
    }
    let a = 4_026_531u64;
    let a = a - (a >> 4) + (2 << 24) / 100;
    assert_eq!(c.upscaled_alpha, a);
    // A fully marked round: alpha += (1 - alpha) / 16.
    round(&mut c, &mut tp, 100, 40_000);
    let a = a - (a >> 4) + (1 << 24);
    assert_eq!(c.upscaled_alpha, a);
    // Many fully marked rounds: alpha tends to 1 (x16) and stops there.
    for _ in 0..200 {
        round(&mut c, &mut tp, 100, 40_000);
    }
    assert!(c.upscaled_alpha <= MAX_ALPHA << SHIFT_G);
    assert!(c.alpha() > MAX_ALPHA * 99 / 100, "{}", c.alpha());
}

#[test]
fn a_ce_reduction_takes_alpha_over_two_of_the_window_once_per_target_interval() {
    let mut tp = conn(100, 40);
    let mut c = prague(PragueParams::default(), &mut tp);
    c.saw_ce = true;
    c.upscaled_alpha = (MAX_ALPHA / 4) << SHIFT_G; // alpha = 1/4
    c.set_state(&mut tp, CaState::Cwr);
    tp.ca_state = CaState::Cwr;
    assert_eq!(
        c.frac_cwnd(),
        87 * ONE_CWND + ONE_CWND / 2,
        "100 x (1 - 1/8)"
    );
    // cwnd follows one packet per ACK, rounded up, and leaves slow start as it goes.
    for _ in 0..20 {
        ack(&mut c, &mut tp, 1, 1, 100, 100);
    }
    assert_eq!(tp.snd_cwnd, 88);
    assert_eq!(tp.snd_ssthresh, 88);
    // Before RTT independence (round < 4) every CWR entry reduces: the sender's CWR state
    // makes that once per round.
    c.set_state(&mut tp, CaState::Open);
    tp.ca_state = CaState::Open;
    let before = c.frac_cwnd();
    c.set_state(&mut tp, CaState::Cwr);
    tp.ca_state = CaState::Cwr;
    assert!(c.frac_cwnd() < before);
    // Once RTT-independent, a second CWR within the 25 ms target does nothing...
    c.round = 4;
    tp.now_us += 30_000;
    c.set_state(&mut tp, CaState::Open);
    tp.ca_state = CaState::Open;
    c.set_state(&mut tp, CaState::Cwr);
    tp.ca_state = CaState::Cwr;
    let after_first = c.frac_cwnd();
    c.set_state(&mut tp, CaState::Open);
    tp.ca_state = CaState::Open;
    tp.now_us += 10_000;
    c.set_state(&mut tp, CaState::Cwr);
    tp.ca_state = CaState::Cwr;
    assert_eq!(c.frac_cwnd(), after_first, "10 ms after the last cut");
    // ...and one after it does.
    c.set_state(&mut tp, CaState::Open);
    tp.ca_state = CaState::Open;
    tp.now_us += 20_000;
    c.set_state(&mut tp, CaState::Cwr);
    assert!(c.frac_cwnd() < after_first);
}

#[test]
fn the_first_mark_halves_the_window_and_marked_segments_do_not_grow_it() {
    let mut tp = conn(100, 40);
    let mut c = prague(PragueParams::default(), &mut tp);
    ack(&mut c, &mut tp, 2, 2, 400, 100);
    assert!(c.saw_ce);
    assert_eq!(
        c.frac_cwnd(),
        50 * ONE_CWND,
        "alpha is 0, so the first mark halves"
    );
    // A fully marked ACK adds nothing; a half-marked one adds for one segment.
    let f = c.frac_cwnd();
    ack(&mut c, &mut tp, 2, 2, 400, 100);
    assert_eq!(c.frac_cwnd(), f);
    ack(&mut c, &mut tp, 2, 1, 400, 100);
    let one = ONE_CWND * ONE_CWND / f; // one segment's 1/cwnd
    assert!(c.frac_cwnd() - f == one || c.frac_cwnd() - f == one + 1);
    // alpha_mode 1: alpha starts at 1 and the first mark changes nothing by itself.
    let mut tp = conn(100, 40);
    let p = PragueParams {
        alpha_mode: 1,
        ..PragueParams::default()
    };
    let mut c = prague(p, &mut tp);
    assert_eq!(c.alpha(), MAX_ALPHA);
    ack(&mut c, &mut tp, 2, 2, 400, 100);
    assert_eq!(c.frac_cwnd(), 100 * ONE_CWND);
}

#[test]
fn without_marks_the_window_grows_one_packet_per_round_or_less_below_the_target_rtt() {
    // 40 ms is above the 25 ms target: one packet per round.
    let mut tp = conn(100, 40);
    tp.snd_nxt = 100;
    let mut c = prague(PragueParams::default(), &mut tp);
    let f0 = c.frac_cwnd();
    round(&mut c, &mut tp, 0, 40_000);
    let grown = (c.frac_cwnd() - f0) as f64 / ONE_CWND as f64;
    assert!((0.99..=1.0).contains(&grown), "{grown} packets");
    assert_eq!(tp.snd_cwnd, 101);
    // 10 ms, after the transition rounds: (10 / 25)^2 = 0.16 packets per round, so that
    // the rate grows as fast as a 25 ms flow's.
    let mut tp = conn(100, 10);
    tp.snd_nxt = 100;
    let mut c = prague(PragueParams::default(), &mut tp);
    for _ in 0..4 {
        round(&mut c, &mut tp, 0, 10_000);
    }
    assert!(c.round() >= 4);
    assert_eq!(c.ai_ack_increase(), ONE_CWND * 16 / 100);
    // 100 segments acknowledged per round, each adding 0.16 / cwnd.
    let f0 = c.frac_cwnd();
    round(&mut c, &mut tp, 0, 10_000);
    let grown = (c.frac_cwnd() - f0) as f64 / ONE_CWND as f64;
    let expect = 0.16 * 100.0 * ONE_CWND as f64 / f0 as f64;
    assert!(
        (grown - expect).abs() < 0.002,
        "{grown} packets, {expect} expected"
    );
    // rtt_target = 0 turns that off: a packet per round at 10 ms too.
    let mut tp = conn(100, 10);
    tp.snd_nxt = 100;
    let p = PragueParams {
        rtt_target_us: 0,
        ..PragueParams::default()
    };
    let mut c = prague(p, &mut tp);
    for _ in 0..5 {
        round(&mut c, &mut tp, 0, 10_000);
    }
    assert_eq!(c.ai_ack_increase(), ONE_CWND);
    assert!(tp.snd_cwnd >= 104, "{}", tp.snd_cwnd);
}

#[test]
fn slow_start_keeps_the_fractional_window_in_step() {
    let mut tp = conn(10, 20);
    tp.snd_ssthresh = crate::cc::TCP_INFINITE_SSTHRESH;
    let mut c = prague(PragueParams::default(), &mut tp);
    for _ in 0..5 {
        ack(&mut c, &mut tp, 2, 0, 100, 10);
    }
    assert_eq!(tp.snd_cwnd, 20);
    assert_eq!(c.frac_cwnd(), 20 * ONE_CWND);
    assert_eq!(c.round(), 0, "rounds count from the end of slow start");
}

#[test]
fn loss_halves_and_holds_the_window_until_open_and_undo_restores_it() {
    let mut tp = conn(100, 40);
    let mut c = prague(PragueParams::default(), &mut tp);
    assert_eq!(c.ssthresh(&tp), 100, "ssthresh is left alone");
    c.set_state(&mut tp, CaState::Recovery);
    tp.ca_state = CaState::Recovery;
    assert_eq!(c.frac_cwnd(), 50 * ONE_CWND);
    let f = c.frac_cwnd();
    for _ in 0..60 {
        ack(&mut c, &mut tp, 1, 0, 100, 100);
    }
    assert_eq!(c.frac_cwnd(), f, "no growth in recovery");
    assert_eq!(tp.snd_cwnd, 50);
    c.set_state(&mut tp, CaState::Open);
    tp.ca_state = CaState::Open;
    ack(&mut c, &mut tp, 1, 0, 100, 100);
    assert!(c.frac_cwnd() > f);
    // An RTO halves too; undo goes back to the window before it.
    let cwnd = tp.snd_cwnd;
    c.cwnd_event(&mut tp, CaEvent::Loss);
    tp.snd_cwnd = 1;
    assert!(c.frac_cwnd() < f);
    assert_eq!(c.undo_cwnd(&mut tp), cwnd);
    assert!(!c.in_loss);
}

#[test]
fn it_paces_at_one_window_per_srtt_in_short_bursts() {
    let mut tp = conn(100, 20);
    let mut c = prague(PragueParams::default(), &mut tp);
    ack(&mut c, &mut tp, 1, 0, 100, 100);
    // 100 packets of 1500 bytes per 20 ms (the increase so far is below a packet).
    assert_eq!(tp.pacing_rate, 1500 * 100 * 1000 / 20);
    // 7.5 MB/s is 5000 packets/s: 2^-12 s of it is 1 packet.
    assert_eq!(c.tso_segs(&tp), Some(1));
    // Early slow start (cwnd below half of ssthresh): twice that.
    let mut tp = conn(10, 20);
    tp.snd_ssthresh = 1000;
    let mut c = prague(PragueParams::default(), &mut tp);
    ack(&mut c, &mut tp, 1, 0, 100, 10);
    assert_eq!(tp.pacing_rate, 2 * 1500 * 11 * 1000 / 20);
    assert!(c.needs_pacing());
}

#[test]
fn small_marked_windows_switch_to_the_rate_based_mode() {
    let mut tp = conn(8, 1);
    let mut c = prague(PragueParams::default(), &mut tp);
    assert_eq!(c.mode_name(), "prague");
    // The first mark halves 8 to 4 packets: at cwnd_transit, so rate-based.
    for _ in 0..6 {
        ack(&mut c, &mut tp, 1, 1, 100, 4);
    }
    assert_eq!(tp.snd_cwnd, 4);
    assert!(c.rate_mode());
    assert_eq!(c.mode_name(), "prague-rate");
    // cwnd_mode 0 never switches.
    let mut tp = conn(8, 1);
    let p = PragueParams {
        cwnd_mode: 0,
        ..PragueParams::default()
    };
    let mut c = prague(p, &mut tp);
    for _ in 0..6 {
        ack(&mut c, &mut tp, 1, 1, 100, 4);
    }
    assert!(!c.rate_mode());
}

#[test]
fn without_ecn_it_is_reno_and_sends_no_ect1() {
    let mut tp = TcpState::new(1448, 100);
    let mut c = Prague::new(PragueParams::default());
    c.init(&mut tp);
    assert_eq!(c.mode_name(), "prague-reno");
    assert_eq!(c.ssthresh(&tp), 50);
    assert!(!c.cong_control(&mut tp, &RateSample::default()));
    assert!(!c.ect1());
    let mut tp = conn(10, 10);
    let c = prague(PragueParams::default(), &mut tp);
    assert!(c.ect1() && c.needs_ecn() && c.needs_accecn() && !c.wants_ce_events());
}

#[test]
fn registered_with_linux_defaults() {
    let p = crate::cc::by_name("tcp_prague").expect("alias");
    assert_eq!(p.name(), "prague");
    assert_eq!(p.int("rtt_target"), 25_000);
    assert_eq!(p.int("rtt_transition"), 4);
    assert_eq!(p.int("cwnd_mode"), 2);
    assert_eq!(p.int("burst_shift"), 12);
}
