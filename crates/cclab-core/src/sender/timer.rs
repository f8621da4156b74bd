//! Timers, as tcp_timer.c: the retransmission timeout (`tcp_retransmit_timer()`, with
//! tcp_input.c's `tcp_enter_loss()`), the tail-loss probe (`tcp_schedule_loss_probe()`,
//! `tcp_send_loss_probe()`, tcp_output.c) and the RACK reordering timer, all armed in jiffies.

use super::{Sender, F_LOST, F_SACKED, TCP_REORDERING, TIMEOUT_MIN_JIFFIES};
use crate::cc::{CaEvent, CaState};
use crate::Nanos;

impl Sender {
    /// The earliest time the sender wants to be called back ([`Self::on_timeout`] or
    /// [`Self::poll_transmit`] for the pacing release).
    ///
    /// Once [`Self::poll_transmit`] has returned `None` at `now`, the answer is later than
    /// `now`: a sender held back by TSO deferral asks for no pacing wake-up (Linux arms no
    /// timer for a deferral; the next ACK or timer ends it), so a driver is never asked to
    /// call back at a time when nothing would be sent.
    pub fn next_timeout(&self) -> Option<Nanos> {
        let mut t = [self.rto_deadline, self.tlp_deadline, self.rack_deadline]
            .into_iter()
            .flatten()
            .min();
        if self.pacing
            && !self.deferred
            && (!self.lost_pending.is_empty() || self.has_new_data())
            && self.tp.packets_in_flight() < self.tp.snd_cwnd
        {
            t = Some(t.map_or(self.next_send_ns, |x| x.min(self.next_send_ns)));
        }
        if let Some(w) = self.tsq.wake {
            t = Some(t.map_or(w, |x| x.min(w)));
        }
        t
    }

    /// Handle whichever timers have expired at `now`; returns whether one had (a call at the
    /// pacing release time alone returns `false`).
    pub fn on_timeout(&mut self, now: Nanos) -> bool {
        self.set_now(now);
        self.deferred = false;
        let fired = [self.rack_deadline, self.tlp_deadline, self.rto_deadline]
            .into_iter()
            .flatten()
            .any(|t| t <= now);
        if matches!(self.rack_deadline, Some(t) if t <= now) {
            self.rack_deadline = None;
            let lost_before = self.tp.lost;
            self.rack_detect_loss(now);
            if self.tp.lost > lost_before && self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                if !self.model_based {
                    let lost = (self.tp.lost - lost_before) as u32;
                    self.prr(1, lost, false);
                }
            }
        }
        if matches!(self.tlp_deadline, Some(t) if t <= now) {
            self.tlp_deadline = None;
            self.send_loss_probe(now);
        }
        if matches!(self.rto_deadline, Some(t) if t <= now) {
            self.rto_deadline = None;
            self.on_rto(now);
        }
        fired
    }

    /// When a kernel timer armed at `now` for `jiffies` fires: at that many ticks after the
    /// current one (`expires = jiffies + timeout`), never before `now`.
    pub(super) fn on_tick(&self, now: Nanos, jiffies: u64) -> Nanos {
        let tick = self.tp.ns_per_jiffy();
        ((now / tick + jiffies) * tick).max(now)
    }

    /// `tcp_schedule_loss_probe()`.
    pub(super) fn schedule_loss_probe(&mut self, now: Nanos) {
        if self.tp.packets_out == 0
            || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
            || self.tlp_high_seq.is_some()
        {
            self.tlp_deadline = None;
            return;
        }
        // In jiffies, as Linux arms it: 2 srtt rounded up, plus TCP_TIMEOUT_MIN (or the
        // minimum RTO with one segment out), but no later than the RTO.
        let tick = self.tp.ns_per_jiffy();
        let mut timeout = if self.rtt.has_sample() {
            let two_srtt = (2 * self.rtt.srtt()).div_ceil(tick);
            if self.tp.packets_out == 1 {
                two_srtt + self.rtt.rto_min().div_ceil(tick)
            } else {
                two_srtt + TIMEOUT_MIN_JIFFIES
            }
        } else {
            crate::rtt::RTO_INIT.div_ceil(tick)
        };
        if let Some(rto) = self.rto_deadline {
            timeout = timeout.min(rto.saturating_sub(now).div_ceil(tick));
        }
        self.tlp_deadline = Some(self.on_tick(now, timeout));
    }

    /// `tcp_send_loss_probe()`.
    fn send_loss_probe(&mut self, now: Nanos) {
        if self.tp.packets_out == 0 || self.tlp_high_seq.is_some() {
            return;
        }
        let probe = if self.has_new_data() {
            let seq = self.tp.snd_nxt;
            Some(self.transmit(seq, now, false))
        } else {
            let last = self.tp.snd_nxt - 1;
            let i = self.idx(last);
            if self.segs[i].flags & F_SACKED == 0 {
                if self.segs[i].flags & F_LOST != 0 {
                    self.lost_pending.remove(&last);
                }
                Some(self.transmit(last, now, true))
            } else {
                None
            }
        };
        if let Some(mut seg) = probe {
            seg.burst_end = true;
            self.stats.tlp_count += 1;
            self.tlp_high_seq = Some(self.tp.snd_nxt);
            self.tlp_retrans = seg.retrans;
            self.pending_probe = Some(seg);
        }
        self.rto_deadline = Some(now + self.rtt.rto());
    }

    /// Retransmission timeout (`tcp_retransmit_timer()` + `tcp_enter_loss()`).
    fn on_rto(&mut self, now: Nanos) {
        if self.tp.packets_out == 0 {
            return;
        }
        self.stats.rto_count += 1;
        let first_rto_without_progress =
            self.tp.ca_state == CaState::Loss && self.rto_retransmits == 0;
        let reduce = self.tp.ca_state <= CaState::Disorder
            || self.tp.snd_una >= self.high_seq
            || first_rto_without_progress;
        if reduce {
            self.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.cwnd_event(&mut self.tp, CaEvent::Loss);
        }
        // Mark the head lost, and every other segment that has been out for longer than
        // RACK.rtt (`tcp_timeout_mark_lost()`); recently sent ones get a chance to arrive.
        let una = self.tp.snd_una;
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.flags & F_SACKED != 0 {
                continue;
            }
            let recent = self.rack.valid && now.saturating_sub(s.sent_ns) < self.rack.rtt_ns;
            if i == 0 || !recent {
                self.mark_lost(una + i as u64);
            }
        }
        if reduce {
            self.init_undo();
        }
        let cwnd = self.tp.packets_in_flight() + 1;
        self.tp.set_cwnd(cwnd);
        self.tp.snd_cwnd_cnt = 0;
        // A timeout with many segments SACKed in Open or Disorder state suggests the
        // reordering degree was overestimated (`tcp_enter_loss()`).
        if self.tp.ca_state <= CaState::Disorder && self.tp.sacked_out >= TCP_REORDERING {
            self.reordering = self.reordering.min(TCP_REORDERING);
        }
        self.high_seq = self.tp.snd_nxt;
        self.tlp_high_seq = None;
        self.tlp_deadline = None;
        self.rack_deadline = None;
        self.set_ca_state(CaState::Loss);
        self.rto_retransmits += 1;
        self.rtt.backoff();
        self.rto_deadline = Some(now + self.rtt.rto());
        // The retransmission goes out at once, whatever the pacing schedule.
        self.next_send_ns = now;
        self.burst_left = 0;
    }
}
