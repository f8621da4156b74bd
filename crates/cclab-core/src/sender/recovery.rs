//! Loss detection: the SACK scoreboard (tcp_input.c's `tcp_sacktag_one()`,
//! `tcp_check_dsack()`, `tcp_check_sack_reordering()`, `tcp_shift_skb_data()`), RACK
//! (tcp_recovery.c: `tcp_rack_advance()`, `tcp_rack_detect_loss()`, `tcp_rack_reo_wnd()`,
//! `tcp_rack_update_reo_wnd()`) and marking segments lost for the retransmission queue
//! (`tcp_mark_skb_lost()`).

use super::{
    DeliveryAcc, Sender, F_EVER_RETRANS, F_LOST, F_RETRANS, F_SACKED, F_SKB_END,
    RACK_RECOVERY_THRESH, TIMEOUT_MIN_JIFFIES,
};
use crate::cc::{CaState, RateSample};
use crate::Nanos;

/// `sysctl_tcp_max_reordering` (300): the most `tp->reordering` grows to.
const TCP_MAX_REORDERING: u32 = 300;

impl Sender {
    /// One segment is newly delivered (SACKed, or cumulatively ACKed without a prior SACK).
    pub(super) fn deliver(
        &mut self,
        seq: u64,
        via_sack: bool,
        now: Nanos,
        rs: &mut RateSample,
        acc: &mut DeliveryAcc,
    ) {
        let i = self.idx(seq);
        let s = &mut self.segs[i];
        self.tp.delivered += 1;
        acc.delivered += 1;
        if s.flags & F_LOST != 0 {
            self.tp.lost_out -= 1;
            if s.flags & F_RETRANS == 0 {
                self.lost_pending.remove(&seq);
            }
        }
        if s.flags & F_RETRANS != 0 {
            self.tp.retrans_out -= 1;
        }
        s.flags &= !(F_LOST | F_RETRANS);
        if via_sack {
            s.flags |= F_SACKED;
            self.tp.sacked_out += 1;
            acc.sacked += 1;
        }
        self.rate.on_delivered(&mut s.rec, seq + 1, rs);
        let rtt = now.saturating_sub(s.sent_ns);
        let sent = s.sent_ns;
        let ever_retrans = s.flags & F_EVER_RETRANS != 0;
        match (via_sack, ever_retrans) {
            (true, false) => {
                acc.first_sackt.get_or_insert(sent);
                acc.last_sackt = Some(sent);
            }
            (false, false) => {
                acc.first_ackt.get_or_insert(sent);
                acc.last_ackt = Some(sent);
            }
            (false, true) => acc.retrans_data_acked = true,
            (true, true) => {}
        }
        // RACK (`tcp_rack_advance()`): RACK.rtt follows every delivered transmission; its
        // send time tracks the most recently sent one. A retransmission acknowledged faster
        // than min RTT was probably spurious (the original arrived): skip it.
        let min_rtt_ns = self.rtt.min_rtt_us() as u64 * 1000;
        if ever_retrans && self.rtt.min_rtt_us() != u32::MAX && rtt < min_rtt_ns {
            return;
        }
        self.rack.rtt_ns = rtt;
        if !self.rack.valid
            || sent > self.rack.xmit_ns
            || (sent == self.rack.xmit_ns && seq + 1 > self.rack.end_seq)
        {
            self.rack.xmit_ns = sent;
            self.rack.end_seq = seq + 1;
            self.rack.valid = true;
        }
    }

    /// Whether segment `seq` (outstanding) was ever retransmitted (`TCPCB_RETRANS`).
    pub(super) fn ever_retrans(&self, seq: u64) -> bool {
        self.segs[self.idx(seq)].flags & F_EVER_RETRANS != 0
    }

    /// `tcp_highest_sack_seq()`: the end of the highest SACKed segment, `snd_una` if none.
    pub(super) fn highest_sack_seq(&self) -> u64 {
        if self.tp.sacked_out == 0 {
            return self.tp.snd_una;
        }
        self.sacked.last().map_or(self.tp.snd_una, |r| r.end)
    }

    /// `tcp_shift_skb_data()`: newly SACKed data joins the SACKed buffer just before it when
    /// neither was retransmitted, so a run of SACKed data sits in one buffer and costs one
    /// buffer's overhead.
    pub(super) fn shift_sacked(&mut self, seq: u64) {
        if seq == self.tp.snd_una {
            return;
        }
        let i = self.idx(seq);
        let prev = self.segs[i - 1].flags;
        let this = self.segs[i].flags;
        let plain_sacked = |f: u8| f & F_SACKED != 0 && f & F_EVER_RETRANS == 0;
        if prev & F_SKB_END != 0 && plain_sacked(prev) && plain_sacked(this) {
            self.segs[i - 1].flags &= !F_SKB_END;
            self.skbs_out -= 1;
        }
    }

    /// `tcp_check_sack_reordering()`: segment `low_seq`, never retransmitted, was delivered
    /// after segments up to the highest SACKed one. The distance is the path's reordering
    /// degree if it is the largest seen (at most `sysctl_tcp_max_reordering`), and the event
    /// counts in `reord_seen`, which keeps RACK's reordering window open from now on.
    pub(super) fn check_sack_reordering(&mut self, low_seq: u64) {
        let fack = self.highest_sack_seq();
        if low_seq >= fack {
            return;
        }
        let metric = fack - low_seq;
        if metric > self.reordering as u64 {
            self.reordering = metric.min(TCP_MAX_REORDERING as u64) as u32;
        }
        self.stats.reord_seen += 1;
    }

    /// A D-SACK for segment `dup` (`tcp_check_dsack()`, `tcp_dsack_seen()`, and the D-SACK
    /// part of `tcp_sacktag_one()`): a retransmission (or the original) arrived twice.
    /// Returns whether the D-SACK counts (`FLAG_DSACKING_ACK`).
    pub(super) fn check_dsack(&mut self, dup: u64, prior_una: u64, reord: &mut u64) -> bool {
        self.stats.dsack_dups += 1;
        // More D-SACKed segments than retransmissions: the receiver is not to be believed.
        if self.stats.dsack_dups > self.stats.retransmits {
            return false;
        }
        // After reordering was seen, a D-SACK suggests RACK's window was too short and
        // retransmitted a segment that was only late; not for a tail-loss probe's, which a
        // timer sent.
        let for_tlp = self.tlp_high_seq == Some(dup + 1);
        if self.stats.reord_seen > 0 && !for_tlp {
            self.rack.dsack_seen = true;
        }
        // One retransmission since the reduction began proved unneeded: count it off
        // `undo_retrans`, for the data already acknowledged as for outstanding segments
        // that were retransmitted.
        let since_marker = self.undo_marker.is_some_and(|m| dup + 1 > m);
        if dup < prior_una {
            if since_marker && self.undo_retrans > 0 {
                self.undo_retrans -= 1;
            }
            return true;
        }
        if dup >= self.tp.snd_nxt {
            return true;
        }
        let flags = self.segs[self.idx(dup)].flags;
        if flags & F_EVER_RETRANS != 0 {
            if since_marker && self.undo_retrans > 0 {
                self.undo_retrans -= 1;
            }
            // Both copies of a retransmitted segment already SACKed arrived: the original
            // was only late.
            if flags & F_SACKED != 0 && dup < *reord {
                *reord = dup;
            }
        }
        // (Linux would also SACK an outstanding segment not SACKed yet through its D-SACK;
        // the receiver's SACK blocks report it anyway.)
        true
    }

    /// `tcp_rack_update_reo_wnd()`: after an ACK that delivered data, widen RACK's window by
    /// one step if a D-SACK came since reordering was seen (at most once per round trip:
    /// D-SACKs for data sent before the last widening are ignored), or fall back to one step
    /// once the widening has outlived `RACK_RECOVERY_THRESH` recoveries. Step 8 of
    /// [`Sender::on_ack`].
    pub(super) fn rack_update_reo_wnd(&mut self, rs: &RateSample) {
        if rs.prior_delivered == 0 {
            return;
        }
        let rack = &mut self.rack;
        if rs.prior_delivered < rack.last_delivered {
            rack.dsack_seen = false;
        }
        if rack.dsack_seen {
            rack.reo_wnd_steps = (rack.reo_wnd_steps + 1).min(0xFF);
            rack.dsack_seen = false;
            rack.last_delivered = self.tp.delivered;
            rack.reo_wnd_persist = RACK_RECOVERY_THRESH;
        } else if rack.reo_wnd_persist == 0 {
            rack.reo_wnd_steps = 1;
        }
    }

    /// Mark `seq` lost (`tcp_mark_skb_lost()`); it joins the retransmission queue.
    pub(super) fn mark_lost(&mut self, seq: u64) {
        let i = self.idx(seq);
        let s = &mut self.segs[i];
        if s.flags & F_SACKED != 0 {
            return;
        }
        if s.flags & F_LOST != 0 {
            if s.flags & F_RETRANS == 0 {
                return; // already waiting for retransmission
            }
            s.flags &= !F_RETRANS;
            self.tp.retrans_out -= 1;
            self.lost_retrans = true;
        } else {
            s.flags |= F_LOST;
            self.tp.lost_out += 1;
        }
        self.tp.lost += 1;
        self.lost_pending.insert(seq);
        let rec = s.rec;
        self.cc.skb_marked_lost(&mut self.tp, &rec);
    }

    /// RACK reordering window (`tcp_rack_reo_wnd()`): min_rtt/4 per step, at most srtt.
    /// Until reordering has been seen it closes during recovery and once `reordering`
    /// segments are SACKed (the classic duplicate-ACK threshold).
    pub(super) fn rack_reo_wnd(&self) -> Nanos {
        if self.stats.reord_seen == 0
            && (self.tp.ca_state >= CaState::Recovery || self.tp.sacked_out >= self.reordering)
        {
            return 0;
        }
        let min_rtt = self.rtt.min_rtt_us();
        if min_rtt == u32::MAX {
            return 0;
        }
        (min_rtt as u64 * 1000 / 4 * self.rack.reo_wnd_steps as u64).min(self.rtt.srtt())
    }

    /// RACK loss detection (`tcp_rack_detect_loss()`), walking transmissions oldest first.
    pub(super) fn rack_detect_loss(&mut self, now: Nanos) {
        if !self.rack.valid {
            return;
        }
        let reo_wnd = self.rack_reo_wnd();
        while let Some(&(sent, seq, gen)) = self.rack_q.front() {
            if seq < self.tp.snd_una {
                self.rack_q.pop_front();
                continue;
            }
            let s = self.segs[self.idx(seq)];
            let stale = s.gen != gen
                || s.flags & F_SACKED != 0
                || (s.flags & F_LOST != 0 && s.flags & F_RETRANS == 0);
            if stale {
                self.rack_q.pop_front();
                continue;
            }
            let before_rack = sent < self.rack.xmit_ns
                || (sent == self.rack.xmit_ns && seq + 1 < self.rack.end_seq);
            if !before_rack {
                break;
            }
            let deadline = sent + self.rack.rtt_ns + reo_wnd;
            if deadline <= now {
                self.mark_lost(seq);
                self.rack_q.pop_front();
            } else {
                // Linux waits for the latest deadline among the candidates (all sent before
                // RACK.xmit), plus TCP_TIMEOUT_MIN, and then marks them together. Deadlines
                // grow with send time, so that is the last live candidate's.
                let latest = self
                    .last_rack_candidate()
                    .map_or(deadline, |t| t + self.rack.rtt_ns + reo_wnd);
                let tick = self.tp.ns_per_jiffy();
                let wait = (latest.max(deadline) - now).div_ceil(tick) + TIMEOUT_MIN_JIFFIES;
                self.rack_deadline = Some(self.on_tick(now, wait));
                break;
            }
        }
    }

    /// Send time of the most recently sent live transmission sent before RACK.xmit.
    fn last_rack_candidate(&self) -> Option<Nanos> {
        let pp = self
            .rack_q
            .partition_point(|&(t, _, _)| t < self.rack.xmit_ns);
        (0..pp).rev().take(64).find_map(|i| {
            let (sent, seq, gen) = self.rack_q[i];
            if seq < self.tp.snd_una {
                return None;
            }
            let s = &self.segs[self.idx(seq)];
            let live = s.gen == gen
                && s.flags & F_SACKED == 0
                && !(s.flags & F_LOST != 0 && s.flags & F_RETRANS == 0);
            live.then_some(sent)
        })
    }
}
