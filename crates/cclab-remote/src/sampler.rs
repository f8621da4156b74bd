//! TCP_INFO sampling of a sending socket, and the sender's congestion control, through the
//! system-call crate's checked wrappers (`cclab_sys`).

use crate::protocol::Sample;
use cclab_sys as sys;
use std::os::fd::RawFd;

/// Sampling period, ns (10 ms).
pub const SAMPLE_NS: u64 = 10_000_000;

/// One sample of socket `fd`, `t_us` after the run's start.
pub fn sample(fd: RawFd, t_us: u32) -> Option<Sample> {
    let (ti, len) = sys::tcp_info(fd).ok()?;
    let inflight = sys::packets_in_flight(&ti);
    Some(Sample {
        t_us,
        cwnd: ti.snd_cwnd,
        inflight,
        srtt_us: ti.rtt,
        min_rtt_us: if ti.min_rtt == u32::MAX {
            0
        } else {
            ti.min_rtt
        },
        retrans: ti.total_retrans,
        segs_out: ti.data_segs_out,
        rtos: if len >= sys::TCPI_TOTAL_RTO_END {
            ti.total_rto as u32
        } else {
            0
        },
        delivery_rate: ti.delivery_rate,
        pacing_rate: if ti.pacing_rate == u64::MAX {
            0
        } else {
            ti.pacing_rate
        },
        bytes_acked: ti.bytes_acked,
        bytes_sent: ti.bytes_sent,
    })
}

/// Bytes of data sent and not yet acknowledged (and not yet sent) on `fd`.
pub fn unacked(fd: RawFd) -> Option<(u32, u32)> {
    sys::tcp_info(fd)
        .ok()
        .map(|(ti, _)| (ti.unacked, ti.notsent_bytes))
}

/// Controllers this kernel has (`tcp_available_congestion_control`).
pub fn available() -> Vec<String> {
    cclab_sys::available_ccs()
}

/// Controllers unprivileged sockets may choose (`tcp_allowed_congestion_control`).
pub fn allowed() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
        .map(|s| s.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}

/// This kernel's release (`uname -r`).
pub fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Set `cc` on socket `fd`; a controller this kernel lacks or does not allow this process is
/// a one-line error naming what it has.
pub fn set_cc(fd: RawFd, cc: &str) -> Result<(), String> {
    sys::set_congestion(fd, cc).map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => format!(
            "congestion control \"{cc}\" is not in the sender's kernel {} (it has: {}); `modprobe tcp_{cc}` there, or pick one of those",
            kernel_release(),
            available().join(", ")
        ),
        Some(libc::EPERM) => format!(
            "congestion control \"{cc}\" is not allowed for this user on the sender (allowed: {}); add it to net.ipv4.tcp_allowed_congestion_control there, or pick one of those",
            allowed().join(", ")
        ),
        _ => format!("setting congestion control \"{cc}\" failed: {e}"),
    })
}

/// Whether this process could send with `cc` (tried on a scratch socket).
pub fn check_cc(cc: &str) -> Result<(), String> {
    let s =
        sys::new_socket(libc::SOCK_STREAM).map_err(|e| format!("cannot create a socket: {e}"))?;
    set_cc(std::os::fd::AsRawFd::as_raw_fd(&s), cc)
}

/// Cap socket `fd`'s pacing rate at `bytes_per_s` (`SO_MAX_PACING_RATE`, 64-bit since Linux
/// 4.20; TCP paces internally without the fq qdisc since 4.13).
pub fn set_max_pacing(fd: RawFd, bytes_per_s: u64) -> Result<(), String> {
    sys::setsockopt_raw(
        fd,
        libc::SOL_SOCKET,
        libc::SO_MAX_PACING_RATE,
        &bytes_per_s.to_ne_bytes(),
    )
    .map_err(|e| format!("capping the pacing rate at {bytes_per_s} bytes/s failed: {e}"))
}

/// The controller socket `fd` uses.
pub fn cc_of(fd: RawFd) -> String {
    sys::get_congestion(fd).unwrap_or_default()
}
