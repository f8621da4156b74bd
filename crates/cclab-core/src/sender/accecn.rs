//! Accurate ECN at the sender (RFC 9768), as Linux 6.18's `__tcp_accecn_process()` and
//! `tcp_accecn_process_option()` (tcp_input.c): how many of the segments an ACK newly
//! delivered were CE-marked.
//!
//! The ACE field counts CE-marked segments modulo 8, so its change since the last ACK is
//! exact while an ACK delivers at most 7 segments. An ACK that delivers more (a stretch ACK,
//! or one that follows lost ACKs) may hide whole wraps: Linux then takes the largest count
//! consistent with the field (`safe_delta`) unless the AccECN option's CE byte counter
//! (when the ACK carries it and its counts are unambiguous) shows fewer marks. The count
//! goes to `delivered_ce`, and a non-zero count is the ACK's ECE for the controller
//! (`FLAG_ECE`: CWR for classic controllers; Prague reads `delivered_ce`).

use super::Sender;
use crate::packet::Ack;
use crate::receiver::ACE_INIT;

/// `TCP_ACCECN_CEP_ACE_MASK`.
const ACE_MASK: u64 = 7;
/// `TCP_ACCECN_SAFETY_SHIFT`.
const SAFETY_SHIFT: u32 = 1;

/// The sender's view of the peer's AccECN counters (`tp->delivered_ecn_bytes`,
/// `tp->est_ecnfield`, `tp->saw_accecn_opt`).
#[derive(Clone, Debug, Default)]
pub(super) struct AccEcnTx {
    /// Payload bytes the peer reported receiving ECT(1), CE, ECT(0).
    bytes: [u32; 3],
    /// The one counter that moved alone lately, to credit ACKs without the option to.
    est: Option<usize>,
    /// The peer has sent the option.
    saw_opt: bool,
}

impl AccEcnTx {
    /// The peer's reported payload bytes: ECT(0), ECT(1), CE.
    pub(super) fn bytes_ect0_ect1_ce(&self) -> [u32; 3] {
        [self.bytes[2], self.bytes[0], self.bytes[1]]
    }

    /// `tcp_accecn_process_option()`: take the option's counters; true when the byte
    /// deltas can be trusted (one counter moved, none backwards).
    fn process_option(&mut self, ack: &Ack, delivered_bytes: u32) -> bool {
        let Some(fb) = ack.accecn else { return false };
        let Some(n) = fb.opt_fields else {
            if !self.saw_opt {
                return false;
            }
            if let Some(i) = self.est {
                self.bytes[i] = self.bytes[i].wrapping_add(delivered_bytes);
                return true;
            }
            return false;
        };
        self.saw_opt = true;
        let mut valid = self.est.is_some();
        let mut first_changed = false;
        let mut ambiguous = false;
        for i in 0..n as usize {
            // 24-bit counters, the change taken as signed.
            let d = (fb.bytes[i].wrapping_sub(self.bytes[i])) & 0xff_ffff;
            let d = ((d << 8) as i32) >> 8;
            self.bytes[i] = self.bytes[i].wrapping_add(d as u32);
            if d < 0 {
                valid = false;
                ambiguous = true;
            }
            if d != 0 && Some(i) != self.est {
                if !first_changed {
                    self.est = Some(i);
                    first_changed = true;
                } else {
                    valid = false;
                    ambiguous = true;
                }
            }
        }
        if ambiguous {
            self.est = None;
        }
        valid
    }
}

impl Sender {
    /// `__tcp_accecn_process()`: the CE-marked segments among the `delivered` segments
    /// (`delivered_bytes` bytes) this ACK newly delivered; only on an ACK that made progress.
    pub(super) fn accecn_delta(
        &mut self,
        ack: &Ack,
        delivered: u64,
        delivered_bytes: u32,
        progress: bool,
    ) -> u64 {
        let Some(fb) = ack.accecn else { return 0 };
        if !progress {
            return 0;
        }
        let mss = self.cfg.mss as u64;
        let tx = self.accecn_tx.get_or_insert_with(AccEcnTx::default);
        let old_ceb = tx.bytes[1];
        let opt_valid = tx.process_option(ack, delivered_bytes);
        let d_ceb = tx.bytes[1].wrapping_sub(old_ceb) as u64;
        let corrected = (fb.ace as u64).wrapping_sub(ACE_INIT as u64);
        let delta = corrected.wrapping_sub(self.tp.delivered_ce) & ACE_MASK;
        if delivered <= ACE_MASK {
            return delta;
        }
        let safe_delta = delivered - (delivered.wrapping_sub(delta) & ACE_MASK);
        if opt_valid {
            if d_ceb == 0 {
                return delta;
            }
            if delivered >= (ACE_MASK + 1) * 2 {
                // Estimate the marks from the bytes, keeping ACE's residue.
                if delivered_bytes as u64 <= d_ceb {
                    return safe_delta;
                }
                let est = (d_ceb * delivered).div_ceil(delivered_bytes as u64);
                return safe_delta.min(delta + (est & !ACE_MASK));
            }
            if d_ceb > delta * mss {
                return safe_delta;
            }
            if d_ceb < (safe_delta * mss) >> SAFETY_SHIFT {
                return delta;
            }
        }
        safe_delta
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::AccEcnFeedback;

    fn ack(ace_marks: u64, ceb: u32, opt: bool) -> Ack {
        Ack {
            accecn: Some(AccEcnFeedback {
                ace: ((ace_marks + ACE_INIT as u64) & 7) as u8,
                opt_fields: opt.then_some(3),
                opt_len: if opt { 12 } else { 0 },
                bytes: [0, ceb, 0],
            }),
            ..Ack::default()
        }
    }

    #[test]
    fn ace_counts_marks_and_the_option_resolves_wraps() {
        let cc = crate::cc::by_name("prague").unwrap().build(1);
        let mut s = Sender::new(crate::sender::SenderConfig::default(), cc);
        // Three marks among two delivered segments' worth of ACKs: exact.
        assert_eq!(
            s.accecn_delta(&ack(3, 3 * 1448, true), 4, 4 * 1448, true),
            3
        );
        s.tp.delivered_ce += 3;
        // No progress: nothing counted.
        assert_eq!(s.accecn_delta(&ack(5, 5 * 1448, true), 0, 0, false), 0);
        // A stretch ACK of 20 segments, 11 of them marked: ACE moved by 11 mod 8 = 3, and
        // the option's CE bytes say 11 segments' worth, which the estimate recovers.
        assert_eq!(
            s.accecn_delta(&ack(14, 14 * 1448, true), 20, 20 * 1448, true),
            11
        );
        s.tp.delivered_ce += 11;
        // Without the option, the largest count ACE allows: 3 + 8 + 8 of 20.
        assert_eq!(s.accecn_delta(&ack(17, 0, false), 20, 20 * 1448, true), 19);
    }
}
