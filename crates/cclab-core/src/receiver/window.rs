//! The receive window and buffer: the free space, the receiver's RTT from echoed
//! timestamps, the buffer autotuning once per receiver RTT (`tcp_rcv_space_adjust()`), the
//! window to advertise (`tcp_select_window()`) and its opening while data arrives
//! (`tcp_grow_window()`).

use super::Receiver;
use crate::host;
use crate::packet::Segment;
use crate::{Nanos, NS_PER_MS};

impl Receiver {
    /// `tcp_space()`: the window the free part of the buffer backs, bytes.
    pub(super) fn free_space(&self) -> u64 {
        host::win_from_space(self.rcvbuf, self.scaling_ratio)
            .saturating_sub(self.ooo_segs * self.cfg.mss as u64)
    }

    /// `tcp_rcv_rtt_measure_ts()` + `tcp_rcv_rtt_update()`: one sample per new echo, from a
    /// full-sized segment; timestamps tick in milliseconds.
    pub(super) fn rtt_measure(&mut self, now: Nanos, seg: &Segment) {
        if seg.tsecr == 0 || seg.tsecr == self.last_tsecr {
            return;
        }
        self.last_tsecr = seg.tsecr;
        if seg.len < self.cfg.mss {
            return;
        }
        let delta_ms = (now / NS_PER_MS)
            .saturating_sub(seg.tsecr / NS_PER_MS)
            .max(1);
        let sample = delta_ms * 1000;
        let old = self.rcv_rtt_us8;
        self.rcv_rtt_us8 = if old == 0 || sample << 3 < old {
            sample << 3
        } else {
            old - (old >> 3) + sample
        };
    }

    /// `tcp_rcv_space_adjust()`: the application read up to `delivered_bytes`; once per
    /// receiver RTT, a buffer for twice (and in slow start four times) what it read.
    pub(super) fn rcv_space_adjust(&mut self, now: Nanos) {
        if self.rcv_rtt_us8 == 0 {
            return;
        }
        if (now.saturating_sub(self.rcvq_time)) / 1000 < self.rcv_rtt_us8 >> 3 {
            return;
        }
        let copied = self.delivered_bytes - self.rcvq_seq;
        if copied > self.rcvq_space {
            self.rcvbuf_grow(copied);
        }
        self.rcvq_seq = self.delivered_bytes;
        self.rcvq_time = now;
    }

    /// `tcp_rcvbuf_grow()`.
    pub(super) fn rcvbuf_grow(&mut self, newval: u64) {
        let old = self.rcvq_space.max(1);
        self.rcvq_space = newval;
        if self.cfg.host.rcvbuf.is_some() {
            return;
        }
        let mut rcvwin = newval << 1;
        rcvwin += (rcvwin * newval.saturating_sub(old) / old) << 1;
        if let Some(last) = self.ooo.last() {
            rcvwin += self.bytes_below(last.end) - self.bytes_below(self.rcv_nxt);
        }
        let rcvbuf =
            host::space_from_win(rcvwin, self.scaling_ratio).min(self.cfg.host.tcp_rmem[2]);
        if rcvbuf > self.rcvbuf {
            self.rcvbuf = rcvbuf;
            self.window_clamp = host::win_from_space(rcvbuf, self.scaling_ratio);
        }
    }

    /// `tcp_select_window()`: the window to advertise now, bytes past `rcv_nxt`; the right
    /// edge never moves back.
    pub(super) fn select_window(&mut self) -> u64 {
        let mss = self.cfg.mss as u64;
        let allowed = host::win_from_space(self.rcvbuf, self.scaling_ratio);
        let full = self.window_clamp.min(allowed);
        let mut free = self.free_space();
        if free < full / 2 && (free < allowed / 16 || free < mss) {
            free = 0;
        }
        // `tcp_receive_window()`: what is left of the last offer, from `rcv_wup`.
        let right_edge = self.bytes_below(self.rcv_wup) + self.rcv_wnd;
        let cur = right_edge.saturating_sub(self.bytes_below(self.rcv_nxt));
        self.rcv_wnd = free.min(self.rcv_ssthresh).max(cur);
        self.rcv_wnd
    }

    /// `tcp_grow_window()` for one arriving segment of new data: open the window by two
    /// segments while below the clamp, and ACK this segment at once.
    pub(super) fn grow_window(&mut self) {
        let room = self
            .window_clamp
            .min(self.free_space())
            .saturating_sub(self.rcv_ssthresh);
        if room > 0 {
            self.rcv_ssthresh += room.min(2 * self.cfg.mss as u64);
            self.quickacks |= 1;
        }
    }
}
