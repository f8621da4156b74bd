//! A segment's arrival and the ACK policy (`__tcp_ack_snd_check()`, see the module docs):
//! in-order reassembly and the out-of-order queue, when to ACK at once, when to hold the
//! ACK (delayed ACK, GRO bursts, SACK compression), the timers, quick-ACK credit and the
//! ACK itself with its window and SACK blocks.

use super::{
    EcnEcho, Receiver, COMP_SACK_DELAY_MAX, COMP_SACK_NR, DELACK_TIMEOUT,
    DUPACKS_BEFORE_COMPRESSION, MAX_QUICKACKS, SACK_BLOCKS_EXPECTED,
};
use crate::host;
use crate::packet::{Ack, SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::Nanos;

impl Receiver {
    /// A data segment arrived at `now`. Returns the ACK to send now, if any.
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment) -> Option<Ack> {
        self.now = now;
        let mut ack_now = false;
        let mut dup = None;
        self.rtt_measure(now, seg);
        // Accurate ECN counts every arriving segment and ACKs a change of ECN field at once.
        ack_now |= self.accecn_count(seg.ecn, seg.len);
        if matches!(self.cfg.ecn, EcnEcho::Classic | EcnEcho::Precise) && seg.cwr {
            // `tcp_ecn_accept_cwr()`: the sender reduced; stop echoing and ACK at once.
            self.demand_cwr = false;
            ack_now = true;
        }
        let new_data = !(seg.seq < self.rcv_nxt || self.ooo.contains(seg.seq));
        if !new_data {
            // Old data: ACK at once with a D-SACK and re-enter quick-ACK mode.
            self.incr_quickack();
            ack_now = true;
            dup = Some(seg.seq);
        } else if seg.seq == self.rcv_nxt {
            if !self.got_data {
                // The first data segment starts the delayed-ACK engine in quick-ACK mode,
                // and measures the buffer's payload share (`tcp_measure_rcv_mss()`).
                self.got_data = true;
                self.scaling_ratio = host::SCALING_RATIO;
                self.window_clamp = host::win_from_space(self.rcvbuf, self.scaling_ratio);
                self.incr_quickack();
            }
            self.grow_window();
            self.rcv_nxt += 1;
            if !self.ooo.is_empty() {
                // Filled (part of) a hole: pull in what follows and ACK at once.
                if let Some(r) = self.ooo.first() {
                    if r.start == self.rcv_nxt {
                        self.rcv_nxt = r.end;
                        self.ooo_segs -= r.end - r.start;
                    }
                }
                self.ooo.remove_below(self.rcv_nxt);
                ack_now = true;
            }
            self.delivered_bytes = self.bytes_below(self.rcv_nxt);
            self.rcv_space_adjust(now);
            // `tcp_measure_rcv_mss()` / `tcp_cleanup_rbuf()`: a full-sized segment with PSH
            // ends a write; once the reader has taken everything (nothing held out of
            // order), it is ACKed at once rather than after the delayed-ACK timer.
            if seg.psh && self.ooo.is_empty() {
                ack_now = true;
            }
        } else {
            // `tcp_sack_new_ofo_skb()`: a segment that extends a block listed third or later,
            // or opens a new block when two or more are listed, moves that block to the front
            // and may push the oldest out of the list. ACKs held by SACK compression go out
            // first (`tcp_sack_compress_send_ack()`), so the blocks they covered are reported
            // before they move.
            if self.compressed_acks > 0 && self.sack_slot(seg.seq) >= SACK_BLOCKS_EXPECTED {
                self.prior_ack = Some(self.make_ack(false, None));
            }
            self.grow_window();
            self.ooo.insert(seg.seq..seg.seq + 1);
            self.ooo_segs += 1;
            // `tcp_data_queue_ofo()`: the buffer makes room for the out-of-order span.
            self.rcvbuf_grow(self.rcvq_space);
            let r = self
                .ooo
                .range_containing(seg.seq)
                .unwrap_or(seg.seq..seg.seq + 1);
            self.recent.retain(|b| !r.contains(&b.start));
            self.recent.push_front(SackBlock {
                start: r.start,
                end: r.end,
            });
        }
        if new_data && self.cfg.ecn != EcnEcho::Off {
            ack_now |= self.ecn_check_ce(seg.ecn);
        }
        if self.completed_at.is_none() && Some(self.rcv_nxt) == self.total_segs() {
            // The transfer is complete (the FIN would be ACKed at once).
            self.completed_at = Some(now);
            ack_now = true;
        }
        if self.cfg.gro
            && !seg.burst_end
            && !ack_now
            && dup.is_none()
            && self.ooo.is_empty()
            && seg.seq + 1 == self.rcv_nxt
        {
            // Inside a coalesced burst: the ACK decision waits for its last segment (the
            // delayed-ACK timer covers a burst whose end never arrives).
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + DELACK_TIMEOUT);
            }
            return None;
        }
        let more_than_one_segment = self.rcv_nxt - self.rcv_wup > 1;
        if ack_now || !self.cfg.delayed_ack || more_than_one_segment || self.quickacks > 0 {
            return Some(self.make_ack(false, dup));
        }
        if self.ooo.is_empty() {
            if self.delack_deadline.is_none() {
                self.delack_deadline = Some(now + DELACK_TIMEOUT);
            }
            return None;
        }
        // Out-of-order data queued: SACK compression.
        if self.compressed_acks >= COMP_SACK_NR {
            return Some(self.make_ack(false, None));
        }
        if self.compressed_rcv_nxt != self.rcv_nxt {
            self.compressed_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < DUPACKS_BEFORE_COMPRESSION {
            self.dup_ack_counter += 1;
            return Some(self.make_ack(false, None));
        }
        self.compressed_acks += 1;
        if self.comp_deadline.is_none() {
            let delay = COMP_SACK_DELAY_MAX.min(self.cfg.rtt_hint / 20).max(1);
            self.comp_deadline = Some(now + delay);
        }
        None
    }

    /// Deadline of the delayed-ACK or SACK-compression timer, if armed.
    pub fn next_timeout(&self) -> Option<Nanos> {
        match (self.delack_deadline, self.comp_deadline) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Timer expiry: returns the held ACK if one is due.
    pub fn on_timeout(&mut self, now: Nanos) -> Option<Ack> {
        self.now = now;
        match self.next_timeout() {
            Some(t) if t <= now => {
                let delayed = self.comp_deadline.is_none();
                Some(self.make_ack(delayed, None))
            }
            _ => None,
        }
    }

    /// The ACK to send now; `dsack` = the duplicate segment that triggered it, if any.
    pub(super) fn make_ack(&mut self, delayed: bool, dsack: Option<u64>) -> Ack {
        self.delack_deadline = None;
        self.comp_deadline = None;
        self.compressed_acks = 0;
        let wnd = self.select_window();
        self.rcv_wup = self.rcv_nxt;
        self.quickacks = self.quickacks.saturating_sub(1);
        let mut ack = Ack {
            cum: self.rcv_nxt,
            sack: [SackBlock::default(); MAX_SACK_BLOCKS],
            n_sack: 0,
            delayed,
            dsack,
            wnd,
            tsval: self.now,
            ece: matches!(self.cfg.ecn, EcnEcho::Classic | EcnEcho::Precise) && self.demand_cwr,
            accecn: None,
        };
        if !self.ooo.is_empty() {
            let rcv_nxt = self.rcv_nxt;
            self.recent.retain(|b| b.start >= rcv_nxt);
            let (listed, n) = self.listed_blocks();
            let n = n.min(MAX_SACK_BLOCKS);
            ack.sack.copy_from_slice(&listed[..MAX_SACK_BLOCKS]);
            ack.n_sack = n as u8;
        } else {
            self.recent.clear();
        }
        if let Some(a) = self.accecn.as_mut() {
            // The option takes what the SACK blocks leave, or the third block.
            let (fb, blocks) = a.feedback(ack.n_sack);
            ack.n_sack = blocks;
            ack.accecn = Some(fb);
        }
        ack
    }

    /// `tcp_incr_quickack()`: at least min(advertised window / 2 segments, 16) quick ACKs.
    pub(super) fn incr_quickack(&mut self) {
        self.incr_quickack_max(MAX_QUICKACKS);
    }

    /// `tcp_incr_quickack(sk, max)`: at least min(advertised window / 2 segments, max).
    pub(super) fn incr_quickack_max(&mut self, max: u32) {
        let q = match self.rcv_wnd / (2 * self.cfg.mss as u64) {
            0 => 2,
            n => n,
        }
        .min(max as u64) as u32;
        self.quickacks = self.quickacks.max(q);
    }
}
