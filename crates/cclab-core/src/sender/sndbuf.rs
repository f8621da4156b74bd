//! The application's writes and the send buffer, as tcp.c's `tcp_sendmsg_locked()` fills
//! it: the size goal (`tcp_xmit_size_goal()`), `sk_wmem_queued` against `sk_sndbuf`
//! (`sk_stream_memory_free()`, `sk_stream_is_writeable()`), the writer's wake-up
//! (`tcp_check_space()`, `tcp_new_space()`) and the buffer's growth (`tcp_sndbuf_expand()`,
//! tcp_input.c).

use super::{Sender, GSO_MAX_SIZE};
use crate::host;
use crate::Nanos;

/// `TCP_MSS_DEFAULT`: windows up to this size are not halved for the size goal.
const TCP_MSS_DEFAULT: u64 = 536;
/// `tp->tcp_header_len` with the timestamp option: 20 + 12 bytes.
const TCP_HEADER_LEN: u64 = 32;

impl Sender {
    /// The send buffer, bytes (`sk_sndbuf`).
    pub fn sndbuf(&self) -> u64 {
        self.sndbuf
    }

    /// `tcp_sndbuf_expand()`: room for `2 x max(10, cwnd, reordering + 1)` segments (3 x
    /// for controllers that ask, as BBR does), up to `tcp_wmem[2]`; never with `SO_SNDBUF`.
    pub(super) fn sndbuf_expand(&mut self) {
        if self.cfg.host.sndbuf.is_some() {
            return;
        }
        let segs = (self.tp.snd_cwnd as u64)
            .max(10)
            .max(self.reordering as u64 + 1);
        let want = self.cc.sndbuf_expand() as u64 * segs * host::sndbuf_per_mss(self.cfg.mss);
        self.sndbuf = self.sndbuf.max(want.min(self.cfg.host.tcp_wmem[2]));
    }

    /// `tcp_xmit_size_goal()`: the segments one send-queue buffer takes from the
    /// application's writes. TCP always has GSO (`sk_setup_caps()`): the device's 64 KB less
    /// the room reserved for headers, or half the largest window the peer has offered
    /// (`tcp_bound_to_half_wnd()`), whichever is smaller; at least one segment.
    fn size_goal_segs(&self) -> u64 {
        let gso = GSO_MAX_SIZE - (host::MAX_TCP_HEADER + 1);
        let cutoff = if self.max_window > TCP_MSS_DEFAULT {
            self.max_window / 2
        } else {
            self.max_window
        };
        let size = if cutoff > 0 && gso > cutoff {
            cutoff.max(68 - TCP_HEADER_LEN)
        } else {
            gso
        };
        (size / self.cfg.mss.max(1) as u64).max(1)
    }

    /// The writer's unsent tail (`tcp_sendmsg_locked()`). A write checks the send buffer
    /// only when it starts a new buffer (`sk_stream_memory_free()` at `new_segment`); bytes
    /// appended to the last, not yet full buffer are taken whatever the buffer holds. Once
    /// that tail is full and first in line to go, the writer sends it (`tcp_push_one()`),
    /// and TSO autosizing, cwnd or the receive window let only part of it go when the burst
    /// is shorter than the buffer's size goal (about 1 ms at the pacing rate against 64 KB:
    /// below ~500 Mbit/s). The rest stays as the tail, the writer fills it up again, sends
    /// the next piece, and so on: a writer woken with cwnd to spare writes until cwnd (or
    /// the receive window, or the pacing timer) stops the pieces, far past `sk_sndbuf`,
    /// leaving one full buffer unsent. A burst as long as the size goal takes the whole tail,
    /// and the writer's next buffer meets the send-buffer check.
    ///
    /// Called at the start of a burst of new data: while the writer is writing at this
    /// instant, the unsent data is topped up to the burst plus one full buffer.
    pub(super) fn refill_tail(&mut self, now: Nanos) {
        if self.writing_at != Some(now) {
            return;
        }
        let goal = self.size_goal_segs();
        if self.burst_left as u64 >= goal {
            self.writing_at = None;
            return;
        }
        let total = self.total_segs.unwrap_or(u64::MAX);
        let want = (self.tp.snd_nxt + self.burst_left as u64 + goal).min(total);
        if want > self.app_written {
            self.app_written = want;
        }
    }

    /// Whether the writer would be woken now (`sk_stream_is_writeable()`): a third of the
    /// buffer free, and unsent data below half of `notsent_lowat`.
    fn writable(&self) -> bool {
        let mss = self.cfg.mss as u64;
        let queued = self.queued_bytes(self.app_written);
        let notsent = self.app_written.saturating_sub(self.tp.snd_nxt) * mss;
        self.sndbuf.saturating_sub(queued) >= queued / 2
            && self.cfg.host.notsent_lowat.is_none_or(|l| notsent << 1 < l)
    }

    /// The send buffer's use (`sk_wmem_queued`) if the application had written up to
    /// segment `written`: the payload of everything written and not yet acknowledged, and
    /// each buffer's overhead, for the buffers sent data sits in and for the unsent data in
    /// buffers of the size goal.
    fn queued_bytes(&self, written: u64) -> u64 {
        let mss = self.cfg.mss as u64;
        let unsent = written.saturating_sub(self.tp.snd_nxt);
        let skbs = self.skbs_out + unsent.div_ceil(self.size_goal_segs());
        written.saturating_sub(self.tp.snd_una) * mss + skbs * host::SKB_OVERHEAD
    }

    /// Bytes in flight or SACKed but not acknowledged, plus unsent, as `ss` shows them
    /// (`skmem w`, `sk_wmem_queued`).
    pub fn wmem_queued(&self) -> u64 {
        self.queued_bytes(self.app_written)
    }

    /// The application writes what the send buffer takes (see the module docs).
    pub(super) fn app_write(&mut self, now: Nanos) {
        let total = self.total_segs.unwrap_or(u64::MAX);
        if self.queue_shrunk {
            // `tcp_check_space()` -> `tcp_new_space()`: after the push that follows an ACK,
            // a waiting writer gets a bigger buffer if the sender is not cwnd-limited.
            self.queue_shrunk = false;
            if self.app_blocked {
                let sendable = self
                    .app_written
                    .min(self.wnd_limit())
                    .saturating_sub(self.tp.snd_nxt);
                if (self.tp.packets_in_flight() as u64 + sendable) < self.tp.snd_cwnd as u64 {
                    self.sndbuf_expand();
                }
            }
        }
        if self.app_written >= total || (self.app_blocked && !self.writable()) {
            return;
        }
        self.writing_at = Some(now);
        let mss = self.cfg.mss as u64;
        // `tcp_sendmsg_locked()`: the writer fills its unsent tail buffer up to the size goal,
        // then starts new buffers while the queue is below `sk_sndbuf`
        // (`sk_stream_memory_free()`), filling each; so it stops at most one buffer past it.
        let goal = self.size_goal_segs();
        let unsent = self.app_written - self.tp.snd_nxt;
        let mut by_buf = self.app_written + (goal - unsent % goal) % goal;
        let queued = self.queued_bytes(by_buf);
        if queued < self.sndbuf {
            by_buf += goal * (self.sndbuf - queued).div_ceil(goal * mss + host::SKB_OVERHEAD);
        }
        let by_lowat = self
            .cfg
            .host
            .notsent_lowat
            .map_or(u64::MAX, |l| self.tp.snd_nxt + l.div_ceil(mss));
        let target = by_buf.min(by_lowat).min(total);
        if target > self.app_written {
            if self.app_written <= self.tp.snd_nxt {
                // `tcp_sendmsg()` found nothing unsent.
                if self.tp.packets_out == 0 {
                    self.restart_after_idle(now);
                }
                self.check_app_limited();
            }
            self.app_written = target;
        }
        self.app_blocked = self.app_written < total;
    }
}
