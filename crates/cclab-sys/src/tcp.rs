//! TCP: the congestion controller of a socket, `TCP_INFO`, and the controllers the kernel
//! offers.

use crate::cvt;
use crate::socket::setsockopt_raw;
use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

pub fn get_congestion(fd: RawFd) -> io::Result<String> {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    })?;
    let s = &buf[..len as usize];
    Ok(String::from_utf8_lossy(s.split(|&b| b == 0).next().unwrap_or(&[])).into_owned())
}

pub fn set_congestion(fd: RawFd, cc: &str) -> io::Result<()> {
    let c = CString::new(cc).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    setsockopt_raw(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, c.as_bytes())
}

/// `struct tcp_info` of Linux (include/uapi/linux/tcp.h) up to the 6.18 fields (Accurate
/// ECN's counters); the kernel fills what it has and the call reports the length.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    /// Smoothed RTT, us.
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    /// Bytes per second.
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    /// Bytes per second.
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub rehash: u32,
    pub total_rto: u16,
    pub total_rto_recoveries: u16,
    pub total_rto_time: u32,
    /// CE-marked segments this end received (6.18).
    pub received_ce: u32,
    /// Accurate ECN's byte counters (6.18): payload bytes the peer reported receiving with
    /// ECT(1), ECT(0) and CE (the sender's view, from the AccECN option), then the same as
    /// this end received them. Zero unless AccECN was negotiated.
    pub delivered_e1_bytes: u32,
    pub delivered_e0_bytes: u32,
    pub delivered_ce_bytes: u32,
    pub received_e1_bytes: u32,
    pub received_e0_bytes: u32,
    pub received_ce_bytes: u32,
    pub accecn_fail_mode: u16,
    pub accecn_opt_seen: u16,
}

/// Packets in flight as Linux counts them (`tcp_packets_in_flight()`): unacknowledged, less
/// SACKed and lost, plus retransmitted.
pub fn packets_in_flight(ti: &TcpInfo) -> u32 {
    (ti.unacked as i64 - ti.sacked as i64 - ti.lost as i64 + ti.retrans as i64).max(0) as u32
}

/// TCP_INFO of a socket; returns the info and how many bytes the kernel filled.
pub fn tcp_info(fd: RawFd) -> io::Result<(TcpInfo, usize)> {
    let mut ti = TcpInfo::default();
    let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut ti as *mut TcpInfo).cast(),
            &mut len,
        )
    })?;
    Ok((ti, len as usize))
}

/// Offset of `total_rto` in [`TcpInfo`] (the kernel reports it only from 6.7 on).
pub const TCPI_TOTAL_RTO_END: usize = std::mem::offset_of!(TcpInfo, total_rto) + 2;

/// The end of Accurate ECN's counters in [`TcpInfo`] (the kernel reports them from 6.18 on).
pub const TCPI_ACCECN_END: usize = std::mem::offset_of!(TcpInfo, accecn_opt_seen) + 2;

/// Congestion controls this kernel offers (`tcp_available_congestion_control`).
pub fn available_ccs() -> Vec<String> {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.split_whitespace().map(String::from).collect())
        .unwrap_or_default()
}
