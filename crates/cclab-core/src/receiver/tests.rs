//! The receiver against Linux's behaviour: ACK policy, SACK blocks and compression,
//! window growth and ECN echo.

use super::*;
use crate::packet::{Ecn, SackBlock, Segment};

fn seg(seq: u64) -> Segment {
    Segment {
        seq,
        len: 1000,
        retrans: false,
        sent_ns: 0,
        burst_end: true,
        tsecr: 0,
        ecn: crate::packet::Ecn::NotEct,
        cwr: false,
        psh: false,
    }
}

/// A receiver whose window is already at its clamp (no growth).
fn rx(size: Option<u64>) -> Receiver {
    rx_clamp(size, 10 * 1000)
}

/// A receiver that offers 10 segments and may open to `window_clamp` (a fixed
/// `SO_RCVBUF` whose payload share is the clamp).
fn rx_clamp(size: Option<u64>, window_clamp: u64) -> Receiver {
    let rcvbuf = host::space_from_win(window_clamp, host::SCALING_RATIO);
    let mut r = Receiver::new(ReceiverConfig {
        mss: 1000,
        size,
        delayed_ack: true,
        rtt_hint: 100 * NS_PER_MS,
        host: HostTcp {
            rcvbuf: Some(rcvbuf / 2),
            ..HostTcp::default()
        },
        gro: false,
        ecn: EcnEcho::Off,
    });
    r.rcv_ssthresh = window_clamp.min(10_000);
    r.rcv_wnd = r.rcv_ssthresh;
    r
}

#[test]
fn quickack_then_every_second_segment_then_timer() {
    let mut r = rx(None);
    // A 10-segment window gives 10 / 2 = 5 quick ACKs.
    for i in 0..5 {
        assert!(r.on_segment(0, &seg(i)).is_some(), "quickack {i}");
    }
    let base = 5;
    assert!(r.on_segment(1, &seg(base)).is_none());
    assert_eq!(r.next_timeout(), Some(1 + DELACK_TIMEOUT));
    let a = r
        .on_segment(2, &seg(base + 1))
        .expect("second segment acks");
    assert_eq!(a.cum, base + 2);
    assert!(r.on_segment(3, &seg(base + 2)).is_none());
    assert!(r.on_timeout(3 + DELACK_TIMEOUT - 1).is_none());
    let a = r.on_timeout(3 + DELACK_TIMEOUT).expect("timer ack");
    assert!(a.delayed);
    assert_eq!(a.cum, base + 3);
}

#[test]
fn sack_blocks_most_recent_first_and_reassembly() {
    let mut r = rx(Some(9500));
    r.on_segment(0, &seg(0));
    let a = r.on_segment(0, &seg(2)).unwrap();
    assert_eq!((a.cum, a.n_sack), (1, 1));
    assert_eq!(a.sack[0], SackBlock { start: 2, end: 3 });
    r.on_segment(0, &seg(5));
    let a = r.on_segment(0, &seg(7)).unwrap();
    assert_eq!(
        a.sack_blocks(),
        &[
            SackBlock { start: 7, end: 8 },
            SackBlock { start: 5, end: 6 },
            SackBlock { start: 2, end: 3 }
        ]
    );
    let a = r.on_segment(0, &seg(3)).unwrap();
    assert_eq!(a.sack[0], SackBlock { start: 2, end: 4 });
    // Fill the hole at 1: cum jumps over 2..4.
    let a = r.on_segment(0, &seg(1)).unwrap();
    assert_eq!(a.cum, 4);
    assert_eq!(r.delivered_bytes(), 4000);
    for s in [4, 6, 8] {
        r.on_segment(5, &seg(s));
    }
    assert_eq!(r.completed_at(), None);
    r.on_segment(9, &seg(9));
    assert_eq!(r.rcv_nxt(), 10);
    assert_eq!(r.delivered_bytes(), 9500);
    assert_eq!(r.completed_at(), Some(9));
}

#[test]
fn sack_compression_after_three_dupacks() {
    let mut r = rx(None);
    for i in 0..MAX_QUICKACKS as u64 {
        r.on_segment(0, &seg(i));
    }
    let hole = MAX_QUICKACKS as u64;
    // Segments above a hole: three immediate ACKs, then compression (RTT/20 = 5 ms > 1 ms cap).
    let mut immediate = 0;
    for k in 1..=10 {
        if r.on_segment(10, &seg(hole + k)).is_some() {
            immediate += 1;
        }
    }
    assert_eq!(immediate, 3);
    assert_eq!(r.next_timeout(), Some(10 + COMP_SACK_DELAY_MAX));
    let a = r.on_timeout(10 + COMP_SACK_DELAY_MAX).unwrap();
    assert_eq!(
        a.sack[0],
        SackBlock {
            start: hole + 1,
            end: hole + 11
        }
    );
    // 44 compressed segments force an ACK.
    let mut forced = false;
    for k in 11..=60 {
        if r.on_segment(20, &seg(hole + k)).is_some() {
            forced = true;
            break;
        }
    }
    assert!(forced);
    // Filling the hole ACKs at once.
    assert!(r.on_segment(30, &seg(hole)).is_some());
}

/// The odd last segment of a burst waits for the delayed-ACK timer, unless it carries
/// PSH (the end of what the application wrote): the reader takes it and Linux ACKs at
/// once (`ICSK_ACK_PUSHED`, `tcp_cleanup_rbuf()`). Not while data is held out of order.
#[test]
fn a_pushed_segment_is_acked_at_once() {
    let mut r = rx(None);
    // Past quick-ACK mode and the window's growth: until a segment is held.
    let mut seq = 0;
    while r.on_segment(0, &seg(seq)).is_some() {
        seq += 1;
        assert!(seq < 1000);
    }
    seq += 1;
    // Every second segment is ACKed; an odd one waits for the timer.
    assert!(r.on_segment(1, &seg(seq)).is_some());
    assert!(r.on_segment(2, &seg(seq + 1)).is_none());
    assert_eq!(r.next_timeout(), Some(2 + DELACK_TIMEOUT));
    assert!(r.on_segment(3, &seg(seq + 2)).is_some());
    // The same odd segment with PSH goes out at once.
    let pushed = Segment {
        psh: true,
        ..seg(seq + 3)
    };
    let a = r
        .on_segment(4, &pushed)
        .expect("a pushed segment is ACKed at once");
    assert_eq!(a.cum, seq + 4);
    // Above a hole, SACKs compressed after three: PSH does not send one early.
    let h = seq + 4;
    for k in 1..=3 {
        assert!(r.on_segment(5, &seg(h + k)).is_some(), "dupack {k}");
    }
    let held = Segment {
        psh: true,
        ..seg(h + 4)
    };
    assert!(r.on_segment(6, &held).is_none());
}

/// Lossy path, compressed SACKs: segments that extend the newest block are held; the
/// next segment opens a third block, which would move the held block down the list, so
/// the held ACK goes out first and reports it (`tcp_sack_compress_send_ack()`).
#[test]
fn a_new_block_sends_the_held_compressed_ack_first() {
    let mut r = rx(None);
    for i in 0..MAX_QUICKACKS as u64 {
        r.on_segment(0, &seg(i));
    }
    let h = MAX_QUICKACKS as u64;
    // Holes at h and h+3; blocks [h+1, h+3) and then [h+4, ...).
    r.on_segment(10, &seg(h + 1));
    r.on_segment(10, &seg(h + 2));
    r.on_segment(10, &seg(h + 4));
    // Three immediate duplicate ACKs spent; these extend the first block and are held.
    for k in 5..9 {
        assert!(r.on_segment(10, &seg(h + k)).is_none(), "compressed");
        assert!(r.take_prior_ack().is_none());
    }
    // A new block (hole at h+9) with two listed: the held ACK goes first, and it reports
    // [h+4, h+9) without the new segment.
    assert!(
        r.on_segment(11, &seg(h + 10)).is_none(),
        "itself compressed"
    );
    let prior = r.take_prior_ack().expect("the held ACK goes out first");
    assert_eq!(
        prior.sack_blocks(),
        &[
            SackBlock {
                start: h + 4,
                end: h + 9
            },
            SackBlock {
                start: h + 1,
                end: h + 3
            }
        ]
    );
    // Nothing held any more: extending the newest block is compressed as before, and a
    // block listed first or second sends nothing early.
    assert!(r.on_segment(11, &seg(h + 11)).is_none());
    assert!(r.take_prior_ack().is_none());
    assert!(r.on_segment(11, &seg(h + 12)).is_none());
    assert!(r.take_prior_ack().is_none());
    // Extending the block listed second ([h+4, h+9)) is not beyond the first two either.
    assert!(r.on_segment(12, &seg(h + 9)).is_none());
    assert!(r.take_prior_ack().is_none());
}

#[test]
fn duplicate_reenters_quickack() {
    let mut r = rx(None);
    for i in 0..39u64 {
        r.on_segment(0, &seg(i));
    }
    assert!(r.on_segment(0, &seg(39)).is_none(), "delayed");
    let a = r.on_segment(0, &seg(3)).expect("duplicate acked at once");
    assert_eq!(a.dsack, Some(3));
    assert!(r.on_segment(0, &seg(40)).is_some(), "quick-ACK mode again");
}

#[test]
fn every_segment_acked_while_the_window_opens() {
    // Window 10 segments, clamp 100: it grows by 2 per segment, so 45 segments open it.
    let mut r = rx_clamp(None, 100_000);
    for i in 0..45u64 {
        assert!(
            r.on_segment(i, &seg(i)).is_some(),
            "segment {i} acked at once"
        );
    }
    assert_eq!(r.window(), 100_000);
    // At the clamp: the 4 quick ACKs left of the first 5 (each step's `|= 1` refilled
    // what its ACK used), then an ACK per two segments.
    let acks = (45..65u64)
        .filter(|&i| r.on_segment(i, &seg(i)).is_some())
        .count();
    assert_eq!(acks, 4 + 16 / 2);
    // Out-of-order segments open the window too (and are ACKed at once).
    let mut r = rx_clamp(None, 100_000);
    r.on_segment(0, &seg(0));
    for i in 2..30u64 {
        assert!(
            r.on_segment(i, &seg(i)).is_some(),
            "ofo segment {i} acked at once"
        );
    }
    assert_eq!(r.window(), 10_000 + 29 * 2_000);
}

fn ecn_seg(seq: u64, ecn: Ecn, cwr: bool) -> Segment {
    Segment {
        ecn,
        cwr,
        ..seg(seq)
    }
}

fn rx_ecn(mode: EcnEcho) -> Receiver {
    let mut r = rx(None);
    r.cfg.ecn = mode;
    r
}

#[test]
fn classic_echo_lasts_until_cwr() {
    let mut r = rx_ecn(EcnEcho::Classic);
    // Past the quick ACKs: every second segment is ACKed.
    for i in 0..6 {
        let a = r.on_segment(i, &ecn_seg(i, Ecn::Ect0, false));
        assert!(a.is_none_or(|a| !a.ece));
    }
    r.quickacks = 0;
    // A CE segment: ECE, and ACKed at once (quick ACK mode, at most 2).
    let a = r
        .on_segment(10, &ecn_seg(6, Ecn::Ce, false))
        .expect("quick ack");
    assert!(a.ece);
    assert_eq!(r.ce_marks(), 1);
    // ECE stays on the following ACKs though their segments are not CE.
    let a = r
        .on_segment(11, &ecn_seg(7, Ecn::Ect0, false))
        .expect("ack");
    assert!(a.ece);
    r.on_segment(12, &ecn_seg(8, Ecn::Ect0, false));
    let a = r
        .on_segment(13, &ecn_seg(9, Ecn::Ect0, false))
        .expect("ack");
    assert!(a.ece);
    // The sender's CWR ends it, and is ACKed at once.
    let a = r
        .on_segment(14, &ecn_seg(10, Ecn::Ect0, true))
        .expect("cwr acked at once");
    assert!(!a.ece);
    // Without ECN negotiated nothing is echoed.
    let mut r = rx_ecn(EcnEcho::Off);
    let a = r.on_segment(0, &ecn_seg(0, Ecn::Ce, false)).unwrap();
    assert!(!a.ece);
    assert_eq!(r.ce_marks(), 0);
}

#[test]
fn precise_echo_marks_exactly_the_ce_segments() {
    let mut r = rx_ecn(EcnEcho::Precise);
    for i in 0..5 {
        r.on_segment(i, &ecn_seg(i, Ecn::Ect0, false));
    }
    r.quickacks = 0;
    // One unmarked segment waits for the delayed ACK...
    assert!(r.on_segment(5, &ecn_seg(5, Ecn::Ect0, false)).is_none());
    // ...when a CE one arrives: the held ACK goes first, without ECE, for the data
    // before the change, then this segment's with ECE.
    let a = r
        .on_segment(6, &ecn_seg(6, Ecn::Ce, false))
        .expect("ack now");
    let prior = r.take_prior_ack().expect("the held ack first");
    assert_eq!((prior.cum, prior.ece), (6, false));
    assert_eq!((a.cum, a.ece), (7, true));
    assert!(r.take_prior_ack().is_none());
    // CE continues: no state change, ordinary delayed ACKs, all with ECE.
    assert!(r.on_segment(7, &ecn_seg(7, Ecn::Ce, false)).is_none());
    let a = r
        .on_segment(8, &ecn_seg(8, Ecn::Ce, false))
        .expect("second segment");
    assert!(a.ece);
    // Back to unmarked: ACKed at once, without ECE (no CWR needed).
    let a = r
        .on_segment(9, &ecn_seg(9, Ecn::Ect0, false))
        .expect("change");
    assert!(!a.ece);
    assert_eq!(r.ce_marks(), 3);
}

#[test]
fn accurate_ecn_counts_every_mark_and_acks_each_change_at_once() {
    let mut r = rx_ecn(EcnEcho::Accurate);
    r.accecn = Some(accecn::AccEcnRx::default());
    let ace = |a: &Ack| a.accecn.expect("AccECN feedback").ace as u32;
    for i in 0..5 {
        r.on_segment(i, &ecn_seg(i, Ecn::Ect1, false));
    }
    r.quickacks = 0;
    // Unmarked: the delayed ACK waits; ACE still at its initial 5.
    assert!(r.on_segment(5, &ecn_seg(5, Ecn::Ect1, false)).is_none());
    // A CE segment: a change of ECN field, ACKed at once; ACE counts it; no ECE or CWR
    // handshake, and no held ACK sent first (the count needs none).
    let a = r
        .on_segment(6, &ecn_seg(6, Ecn::Ce, false))
        .expect("change-triggered ack");
    assert_eq!((a.cum, ace(&a)), (7, 6));
    assert!(!a.ece && r.take_prior_ack().is_none());
    // Marks in a row: ordinary delayed ACKs, each carrying the running count.
    assert!(r.on_segment(7, &ecn_seg(7, Ecn::Ce, false)).is_none());
    let a = r
        .on_segment(8, &ecn_seg(8, Ecn::Ce, false))
        .expect("second segment");
    assert_eq!(ace(&a), (3 + 5) & 7);
    // The option carries the byte counters (ECT(1), CE, ECT(0)), space allowing.
    let fb = a.accecn.unwrap();
    assert_eq!((fb.opt_fields, fb.bytes), (Some(3), [6000, 3000, 0]));
    assert_eq!(a.wire_len(), crate::packet::HEADER_BYTES + 12);
    // Back to unmarked: ACKed at once.
    let a = r
        .on_segment(9, &ecn_seg(9, Ecn::Ect1, false))
        .expect("change");
    assert_eq!(ace(&a), 0);
    assert_eq!(r.ce_marks(), 3);
}

/// Where an out-of-order segment lands in the SACK block list: the shortcut for one that
/// extends the most recent block gives what the whole list gives, over arrivals that open,
/// extend and fill holes, old and new.
#[test]
fn a_segments_sack_slot_is_the_one_the_block_list_gives() {
    let mut r = rx_clamp(None, 400 * 1000);
    let mut x: u64 = 5;
    let (mut first, mut later) = (0, 0);
    for i in 0..4000u64 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Mostly in order just above the highest block, sometimes into a hole or below.
        let top = r.ooo.last().map_or(r.rcv_nxt, |b| b.end);
        let seq = match (x >> 40) % 8 {
            0 => r.rcv_nxt + (x >> 20) % 30,
            1 => top + 1 + (x >> 20) % 3,
            _ => top,
        };
        let (listed, n) = r.listed_blocks();
        let want = listed[..n]
            .iter()
            .position(|b| b.start <= seq + 1 && seq <= b.end)
            .unwrap_or(n);
        assert_eq!(
            r.sack_slot(seq),
            want,
            "segment {seq}, blocks {:?}",
            &listed[..n]
        );
        match want {
            0 if n > 0 => first += 1,
            w if w > 0 && w < n => later += 1,
            _ => {}
        }
        r.on_segment(i * 10_000, &seg(seq));
    }
    assert!(first > 1000 && later > 20, "{first} {later}");
}
