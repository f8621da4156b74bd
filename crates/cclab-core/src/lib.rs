//! # cclab-core: a sans-IO TCP model
//!
//! This crate holds the parts of a TCP connection that decide *what* to send and *when*,
//! with no clock, sockets or threads: every entry point takes the current time as an
//! argument (nanoseconds on an arbitrary monotonic clock). The simulator drives it with
//! simulated time; a user-space transport can drive it with a real clock.
//!
//! - [`sender`]: sequence space in MSS-sized segments, SACK scoreboard, RTT estimation and RTO
//!   ([`rtt`]), delivery-rate sampling ([`rate`]), RACK-TLP loss detection, PRR, pacing.
//! - [`receiver`]: cumulative ACK + SACK blocks, delayed ACKs, out-of-order reassembly.
//! - [`cc`]: the congestion-control trait (shaped like Linux `tcp_congestion_ops`) and
//!   NewReno, CUBIC and BBRv1.
//! - [`host`]: the end hosts' settings (socket buffers and autotuning, initial receive
//!   window, `rto_min`, restart after idle, `notsent_lowat`).
//! - [`packet`]: the segment and ACK records exchanged between the two ends.
//! - [`tcp_sock`]: the connection state the sender, the rate sampler and the controllers
//!   share (`TcpState`, re-exported by [`cc`]).
//!
//! Sequence numbers count *segments*, not bytes: segment `i` carries bytes
//! `[i*mss, (i+1)*mss)` of the stream (the last one of a sized flow may be shorter).

pub mod cc;
pub mod host;
pub mod packet;
pub mod rangeset;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod sender;
pub mod tcp_sock;
pub mod windowed;

/// Time in nanoseconds on the driver's monotonic clock.
pub type Nanos = u64;

pub const NS_PER_US: u64 = 1_000;
pub const NS_PER_MS: u64 = 1_000_000;
pub const NS_PER_SEC: u64 = 1_000_000_000;
