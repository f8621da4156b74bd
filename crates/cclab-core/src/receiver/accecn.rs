//! Accurate ECN feedback (RFC 9768) as Linux 6.18's receiver gives it
//! (`tcp_ecn_received_counters()`, `tcp_accecn_set_ace()`, `tcp_options_fit_accecn()` and
//! `tcp_options_write()`).
//!
//! The receiver counts every segment that arrives CE (the ACE field carries that count plus
//! 5, modulo 8, in the AE, CWR and ECE flags of every ACK) and the payload bytes that
//! arrived with each ECN codepoint (the AccECN option carries them as 24-bit counters, in
//! Linux's order: ECT(1), CE, ECT(0)). A segment whose ECN field differs from the previous
//! one's is ACKed at once (the change-triggered ACK), so the sender can tell which segments
//! were marked even through delayed ACKs; there is no CWR handshake.
//!
//! The option competes with SACK for the 40 bytes of TCP option space (12 go to the
//! timestamps): Linux sends as many counters as fit, at least those that changed since the
//! last option (`accecn_minlen`), and drops the third SACK block to make room for them.

use super::Receiver;
use crate::packet::{AccEcnFeedback, Ecn};

/// `TCP_ACCECN_CEP_INIT_OFFSET`: the ACE field starts at 5.
pub const ACE_INIT: u32 = 5;
/// TCP option space, bytes (`MAX_TCP_OPTION_SPACE`), and what the timestamps take of it
/// (`TCPOLEN_TSTAMP_ALIGNED`).
const OPTION_SPACE: u32 = 40;
const TSTAMP_ALIGNED: u32 = 12;
/// The SACK option's header with its alignment, and each block (`TCPOLEN_SACK_*`).
const SACK_BASE_ALIGNED: u32 = 4;
const SACK_PERBLOCK: u32 = 8;
/// The AccECN option: 2 bytes of kind and length, 3 bytes per counter, 3 counters.
const ACCECN_BASE: u32 = 2;
const ACCECN_PERFIELD: u32 = 3;
const ACCECN_FIELDS: u8 = 3;

/// The receiver's Accurate ECN state (`tp->received_ce`, `tp->received_ecn_bytes`,
/// `tp->prev_ecnfield`, `tp->accecn_minlen`).
#[derive(Clone, Debug, Default)]
pub(super) struct AccEcnRx {
    /// CE-marked segments received.
    received_ce: u32,
    /// Payload bytes received ECT(1), CE, ECT(0) (the option's order).
    bytes: [u32; 3],
    /// The ECN field of the previous segment.
    prev: Ecn,
    /// Counters the next option must carry (those that changed since the last one).
    minlen: u8,
}

/// The option's field index (0-2) of an ECN codepoint, in Linux's order 1.
fn field_index(ecn: Ecn) -> Option<usize> {
    match ecn {
        Ecn::NotEct => None,
        Ecn::Ect1 => Some(0),
        Ecn::Ce => Some(1),
        Ecn::Ect0 => Some(2),
    }
}

/// `tcp_options_fit_accecn()`: how many counters fit in `remaining` bytes of option space
/// beside `sack_blocks` SACK blocks (at least `required`), with the option's size on the
/// wire (up to 2 bytes of its padding go into SACK's), and the SACK blocks left after
/// dropping what must go to fit them; `None` when the option does not fit.
pub(super) fn fit_option(required: u8, remaining: u32, sack_blocks: u8) -> (Option<(u8, u8)>, u8) {
    let combine = if sack_blocks > 0 { 2 } else { 0 };
    let mut rem = remaining;
    let mut blocks = sack_blocks;
    let mut fields = ACCECN_FIELDS;
    let mut size = ACCECN_BASE + ACCECN_PERFIELD * fields as u32;
    loop {
        if fields < required {
            return (None, sack_blocks);
        }
        // Pad to a word unless the padding fits in SACK's alignment.
        let aligned = if size & 3 > combine {
            size.div_ceil(4) * 4
        } else {
            size / 4 * 4
        };
        if rem >= aligned {
            return (Some((fields, aligned as u8)), blocks);
        }
        if fields == required && blocks > 2 && required > 0 {
            // Make room by dropping a SACK block, and try all counters again.
            blocks -= 1;
            rem += SACK_PERBLOCK;
            fields = ACCECN_FIELDS;
            size = ACCECN_BASE + ACCECN_PERFIELD * fields as u32;
            continue;
        }
        if fields == 0 {
            return (None, sack_blocks);
        }
        fields -= 1;
        size -= ACCECN_PERFIELD;
    }
}

impl AccEcnRx {
    /// A segment of `len` payload bytes arrived with `ecn`; returns whether to ACK at once
    /// (its ECN field differs from the previous segment's).
    pub(super) fn on_segment(&mut self, ecn: Ecn, len: u32) -> bool {
        if let Some(i) = field_index(ecn) {
            if ecn == Ecn::Ce {
                self.received_ce = self.received_ce.wrapping_add(1);
            }
            if len > 0 {
                self.bytes[i] = self.bytes[i].wrapping_add(len);
                self.minlen = self.minlen.max(i as u8 + 1);
            }
        }
        let edge = self.prev != ecn;
        self.prev = ecn;
        edge
    }

    /// The feedback for an ACK carrying `sack_blocks` SACK blocks, and the SACK blocks it
    /// leaves room for.
    pub(super) fn feedback(&mut self, sack_blocks: u8) -> (AccEcnFeedback, u8) {
        let sack = if sack_blocks > 0 {
            SACK_BASE_ALIGNED + SACK_PERBLOCK * sack_blocks as u32
        } else {
            0
        };
        let remaining = OPTION_SPACE - TSTAMP_ALIGNED - sack;
        let (opt, blocks) = fit_option(self.minlen, remaining, sack_blocks);
        if opt.is_some() {
            self.minlen = 0;
        }
        let fb = AccEcnFeedback {
            ace: (self.received_ce.wrapping_add(ACE_INIT) & 7) as u8,
            opt_fields: opt.map(|(n, _)| n),
            opt_len: opt.map_or(0, |(_, len)| len),
            bytes: self.bytes.map(|b| b & 0xff_ffff),
        };
        (fb, blocks)
    }
}

impl Receiver {
    /// The AccECN counters of a segment that arrived (any segment, duplicates too, as
    /// Linux counts before it looks at the data); whether to ACK at once.
    pub(super) fn accecn_count(&mut self, ecn: Ecn, len: u32) -> bool {
        match self.accecn.as_mut() {
            Some(a) => a.on_segment(ecn, len),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_fits_as_linux_fits_it() {
        // No SACK: 28 bytes left, all three counters (11 bytes, padded to 12).
        assert_eq!(fit_option(0, 28, 0), (Some((3, 12)), 0));
        // One SACK block (12 bytes): 16 left, all three; 11 bytes take 12 either way.
        assert_eq!(fit_option(1, 16, 1), (Some((3, 12)), 1));
        // Two blocks (20): 8 left: two counters in 8 bytes.
        assert_eq!(fit_option(1, 8, 2), (Some((2, 8)), 2));
        assert_eq!(fit_option(2, 8, 2), (Some((2, 8)), 2));
        // ...but not three: with two blocks there is no block to give up.
        assert_eq!(fit_option(3, 8, 2), (None, 2));
        // Three blocks (28): nothing left; a needed counter costs the third block, and with
        // nothing needed the bare option hides in SACK's padding.
        assert_eq!(fit_option(2, 0, 3), (Some((2, 8)), 2));
        assert_eq!(fit_option(0, 0, 3), (Some((0, 0)), 3));
    }

    #[test]
    fn counts_marks_and_bytes_and_acks_every_change_at_once() {
        let mut a = AccEcnRx {
            prev: Ecn::Ect1,
            ..Default::default()
        };
        assert!(!a.on_segment(Ecn::Ect1, 1448));
        assert!(a.on_segment(Ecn::Ce, 1448), "ECT(1) -> CE");
        assert!(!a.on_segment(Ecn::Ce, 1448));
        assert!(a.on_segment(Ecn::Ect1, 1448), "CE -> ECT(1)");
        let (fb, blocks) = a.feedback(0);
        assert_eq!(fb.ace, ((2 + ACE_INIT) & 7) as u8);
        assert_eq!(fb.bytes, [2 * 1448, 2 * 1448, 0]);
        assert_eq!((fb.opt_fields, blocks), (Some(3), 0));
        // Six more marks wrap the three-bit field.
        for _ in 0..6 {
            a.on_segment(Ecn::Ce, 1448);
        }
        assert_eq!(a.feedback(0).0.ace, ((8 + ACE_INIT) & 7) as u8);
    }
}
