//! Network namespaces and what a thread sees inside one: entering a namespace, its
//! sysctls, and its own sysfs.

use crate::cvt;
use std::io;
use std::os::fd::AsRawFd;

/// Move the calling thread into the named network namespace (`ip netns` name).
pub fn enter_netns(name: &str) -> io::Result<()> {
    let path = format!("/run/netns/{name}");
    let f = std::fs::File::open(&path)?;
    cvt(unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

/// Run `f` on a fresh thread inside namespace `ns` and return its result.
pub fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    let ns = ns.to_string();
    std::thread::spawn(move || {
        enter_netns(&ns)?;
        f()
    })
    .join()
    .map_err(|_| io::Error::other("namespace helper thread panicked"))?
}

/// Write a sysctl of the calling thread's network namespace (`net.ipv4.ip_forward`).
pub fn write_sysctl(key: &str, value: &str) -> io::Result<()> {
    let path = format!("/proc/sys/{}", key.replace('.', "/"));
    std::fs::write(&path, value).map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
}

/// Write `value` to `rel` (a path under `/sys`, e.g. `class/net/ctun/queues/rx-0/rps_cpus`)
/// as the calling thread's network namespace sees it.
///
/// sysfs shows the network devices of the namespace it was mounted from, so the host's
/// `/sys` cannot reach a device inside a lab namespace. Instead of `ip netns exec` (a child
/// process in a copied mount namespace that also holds copies of every `/run/netns` mount
/// while it lives), this makes a detached sysfs mount with the new mount API: it belongs to
/// no mount namespace and disappears when its file descriptor is closed.
pub fn write_own_sysfs(rel: &str, value: &str) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    const FSOPEN_CLOEXEC: libc::c_uint = 1;
    const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
    const FSMOUNT_CLOEXEC: libc::c_uint = 1;
    let fstype = CString::new("sysfs").unwrap();
    let fs = unsafe { libc::syscall(libc::SYS_fsopen, fstype.as_ptr(), FSOPEN_CLOEXEC) };
    if fs < 0 {
        return Err(io::Error::last_os_error());
    }
    let fs = unsafe { OwnedFd::from_raw_fd(fs as i32) };
    let r = unsafe {
        libc::syscall(
            libc::SYS_fsconfig,
            fs.as_raw_fd(),
            FSCONFIG_CMD_CREATE,
            std::ptr::null::<libc::c_char>(),
            std::ptr::null::<libc::c_void>(),
            0,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    let mnt = unsafe { libc::syscall(libc::SYS_fsmount, fs.as_raw_fd(), FSMOUNT_CLOEXEC, 0) };
    if mnt < 0 {
        return Err(io::Error::last_os_error());
    }
    let mnt = unsafe { OwnedFd::from_raw_fd(mnt as i32) };
    let path = CString::new(rel).map_err(|_| io::Error::other("NUL in sysfs path"))?;
    let fd = unsafe {
        libc::openat(
            mnt.as_raw_fd(),
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("/sys/{rel}: {e}")));
    }
    let mut f = unsafe { std::fs::File::from_raw_fd(fd) };
    use std::io::Write;
    f.write_all(value.as_bytes())
        .map_err(|e| io::Error::new(e.kind(), format!("/sys/{rel}: {e}")))
}
