//! TCP small queues, as tcp_output.c has them (`tcp_small_queue_check()`, `tcp_wfree()`,
//! the TSQ handler): a socket may have only so much data handed to its host's interface
//! and not yet sent by it.
//!
//! Every buffer TCP transmits is charged to the socket (`sk_wmem_alloc`, its true size:
//! payload plus [`host::SKB_OVERHEAD`]) until the device has sent it and frees it
//! (`tcp_wfree()` at transmit completion). Before a buffer goes, `tcp_write_xmit()` (and
//! the retransmission loop, with twice the limit) checks the charge against
//! `max(2 x the buffer's true size, sk_pacing_rate >> sk_pacing_shift)`, at most
//! `tcp_limit_output_bytes` (4 MiB); above it the socket is throttled (unless at most one
//! buffer is unacknowledged), and each completion lets it try again.
//!
//! The host's interface is the engine's (it knows the rate and who else sends through it):
//! it tells the sender when each transmission will be complete ([`Sender::on_tx_handed`]).
//! A sender whose engine never does (the kernel lab's veth, freed as soon as the router
//! takes the packet) is never throttled. What the check changes is the writer's pieces
//! (`sndbuf.rs`, [`Sender::refill_tail`]): a push that TSQ refuses ends them, and the writer
//! then stops at the send buffer.

use std::collections::VecDeque;

use super::output::PACING_SHIFT;
use super::Sender;
use crate::host;
use crate::Nanos;

/// `sysctl_tcp_limit_output_bytes`: 4 MiB by default (Linux 6.18, `tcp_sk_init()`).
const TCP_LIMIT_OUTPUT_BYTES: u64 = 4 << 20;
/// How fast a writer's pieces go, bit/s: each piece is the application's data copied into
/// the tail buffer and pushed down the stack, which takes time the interface spends sending
/// the pieces before. On the kernel lab's host TSQ stopped the pieces of a long write with
/// the interface at 5 Gbit/s and not at 7.5 (`c17`, CUBIC, seed 1, `hosts.nic_rate` 1, 2, 3,
/// 5, 7.5 and 10 Gbit/s, 2026-11-28): about 6 Gbit/s, 64 KB per ~85 us.
const WRITER_BPS: u64 = 6_000_000_000;

/// Transmissions handed to the interface and not yet complete.
#[derive(Debug, Default)]
pub(super) struct Tsq {
    /// (completion time, true size), oldest first (the interface sends in order).
    charges: VecDeque<(Nanos, u64)>,
    /// Sum of the true sizes in `charges` (`sk_wmem_alloc`, less its base of 1).
    charged: u64,
    /// Throttled: the completion after which the TSQ handler can send again (cleared by
    /// every transmission attempt, set again if it is refused).
    pub(super) wake: Option<Nanos>,
    /// The writer's pieces of the write at `write_at` so far have taken `write_ns`: the
    /// next one is checked that much later (the engine takes a whole write in one instant).
    write_at: Nanos,
    write_ns: Nanos,
}

impl Tsq {
    /// What is still charged at `t`, a time at or after the last release.
    fn charged_at(&self, t: Nanos) -> u64 {
        let done: u64 = self
            .charges
            .iter()
            .take_while(|&&(d, _)| d <= t)
            .map(|&(_, b)| b)
            .sum();
        self.charged - done
    }

    /// Release what the interface has sent by `now` (`tcp_wfree()`).
    fn complete(&mut self, now: Nanos) {
        while let Some(&(t, b)) = self.charges.front() {
            if t > now {
                break;
            }
            self.charged -= b;
            self.charges.pop_front();
        }
    }
}

/// A buffer's true size (`skb->truesize`): its payload and its head.
fn truesize(payload: u64) -> u64 {
    payload + host::SKB_OVERHEAD
}

impl Sender {
    /// The engine handed this sender's last burst (`bytes` of payload) to the host's
    /// interface, which will have sent it at `done`: it stays charged to the socket until
    /// then.
    pub fn on_tx_handed(&mut self, bytes: u64, done: Nanos) {
        let truesize = truesize(bytes);
        self.tsq.charges.push_back((done, truesize));
        self.tsq.charged += truesize;
    }

    /// `tcp_small_queue_check()` for a buffer of `segs` segments, with the limit doubled
    /// for a retransmission: whether the socket must wait for a transmit completion. Sets
    /// the wake-up at the completion that brings the charge down to the limit when it must.
    pub(super) fn tsq_throttled(&mut self, now: Nanos, segs: u32, retrans: bool) -> bool {
        if self.tsq.charges.is_empty() {
            return false;
        }
        self.tsq.complete(now);
        let bytes = segs as u64 * self.cfg.mss as u64;
        // A piece of the writer's (new data while it writes) goes once the pieces before it
        // have been copied and pushed.
        let piece = !retrans && self.writing_at == Some(now);
        let t = if piece {
            if self.tsq.write_at != now {
                self.tsq.write_at = now;
                self.tsq.write_ns = 0;
            }
            now + self.tsq.write_ns
        } else {
            now
        };
        let truesize = truesize(bytes);
        let rate_term = self.tp.pacing_rate >> PACING_SHIFT;
        let limit = (2 * truesize).max(rate_term).min(TCP_LIMIT_OUTPUT_BYTES) << retrans as u32;
        // `tcp_rtx_queue_empty_or_single_skb()`: with at most one buffer unacknowledged
        // the socket sends anyway.
        if self.tsq.charged_at(t) <= limit || self.skbs_out <= 1 {
            if piece {
                self.tsq.write_ns += bytes * 8 * crate::NS_PER_SEC / WRITER_BPS;
            }
            return false;
        }
        // The TSQ handler runs at every completion; the first that brings the charge to the
        // limit is the one that lets the socket send.
        let mut left = self.tsq.charged;
        self.tsq.wake = self.tsq.charges.iter().find_map(|&(d, b)| {
            left -= b;
            (d > t && left <= limit).then_some(d)
        });
        true
    }
}
