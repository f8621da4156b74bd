//! The SACK block list (RFC 2018 as Linux builds it): the remembered blocks as they stand
//! above `rcv_nxt`, most recent first, and where a new out-of-order segment lands in it.

use super::{Receiver, REMEMBERED_BLOCKS};
use crate::packet::SackBlock;

impl Receiver {
    /// The SACK blocks as listed now, most recent first: the distinct out-of-order ranges that
    /// hold the remembered segments at or above `rcv_nxt`, up to [`REMEMBERED_BLOCKS`].
    pub(super) fn listed_blocks(&self) -> ([SackBlock; REMEMBERED_BLOCKS], usize) {
        let mut listed = [SackBlock::default(); REMEMBERED_BLOCKS];
        let mut n = 0;
        for &b in &self.recent {
            if n == REMEMBERED_BLOCKS {
                break;
            }
            if b.start < self.rcv_nxt || listed[..n].iter().any(|l| l.start == b.start) {
                continue;
            }
            listed[n] = b;
            n += 1;
        }
        (listed, n)
    }

    /// Where an out-of-order segment `seq` lands in the SACK block list, most recent first
    /// (`tcp_sack_new_ofo_skb()`'s `this_sack`): the position of the first listed block it
    /// extends or touches, else the number of blocks listed (it opens a new one).
    pub(super) fn sack_slot(&self, seq: u64) -> usize {
        let (listed, n) = self.listed_blocks();
        listed[..n]
            .iter()
            .position(|b| b.start <= seq + 1 && seq <= b.end)
            .unwrap_or(n)
    }
}
