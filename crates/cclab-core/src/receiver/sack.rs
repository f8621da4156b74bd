//! The SACK block list (RFC 2018 as Linux builds it): the remembered blocks as they stand
//! above `rcv_nxt`, most recent first, and where a new out-of-order segment lands in it.

use super::{Receiver, REMEMBERED_BLOCKS};
use crate::packet::SackBlock;

/// The remembered SACK blocks, newest first, at most [`REMEMBERED_BLOCKS`] of them (Linux's
/// `selective_acks` array): a fixed array, as a segment out of order updates it on every
/// arrival and a growable queue costs more than the few blocks it moves.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RecentBlocks {
    blocks: [SackBlock; REMEMBERED_BLOCKS],
    len: usize,
}

impl RecentBlocks {
    /// The blocks, newest first.
    pub(super) fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..self.len]
    }

    /// Keep only the blocks for which `keep` holds, in order.
    pub(super) fn retain(&mut self, mut keep: impl FnMut(&SackBlock) -> bool) {
        let mut n = 0;
        for i in 0..self.len {
            if keep(&self.blocks[i]) {
                self.blocks[n] = self.blocks[i];
                n += 1;
            }
        }
        self.len = n;
    }

    /// Put `b` first; the oldest block falls out when the list is full.
    pub(super) fn push_front(&mut self, b: SackBlock) {
        let kept = self.len.min(REMEMBERED_BLOCKS - 1);
        self.blocks.copy_within(..kept, 1);
        self.blocks[0] = b;
        self.len = kept + 1;
    }

    pub(super) fn clear(&mut self) {
        self.len = 0;
    }
}

impl Receiver {
    /// The SACK blocks as listed now, most recent first: the distinct out-of-order ranges that
    /// hold the remembered segments at or above `rcv_nxt`, up to [`REMEMBERED_BLOCKS`].
    pub(super) fn listed_blocks(&self) -> ([SackBlock; REMEMBERED_BLOCKS], usize) {
        let mut listed = [SackBlock::default(); REMEMBERED_BLOCKS];
        let mut n = 0;
        for &b in self.recent.as_slice() {
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
        // The list's first block is the most recent one still above `rcv_nxt`: a segment that
        // extends it (in order above a hole, the usual case) lands there without the list
        // being built.
        let extends = |b: &SackBlock| b.start <= seq + 1 && seq <= b.end;
        let rcv_nxt = self.rcv_nxt;
        if let Some(first) = self.recent.as_slice().iter().find(|b| b.start >= rcv_nxt) {
            if extends(first) {
                return 0;
            }
        }
        let (listed, n) = self.listed_blocks();
        listed[..n].iter().position(extends).unwrap_or(n)
    }
}
