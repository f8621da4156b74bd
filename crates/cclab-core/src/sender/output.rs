//! Transmission, as tcp_output.c: `tcp_write_xmit()` ([`Sender::poll_transmit`]), the
//! receive-window test (`tcp_snd_wnd_test()`), TSO burst sizing and deferral
//! (`tcp_tso_autosize()`, `tcp_tso_should_defer()`), pacing
//! (`tcp_update_skb_after_send()`), `tcp_transmit_skb()`, `tcp_cwnd_validate()`, the restart
//! after idle (`tcp_cwnd_restart()`); and tcp_rate.c's `tcp_rate_check_app_limited()`.

use super::{Seg, Sender, F_EVER_RETRANS, F_RETRANS, F_SACKED, F_SKB_END, GSO_MAX_SIZE};
use crate::cc::{CaEvent, CaState};
use crate::packet::{Ecn, Segment};
use crate::{Nanos, NS_PER_SEC};

/// `sysctl_tcp_tso_rtt_log` (default 9): on paths with min_rtt below 2^k x 512 us, TSO
/// bursts grow by 64 KB >> k.
const TSO_RTT_LOG: u32 = 9;
/// `sk_pacing_shift` default: a TSO burst is about 1/1024 s of data at the pacing rate.
pub(super) const PACING_SHIFT: u32 = 10;
/// TSO deferral's limits (`tcp_tso_should_defer()`): the last transmission must be this
/// recent, and the next ACK due within min(srtt/2, this).
pub(super) const TSO_DEFER_NS: Nanos = 1_000_000;

impl Sender {
    /// The last segment (exclusive) the receive window lets the sender send.
    pub(super) fn wnd_limit(&self) -> u64 {
        let mss = self.cfg.mss as u64;
        match (self.cfg.size, self.total_segs) {
            (Some(size), Some(t)) if self.snd_wnd_end >= size => t,
            _ => self.snd_wnd_end / mss,
        }
    }

    fn seg_len(&self, seq: u64) -> u32 {
        match self.cfg.size {
            Some(size) => {
                let start = seq * self.cfg.mss as u64;
                (size - start).min(self.cfg.mss as u64) as u32
            }
            None => self.cfg.mss,
        }
    }

    /// Whether new data may go now: written by the application and inside the receive
    /// window.
    pub(super) fn has_new_data(&self) -> bool {
        self.tp.snd_nxt < self.app_written.min(self.wnd_limit())
    }

    /// Whether the application has more to write, ever.
    fn app_has_more(&self) -> bool {
        self.total_segs.is_none_or(|t| self.tp.snd_nxt < t)
    }

    /// The next segment to put on the wire now, if cwnd, pacing and data allow.
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        self.set_now(now);
        self.tsq.wake = None;
        if let Some(p) = self.pending_probe.take() {
            return Some(p);
        }
        self.app_write(now);
        let have_retrans = !self.lost_pending.is_empty();
        if !have_retrans && !self.has_new_data() {
            if !self.app_has_more() {
                self.check_app_limited();
            }
            return None;
        }
        if self.tp.packets_in_flight() >= self.tp.snd_cwnd {
            self.cwnd_validate(true);
            return None;
        }
        if self.burst_left == 0 {
            if self.pacing && now < self.next_send_ns {
                return None;
            }
            let quota = self.tp.snd_cwnd - self.tp.packets_in_flight();
            self.burst_retrans = have_retrans;
            if self.cfg.tso {
                let goal = self.tso_segs();
                if have_retrans {
                    // `tcp_xmit_retransmit_queue()`: one lost skb per transmission, at most
                    // min(quota, tso segs) of it; new data goes in bursts of its own.
                    self.burst_left = quota.min(goal).min(self.lost_run());
                } else {
                    // `tcp_snd_wnd_test()` / `tcp_mss_split_point()`: new data stays inside
                    // the receive window.
                    let wnd_quota = (self.wnd_limit() - self.tp.snd_nxt).min(u32::MAX as u64);
                    let quota = quota.min(wnd_quota as u32);
                    if self.tso_should_defer(now, quota, goal) {
                        self.cwnd_validate(true);
                        self.deferred = true;
                        return None;
                    }
                    // `tcp_cwnd_test()`: one buffer carries at most half of cwnd, so at
                    // least two are in flight; what is left goes in the next one, which
                    // deferral may hold.
                    self.burst_left = quota.min(goal).min((self.tp.snd_cwnd / 2).max(1));
                }
            } else {
                self.burst_left = 1;
            }
            // TCP small queues: too much already waits at the host's interface.
            if self.tsq_throttled(now, self.burst_left, have_retrans) {
                self.burst_left = 0;
                return None;
            }
            if !have_retrans {
                self.refill_tail(now);
            }
            self.stats.bursts += 1;
            self.pace_burst(now);
        }
        self.burst_left -= 1;
        let seg = if self.burst_retrans {
            let seq = self
                .lost_pending
                .pop_first()
                .expect("a retransmission burst has lost segments");
            // `tcp_retransmit_skb()`: one more retransmission a D-SACK must account for
            // before the reduction can be undone (a loss probe's does not count).
            self.undo_retrans = self.undo_retrans.max(0) + 1;
            self.transmit(seq, now, true)
        } else {
            let seq = self.tp.snd_nxt;
            self.transmit(seq, now, false)
        };
        let limited = self.tp.packets_in_flight() >= self.tp.snd_cwnd;
        let more = if self.burst_retrans {
            !self.lost_pending.is_empty()
        } else {
            self.has_new_data()
        };
        if limited || !more {
            self.burst_left = 0;
        }
        let mut seg = seg;
        seg.burst_end = self.burst_left == 0;
        if seg.burst_end && !seg.retrans {
            let i = self.idx(seg.seq);
            self.segs[i].flags |= F_SKB_END;
            self.skbs_out += 1;
        }
        self.stats.cur_burst += 1;
        if seg.burst_end {
            if self.stats.burst_segs.is_empty() {
                self.stats.burst_segs = vec![0; 65];
            }
            self.stats.burst_segs[self.stats.cur_burst.min(64) as usize] += 1;
            self.stats.cur_burst = 0;
        }
        self.cwnd_validate(limited);
        // Linux arms the loss probe once per `tcp_write_xmit()`, after the buffers it sent.
        // Each arming sets the deadline afresh from the state, so within a burst (taken whole
        // at one instant before anyone reads the timers) only the last one counts.
        if seg.burst_end && self.tp.ca_state == CaState::Open && !seg.retrans {
            self.schedule_loss_probe(now);
        }
        Some(seg)
    }

    /// Send segment `seq` (a retransmission if `retrans`, else the next new one).
    pub(super) fn transmit(&mut self, seq: u64, now: Nanos, retrans: bool) -> Segment {
        if self.tp.packets_in_flight() == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
        }
        let now_us = self.tp.now_us;
        let rec = self.rate.on_sent(&mut self.tp, now_us, retrans);
        let len = self.seg_len(seq);
        if retrans {
            let i = self.idx(seq);
            let s = &mut self.segs[i];
            debug_assert!(s.flags & F_SACKED == 0);
            s.rec = rec;
            s.sent_ns = now;
            s.gen = s.gen.wrapping_add(1);
            if s.flags & F_RETRANS == 0 {
                s.flags |= F_RETRANS;
                self.tp.retrans_out += 1;
            }
            s.flags |= F_EVER_RETRANS;
            let gen = s.gen;
            self.rack_q.push_back((now, seq, gen));
            self.stats.retransmits += 1;
            // Retransmitting the head restarts the RTO (`tcp_xmit_retransmit_queue()`),
            // unless the RACK reordering timer owns the timer.
            if seq == self.tp.snd_una && self.rack_deadline.is_none() {
                self.rto_deadline = Some(now + self.rtt.rto());
            }
        } else {
            debug_assert_eq!(seq, self.tp.snd_nxt);
            self.segs.push_back(Seg {
                rec,
                sent_ns: now,
                flags: 0,
                gen: 0,
            });
            self.rack_q.push_back((now, seq, 0));
            self.tp.snd_nxt += 1;
            self.tp.packets_out += 1;
        }
        if matches!(self.tp.ca_state, CaState::Recovery | CaState::Cwr) {
            self.prr_out += 1;
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.tp.lsndtime_ns = now;
        self.last_tx_ns = Some(now);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        // `tcp_ecn_send()`: new data is ECN-capable and the first of it after a reduction
        // carries CWR; a retransmission is not ECN-capable unless the controller needs ECN
        // or is an L4S sender, whose every packet leaves ECT(1) (`TCP_ECN_ECT_1`).
        let mut ecn = Ecn::NotEct;
        let mut cwr = false;
        if self.tp.ecn_ok {
            let l4s = self.cc.ect1();
            let ect = if l4s { Ecn::Ect1 } else { Ecn::Ect0 };
            if !retrans {
                ecn = ect;
                cwr = std::mem::take(&mut self.queue_cwr);
            } else if l4s || self.cc.needs_ecn() {
                ecn = ect;
            }
        }
        Segment {
            seq,
            len,
            retrans,
            sent_ns: now,
            burst_end: false,
            tsecr: self.ts_recent,
            ecn,
            cwr,
            // `tcp_push()` marks the tail of each write; TSO splits keep the mark on the last
            // piece (`tso_fragment()`), so the segment that ends the written data carries it.
            psh: seq + 1 == self.app_written,
        }
    }

    /// Segments in the lost run that the next retransmission would carry: consecutive lost
    /// segments from the first, up to the end of the TSO buffer they were sent in.
    fn lost_run(&self) -> u32 {
        let mut n = 0u32;
        let mut expect = None;
        for &seq in &self.lost_pending {
            if expect.is_some_and(|e| e != seq) {
                break;
            }
            n += 1;
            if self.segs[self.idx(seq)].flags & F_SKB_END != 0 {
                break;
            }
            expect = Some(seq + 1);
        }
        n.max(1)
    }

    /// `tcp_tso_autosize()`: segments in one TSO burst.
    fn tso_segs(&self) -> u32 {
        if let Some(n) = self.cc.tso_segs(&self.tp) {
            return n.max(1);
        }
        let mss = self.cfg.mss.max(1) as u64;
        let mut bytes = if self.tp.pacing_rate == u64::MAX {
            GSO_MAX_SIZE
        } else {
            self.tp.pacing_rate >> PACING_SHIFT
        };
        if self.tp.min_rtt_us != u32::MAX {
            let r = self.tp.min_rtt_us >> TSO_RTT_LOG;
            if r < 32 {
                bytes += GSO_MAX_SIZE >> r;
            }
        }
        let segs = (bytes.min(GSO_MAX_SIZE) / mss) as u32;
        segs.max(self.cc.min_tso_segs(&self.tp)).max(1)
    }

    /// `tcp_tso_should_defer()`: hold a burst of fewer than `goal` segments (`quota` fit in
    /// cwnd) when more ACKs will soon let a bigger one go.
    fn tso_should_defer(&self, now: Nanos, quota: u32, goal: u32) -> bool {
        if goal <= 1 || quota >= goal || self.tp.ca_state >= CaState::Recovery {
            return false;
        }
        // Only right after a transmission (`tcp_wstamp_ns`: the pacing slot when paced).
        let wstamp = if self.pacing {
            self.next_send_ns.max(self.last_tx_ns.unwrap_or(0))
        } else {
            self.last_tx_ns.unwrap_or(0)
        };
        if self.last_tx_ns.is_none() || now > wstamp + TSO_DEFER_NS {
            return false;
        }
        // At least a third of min(cwnd, receive window) may go: send it.
        let wnd_segs = self.snd_wnd() / self.cfg.mss as u64;
        if quota as u64 * 3 >= (self.tp.snd_cwnd as u64).min(wnd_segs) {
            return false;
        }
        // When is the ACK of the oldest outstanding segment due?
        let Some(head) = self.segs.front() else {
            return false;
        };
        if self.tp.srtt_us == 0 {
            return false;
        }
        let srtt = self.tp.srtt_us as u64 * 1000;
        let due = head.sent_ns + srtt;
        let threshold = (srtt / 2).min(TSO_DEFER_NS);
        due <= now + threshold
    }

    /// A burst of `burst_left` segments starts now: book its pacing slot (Linux
    /// `tcp_update_skb_after_send()`: the slot is the burst's length at the pacing rate, less
    /// up to half of it for time the sender left unused; the first 10 segments go unpaced).
    fn pace_burst(&mut self, now: Nanos) {
        if !self.pacing
            || self.tp.pacing_rate == 0
            || self.tp.pacing_rate == u64::MAX
            || self.stats.segments_sent < 10
        {
            return;
        }
        let end = self.total_segs.unwrap_or(u64::MAX);
        let bytes: u64 = if self.burst_retrans {
            self.lost_pending
                .iter()
                .take(self.burst_left as usize)
                .map(|&q| self.seg_len(q) as u64)
                .sum()
        } else {
            (self.tp.snd_nxt..end)
                .take(self.burst_left as usize)
                .map(|q| self.seg_len(q) as u64)
                .sum()
        };
        let mut len_ns = bytes * NS_PER_SEC / self.tp.pacing_rate;
        let start = self.next_send_ns.max(now);
        let credit = start - self.next_send_ns;
        len_ns -= (len_ns / 2).min(credit);
        self.next_send_ns = start + len_ns;
    }

    /// `tcp_rate_check_app_limited()`: the application has nothing more to send.
    pub(super) fn check_app_limited(&mut self) {
        let tp = &mut self.tp;
        if tp.packets_in_flight() < tp.snd_cwnd && tp.lost_out <= tp.retrans_out {
            let v = tp.delivered + tp.packets_in_flight() as u64;
            tp.app_limited = v.max(1);
        }
    }

    /// `tcp_cwnd_validate()`: remember whether the last window was cwnd-limited.
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let tp = &mut self.tp;
        if tp.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!tp.is_cwnd_limited && tp.packets_out > tp.max_packets_out)
        {
            tp.is_cwnd_limited = is_cwnd_limited;
            tp.max_packets_out = tp.packets_out;
            self.cwnd_usage_seq = tp.snd_nxt;
        }
    }

    /// `tcp_slow_start_after_idle_check()` / `tcp_cwnd_restart()`: idle for longer than the
    /// RTO, the window halves per RTO idle, down to the initial window.
    pub(super) fn restart_after_idle(&mut self, now: Nanos) {
        let Some(last) = self.last_tx_ns else { return };
        if !self.cfg.host.slow_start_after_idle || self.model_based {
            return;
        }
        let rto = self.rtt.rto();
        let mut idle = now.saturating_sub(last);
        if idle <= rto {
            return;
        }
        let restart = self.cfg.init_cwnd.max(1).min(self.tp.snd_cwnd);
        self.tp.snd_ssthresh = self.tp.snd_ssthresh.max(
            // `tcp_current_ssthresh()`: 3/4 of cwnd when not in a reduction.
            (self.tp.snd_cwnd >> 1).max(self.tp.snd_cwnd - (self.tp.snd_cwnd >> 2)),
        );
        let mut cwnd = self.tp.snd_cwnd;
        while idle > rto && cwnd > restart {
            idle -= rto;
            cwnd >>= 1;
        }
        self.tp.snd_cwnd = cwnd.max(restart);
        self.stats.idle_restarts += 1;
    }
}
