//! TUN devices: the path element's side of the lab's links, with or without the virtio-net
//! header (GSO).

use crate::cvt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// Open a TUN device (IFF_TUN | IFF_NO_PI, non-blocking) named `name` in the calling
/// thread's network namespace.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    open_tun_with(name, false)
}

/// `IFF_VNET_HDR`: every read/write carries a 10-byte `virtio_net_hdr` first.
pub const IFF_VNET_HDR: libc::c_int = 0x4000;
/// `TUNSETOFFLOAD` = `_IOW('T', 208, unsigned int)`.
pub const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
pub const TUN_F_CSUM: libc::c_uint = 0x01;
pub const TUN_F_TSO4: libc::c_uint = 0x02;
pub const TUN_F_USO4: libc::c_uint = 0x20;
/// Size of `struct virtio_net_hdr`.
pub const VNET_HDR_LEN: usize = 10;

/// Open a TUN device; with `gso`, with `IFF_VNET_HDR` and offloads `CSUM | TSO4` (plus
/// `USO4` when the kernel has it) so the stack hands GSO super-packets over whole.
/// Returns the fd and the offload flags that were accepted (0 without `gso`).
pub fn open_tun_gso(name: &str) -> io::Result<(OwnedFd, libc::c_uint)> {
    let fd = open_tun_with(name, true)?;
    let mut flags = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_USO4;
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, flags as libc::c_ulong) } < 0 {
        flags = TUN_F_CSUM | TUN_F_TSO4;
        cvt(unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, flags as libc::c_ulong) })?;
    }
    Ok((fd, flags))
}

fn open_tun_with(name: &str, vnet: bool) -> io::Result<OwnedFd> {
    let fd = cvt(unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    })?;
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    #[repr(C)]
    struct IfReq {
        name: [u8; 16],
        flags: libc::c_short,
        _pad: [u8; 22],
    }
    let mut req = IfReq {
        name: [0; 16],
        flags: (libc::IFF_TUN | libc::IFF_NO_PI | if vnet { IFF_VNET_HDR } else { 0 })
            as libc::c_short,
        _pad: [0; 22],
    };
    let b = name.as_bytes();
    req.name[..b.len().min(15)].copy_from_slice(&b[..b.len().min(15)]);
    cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req as *mut IfReq) })?;
    Ok(fd)
}
