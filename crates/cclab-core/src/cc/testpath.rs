//! A small closed-loop path for the unit tests of the model-based controllers (BBRv1 and
//! BBRv3), generic over the controller: one FIFO bottleneck serving a packet every
//! `service_ns`, an optional drop-tail buffer (unlimited by default), a fixed propagation
//! delay that may change once, one ACK per packet. The sender does `tcp_rate.c`'s bookkeeping
//! (per-transmission snapshots, `tx_in_flight`, `tx.lost`), paces at `tp.pacing_rate`, and
//! detects a drop when the next packet's ACK arrives: it counts the loss, tells the controller
//! (`skb_marked_lost`), and enters Recovery until everything sent before it is ACKed. Lost
//! data is not resent (the payload does not matter here). Without a buffer limit nothing is
//! dropped, and the path is the plain lossless loop.
//!
//! Each ACK calls `cong_control` (the controller must own cwnd and pacing) and appends the
//! controller's own trace row ([`Traced::row`]) to [`Path::trace`].

use super::{CaEvent, CaState, CongestionControl, RateSample, TcpState};
use crate::rate::TxRecord;
use std::collections::VecDeque;

/// The test flows' segment size.
pub const MSS: u32 = 1448;

/// A controller the path can drive: how a test builds one, and what of its state a trace row
/// keeps after each ACK.
pub trait Traced: CongestionControl + Sized {
    /// One trace row.
    type Row: Copy + std::fmt::Debug;
    /// A fresh controller (before `init`) whose PRNG is seeded with `seed`.
    fn for_test(seed: u64) -> Self;
    /// The row after the ACK at `now_ns`, which detected `losses` drops.
    fn row(&self, tp: &TcpState, now_ns: u64, losses: u32) -> Self::Row;
}

struct Pkt {
    seq: u64,
    /// When its ACK arrives; `None` = dropped at the bottleneck.
    ack_ns: Option<u64>,
    tx: TxRecord,
}

/// The path and the flow on it.
pub struct Path<C: Traced> {
    pub tp: TcpState,
    pub cc: C,
    now_ns: u64,
    service_ns: u64,
    prop_ns: u64,
    /// At `.0` ns the round-trip propagation delay becomes `.1`.
    pub prop_change: Option<(u64, u64)>,
    /// Packets the bottleneck queue holds (`None` = unlimited).
    pub buffer_pkts: Option<u64>,
    pub drops: u64,
    link_free_ns: u64,
    next_send_ns: u64,
    first_tx_mstamp_us: u64,
    recovery_end: u64,
    q: VecDeque<Pkt>,
    pub trace: Vec<C::Row>,
}

impl<C: Traced> Path<C> {
    /// A bottleneck of `pkts_per_ms` packets per millisecond and `rtt_ms` of propagation,
    /// with an initialised controller seeded with `seed`.
    pub fn new(seed: u64, pkts_per_ms: u64, rtt_ms: u64) -> Self {
        let mut tp = TcpState::new(MSS, 10);
        // 1 ms jiffies keep the assertions in milliseconds.
        tp.hz = 1000;
        let mut cc = C::for_test(seed);
        cc.init(&mut tp);
        Path {
            tp,
            cc,
            now_ns: 0,
            service_ns: 1_000_000 / pkts_per_ms,
            prop_ns: rtt_ms * 1_000_000,
            prop_change: None,
            buffer_pkts: None,
            drops: 0,
            link_free_ns: 0,
            next_send_ns: 0,
            first_tx_mstamp_us: 0,
            recovery_end: 0,
            q: VecDeque::new(),
            trace: Vec::new(),
        }
    }

    fn set_time(&mut self, t: u64) {
        self.now_ns = t;
        self.tp.now_ns = t;
        self.tp.now_us = t / 1000;
    }

    fn send(&mut self) {
        let now_us = self.tp.now_us;
        if self.tp.packets_out == 0 {
            self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
            self.first_tx_mstamp_us = now_us;
            self.tp.delivered_mstamp_us = now_us;
        }
        if let Some((t, p)) = self.prop_change {
            if self.now_ns >= t {
                self.prop_ns = p;
            }
        }
        let arrive = self.now_ns + self.prop_ns / 2;
        let queued = self.link_free_ns.saturating_sub(arrive) / self.service_ns;
        let ack_ns = if self.buffer_pkts.is_some_and(|b| queued >= b) {
            self.drops += 1;
            None
        } else {
            let depart = arrive.max(self.link_free_ns) + self.service_ns;
            self.link_free_ns = depart;
            Some(depart + self.prop_ns / 2)
        };
        let tx = TxRecord {
            sent_us: now_us,
            first_tx_us: self.first_tx_mstamp_us,
            delivered_mstamp_us: self.tp.delivered_mstamp_us,
            delivered: self.tp.delivered,
            is_app_limited: self.tp.app_limited != 0,
            is_retrans: false,
            in_flight: self.tp.packets_in_flight() + 1,
            lost: self.tp.lost,
            delivered_ce: 0,
        };
        self.q.push_back(Pkt {
            seq: self.tp.snd_nxt,
            ack_ns,
            tx,
        });
        self.tp.packets_out += 1;
        self.tp.snd_nxt += 1;
        self.tp.is_cwnd_limited = self.tp.packets_in_flight() >= self.tp.snd_cwnd;
        let gap = (MSS as u64 * 1_000_000_000)
            .checked_div(self.tp.pacing_rate)
            .unwrap_or(0);
        self.next_send_ns = self.now_ns + gap;
    }

    fn ack(&mut self) {
        let prior_in_flight = self.tp.packets_in_flight();
        // Drops ahead of this ACK are detected now.
        let mut losses = 0;
        while self.q.front().is_some_and(|p| p.ack_ns.is_none()) {
            let p = self.q.pop_front().unwrap();
            self.tp.packets_out -= 1;
            self.tp.lost += 1;
            losses += 1;
            self.cc.skb_marked_lost(&mut self.tp, &p.tx);
        }
        if losses > 0 && self.tp.ca_state == CaState::Open {
            self.tp.snd_ssthresh = self.cc.ssthresh(&self.tp);
            self.cc.set_state(&mut self.tp, CaState::Recovery);
            self.tp.ca_state = CaState::Recovery;
            self.recovery_end = self.tp.snd_nxt;
        }
        let p = self.q.pop_front().unwrap();
        let now_us = self.tp.now_us;
        self.tp.packets_out -= 1;
        self.tp.snd_una = p.seq + 1;
        self.tp.delivered += 1;
        self.tp.delivered_mstamp_us = now_us;
        // tcp_rate_gen(): the app-limited period ends once its marker is delivered.
        if self.tp.app_limited != 0 && self.tp.delivered > self.tp.app_limited {
            self.tp.app_limited = 0;
        }
        let rtt = (now_us - p.tx.sent_us) as u32;
        self.tp.min_rtt_us = self.tp.min_rtt_us.min(rtt);
        self.tp.srtt_us = if self.tp.srtt_us == 0 {
            rtt
        } else {
            (7 * self.tp.srtt_us + rtt) / 8
        };
        if self.tp.ca_state == CaState::Recovery && p.seq + 1 >= self.recovery_end {
            self.cc.set_state(&mut self.tp, CaState::Open);
            self.tp.ca_state = CaState::Open;
        }
        let snd = (p.tx.sent_us - p.tx.first_tx_us) as i64;
        let rcv = (now_us - p.tx.delivered_mstamp_us) as i64;
        self.first_tx_mstamp_us = p.tx.sent_us;
        let mut interval = snd.max(rcv);
        if interval < self.tp.min_rtt_us as i64 {
            interval = -1;
        }
        let rs = RateSample {
            prior_mstamp_us: p.tx.delivered_mstamp_us,
            prior_delivered: p.tx.delivered,
            delivered: (self.tp.delivered - p.tx.delivered) as i64,
            interval_us: interval,
            snd_interval_us: snd,
            rcv_interval_us: rcv,
            rtt_us: rtt as i64,
            losses,
            acked_sacked: 1,
            prior_in_flight,
            is_app_limited: p.tx.is_app_limited,
            tx_in_flight: p.tx.in_flight,
            lost: (self.tp.lost - p.tx.lost) as u32,
            ..RateSample::default()
        };
        assert!(self.cc.cong_control(&mut self.tp, &rs));
        let row = self.cc.row(&self.tp, self.now_ns, losses);
        self.trace.push(row);
    }

    /// Run the loop up to `end_ns`: ACKs and paced, cwnd-limited sends in time order.
    pub fn run_until(&mut self, end_ns: u64) {
        loop {
            let t_ack = self.q.iter().find_map(|p| p.ack_ns).unwrap_or(u64::MAX);
            let t_send = if self.tp.packets_in_flight() < self.tp.snd_cwnd {
                self.next_send_ns.max(self.now_ns)
            } else {
                u64::MAX
            };
            let t = t_ack.min(t_send);
            if t > end_ns {
                self.set_time(end_ns);
                return;
            }
            self.set_time(t);
            if t_ack <= t_send {
                self.ack();
            } else {
                self.send();
            }
        }
    }
}
