//! # cclab-bpf: congestion controllers loaded into the running kernel
//!
//! Linux takes a congestion controller at run time as a BPF `struct_ops` program: a map of
//! `struct tcp_congestion_ops` whose operations are verified BPF programs. Once registered
//! it is selected per socket with `TCP_CONGESTION` like a built-in one. That gives the
//! kernel lab the controllers a stock kernel lacks (`dctcp`, `bbr3`, `vegas`, built from
//! `bpf/` of this repository) and users a way to run their own object.
//!
//! - **Objects**: `build.rs` compiles each `bpf/NAME.bpf.c` with clang (CO-RE against
//!   `bpf/include/cclab_tcp.h`, no kernel headers) and embeds it; [`builtins`] lists them,
//!   [`not_built`] says why there are none.
//! - **Loading** ([`Registration`]): the system's libbpf ([`libbpf`]) relocates and loads
//!   the object, and the controller is registered through a BPF link, so it goes when the
//!   registration is dropped, when the run fails, and when the process is killed. Older
//!   kernels without struct_ops links get the map registered by itself and a record that
//!   [`clean_stale`] uses after a crash.
//! - **Host-wide**: a registered controller is visible in every network namespace
//!   (`tcp_available_congestion_control`) while it is registered. cclab never registers a
//!   name the kernel already has and never changes the host's default controller.

mod libbpf;
mod load;
mod stale;

pub use load::{Hold, Registration};
pub use stale::{clean_stale, RECORD_DIR};

use std::fmt;
use std::path::PathBuf;

include!(concat!(env!("OUT_DIR"), "/objects.rs"));

/// A controller built from `bpf/` into cclab.
#[derive(Debug)]
pub struct Builtin {
    /// The name it registers (`TCP_CONGESTION`), its file's stem.
    pub name: &'static str,
    /// The first line of its source's leading comment.
    pub summary: &'static str,
    /// Its source in the repository (`bpf/dctcp.bpf.c`).
    pub source: &'static str,
    object: &'static [u8],
}

impl Builtin {
    /// The object's bytes, as clang built them.
    pub fn object(&self) -> &'static [u8] {
        self.object
    }
}

static BUILTINS: std::sync::OnceLock<Vec<Builtin>> = std::sync::OnceLock::new();

/// The controllers built into this cclab (none when [`not_built`] says why).
pub fn builtins() -> &'static [Builtin] {
    BUILTINS.get_or_init(|| {
        OBJECTS
            .iter()
            .map(|&(name, summary, source, object)| Builtin {
                name,
                summary,
                source,
                object,
            })
            .collect()
    })
}

/// The built-in controller registered as `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    builtins().iter().find(|b| b.name == name)
}

/// Why this cclab has no BPF controllers (clang or libbpf's headers were missing when it
/// was built), or `None`.
pub fn not_built() -> Option<&'static str> {
    NOT_BUILT
}

/// An object to register.
#[derive(Clone, Debug)]
pub enum Source {
    Builtin(&'static Builtin),
    /// A user's object (`cc = "bpf:PATH"`).
    File(PathBuf),
}

/// Why a controller could not be loaded; `Display` is one line with the fix.
#[derive(Clone, Debug, PartialEq)]
pub enum BpfError {
    /// This machine cannot load BPF controllers (no libbpf, no BTF, not root).
    Unsupported(String),
    /// The object file cannot be read.
    Unreadable(String),
    /// libbpf or the kernel refused the object; `log` ends with the verifier's last lines.
    Rejected {
        object: String,
        why: String,
        log: String,
    },
    /// A kernel call failed in a way that may mean an older kernel.
    Kernel { errno: i32, what: String },
}

impl fmt::Display for BpfError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BpfError::Unsupported(m) | BpfError::Unreadable(m) => f.write_str(m),
            BpfError::Rejected { object, why, log } if log.is_empty() => {
                write!(f, "BPF controller {object}: {why}")
            }
            BpfError::Rejected { object, why, log } => {
                write!(
                    f,
                    "BPF controller {object}: {why}; libbpf/verifier said: {log}"
                )
            }
            BpfError::Kernel { what, .. } => {
                write!(f, "BPF controllers need kernel 6.4 or later here: {what}")
            }
        }
    }
}

impl std::error::Error for BpfError {}

/// Why this machine cannot register BPF controllers, or `None`: it needs root, the
/// kernel's BTF (`/sys/kernel/btf/vmlinux`, CONFIG_DEBUG_INFO_BTF) for CO-RE, and libbpf.
pub fn unavailable() -> Option<String> {
    if !cclab_sys::is_root() {
        return Some("loading BPF controllers needs root".into());
    }
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some("this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF), which BPF controllers need".into());
    }
    libbpf::get().err()
}

/// Congestion controls the kernel offers now (`tcp_available_congestion_control`).
pub use cclab_sys::available_ccs as available;

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
