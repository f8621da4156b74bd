//! What an end host's configuration decides about a TCP connection: socket buffers and their
//! autotuning, the receive window's start, the minimum retransmission timeout, restart after
//! idle and the unsent-data limit. One description, read by the sender (the send buffer,
//! `rto_min`, restart after idle, `notsent_lowat`) and by the receiver (the receive buffer
//! and the initial receive window); each backend applies it in its own way (the simulator
//! through [`crate::sender`] and [`crate::receiver`], the kernel lab through sysctls, route
//! attributes and socket options inside its namespaces).
//!
//! Defaults are those of a fresh network namespace on a current Linux kernel (6.18):
//!
//! | setting | Linux name | default |
//! |---|---|---|
//! | [`HostTcp::tcp_rmem`] | `net.ipv4.tcp_rmem` | 4096 131072 33554432 |
//! | [`HostTcp::tcp_wmem`] | `net.ipv4.tcp_wmem` | 4096 16384 4194304 |
//! | [`HostTcp::rcvbuf`], [`HostTcp::sndbuf`] | `SO_RCVBUF`, `SO_SNDBUF` | not set (autotuned) |
//! | [`HostTcp::init_rwnd`] | route attribute `initrwnd` | not set |
//! | [`HostTcp::rto_min`] | route attribute `rto_min` (`tcp_rto_min_us`) | 200 ms |
//! | [`HostTcp::slow_start_after_idle`] | `net.ipv4.tcp_slow_start_after_idle` | 1 |
//! | [`HostTcp::notsent_lowat`] | `net.ipv4.tcp_notsent_lowat` | 4294967295 (no limit) |
//!
//! ## Receive buffer and window (`tcp_rcv_space_adjust()`, `tcp_rcvbuf_grow()`)
//! The receive buffer `sk_rcvbuf` starts at `tcp_rmem[1]`. The window the receiver may
//! advertise is the payload share of it, `tcp_win_from_space()`: buffer x `scaling_ratio` /
//! 256, where the ratio is a received buffer's payload over its memory cost (`skb->len /
//! skb->truesize`, measured per connection by `tcp_measure_rcv_mss()`; [`SCALING_RATIO`]).
//! Once per receiver RTT (measured from TCP timestamps, `tcp_rcv_rtt_measure_ts()`), the
//! bytes the application read in that RTT (`copied`) set the buffer: 2 x copied, plus twice
//! the growth over the previous RTT's copy for a sender still in slow start, plus the span
//! of out-of-order data, in buffer space, up to `tcp_rmem[2]`. The window clamp follows.
//! `SO_RCVBUF` fixes the buffer at twice the value given and turns this off.
//!
//! ## Send buffer (`tcp_sndbuf_expand()`, `tcp_sendmsg_locked()`)
//! `sk_sndbuf` starts at `tcp_wmem[1]` and, once the connection is established and whenever
//! an ACK frees space while the writer waits and the sender is not cwnd-limited, grows to
//! `2 x max(10, cwnd, reordering + 1) x per-segment cost` (3 x for BBR,
//! `bbr_sndbuf_expand()`), up to `tcp_wmem[2]`. The per-segment cost is the memory of one
//! MSS-sized buffer: the payload with headers rounded up to a power of two, plus the buffer
//! head ([`sndbuf_per_mss`]: 2304 bytes for a 1448-byte MSS on the lab's kernel).
//!
//! What the buffer holds (`sk_wmem_queued`) is every byte written and not yet acknowledged
//! (in flight, SACKed, or not yet sent), plus [`SKB_OVERHEAD`] per buffer it sits in: one
//! per TSO burst sent, one per buffer of unsent data, and SACKed runs merged into one
//! (`tcp_shift_skb_data()`). The writer is woken when a third of the buffer is free
//! (`sk_stream_min_wspace()`), or, with `notsent_lowat`, when unsent data is below half of
//! it (`tcp_stream_memory_free()`), and checks the buffer only when it starts a new buffer of
//! the size goal (`tcp_xmit_size_goal()`: 64 kB less header room, at most half the peer's
//! largest window); so it writes up to one buffer past `sk_sndbuf`. More: bytes it appends to
//! the unsent tail that the sender is sending in pieces are taken without a check, so while
//! cwnd has room and TSO bursts are shorter than a buffer (below ~500 Mbit/s of pacing
//! rate) an unpaced writer keeps writing until cwnd is full, far past `sk_sndbuf`
//! ([`crate::sender`], "The hosts"). The buffer bounds what a paced sender keeps in flight;
//! an unpaced one it bounds only when woken with cwnd full.

use crate::{Nanos, NS_PER_MS, NS_PER_SEC};

/// `tcp_measure_rcv_mss()`'s payload/memory ratio for full-sized segments, in 1/256
/// (`TCP_RMEM_TO_WIN_SCALE`): measured in the kernel lab as 5/8 (`ss -tmi`: a 4 MiB
/// `SO_RCVBUF` opens to 5 MiB).
pub const SCALING_RATIO: u64 = 160;
/// `TCP_DEFAULT_SCALING_RATIO`: the ratio assumed before any data arrived (50%), which sizes
/// the window offered in the handshake.
pub const DEFAULT_SCALING_RATIO: u64 = 128;
/// `TCP_INIT_CWND`: the first receive-space estimate is at most this many segments.
pub const INIT_SPACE_SEGS: u64 = 10;
/// `SOCK_MIN_RCVBUF` / `SOCK_MIN_SNDBUF` (about two minimal buffers), bytes.
pub const SOCK_MIN_BUF: u64 = 4608;
/// Largest `rto_min` a route accepts here (Linux caps `RTAX_RTO_MIN` at `TCP_RTO_MAX`; cclab
/// refuses anything above 10 s as surely a unit slip).
pub const RTO_MIN_MAX: Nanos = 10 * NS_PER_SEC;

/// `tcp_win_from_space()`: the window a buffer of `space` bytes backs.
pub fn win_from_space(space: u64, ratio: u64) -> u64 {
    (space * ratio) >> 8
}

/// `tcp_space_from_win()`: the buffer that backs a window of `win` bytes.
pub fn space_from_win(win: u64, ratio: u64) -> u64 {
    (win << 8) / ratio.max(1)
}

/// `MAX_TCP_HEADER`: the room for headers every TCP buffer reserves, bytes. It depends on
/// the kernel's configuration (`L1_CACHE_ALIGN(128 + MAX_HEADER)`, the link layers and
/// tunnels built in): 192 on the lab's kernel, read off its send buffers (`ss -tmi`: 46,080
/// bytes for 10 segments, `2 x 10 x 2304`); distribution kernels with tunnels built in have
/// 320 (`per_mss` 4352).
pub const MAX_TCP_HEADER: u64 = 192;

/// The memory one send-queue buffer (`sk_buff`) costs beyond its payload, bytes: its head,
/// allocated for the headers alone, since the payload sits in page fragments charged byte
/// for byte. Measured on the lab's kernel with `SO_MEMINFO` against `SIOCOUTQ`: 721-845 per
/// buffer.
pub const SKB_OVERHEAD: u64 = 768;

/// `tcp_sndbuf_expand()`'s `per_mss`: one MSS-sized buffer's memory, bytes. The headers
/// ([`MAX_TCP_HEADER`]) and the shared info (320) are added to the MSS clamp (MSS + 12 bytes
/// of timestamp option), rounded up to a power of two, plus the `sk_buff` itself (256): 2304
/// for a 1448-byte MSS.
pub fn sndbuf_per_mss(mss: u32) -> u64 {
    let per = (mss as u64 + 12) + MAX_TCP_HEADER + 320;
    per.next_power_of_two() + 256
}

/// A `tcp_rmem`/`tcp_wmem` triple as Linux accepts it: min <= default <= max, all above
/// 0, max within an `int`.
pub fn check_mem(t: [u64; 3]) -> Result<(), String> {
    if t[0] == 0 || t[0] > t[1] || t[1] > t[2] {
        return Err(format!(
            "{} {} {} is out of order: the three sizes are min, default and max, \
             each above 0 and min <= default <= max",
            t[0], t[1], t[2]
        ));
    }
    if t[2] > i32::MAX as u64 {
        return Err(format!(
            "a max of {} bytes is more than Linux accepts ({} bytes)",
            t[2],
            i32::MAX
        ));
    }
    Ok(())
}

/// A socket buffer (`SO_RCVBUF`/`SO_SNDBUF` value, or a byte limit like `notsent_lowat`):
/// 1 byte to 1 GiB.
pub fn check_sockbuf(b: u64) -> Result<(), String> {
    if b == 0 {
        return Err("must be positive bytes".into());
    }
    if b > (i32::MAX / 2) as u64 {
        return Err(format!(
            "{b} bytes is more than a socket takes (1 GiB at most)"
        ));
    }
    Ok(())
}

/// `rto_min`: 1 ms to 10 s ([`RTO_MIN_MAX`]).
pub fn check_rto_min(ns: Nanos) -> Result<(), String> {
    if !(NS_PER_MS..=RTO_MIN_MAX).contains(&ns) {
        return Err(format!(
            "rto_min = {} ms is out of range: give 1ms to 10s (Linux: 200ms)",
            ns as f64 / NS_PER_MS as f64
        ));
    }
    Ok(())
}

/// One end host's TCP configuration (see the module docs). `Default` is Linux's.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTcp {
    /// `net.ipv4.tcp_rmem`: min, default, max receive buffer, bytes.
    pub tcp_rmem: [u64; 3],
    /// `net.ipv4.tcp_wmem`: min, default, max send buffer, bytes.
    pub tcp_wmem: [u64; 3],
    /// `SO_RCVBUF` as the application passes it: the kernel doubles it and stops autotuning.
    pub rcvbuf: Option<u64>,
    /// `SO_SNDBUF` as the application passes it: the kernel doubles it and stops expanding.
    pub sndbuf: Option<u64>,
    /// Route attribute `initrwnd`: the window offered in the handshake, segments.
    pub init_rwnd: Option<u32>,
    /// Lower bound of the retransmission timeout (route attribute `rto_min`).
    pub rto_min: Nanos,
    /// `net.ipv4.tcp_slow_start_after_idle`: after an idle period longer than the RTO, the
    /// congestion window restarts from the initial window (`tcp_cwnd_restart()`).
    pub slow_start_after_idle: bool,
    /// `net.ipv4.tcp_notsent_lowat`: most unsent bytes the application may queue; `None` =
    /// no limit (Linux's default, `UINT_MAX`).
    pub notsent_lowat: Option<u64>,
    /// Not a Linux setting: an accelerated sender's probing start. After the first round
    /// trip, the spacing of the initial window's ACKs (a packet train) gives the
    /// bottleneck's rate, and the controller jumps to it (`CongestionControl::jump_start`)
    /// instead of doubling its way there.
    pub probe_start: bool,
}

impl Default for HostTcp {
    fn default() -> Self {
        HostTcp {
            tcp_rmem: [4096, 131072, 33554432],
            tcp_wmem: [4096, 16384, 4194304],
            rcvbuf: None,
            sndbuf: None,
            init_rwnd: None,
            rto_min: 200 * NS_PER_MS,
            slow_start_after_idle: true,
            notsent_lowat: None,
            probe_start: false,
        }
    }
}

impl HostTcp {
    /// Checks the settings as Linux would accept them; the error names the setting and
    /// what would fix it.
    pub fn validate(&self) -> Result<(), String> {
        for (name, t) in [("tcp_rmem", self.tcp_rmem), ("tcp_wmem", self.tcp_wmem)] {
            check_mem(t).map_err(|e| format!("{name}: {e}"))?;
        }
        for (name, v) in [("rcvbuf", self.rcvbuf), ("sndbuf", self.sndbuf)] {
            if let Some(b) = v {
                check_sockbuf(b).map_err(|e| format!("{name}: {e}"))?;
            }
        }
        if self.init_rwnd == Some(0) {
            return Err("init_rwnd = 0 would offer no window: give at least 1 segment".into());
        }
        check_rto_min(self.rto_min)?;
        if self.notsent_lowat == Some(0) {
            return Err(
                "notsent_lowat = 0 would never let the application write: give bytes, \
                 or leave it out for no limit"
                    .into(),
            );
        }
        Ok(())
    }

    /// The receive buffer when the connection opens, bytes.
    pub fn initial_rcvbuf(&self) -> u64 {
        match self.rcvbuf {
            Some(b) => (2 * b).max(SOCK_MIN_BUF),
            None => self.tcp_rmem[1],
        }
    }

    /// The send buffer when the socket is created, bytes (before `tcp_sndbuf_expand()`).
    pub fn initial_sndbuf(&self) -> u64 {
        match self.sndbuf {
            Some(b) => (2 * b).max(SOCK_MIN_BUF),
            None => self.tcp_wmem[1],
        }
    }

    /// The window offered in the handshake (`tcp_select_initial_window()`), bytes: the
    /// buffer's payload share at the default ratio, rounded down to whole segments, at most
    /// `init_rwnd` segments when that is set.
    pub fn initial_rcv_wnd(&self, mss: u32) -> u64 {
        let mss = mss as u64;
        let space = win_from_space(self.initial_rcvbuf(), DEFAULT_SCALING_RATIO);
        let space = if space > mss {
            space / mss * mss
        } else {
            space
        };
        match self.init_rwnd {
            Some(n) => space.min(n as u64 * mss),
            None => space,
        }
    }

    /// Whether every setting is Linux's default.
    pub fn is_default(&self) -> bool {
        *self == HostTcp::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_defaults_and_derived_sizes() {
        let h = HostTcp::default();
        h.validate().unwrap();
        // 131072 x 50% = 65536, rounded down to 45 segments of 1448.
        assert_eq!(h.initial_rcv_wnd(1448), 45 * 1448);
        let h = HostTcp {
            init_rwnd: Some(10),
            ..HostTcp::default()
        };
        assert_eq!(h.initial_rcv_wnd(1448), 10 * 1448);
        assert_eq!(sndbuf_per_mss(1448), 2304);
        assert_eq!(win_from_space(4 << 20, SCALING_RATIO), 5 << 19);
        assert_eq!(space_from_win(5 << 19, SCALING_RATIO), 4 << 20);
        let forced = HostTcp {
            rcvbuf: Some(1 << 20),
            ..HostTcp::default()
        };
        assert_eq!(forced.initial_rcvbuf(), 2 << 20);
    }

    #[test]
    fn impossible_settings_are_refused_by_name() {
        let bad = |h: HostTcp, word: &str| {
            let e = h.validate().unwrap_err();
            assert!(e.contains(word), "{e}");
        };
        bad(
            HostTcp {
                tcp_rmem: [4096, 1 << 20, 65536],
                ..HostTcp::default()
            },
            "tcp_rmem",
        );
        bad(
            HostTcp {
                tcp_wmem: [0, 16384, 65536],
                ..HostTcp::default()
            },
            "tcp_wmem",
        );
        bad(
            HostTcp {
                init_rwnd: Some(0),
                ..HostTcp::default()
            },
            "init_rwnd",
        );
        bad(
            HostTcp {
                rto_min: 11 * NS_PER_SEC,
                ..HostTcp::default()
            },
            "rto_min",
        );
        bad(
            HostTcp {
                notsent_lowat: Some(0),
                ..HostTcp::default()
            },
            "notsent_lowat",
        );
    }
}
