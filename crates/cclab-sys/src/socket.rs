//! Sockets: creation, addresses, options and their state.

use crate::cvt;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// `setsockopt` with a plain C struct value (`timeval`, `linger`, ...).
pub fn setsockopt_struct<T: Copy>(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    val: &T,
) -> io::Result<()> {
    // SAFETY: `T` is a plain-old-data C struct; the kernel reads `size_of::<T>()` bytes of it.
    let bytes = unsafe {
        std::slice::from_raw_parts((val as *const T).cast::<u8>(), std::mem::size_of::<T>())
    };
    setsockopt_raw(fd, level, opt, bytes)
}

/// Close with RST (`SO_LINGER` 0): nothing keeps sending after a run.
pub fn set_abortive_close(fd: RawFd) -> io::Result<()> {
    setsockopt_struct(
        fd,
        libc::SOL_SOCKET,
        libc::SO_LINGER,
        &libc::linger {
            l_onoff: 1,
            l_linger: 0,
        },
    )
}

pub fn setsockopt_raw(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    val: &[u8],
) -> io::Result<()> {
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            opt,
            val.as_ptr().cast(),
            val.len() as libc::socklen_t,
        )
    })?;
    Ok(())
}

pub fn setsockopt_int(
    fd: RawFd,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> io::Result<()> {
    setsockopt_raw(fd, level, opt, &v.to_ne_bytes())
}

pub fn sockaddr(ip: [u8; 4], port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(ip),
        },
        sin_zero: [0; 8],
    }
}

pub fn new_socket(kind: libc::c_int) -> io::Result<OwnedFd> {
    let fd = cvt(unsafe { libc::socket(libc::AF_INET, kind | libc::SOCK_CLOEXEC, 0) })?;
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

pub fn bind(fd: RawFd, ip: [u8; 4], port: u16) -> io::Result<()> {
    let sa = sockaddr(ip, port);
    cvt(unsafe {
        libc::bind(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of_val(&sa) as u32,
        )
    })?;
    Ok(())
}

/// Start a connect; Ok(()) also when it is in progress (non-blocking socket).
pub fn connect(fd: RawFd, ip: [u8; 4], port: u16) -> io::Result<()> {
    let sa = sockaddr(ip, port);
    let r = unsafe {
        libc::connect(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of_val(&sa) as u32,
        )
    };
    if r < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(libc::EINPROGRESS) {
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    let fl = cvt(unsafe { libc::fcntl(fd, libc::F_GETFL) })?;
    cvt(unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) })?;
    Ok(())
}

pub fn socket_error(fd: RawFd) -> io::Result<i32> {
    let mut v: libc::c_int = 0;
    let mut len = 4 as libc::socklen_t;
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_ERROR,
            (&mut v as *mut i32).cast(),
            &mut len,
        )
    })?;
    Ok(v)
}

/// Peer's (ip, port) of a connected IPv4 socket.
pub fn peer_port(fd: RawFd) -> io::Result<u16> {
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of_val(&sa) as libc::socklen_t;
    cvt(unsafe { libc::getpeername(fd, (&mut sa as *mut libc::sockaddr_in).cast(), &mut len) })?;
    Ok(u16::from_be(sa.sin_port))
}
