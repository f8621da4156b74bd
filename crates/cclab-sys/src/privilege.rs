//! Privileges: root and capabilities.

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
