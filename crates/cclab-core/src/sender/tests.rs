//! Unit tests of the sender: the send buffer and its writer, TSO bursts and deferral,
//! pacing, timers in jiffies, ECN, reordering, D-SACK undo.

use super::output::TSO_DEFER_NS;
use super::*;
use crate::cc::CaState;
use crate::host;
use crate::packet::Ack;
use crate::packet::{Ecn, SackBlock, MAX_SACK_BLOCKS};
use crate::{NS_PER_MS, NS_PER_SEC};

const US: Nanos = 1_000;

fn sender(tso: bool, pacing: Option<bool>) -> Sender {
    let cfg = SenderConfig {
        tso,
        pacing,
        ..SenderConfig::default()
    };
    Sender::new(cfg, crate::cc::by_name("reno").unwrap().build(1))
}

fn ack(cum: u64) -> Ack {
    Ack {
        cum,
        sack: [SackBlock::default(); MAX_SACK_BLOCKS],
        n_sack: 0,
        delayed: false,
        dsack: None,
        wnd: 1 << 30,
        tsval: 0,
        ece: false,
        accecn: None,
    }
}

fn drain(s: &mut Sender, now: Nanos) -> Vec<Segment> {
    std::iter::from_fn(|| s.poll_transmit(now)).collect()
}

/// A sender with a 100 kB send buffer (69 segments) and an initial window of 200.
fn small_buffer(pacing: Option<bool>) -> Sender {
    let cfg = SenderConfig {
        init_cwnd: 200,
        pacing,
        host: HostTcp {
            tcp_wmem: [4096, 16384, 100_000],
            ..HostTcp::default()
        },
        peer_init_wnd: 10 << 20,
        ..SenderConfig::default()
    };
    Sender::new(cfg, crate::cc::by_name("reno").unwrap().build(1))
}

/// `tcp_sendmsg_locked()`: the writer checks the send buffer only when it starts a
/// buffer. Before any RTT sample there is no pacing rate, a TSO burst is 64 KB and takes
/// a whole buffer, so the writer stops one buffer past `sk_sndbuf`. Once the pacing rate
/// makes bursts smaller than a buffer, a writer woken with cwnd to spare refills the tail
/// the sender is sending in pieces, past the buffer, until cwnd is full, and leaves one
/// full buffer unsent; a paced sender sends one burst and stops.
#[test]
fn a_writer_with_cwnd_to_spare_writes_past_the_send_buffer() {
    let mut s = small_buffer(None);
    let first = drain(&mut s, 0);
    // Buffers of 45 segments (64 kB less the room for headers) while the queue is
    // below 100 kB: two of them.
    assert_eq!(first.len(), 90);
    assert_eq!(s.sndbuf(), 100_000);
    assert!(s.wmem_queued() > 100_000 && s.wmem_queued() < 100_000 + 66_000);
    // An ACK 100 ms later for 60: the queue is below 2/3 of the buffer and the writer
    // wakes; the pacing rate (2 x cwnd / srtt, ~56 Mbit/s) makes bursts of ~6 segments.
    let mut a = ack(60);
    a.wnd = 10 << 20;
    s.on_ack(100 * NS_PER_MS, &a);
    let sent = drain(&mut s, 100 * NS_PER_MS);
    // (TSO deferral may hold the last few for the next ACK.)
    let cwnd = s.tcp().snd_cwnd as usize;
    assert!(
        s.tcp().packets_in_flight() as usize + 8 > cwnd,
        "filled cwnd"
    );
    assert!(
        sent.len() > 150,
        "{} sent past a 69-segment buffer",
        sent.len()
    );
    assert!(s.wmem_queued() > 3 * s.sndbuf());
    // One full buffer (45 segments: 64 kB less header room) stays unsent.
    assert_eq!(s.app_written - s.tcp().snd_nxt, 45);
    // The writer is blocked until the queue falls below 2/3 of the buffer.
    s.on_ack(101 * NS_PER_MS, &a);
    assert!(drain(&mut s, 101 * NS_PER_MS).is_empty());

    let mut p = small_buffer(Some(true));
    drain(&mut p, 0);
    p.on_ack(100 * NS_PER_MS, &a);
    let sent = drain(&mut p, 100 * NS_PER_MS);
    assert!(sent.len() < 10, "paced: one burst, {}", sent.len());
    assert!(p.wmem_queued() < p.sndbuf() + 70_000);
}

/// Like [`drain`], with the host's interface sending at `bps`: each burst is handed to it
/// as it ends and stays charged to the socket until the interface has sent it (`free`: when
/// the interface is next idle).
fn drain_nic(s: &mut Sender, now: Nanos, bps: u64, free: &mut Nanos) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut bytes = 0;
    while let Some(seg) = s.poll_transmit(now) {
        bytes += seg.len as u64;
        if seg.burst_end {
            *free = (*free).max(now) + bytes * 8 * NS_PER_SEC / bps;
            s.on_tx_handed(bytes, *free);
            bytes = 0;
        }
        out.push(seg);
    }
    out
}

/// TCP small queues (`tcp_small_queue_check()`): a writer's pieces go only while the
/// interface keeps up with them. Behind a 1 Gbit/s interface the pieces soon have more than
/// two buffers waiting at it, the push is refused and the writer stops near the send buffer;
/// the socket sends the rest of what was written at the next transmit completion, without
/// the writer. Behind a 10 Gbit/s interface (faster than the writer's pieces) nothing
/// changes.
#[test]
fn a_slow_interface_stops_the_writers_pieces_at_the_send_buffer() {
    let mut a = ack(60);
    a.wnd = 10 << 20;
    let t = 100 * NS_PER_MS;

    let mut s = small_buffer(None);
    let mut free = 0;
    drain_nic(&mut s, 0, 1_000_000_000, &mut free);
    s.on_ack(t, &a);
    let sent = drain_nic(&mut s, t, 1_000_000_000, &mut free);
    assert!(sent.len() < 100, "{} sent behind 1 Gbit/s", sent.len());
    assert!(s.wmem_queued() < s.sndbuf() + 2 * 66_000);
    // Throttled: woken by the next completion, the socket sends what is written, and the
    // writer, not woken by it, writes nothing more.
    let wake = s
        .next_timeout()
        .expect("a transmit completion wakes the socket");
    assert!(wake > t && wake < t + NS_PER_MS, "woken at {wake}");
    let written = s.app_written;
    s.on_timeout(wake);
    let more = drain_nic(&mut s, wake, 1_000_000_000, &mut free);
    assert!(!more.is_empty());
    assert_eq!(s.app_written, written);

    let mut f = small_buffer(None);
    let mut free = 0;
    drain_nic(&mut f, 0, 10_000_000_000, &mut free);
    f.on_ack(t, &a);
    let sent = drain_nic(&mut f, t, 10_000_000_000, &mut free);
    assert!(sent.len() > 150, "{} sent behind 10 Gbit/s", sent.len());
    assert!(f.wmem_queued() > 3 * f.sndbuf());
}

/// The send buffer counts each buffer's overhead beside its payload, and SACKed data
/// joins the SACKed buffer before it (`tcp_shift_skb_data()`), freeing an overhead.
#[test]
fn the_send_buffer_counts_each_buffers_overhead() {
    let mut s = small_buffer(None);
    let sent = drain(&mut s, 0);
    let bursts = sent.iter().filter(|g| g.burst_end).count() as u64;
    assert_eq!(
        bursts,
        2,
        "{:?}",
        sent.iter().map(|g| g.burst_end).collect::<Vec<_>>()
    );
    // The segment that ends the written data carries PSH, and only that one.
    let pushed: Vec<u64> = sent.iter().filter(|g| g.psh).map(|g| g.seq).collect();
    assert_eq!(pushed, [89]);
    let payload = 90 * 1448;
    assert_eq!(s.wmem_queued(), payload + bursts * host::SKB_OVERHEAD);
    // A SACK for 40..90 spans both buffers' data (0-44 and 45-89): the second joins
    // the first's SACKed part.
    let mut a = ack(0);
    a.sack[0] = SackBlock { start: 40, end: 90 };
    a.n_sack = 1;
    s.on_ack(100 * NS_PER_MS, &a);
    assert_eq!(s.wmem_queued(), payload + host::SKB_OVERHEAD);
}

#[test]
fn loss_probe_timer_runs_in_jiffies() {
    // 1 ms RTT. Linux arms the probe for usecs_to_jiffies(2 srtt) + TCP_TIMEOUT_MIN
    // (2 jiffies) from the current tick: 3 ticks = 12 ms at HZ 250, 2 + 2 = 4 ticks
    // after the 1 ms tick = 5 ms at HZ 1000.
    for (hz, want_ms) in [(250u32, 12u64), (1000, 5)] {
        let cfg = SenderConfig {
            hz,
            ..SenderConfig::default()
        };
        let mut s = Sender::new(cfg, crate::cc::by_name("reno").unwrap().build(1));
        drain(&mut s, 0);
        s.on_ack(1000 * US, &ack(2));
        drain(&mut s, 1000 * US);
        assert_eq!(s.next_timeout(), Some(want_ms * 1_000 * US), "HZ {hz}");
    }
}

#[test]
fn retransmissions_go_in_bursts_of_their_own() {
    // Three TSO bursts go out (0-4 and 5-9, half of cwnd each, then 10-13 after the
    // first ACK); 2-5 and 11-12 are lost. Linux retransmits each lost run of one skb as
    // one TSO buffer (`tcp_xmit_retransmit_queue()`) and new data in buffers of its own.
    let mut s = sender(true, None);
    assert_eq!(drain(&mut s, 0).len(), 10);
    s.on_ack(900 * US, &ack(2));
    let b = drain(&mut s, 900 * US);
    assert_eq!((b.len(), b[0].seq), (4, 10), "{b:?}");
    let mut a = ack(2);
    a.sack[0] = SackBlock { start: 13, end: 14 };
    a.sack[1] = SackBlock { start: 6, end: 11 };
    a.n_sack = 2;
    s.on_ack(1800 * US, &a);
    let b = drain(&mut s, 1800 * US);
    let bursts: Vec<Vec<(u64, bool)>> = b
        .split_inclusive(|g| g.burst_end)
        .map(|v| v.iter().map(|g| (g.seq, g.retrans)).collect())
        .collect();
    assert!(bursts.len() >= 3, "{bursts:?}");
    // First 2-4 (the first skb's lost part), then 5 (the second's), then 11-12 (the
    // third's), each alone; new data only after them.
    assert_eq!(
        bursts[0],
        vec![(2, true), (3, true), (4, true)],
        "{bursts:?}"
    );
    assert_eq!(bursts[1], vec![(5, true)], "{bursts:?}");
    assert_eq!(bursts[2], vec![(11, true), (12, true)], "{bursts:?}");
    assert!(
        bursts[3..].iter().flatten().all(|&(q, r)| !r && q >= 14),
        "{bursts:?}"
    );
}

#[test]
fn tso_defers_a_small_burst_while_an_ack_is_due() {
    // 1 ms path: the TSO goal is 45 segments; the first ACK lets 2 go (cwnd 11, 9 out),
    // fewer than a third of cwnd, and the next ACK is due: defer.
    let mut s = sender(true, None);
    assert_eq!(drain(&mut s, 0).len(), 10);
    s.on_ack(900 * US, &ack(1));
    assert!(drain(&mut s, 900 * US).is_empty(), "deferred");
    // The second ACK makes 4 sendable (cwnd 12, 8 out): a third of cwnd, so they go as
    // one burst.
    s.on_ack(910 * US, &ack(2));
    let b = drain(&mut s, 910 * US);
    assert_eq!(b.len(), 4);
    assert!(b[..3].iter().all(|g| !g.burst_end) && b[3].burst_end);
    // Without TSO every ACK releases its segments at once.
    let mut s = sender(false, None);
    drain(&mut s, 0);
    s.on_ack(900 * US, &ack(1));
    let b = drain(&mut s, 900 * US);
    assert_eq!(b.len(), 2);
    assert!(b.iter().all(|g| g.burst_end));
}

#[test]
fn a_buffer_carries_at_most_half_of_cwnd() {
    // `tcp_cwnd_test()`: the initial window of 10 leaves as two buffers of 5, and an ACK
    // for all of it (cwnd 20, 20 sendable) releases two buffers of 10.
    let mut s = sender(true, None);
    // Indices of the segments that end a burst.
    let ends = |b: &[Segment]| -> Vec<usize> {
        b.iter()
            .enumerate()
            .filter(|(_, g)| g.burst_end)
            .map(|(i, _)| i)
            .collect()
    };
    assert_eq!(ends(&drain(&mut s, 0)), vec![4, 9]);
    s.on_ack(1_000 * US, &ack(10));
    assert_eq!(ends(&drain(&mut s, 1_000 * US)), vec![9, 19]);
}

#[test]
fn a_deferring_paced_sender_waits_for_an_ack_not_a_timer() {
    // As `tso_defers_a_small_burst_while_an_ack_is_due`, but paced: once deferral holds
    // the data back, the sender asks for no pacing wake-up at or before now (Linux arms no
    // timer for a deferral); the next ACK ends it.
    let mut s = sender(true, Some(true));
    assert_eq!(drain(&mut s, 0).len(), 10);
    s.on_ack(900 * US, &ack(1));
    let wake = s.next_timeout().expect("a timer");
    assert!(drain(&mut s, wake.max(900 * US)).is_empty(), "deferred");
    assert!(s.is_deferring());
    let now = wake.max(900 * US);
    assert!(
        s.next_timeout().is_none_or(|t| t > now + TSO_DEFER_NS),
        "{:?}",
        s.next_timeout()
    );
    s.on_ack(now + 10 * US, &ack(2));
    assert!(!s.is_deferring());
    assert_eq!(drain(&mut s, now + 10 * US).len(), 4);
}

#[test]
fn tso_does_not_defer_when_no_ack_is_due_soon() {
    // 10 ms path: an ACK at 9 ms for a head sent at 0 means the next is due at about
    // 9 ms, but the last transmission was 9 ms ago (> 1 ms): send at once.
    let mut s = sender(true, None);
    drain(&mut s, 0);
    s.on_ack(9_000 * US, &ack(1));
    assert_eq!(drain(&mut s, 9_000 * US).len(), 2);
}

#[test]
fn paced_sender_sends_bursts_of_the_tso_goal() {
    // Reno forced to pace, 10 ms RTT: after the first RTT cwnd is 20 and the pacing rate
    // 200% x 20 x 1448 B / 10 ms = 5.79 MB/s, so a burst (1/1024 s of it) is 3 segments.
    let mut s = sender(true, Some(true));
    drain(&mut s, 0);
    s.on_ack(10_000 * US, &ack(10));
    let mut now = 10_000 * US;
    let mut bursts = Vec::new();
    while bursts.len() < 5 {
        let b = drain(&mut s, now);
        if !b.is_empty() {
            assert!(b.last().unwrap().burst_end);
            bursts.push((now, b.len()));
        }
        now = s.next_timeout().expect("pacing timer");
    }
    assert!(bursts.iter().all(|&(_, n)| n == 3), "{bursts:?}");
    // Consecutive bursts are one burst's length at the pacing rate apart (after the first,
    // which had idle-time credit).
    let slot = 3 * 1448 * NS_PER_SEC / s.tcp().pacing_rate;
    let gap = bursts[3].0 - bursts[2].0;
    assert!(gap.abs_diff(slot) <= slot / 10, "gap {gap} slot {slot}");
}

fn ecn_sender(cc: &str, ecn: bool) -> Sender {
    let cfg = SenderConfig {
        tso: false,
        ecn,
        ..SenderConfig::default()
    };
    Sender::new(cfg, crate::cc::by_name(cc).unwrap().build(1))
}

#[test]
fn an_ecn_echo_reduces_once_per_window_and_sends_cwr() {
    let mut s = ecn_sender("reno", true);
    let first = drain(&mut s, 0);
    assert_eq!(first.len(), 10);
    assert!(first.iter().all(|g| g.ecn == Ecn::Ect0 && !g.cwr));
    // Grow to 20 segments in flight.
    s.on_ack(50 * NS_PER_MS, &ack(10));
    let second = drain(&mut s, 50 * NS_PER_MS);
    assert_eq!(s.tcp().snd_cwnd, 20);
    assert_eq!(second.len(), 20);
    // An ECE ACK: one reduction (Reno halves), CWR state, and CWR on the next new data.
    let t = 100 * NS_PER_MS;
    let mut a = ack(11);
    a.ece = true;
    s.on_ack(t, &a);
    assert_eq!(s.tcp().ca_state, CaState::Cwr);
    assert_eq!(s.tcp().snd_ssthresh, 10);
    assert_eq!(s.stats().cwr_events, 1);
    assert_eq!(s.tcp().delivered_ce, 1);
    let out = drain(&mut s, t);
    assert!(out.first().is_some_and(|g| g.cwr), "{out:?}");
    assert!(out.iter().skip(1).all(|g| !g.cwr));
    // More ECE in the same window: no second reduction.
    for c in 12..30 {
        let mut a = ack(c);
        a.ece = true;
        s.on_ack(t + c, &a);
        drain(&mut s, t + c);
    }
    assert_eq!(s.stats().cwr_events, 1);
    assert!(
        s.tcp().snd_cwnd <= 11,
        "PRR brings cwnd to ssthresh: {}",
        s.tcp().snd_cwnd
    );
    // An ACK beyond what was outstanding at the echo ends CWR at ssthresh.
    let high = s.tcp().snd_nxt;
    s.on_ack(t + 60 * NS_PER_MS, &ack(high));
    assert_eq!(s.tcp().ca_state, CaState::Open);
    // cwnd = ssthresh, then that same ACK's congestion avoidance (+1 per 10 acked).
    assert_eq!(s.tcp().snd_ssthresh, 10);
    assert!(
        (10..=12).contains(&s.tcp().snd_cwnd),
        "{}",
        s.tcp().snd_cwnd
    );
    // ECE without negotiated ECN is ignored.
    let mut s = ecn_sender("reno", false);
    let out = drain(&mut s, 0);
    assert!(out.iter().all(|g| g.ecn == Ecn::NotEct));
    let mut a = ack(5);
    a.ece = true;
    s.on_ack(NS_PER_MS, &a);
    assert_eq!(s.tcp().ca_state, CaState::Open);
    assert_eq!(s.stats().cwr_events, 0);
}

#[test]
fn retransmissions_are_not_ect_unless_the_controller_needs_ecn() {
    for (cc, ect) in [("reno", false), ("dctcp", true), ("prague", true)] {
        let mut s = ecn_sender(cc, cc == "reno");
        assert!(s.ecn(), "{cc} negotiates ECN");
        drain(&mut s, 0);
        // Segment 0 is lost: SACKs of 1..4 mark it, and it is retransmitted.
        let mut a = ack(0);
        a.sack[0] = SackBlock { start: 1, end: 5 };
        a.n_sack = 1;
        s.on_ack(50 * NS_PER_MS, &a);
        let out = drain(&mut s, 50 * NS_PER_MS);
        let r = out.iter().find(|g| g.retrans).expect("a retransmission");
        let codepoint = if cc == "prague" { Ecn::Ect1 } else { Ecn::Ect0 };
        assert_eq!(r.ecn == codepoint, ect, "{cc}");
    }
}

/// An L4S controller's packets carry ECT(1), new data and retransmissions alike; the
/// others' ECT(0); without ECN neither.
#[test]
fn l4s_controllers_send_ect1() {
    let mut s = ecn_sender("prague", false);
    assert!(s.ecn(), "Prague needs ECN");
    let out = drain(&mut s, 0);
    assert!(!out.is_empty() && out.iter().all(|g| g.ecn == Ecn::Ect1));
    for cc in ["reno", "cubic", "dctcp", "bbr"] {
        let mut s = ecn_sender(cc, true);
        let out = drain(&mut s, 0);
        assert!(out.iter().all(|g| g.ecn == Ecn::Ect0), "{cc}");
        assert!(!s.cc.ect1(), "{cc}");
    }
    // Prague negotiates Accurate ECN: the ACE field counts the marks (an ECE flag means
    // nothing), one CWR per window, and no CWR flag on the data (it is part of ACE).
    let mut s = ecn_sender("prague", false);
    drain(&mut s, 0);
    let t = 50 * NS_PER_MS;
    for c in 1..6 {
        let mut a = ack(c);
        a.ece = true;
        a.accecn = Some(crate::packet::AccEcnFeedback {
            ace: ((c + crate::receiver::ACE_INIT as u64) & 7) as u8,
            ..Default::default()
        });
        s.on_ack(t + c, &a);
        let out = drain(&mut s, t + c);
        assert!(out.iter().all(|g| g.ecn == Ecn::Ect1 && !g.cwr));
    }
    assert_eq!(s.tcp().ca_state, CaState::Cwr);
    assert_eq!(s.stats().cwr_events, 1);
    assert_eq!(s.tcp().delivered_ce, 5);
    // An ECE flag without ACE's count is not a mark.
    let mut s = ecn_sender("prague", false);
    drain(&mut s, 0);
    let mut a = ack(1);
    a.ece = true;
    a.accecn = Some(crate::packet::AccEcnFeedback {
        ace: crate::receiver::ACE_INIT as u8,
        ..Default::default()
    });
    s.on_ack(t, &a);
    assert_eq!(s.tcp().delivered_ce, 0);
    assert_eq!(s.tcp().ca_state, CaState::Open);
}

fn sack(cum: u64, blocks: &[(u64, u64)]) -> Ack {
    let mut a = ack(cum);
    for (i, &(start, end)) in blocks.iter().enumerate() {
        a.sack[i] = SackBlock { start, end };
    }
    a.n_sack = blocks.len() as u8;
    a
}

/// A Reno sender, one segment per burst, on a 10 ms path: segments 0-9 go at 0, the ACK
/// of 0-1 at 10 ms gives min RTT and srtt 10 ms and releases 10-13.
fn ten_ms_sender() -> Sender {
    let mut s = sender(false, None);
    assert_eq!(drain(&mut s, 0).len(), 10);
    s.on_ack(10 * NS_PER_MS, &ack(2));
    assert_eq!(drain(&mut s, 10 * NS_PER_MS).len(), 4);
    s
}

/// Segment 2 arrives after 3 (its SACK, then the ACK that covers it): reordering.
fn see_reordering(s: &mut Sender) {
    let t = 10 * NS_PER_MS;
    s.on_ack(t + 200 * US, &sack(2, &[(3, 4)]));
    assert_eq!(s.tcp().lost_out, 0, "one SACK: reo_wnd still open");
    s.on_ack(t + 400 * US, &ack(4));
    assert_eq!(s.stats().reord_seen, 1);
    // Two segments out of order: within the default degree of 3.
    assert_eq!(s.reordering(), 3);
}

#[test]
fn before_reordering_is_seen_three_sacks_above_a_hole_mean_loss() {
    // `tcp_rack_reo_wnd()` without `reord_seen`: once `reordering` (3) segments are
    // SACKed the window closes, and the hole below them is lost at once.
    let mut s = ten_ms_sender();
    s.on_ack(10_600 * US, &sack(2, &[(4, 8)]));
    assert_eq!(s.tcp().ca_state, CaState::Recovery);
    assert_eq!(s.tcp().lost_out, 2);
    assert_eq!(s.stats().reord_seen, 0);
}

#[test]
fn a_hole_filled_by_an_original_raises_reordering_and_keeps_reo_wnd_open() {
    let mut s = ten_ms_sender();
    see_reordering(&mut s);
    // Now the same pattern as above, 4 segments SACKed above a hole of 2: RACK keeps
    // min_rtt/4 of reordering window (`reord_seen`), so 4-5 are not lost yet...
    s.on_ack(10_600 * US, &sack(4, &[(6, 10)]));
    assert_eq!(s.tcp().lost_out, 0);
    assert_eq!(s.tcp().ca_state, CaState::Disorder);
    assert!(s.next_timeout().is_some());
    // ...and when they arrive, the distance they were displaced (6 segments below the
    // highest SACK) becomes the path's reordering degree (`tcp_check_sack_reordering()`).
    s.on_ack(10_800 * US, &ack(10));
    assert_eq!(s.stats().reord_seen, 2);
    assert_eq!(s.reordering(), 6);
    assert_eq!(s.stats().retransmits, 0);
    assert_eq!(s.stats().recoveries, 0);
    assert_eq!(s.tcp().ca_state, CaState::Open);
    // From now on the window stays open in recovery too.
    s.tp.ca_state = CaState::Recovery;
    assert_eq!(s.rack_reo_wnd(), 2_500 * US);
}

#[test]
fn with_reordering_above_three_sacks_grow_cwnd() {
    // `tcp_may_raise_cwnd()`: with `reordering` above the default, SACKed data grows the
    // window (slow start: one segment per segment SACKed) although snd_una stays put.
    let mut s = ten_ms_sender();
    see_reordering(&mut s);
    s.on_ack(10_600 * US, &sack(4, &[(6, 10)]));
    s.on_ack(10_800 * US, &ack(10));
    assert_eq!(s.reordering(), 6);
    drain(&mut s, 10_800 * US);
    let cwnd = s.tcp().snd_cwnd;
    s.on_ack(11 * NS_PER_MS, &sack(10, &[(11, 13)]));
    assert_eq!(s.tcp().snd_cwnd, cwnd + 2);
    // Without reordering seen, the same SACKs leave it alone.
    let mut s = ten_ms_sender();
    let cwnd = s.tcp().snd_cwnd;
    s.on_ack(10_200 * US, &sack(2, &[(3, 4)]));
    assert_eq!(s.tcp().snd_cwnd, cwnd);
}

/// After `see_reordering`: 4 stays missing past RACK's window, is retransmitted in a
/// recovery, then turns out only late (the ACK of the original covers it).
fn spurious_retransmission(s: &mut Sender) -> Nanos {
    s.on_ack(10_600 * US, &sack(4, &[(5, 10)]));
    assert_eq!(s.tcp().lost_out, 0);
    let t = s.next_timeout().expect("RACK timer");
    assert!(s.on_timeout(t));
    assert_eq!(s.tcp().ca_state, CaState::Recovery);
    let out = drain(s, t);
    assert!(out.iter().any(|g| g.retrans && g.seq == 4), "{out:?}");
    assert_eq!(s.stats().retransmits, 1);
    s.on_ack(t + 100 * US, &ack(10));
    assert_eq!(s.tcp().ca_state, CaState::Recovery, "13 still outstanding");
    t + 100 * US
}

#[test]
fn a_dsack_after_reordering_widens_the_reo_wnd_once_per_round_trip() {
    let mut s = ten_ms_sender();
    see_reordering(&mut s);
    let t = spurious_retransmission(&mut s);
    assert_eq!(s.rack_reo_wnd_steps(), 1);
    // The retransmission arrives too: a D-SACK for 4 (`tcp_dsack_seen()`).
    let mut a = ack(10);
    a.dsack = Some(4);
    s.on_ack(t + 100 * US, &a);
    assert_eq!(s.stats().dsack_dups, 1);
    // It delivered nothing: the window grows on the next ACK that does
    // (`tcp_rack_update_reo_wnd()`), by one min_rtt/4 step.
    assert_eq!(s.rack_reo_wnd_steps(), 1);
    s.on_ack(t + 200 * US, &ack(12));
    assert_eq!(s.rack_reo_wnd_steps(), 2);
    assert_eq!(s.rack_reo_wnd(), 5 * NS_PER_MS);
    // A second D-SACK for data sent before that growth is not a new round trip's.
    s.stats.retransmits += 1; // as if another retransmission had gone out
    let mut a = ack(12);
    a.dsack = Some(11);
    s.on_ack(t + 300 * US, &a);
    s.on_ack(t + 400 * US, &ack(14));
    assert_eq!(s.rack_reo_wnd_steps(), 2);
}

#[test]
fn dsacks_for_every_retransmission_undo_the_reduction() {
    let mut s = ten_ms_sender();
    see_reordering(&mut s);
    let (cwnd, ssthresh) = (s.tcp().snd_cwnd, s.tcp().snd_ssthresh);
    let t = spurious_retransmission(&mut s);
    assert!(s.tcp().snd_ssthresh < ssthresh);
    // The D-SACK covers the only retransmission of the recovery: it was spurious, and
    // `tcp_try_undo_dsack()` restores cwnd (Reno: `tcp_reno_undo_cwnd()`) and ssthresh.
    let mut a = ack(10);
    a.dsack = Some(4);
    s.on_ack(t + 100 * US, &a);
    assert_eq!(s.stats().undos, 1);
    assert_ne!(s.tcp().ca_state, CaState::Recovery);
    assert_eq!(s.tcp().snd_ssthresh, ssthresh);
    assert!(s.tcp().snd_cwnd >= cwnd, "{} < {cwnd}", s.tcp().snd_cwnd);
    // Without the D-SACK the recovery runs its course and cwnd ends at ssthresh.
    let mut s = ten_ms_sender();
    see_reordering(&mut s);
    let t = spurious_retransmission(&mut s);
    s.on_ack(t + 200 * US, &ack(14));
    assert_eq!(s.tcp().ca_state, CaState::Open);
    assert_eq!(s.stats().undos, 0);
    assert!(s.tcp().snd_ssthresh < ssthresh);
}

#[test]
fn a_dsack_counts_only_if_retransmissions_explain_it() {
    // `tcp_dsack_seen()`: more D-SACKed segments than retransmissions is a receiver not
    // to be believed; nothing follows from it.
    let mut s = ten_ms_sender();
    see_reordering(&mut s);
    let mut a = ack(4);
    a.dsack = Some(3);
    s.on_ack(11 * NS_PER_MS, &a);
    s.on_ack(12 * NS_PER_MS, &ack(6));
    assert_eq!(s.stats().dsack_dups, 1);
    assert_eq!(s.rack_reo_wnd_steps(), 1);
}
