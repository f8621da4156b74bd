//! Reordering on the simulator: a path whose jitter reorders data packets, as the
//! `c15-jitter` calibration point (50 Mbit/s, 20 ms, 1 BDP, up to 2 ms of extra delay per
//! packet). Linux learns from the first holes that fill without a retransmission that the
//! path reorders (`tcp_check_sack_reordering()`), after which RACK keeps a reordering window
//! of min_rtt/4 (5 ms, more than the jitter) and reordered segments stop looking lost; a
//! recovery the reordering caused before that is undone once D-SACKs show every
//! retransmission of it was unneeded. The kernel keeps CUBIC at the link rate there.

mod common;
use cclab_core::sender::SenderStats;
use cclab_results::RunResult;
use cclab_sim::{SimConfig, Simulation};
use common::{share, MS, S};

const RATE: f64 = 50e6;

fn jitter_path(cc: &str, reorder: bool, seed: u64) -> SimConfig {
    let mut cfg = SimConfig::single(cc, RATE, 20 * MS, 1.0, 0.0, 20 * S);
    cfg.link.jitter_ns = 2 * MS;
    cfg.link.reorder = reorder;
    cfg.seed = seed;
    cfg
}

fn run_with_stats(cfg: SimConfig) -> (RunResult, SenderStats) {
    let mut sim = Simulation::new(cfg);
    sim.run_to_end();
    let stats = sim.sender_stats()[0].clone();
    (sim.into_result(), stats)
}

#[test]
fn cubic_learns_the_reordering_and_fills_the_link() {
    for seed in 1..=5 {
        let (r, st) = run_with_stats(jitter_path("cubic", true, seed));
        let f = &r.flows[0];
        assert!(st.reord_seen > 0, "seed {seed}");
        let util = share(f.goodput_bps, RATE);
        assert!(
            util >= 0.97,
            "seed {seed}: goodput {:.1} Mbit/s = {util:.3} of the link",
            f.goodput_bps / 1e6
        );
        // Retransmissions are for the buffer's drops, give or take a few reordered
        // segments before the reordering was learnt (the simulator once retransmitted 2%).
        assert!(
            f.retrans_ratio < 0.005,
            "seed {seed}: {} retransmissions for {} drops",
            f.retransmits,
            r.link.drops_buffer
        );
    }
}

/// Seed 3's first out-of-order segments come in the first round trip, three SACKed above a
/// hole before any reordering was seen, and RACK (its window then closed) starts a recovery
/// that would leave CUBIC with a window of 7 segments; the D-SACKs for the retransmissions
/// undo it (`tcp_try_undo_dsack()`), as they do in Linux.
#[test]
fn a_recovery_before_reordering_is_learnt_is_undone() {
    let (r, st) = run_with_stats(jitter_path("cubic", true, 3));
    assert!(st.undos >= 1, "{st:?}");
    let util = share(r.flows[0].goodput_bps, RATE);
    assert!(util >= 0.97, "{util:.3} of the link");
}

#[test]
fn bbr_keeps_its_rate_on_a_reordering_path() {
    for seed in 1..=3 {
        let (r, st) = run_with_stats(jitter_path("bbr", true, seed));
        let f = &r.flows[0];
        assert!(st.reord_seen > 0, "seed {seed}");
        let util = share(f.goodput_bps, RATE);
        assert!(util >= 0.95, "seed {seed}: {util:.3} of the link");
        // BBR overflows a 1-BDP buffer now and then; few retransmissions beyond its drops
        // (the simulator once retransmitted 6% of its segments, reordered ones taken for lost).
        assert!(
            (f.retransmits as f64) < 1.3 * r.link.drops_buffer as f64,
            "seed {seed}: {} retransmissions for {} drops",
            f.retransmits,
            r.link.drops_buffer
        );
    }
}

/// The same jitter without reordering (each packet waits behind the one before it) shows no
/// reordering to the sender.
#[test]
fn jitter_that_keeps_the_order_is_not_reordering() {
    let (_, st) = run_with_stats(jitter_path("cubic", false, 1));
    assert_eq!(
        (st.reord_seen, st.dsack_dups, st.undos),
        (0, 0, 0),
        "{st:?}"
    );
}
