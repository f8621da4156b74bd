//! Reading, writing and waiting on raw file descriptors.

use std::io;
use std::os::fd::RawFd;

pub fn read_fd(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Write one buffer made of several slices (one packet for a TUN device).
pub fn writev_fd(fd: RawFd, parts: &[&[u8]]) -> io::Result<usize> {
    let iov: Vec<libc::iovec> = parts
        .iter()
        .map(|p| libc::iovec {
            iov_base: p.as_ptr() as *mut _,
            iov_len: p.len(),
        })
        .collect();
    let n = unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as _) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

pub fn write_fd(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Wait until `fd` is readable or `timeout_ns` passed (ns precision; None = forever).
pub fn wait_readable(fd: RawFd, timeout_ns: Option<u64>) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = timeout_ns.map(|t| libc::timespec {
        tv_sec: (t / 1_000_000_000) as _,
        tv_nsec: (t % 1_000_000_000) as _,
    });
    let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
    let r = unsafe { libc::ppoll(&mut p, 1, tsp, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(r > 0)
}
