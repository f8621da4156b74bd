//! ECN echo: classic RFC 3168 (ECE from a CE mark until CWR) and the precise echo of
//! controllers that want CE events (`dctcp_ece_ack_update()`).

use super::{EcnEcho, Receiver};
use crate::packet::{Ack, Ecn, SackBlock, MAX_SACK_BLOCKS};

impl Receiver {
    /// `tcp_ecn_check_ce()` for a segment of new data; returns whether to ACK at once.
    pub(super) fn ecn_check_ce(&mut self, ecn: Ecn) -> bool {
        if self.cfg.ecn == EcnEcho::Accurate {
            // AccECN: no ECE or CWR handshake (the counters are in `accecn.rs`); a not-ECT
            // segment after ECT ones (a retransmission) still gets quick ACKs.
            match ecn {
                Ecn::NotEct if self.ecn_seen => self.incr_quickack_max(2),
                Ecn::NotEct => {}
                Ecn::Ce => {
                    self.ce_marks += 1;
                    self.ecn_seen = true;
                }
                Ecn::Ect0 | Ecn::Ect1 => self.ecn_seen = true,
            }
            return false;
        }
        let precise = self.cfg.ecn == EcnEcho::Precise;
        match ecn {
            Ecn::NotEct => {
                if self.ecn_seen {
                    self.incr_quickack_max(2);
                }
                false
            }
            Ecn::Ce => {
                self.ce_marks += 1;
                let now = precise && self.ce_event(true);
                if !self.demand_cwr {
                    self.incr_quickack_max(2);
                    self.demand_cwr = true;
                }
                self.ecn_seen = true;
                now
            }
            Ecn::Ect0 | Ecn::Ect1 => {
                self.ecn_seen = true;
                precise && self.ce_event(false)
            }
        }
    }

    /// `dctcp_ece_ack_update()`: ECE follows the CE state; on a change, a held ACK goes out
    /// first with the old state, and this segment is ACKed at once (returns true).
    pub(super) fn ce_event(&mut self, ce: bool) -> bool {
        let changed = self.ce_state != ce;
        if changed && self.delack_deadline.is_some() {
            let right_edge = self.bytes_below(self.rcv_wup) + self.rcv_wnd;
            let wnd = right_edge.saturating_sub(self.bytes_below(self.prior_rcv_nxt));
            self.prior_ack = Some(Ack {
                cum: self.prior_rcv_nxt,
                sack: [SackBlock::default(); MAX_SACK_BLOCKS],
                n_sack: 0,
                delayed: false,
                dsack: None,
                wnd,
                tsval: self.now,
                ece: self.ce_state,
                accecn: None,
            });
        }
        self.prior_rcv_nxt = self.rcv_nxt;
        self.ce_state = ce;
        self.demand_cwr = ce;
        changed
    }
}
