//! Thin, checked wrappers over the Linux calls cclab makes (libc only): namespaces, TUN
//! devices, sockets and `TCP_INFO`, privileges, signals, CPU placement. The kernel backend
//! (its lab and path element) and the real-host measurements (`serve`, `perf`, `get`) both
//! use them; neither depends on the other for them.
//!
//! Every item is re-exported at the crate root (`cclab_sys::tcp_info`, ...); the modules
//! only group them.

mod cpu;
mod fd;
mod ns;
mod privilege;
mod signal;
mod socket;
mod tcp;
mod tun;

pub use cpu::*;
pub use fd::*;
pub use ns::*;
pub use privilege::*;
pub use signal::*;
pub use socket::*;
pub use tcp::*;
pub use tun::*;

use std::io;

/// CLOCK_MONOTONIC in nanoseconds (the one clock every part of a run uses).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A libc return value as an `io::Result` (negative: the thread's `errno`).
fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}
