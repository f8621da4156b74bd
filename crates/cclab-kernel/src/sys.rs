//! Thin, checked wrappers over the Linux calls the lab needs (libc only).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// CLOCK_MONOTONIC in nanoseconds (the one clock every part of a run uses).
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

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

/// Sets the calling thread's timer slack (ns); 1 makes sleeps wake on time.
pub fn set_timer_slack(ns: u64) {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

/// Put the calling thread under SCHED_FIFO at `prio`; false if not allowed.
pub fn set_realtime(prio: i32) -> bool {
    let p = libc::sched_param {
        sched_priority: prio,
    };
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &p) == 0 }
}

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

// ---- sockets ---------------------------------------------------------------------------

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

/// `struct tcp_info` of Linux (include/uapi/linux/tcp.h) up to the 6.7 fields; the kernel
/// fills what it has and the call reports the length.
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

// ---- privileges ------------------------------------------------------------------------

/// Effective capability set (bit mask) of this process, from /proc/self/status.
pub fn effective_caps() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0)
}

pub const CAP_NET_ADMIN: u32 = 12;
pub const CAP_SYS_ADMIN: u32 = 21;

pub fn has_cap(bit: u32) -> bool {
    effective_caps() & (1u64 << bit) != 0
}

pub fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

// ---- signals ---------------------------------------------------------------------------

use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;

/// Signal that interrupted the runs in progress (0 = none).
static INTERRUPTED: AtomicI32 = AtomicI32::new(0);
/// Runs in progress that installed the handlers.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
static SAVED: Mutex<Option<(libc::sigaction, libc::sigaction)>> = Mutex::new(None);

extern "C" fn on_signal(sig: libc::c_int) {
    INTERRUPTED.store(sig, Ordering::SeqCst);
}

/// While alive, SIGINT and SIGTERM only set a flag ([`interrupted`]) so a run can stop and
/// clean up; the previous handlers come back when the last guard drops.
pub struct SignalGuard(());

impl SignalGuard {
    pub fn install() -> SignalGuard {
        let mut saved = SAVED.lock().unwrap();
        if ACTIVE.fetch_add(1, Ordering::SeqCst) == 0 {
            INTERRUPTED.store(0, Ordering::SeqCst);
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = on_signal as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                let mut old_int: libc::sigaction = std::mem::zeroed();
                let mut old_term: libc::sigaction = std::mem::zeroed();
                libc::sigaction(libc::SIGINT, &sa, &mut old_int);
                libc::sigaction(libc::SIGTERM, &sa, &mut old_term);
                *saved = Some((old_int, old_term));
            }
        }
        SignalGuard(())
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        let mut saved = SAVED.lock().unwrap();
        if ACTIVE.fetch_sub(1, Ordering::SeqCst) == 1 {
            if let Some((i, t)) = saved.take() {
                unsafe {
                    libc::sigaction(libc::SIGINT, &i, std::ptr::null_mut());
                    libc::sigaction(libc::SIGTERM, &t, std::ptr::null_mut());
                }
            }
        }
    }
}

/// `SIGINT` or `SIGTERM`: the name of a signal [`interrupted`] returned.
pub fn signal_name(sig: i32) -> &'static str {
    if sig == libc::SIGINT {
        "SIGINT"
    } else {
        "SIGTERM"
    }
}

/// The signal (SIGINT/SIGTERM) received while a run was in progress, if any.
pub fn interrupted() -> Option<i32> {
    match INTERRUPTED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

// ---- CPU placement ---------------------------------------------------------------------

/// CPUs this process may run on.
pub fn allowed_cpus() -> Vec<usize> {
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } != 0
    {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Restrict the calling thread to `cpus` (best effort; false if not applied).
pub fn pin_thread(cpus: &[usize]) -> bool {
    if cpus.is_empty() {
        return false;
    }
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 }
}

/// Where a run's threads go: the element alone on the last allowed CPU, the endpoints
/// (sender, receiver) on the others; `None` with fewer than two CPUs.
pub fn placement() -> Option<(Vec<usize>, Vec<usize>)> {
    let cpus = allowed_cpus();
    if cpus.len() < 2 {
        return None;
    }
    let (rest, last) = cpus.split_at(cpus.len() - 1);
    Some((last.to_vec(), rest.to_vec()))
}

/// Pin the calling thread as the element (`element` true) or an endpoint, per [`placement`].
pub fn place(element: bool) {
    if let Some((e, r)) = placement() {
        pin_thread(if element { &e } else { &r });
    }
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

/// CPU time the hypervisor has taken from this machine so far, summed over its CPUs, ms
/// (`steal` of the `cpu` line of /proc/stat); None where the kernel does not report it.
pub fn steal_ms() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let steal: u64 = line.split_whitespace().nth(8)?.parse().ok()?;
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    (hz > 0).then(|| steal as f64 * 1000.0 / hz as f64)
}

/// CPUs online on this machine.
pub fn online_cpus() -> u32 {
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(1) as u32
}
