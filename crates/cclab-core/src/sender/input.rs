//! ACK processing, as tcp_input.c: `tcp_ack()`'s steps ([`Sender::on_ack`], listed in the
//! module docs), the CA state machine (`tcp_fastretrans_alert()`), undo
//! (`tcp_try_undo_*()`), window reductions (`tcp_enter_recovery()`, `tcp_enter_cwr()`),
//! `tcp_cong_control()` with PRR (`tcp_cwnd_reduction()`) and `tcp_update_pacing_rate()`.

use super::{
    AckOutcome, DeliveryAcc, Sender, F_EVER_RETRANS, F_LOST, F_SACKED, F_SKB_END,
    RACK_RECOVERY_THRESH, TCP_REORDERING,
};
use crate::cc::{AckSample, CaEvent, CaState, RateSample};
use crate::packet::Ack;
use crate::{Nanos, NS_PER_SEC};

/// What the steps of [`Sender::on_ack`] hand on to each other: Linux `tcp_ack()`'s locals.
struct AckState {
    /// Segments in flight before the ACK (`prior_in_flight`).
    prior_in_flight: u32,
    /// `snd_una` before the ACK (`prior_snd_una`).
    prior_una: u64,
    /// The highest SACKed sequence before this ACK (`prior_fack`).
    prior_fack: u64,
    /// `tp.lost` before the ACK.
    lost_before: u64,
    /// The ACK echoes ECE on a connection that negotiated ECN.
    ece: bool,
    rs: RateSample,
    acc: DeliveryAcc,
    /// The ACK's D-SACK counts (`FLAG_DSACKING_ACK`).
    dsack: bool,
    /// Segments the cumulative ACK newly acknowledged.
    acked_cum: u32,
    /// `snd_una` advanced.
    una_advanced: bool,
    /// RTT of the most recently sent newly delivered segment (`ca_rtt_us`).
    ca_rtt: Option<Nanos>,
    /// Segments newly marked lost.
    newly_lost: u32,
    out: AckOutcome,
}

impl Sender {
    /// Process an ACK arriving at `now`: the steps listed in the module docs, in order, one
    /// method each (documented with its step number).
    pub fn on_ack(&mut self, now: Nanos, ack: &Ack) -> AckOutcome {
        self.set_now(now);
        self.deferred = false;
        if ack.cum > self.tp.snd_nxt {
            return AckOutcome::default(); // acknowledges data never sent: ignore
        }
        self.ack_update_window(ack);
        let mut st = self.begin_ack(ack);
        self.sacktag(now, ack, &mut st);
        self.clean_rtx_queue(now, ack, &mut st);
        self.account_delivery(now, ack, &mut st);
        self.ack_update_rtt(now, &mut st);
        self.rearm_rto(now, &st);
        self.rack_update_reo_wnd(&st.rs);
        self.process_tlp_ack(ack, &mut st);
        self.in_ack_event(&st);
        self.alert_if_dubious(now, &st);
        self.cong_control_on_ack(&mut st);
        self.end_ack(now, st)
    }

    /// Step 1. The window and the timestamp (`tcp_ack_update_window()`, `tcp_store_ts_recent()`):
    /// the right edge only moves forward, even if ACKs arrive out of order.
    #[inline]
    fn ack_update_window(&mut self, ack: &Ack) {
        let mss = self.cfg.mss as u64;
        let cum_bytes = match self.cfg.size {
            Some(size) => (ack.cum * mss).min(size),
            None => ack.cum * mss,
        };
        self.snd_wnd_end = self.snd_wnd_end.max(cum_bytes + ack.wnd);
        self.max_window = self.max_window.max(ack.wnd);
        self.ts_recent = self.ts_recent.max(ack.tsval);
    }

    /// Step 2. The state before the ACK, which the later steps measure against.
    #[inline]
    fn begin_ack(&mut self, ack: &Ack) -> AckState {
        let prior_in_flight = self.tp.packets_in_flight();
        let prior_una = self.tp.snd_una;
        let lost_before = self.tp.lost;
        self.lost_retrans = false;
        // `tcp_ecn_rcv_ecn_echo()`: ECE counts only on a connection that negotiated ECN
        // (with AccECN it comes from the ACE field, in step 5).
        let ece = ack.ece && self.tp.ecn_ok && !self.accecn;
        let rs = RateSample {
            prior_in_flight,
            is_ack_delayed: ack.delayed,
            is_ece: ece,
            ..RateSample::default()
        };
        let acc = DeliveryAcc::default();
        // The highest SACKed sequence before this ACK (`prior_fack`).
        let prior_fack = self.highest_sack_seq();
        AckState {
            prior_in_flight,
            prior_una,
            prior_fack,
            lost_before,
            ece,
            rs,
            acc,
            dsack: false,
            acked_cum: 0,
            una_advanced: false,
            ca_rtt: None,
            newly_lost: 0,
            out: AckOutcome::default(),
        }
    }

    /// Step 3. SACK blocks, in sequence order as Linux sorts them (`tcp_sacktag_write_queue()`).
    #[inline]
    fn sacktag(&mut self, now: Nanos, ack: &Ack, st: &mut AckState) {
        let (rs, acc) = (&mut st.rs, &mut st.acc);
        // The lowest never-retransmitted segment this ACK shows delivered after a higher
        // one (`state->reord`); `snd_nxt` = none.
        let mut reord = self.tp.snd_nxt;
        st.dsack = match ack.dsack {
            Some(dup) => self.check_dsack(dup, st.prior_una, &mut reord),
            None => false,
        };
        let mut blocks: [(u64, u64); crate::packet::MAX_SACK_BLOCKS] = Default::default();
        let nb = ack.sack_blocks().len();
        for (i, b) in ack.sack_blocks().iter().enumerate() {
            blocks[i] = (b.start, b.end);
        }
        blocks[..nb].sort_unstable();
        let mut newly: Vec<std::ops::Range<u64>> = Vec::new();
        for &(bs, be) in &blocks[..nb] {
            let start = bs.max(ack.cum).max(self.tp.snd_una);
            let end = be.min(self.tp.snd_nxt);
            if start >= end {
                continue;
            }
            // `tcp_sacktag_one()`: a never-retransmitted segment SACKed below the highest
            // SACKed one filled a hole that was not a loss: reordering.
            let highest = self.highest_sack_seq();
            newly.clear();
            self.sacked.insert_with(start..end, |r| newly.push(r));
            for r in newly.drain(..) {
                for seq in r {
                    if seq < highest.min(reord) && !self.ever_retrans(seq) {
                        reord = seq;
                    }
                    self.deliver(seq, true, now, rs, acc);
                    self.shift_sacked(seq);
                }
            }
        }
        // After RTO, retransmissions are too many to tell reordering from (Linux checks in
        // Loss state only while the reduction may still be undone).
        if self.tp.ca_state != CaState::Loss || self.undo_marker.is_some() {
            self.check_sack_reordering(reord);
        }
    }

    /// Step 4. Cumulative ACK (`tcp_clean_rtx_queue()`).
    #[inline]
    fn clean_rtx_queue(&mut self, now: Nanos, ack: &Ack, st: &mut AckState) {
        let (rs, acc) = (&mut st.rs, &mut st.acc);
        let mut acked_cum = 0u32;
        // The lowest newly acknowledged segment neither SACKed nor ever retransmitted.
        let mut reord_cum = self.tp.snd_nxt;
        if ack.cum > self.tp.snd_una {
            for seq in self.tp.snd_una..ack.cum {
                let i = self.idx(seq);
                let flags = self.segs[i].flags;
                if flags & F_SKB_END != 0 {
                    self.skbs_out -= 1;
                }
                if flags & F_SACKED == 0 {
                    if flags & F_EVER_RETRANS == 0 {
                        reord_cum = reord_cum.min(seq);
                    }
                    self.deliver(seq, false, now, rs, acc);
                } else {
                    self.tp.sacked_out -= 1;
                    if flags & F_EVER_RETRANS != 0 {
                        acc.retrans_data_acked = true;
                    }
                }
                acked_cum += 1;
            }
            let n = (ack.cum - self.tp.snd_una) as usize;
            self.segs.drain(..n);
            self.tp.snd_una = ack.cum;
            self.tp.packets_out = (self.tp.snd_nxt - self.tp.snd_una) as u32;
            self.sacked.remove_below(ack.cum);
            if self.lost_pending.first().is_some_and(|&s| s < ack.cum) {
                self.lost_pending = self.lost_pending.split_off(&ack.cum);
            }
            // A hole below the highest SACK filled by an original transmission: reordering.
            if reord_cum < st.prior_fack {
                self.check_sack_reordering(reord_cum);
            }
        }
        st.acked_cum = acked_cum;
    }

    /// Step 5. What the delivery means beyond the scoreboard: buffer space for the writer,
    /// CE-marked deliveries, the probing start's ACK train.
    #[inline]
    fn account_delivery(&mut self, now: Nanos, ack: &Ack, st: &mut AckState) {
        st.una_advanced = self.tp.snd_una > st.prior_una;
        self.queue_shrunk |= st.una_advanced;
        if self.accecn {
            // `tcp_accecn_process()`: the ACE field (and the option) say how many of the
            // delivered segments were CE; any makes the ACK's ECE (`FLAG_ECE`).
            let delivered = st.acc.delivered as u64;
            let bytes = (delivered * self.cfg.mss as u64).min(u32::MAX as u64) as u32;
            let progress = st.una_advanced || delivered > 0;
            let ce = self.accecn_delta(ack, delivered, bytes, progress);
            self.tp.delivered_ce += ce;
            st.ece = ce > 0;
            st.rs.is_ece = st.ece;
        } else if st.ece {
            // `tcp_count_delivered()`: what an ECE ACK delivers counts as CE-marked.
            self.tp.delivered_ce += st.acc.delivered as u64;
        }
        if self.cfg.host.probe_start && self.stats.probe_start_bw.is_none() {
            self.probe_train(now);
        }
    }

    /// Step 6. RTT (`tcp_ack_update_rtt()`): the cumulative part gives a sample only if it covers
    /// no retransmitted data (Karn); SACKed segments give one too. srtt uses the oldest
    /// newly acknowledged segment, min RTT and the rate sample the newest.
    #[inline]
    fn ack_update_rtt(&mut self, now: Nanos, st: &mut AckState) {
        let acc = &st.acc;
        let mut seq_rtt = None;
        let mut ca_rtt = None;
        if let (Some(first), Some(last)) = (acc.first_ackt, acc.last_ackt) {
            if !acc.retrans_data_acked {
                seq_rtt = Some(now - first);
                ca_rtt = Some(now - last);
            }
        }
        if let (Some(first), Some(last)) = (acc.first_sackt, acc.last_sackt) {
            seq_rtt = seq_rtt.or(Some(now - first));
            ca_rtt = Some(now - last);
        }
        if let Some(ca) = ca_rtt {
            st.rs.rtt_us = (ca / 1000) as i64;
            st.out.rtt_sample = Some(ca);
        }
        if let Some(srtt_sample) = seq_rtt {
            if let Some(ca) = ca_rtt {
                self.rtt.on_min_sample(now, ca);
                self.tp.min_rtt_us = self.rtt.min_rtt_us();
            }
            self.rtt
                .on_sample(srtt_sample, self.tp.snd_una, self.tp.snd_nxt);
            self.tp.srtt_us = (self.rtt.srtt() / 1000).max(1) as u32;
            self.rtt.reset_backoff();
        }
        st.ca_rtt = ca_rtt;
    }

    /// Step 7. Progress restarts the retransmission timer (`tcp_rearm_rto()`).
    #[inline]
    fn rearm_rto(&mut self, now: Nanos, st: &AckState) {
        if st.una_advanced {
            self.rto_retransmits = 0;
            self.rto_deadline = if self.tp.packets_out > 0 {
                Some(now + self.rtt.rto())
            } else {
                None
            };
        }
    }

    /// Step 9. End of a tail-loss-probe episode (`tcp_process_tlp_ack()`).
    #[inline]
    fn process_tlp_ack(&mut self, ack: &Ack, st: &mut AckState) {
        let una_advanced = st.una_advanced;
        if let Some(h) = self.tlp_high_seq {
            st.rs.is_acking_tlp_retrans_seq = self.tlp_retrans && ack.cum >= h && una_advanced;
            if ack.cum >= h {
                if !self.tlp_retrans || ack.dsack.is_some() {
                    // New data was probed, or the probe was a duplicate: no loss.
                    self.tlp_high_seq = None;
                } else if ack.cum > h {
                    // The probe repaired a loss: reduce the window once.
                    self.init_cwnd_reduction();
                    self.set_ca_state(CaState::Cwr);
                    self.end_cwnd_reduction();
                    self.set_ca_state(CaState::Open);
                    self.high_seq = self.tp.snd_nxt;
                    self.cc.cwnd_event(&mut self.tp, CaEvent::TlpRecovery);
                } else if !una_advanced && st.acc.delivered == 0 {
                    // A pure duplicate ACK: original and probe both arrived.
                    self.tlp_high_seq = None;
                }
            }
        }
    }

    /// Step 10. `tcp_in_ack_event()`.
    #[inline]
    fn in_ack_event(&mut self, st: &AckState) {
        self.cc.in_ack_event(&mut self.tp, st.ece);
    }

    /// Step 11. Loss detection and state machine (`tcp_ack_is_dubious()`: an ECE ACK too,
    /// and a duplicate ACK with a D-SACK, which may undo a reduction).
    #[inline]
    fn alert_if_dubious(&mut self, now: Nanos, st: &AckState) {
        if self.tp.ca_state != CaState::Open
            || self.tp.sacked_out > 0
            || self.tp.lost_out > 0
            || st.ece
            || (st.dsack && !st.una_advanced)
        {
            self.fastretrans_alert(now, st.ece, st.una_advanced);
        }
    }

    /// Step 12. Rate sample and congestion control.
    #[inline]
    fn cong_control_on_ack(&mut self, st: &mut AckState) {
        st.newly_lost = (self.tp.lost - st.lost_before) as u32;
        let (rs, acc, newly_lost) = (&mut st.rs, &st.acc, st.newly_lost);
        self.rate
            .generate(&mut self.tp, acc.delivered, newly_lost, rs);
        if acc.delivered > 0 {
            let sample = AckSample {
                pkts_acked: st.acked_cum,
                rtt_us: st.ca_rtt.map_or(-1, |r| (r / 1000) as i64),
                in_flight: st.prior_in_flight,
            };
            self.cc.pkts_acked(&mut self.tp, &sample);
        }
        self.cong_control(
            rs,
            acc.delivered,
            newly_lost,
            st.una_advanced,
            acc.sacked > 0,
        );
    }

    /// Step 13. Re-arm the tail-loss probe in Open state, and report what the ACK changed.
    #[inline]
    fn end_ack(&mut self, now: Nanos, st: AckState) -> AckOutcome {
        let mut out = st.out;
        if self.tp.ca_state == CaState::Open {
            self.schedule_loss_probe(now);
        }
        out.delivered = st.acc.delivered;
        out.lost = st.newly_lost;
        out
    }

    /// Probing start: time the ACKs of the initial window; once it is all delivered, their
    /// spacing is the bottleneck's rate (a packet train), and the controller jumps to it.
    fn probe_train(&mut self, now: Nanos) {
        let d = self.tp.delivered;
        let t = match self.train {
            None if d > 0 => {
                self.train = Some([(now, d), (now, d)]);
                return;
            }
            None => return,
            Some(mut t) => {
                t[1] = (now, d);
                self.train = Some(t);
                t
            }
        };
        if d < self.cfg.init_cwnd.max(2) as u64 {
            return;
        }
        let ([t0, d0], [t1, d1]) = ([t[0].0, t[0].1], [t[1].0, t[1].1]);
        // Done, with or without a usable train (ACKs that came together measure nothing).
        self.stats.probe_start_bw = Some(0);
        if t1 <= t0 || d1 <= d0 {
            return;
        }
        let bw = (d1 - d0) * self.cfg.mss as u64 * NS_PER_SEC / (t1 - t0);
        self.stats.probe_start_bw = Some(bw);
        let min_rtt = self.rtt.min_rtt_us();
        if min_rtt != u32::MAX {
            self.cc.jump_start(&mut self.tp, bw, min_rtt);
        }
    }

    pub(super) fn set_ca_state(&mut self, s: CaState) {
        if self.tp.ca_state != s {
            self.cc.set_state(&mut self.tp, s);
            self.tp.ca_state = s;
        }
    }

    /// `tcp_current_ssthresh()`: ssthresh during a reduction, else at least 3/4 of cwnd.
    pub(super) fn current_ssthresh(&self) -> u32 {
        let tp = &self.tp;
        if matches!(tp.ca_state, CaState::Cwr | CaState::Recovery) {
            tp.snd_ssthresh
        } else {
            tp.snd_ssthresh.max((tp.snd_cwnd >> 1) + (tp.snd_cwnd >> 2))
        }
    }

    /// `tcp_init_undo()`: a reduction begins that D-SACKs may yet show spurious; the
    /// retransmissions already in flight must be accounted for too.
    pub(super) fn init_undo(&mut self) {
        self.undo_marker = Some(self.tp.snd_una);
        self.undo_retrans = if self.tp.retrans_out > 0 {
            self.tp.retrans_out as i64
        } else {
            -1
        };
    }

    /// `tcp_may_undo()` without timestamps: every retransmission since the reduction began
    /// drew a D-SACK.
    fn may_undo(&self) -> bool {
        self.undo_marker.is_some() && self.undo_retrans == 0
    }

    /// `tcp_undo_cwnd_reduction()`: back to the window before the spurious reduction (the
    /// controller's `undo_cwnd`, and the ssthresh before it if that was larger). With
    /// `unmark_loss` (after an RTO) the segments marked lost are not lost any more.
    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            for s in self.segs.iter_mut() {
                s.flags &= !F_LOST;
            }
            self.tp.lost_out = 0;
            self.lost_pending.clear();
        }
        if self.prior_ssthresh != 0 {
            let cwnd = self.cc.undo_cwnd(&mut self.tp);
            self.tp.set_cwnd(cwnd);
            if self.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.prior_ssthresh;
                // `tcp_ecn_withdraw_cwr()`.
                self.queue_cwr = false;
            }
        }
        self.undo_marker = None;
        self.stats.undos += 1;
    }

    /// `tcp_try_undo_recovery()` at the end of a recovery (or of the Loss state): undo it if
    /// it was spurious, else count one more recovery that a widened RACK window outlived.
    fn try_undo_recovery(&mut self) {
        if self.may_undo() {
            self.undo_cwnd_reduction(false);
        } else {
            self.rack.reo_wnd_persist = self.rack.reo_wnd_persist.saturating_sub(1);
        }
    }

    /// `tcp_try_undo_dsack()`: D-SACKs have covered every retransmission, so the reduction
    /// was spurious; a widened RACK window lasts one recovery longer.
    fn try_undo_dsack(&mut self) -> bool {
        if !self.may_undo() {
            return false;
        }
        self.rack.reo_wnd_persist = (self.rack.reo_wnd_persist + 1).min(RACK_RECOVERY_THRESH);
        self.undo_cwnd_reduction(false);
        true
    }

    /// `tcp_try_keep_open()`: Disorder while anything is SACKed, lost or retransmitted,
    /// else Open.
    fn try_keep_open(&mut self) {
        let any_retrans = self.tp.retrans_out > 0
            || self
                .segs
                .front()
                .is_some_and(|s| s.flags & F_EVER_RETRANS != 0);
        let state = if self.tp.sacked_out + self.tp.lost_out > 0 || any_retrans {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.tp.ca_state != state {
            self.set_ca_state(state);
            self.high_seq = self.tp.snd_nxt;
        }
    }

    /// `tcp_init_cwnd_reduction()`.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.tp.snd_nxt;
        self.tlp_high_seq = None;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
    }

    /// `tcp_end_cwnd_reduction()`.
    fn end_cwnd_reduction(&mut self) {
        if self.model_based {
            return;
        }
        // Not after an undo, which restored the window.
        if self.tp.snd_ssthresh < crate::cc::TCP_INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Cwr || self.undo_marker.is_some())
        {
            self.tp.set_cwnd(self.tp.snd_ssthresh);
        }
        self.cc.cwnd_event(&mut self.tp, CaEvent::CompleteCwr);
    }

    /// `tcp_enter_recovery()`: a window reduction already under way (CWR after an ECN
    /// echo) is not started again.
    pub(super) fn enter_recovery(&mut self, ece: bool) {
        self.stats.recoveries += 1;
        self.prior_ssthresh = 0;
        self.init_undo();
        if !matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery) {
            if !ece {
                self.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.tlp_high_seq = None;
        self.tlp_deadline = None;
        self.set_ca_state(CaState::Recovery);
    }

    /// `tcp_enter_cwr()`: one window reduction for an ECN echo (which proves congestion:
    /// nothing to undo).
    fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
            // RFC 3168's CWR flag; with AccECN the flag is part of the ACE field.
            self.queue_cwr = !self.accecn;
            self.stats.cwr_events += 1;
        }
    }

    /// The part of `tcp_fastretrans_alert()` this model needs (step 11 of
    /// [`Sender::on_ack`], for a dubious ACK).
    fn fastretrans_alert(&mut self, now: Nanos, ece: bool, una_advanced: bool) {
        if ece {
            // An ECN echo proves the congestion: no undo.
            self.prior_ssthresh = 0;
        }
        // Leave Recovery/Loss/CWR once everything outstanding at its start is acknowledged
        // (CWR: something above it, so that the CWR flag reached the receiver), undoing the
        // reduction if D-SACKs showed every retransmission unneeded.
        match self.tp.ca_state {
            CaState::Recovery if self.tp.snd_una >= self.high_seq => {
                self.try_undo_recovery();
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            CaState::Cwr if self.tp.snd_una > self.high_seq => {
                self.end_cwnd_reduction();
                self.set_ca_state(CaState::Open);
            }
            CaState::Loss => {
                // `tcp_process_loss()`: `tcp_try_undo_loss()` on progress, else the end.
                if una_advanced && self.may_undo() {
                    self.undo_cwnd_reduction(true);
                    self.rto_retransmits = 0;
                    self.set_ca_state(CaState::Open);
                } else if self.tp.snd_una >= self.high_seq {
                    self.try_undo_recovery();
                    self.set_ca_state(CaState::Open);
                }
            }
            _ => {}
        }
        // `tcp_try_undo_dsack()`: during Recovery (which then ends), or a late D-SACK after
        // it, in Open or Disorder state.
        let state = self.tp.ca_state;
        match state {
            CaState::Recovery if self.try_undo_dsack() => self.try_keep_open(),
            CaState::Open | CaState::Disorder => {
                self.try_undo_dsack();
            }
            _ => {}
        }
        self.rack_detect_loss(now);
        // Enter Recovery on a detected loss; from Loss (after an RTO) only when a
        // retransmission was lost again (`FLAG_LOST_RETRANS` in `tcp_fastretrans_alert()`).
        let from_loss = self.tp.ca_state == CaState::Loss && self.lost_retrans;
        if self.tp.lost_out > 0 && (self.tp.ca_state < CaState::Recovery || from_loss) {
            self.enter_recovery(ece);
        } else if ece {
            // `tcp_try_to_open()`.
            self.enter_cwr();
        }
        match self.tp.ca_state {
            CaState::Open if self.tp.sacked_out > 0 => self.set_ca_state(CaState::Disorder),
            CaState::Disorder if self.tp.sacked_out == 0 && self.tp.lost_out == 0 => {
                self.set_ca_state(CaState::Open)
            }
            _ => {}
        }
    }

    /// `tcp_cong_control()`.
    fn cong_control(
        &mut self,
        rs: &RateSample,
        acked_sacked: u32,
        newly_lost: u32,
        una_advanced: bool,
        newly_sacked: bool,
    ) {
        self.model_based = self.cc.cong_control(&mut self.tp, rs);
        if self.model_based {
            return;
        }
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr(acked_sacked, newly_lost, una_advanced);
        } else if una_advanced || (newly_sacked && self.reordering > TCP_REORDERING) {
            // `tcp_may_raise_cwnd()`: grow on in-order delivery, or on any delivery once the
            // path is known to reorder more than the default degree.
            let ack = self.tp.snd_una;
            self.cc.cong_avoid(&mut self.tp, ack, acked_sacked);
        }
        self.update_pacing_rate();
    }

    /// Proportional rate reduction (RFC 6937, `tcp_cwnd_reduction()`).
    pub(super) fn prr(&mut self, newly_acked_sacked: u32, newly_lost: u32, una_advanced: bool) {
        if newly_acked_sacked == 0 || self.tp.prior_cwnd == 0 {
            return;
        }
        self.prr_delivered += newly_acked_sacked;
        let inflight = self.tp.packets_in_flight() as i64;
        let delta = self.tp.snd_ssthresh as i64 - inflight;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.tp.snd_ssthresh as u64 * self.prr_delivered as u64
                + self.tp.prior_cwnd as u64
                - 1;
            (dividend / self.tp.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut n =
                (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if una_advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tp.set_cwnd((inflight + sndcnt).max(1) as u32);
    }

    /// `tcp_update_pacing_rate()`: 200% of cwnd/srtt in slow start, 120% after.
    fn update_pacing_rate(&mut self) {
        let tp = &mut self.tp;
        if tp.srtt_us == 0 {
            return;
        }
        let ratio: u64 = if tp.snd_cwnd < tp.snd_ssthresh / 2 {
            200
        } else {
            120
        };
        let pkts = tp.snd_cwnd.max(tp.packets_out) as u64;
        let rate = tp.mss as u64 * 1_000_000 * ratio / 100 * pkts / tp.srtt_us as u64;
        tp.pacing_rate = rate.min(tp.max_pacing_rate);
    }
}
