//! Registering a controller object with the kernel and taking it away again.

use crate::libbpf::{self, Libbpf};
use crate::{available, stale, BpfError, Source};
use std::ffi::{c_void, CStr};
use std::os::fd::{FromRawFd, OwnedFd};

/// How a registration is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Through a BPF link (kernels >= 6.4): the controller is unregistered when the link's
    /// file descriptor closes, also when the process is killed.
    Link,
    /// The map itself is registered (older kernels): it stays until unregistered, so a
    /// record under [`stale::RECORD_DIR`] lets `cclab lab clean` remove it after a crash.
    Map,
}

/// A controller registered in the running kernel, selectable by [`Registration::name`]
/// with `TCP_CONGESTION` in every network namespace. Dropping it unregisters it; sockets
/// that already use it keep it until they close.
pub struct Registration {
    lib: &'static Libbpf,
    obj: *mut libbpf::Object,
    /// The link (held by [`Hold::Link`]) or libbpf's handle on the registered map.
    link_fd: Option<OwnedFd>,
    map_link: *mut libbpf::Link,
    record: Option<std::path::PathBuf>,
    name: String,
    map_id: u32,
    hold: Hold,
    source: String,
    sha256: String,
}

// The libbpf handles are used only by the owner, one thread at a time.
unsafe impl Send for Registration {}

impl Registration {
    /// The name `TCP_CONGESTION` selects it by.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// `builtin:NAME` or the object's path.
    pub fn source(&self) -> &str {
        &self.source
    }
    /// SHA-256 of the object's bytes.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    pub fn hold(&self) -> Hold {
        self.hold
    }
    /// The kernel's id of the struct_ops map.
    pub fn map_id(&self) -> u32 {
        self.map_id
    }

    /// Loads `src` through the verifier and registers its controller. Needs root (or
    /// CAP_BPF + CAP_NET_ADMIN). The name it registers must be new to the kernel: a built-in
    /// or already registered controller is never replaced.
    pub fn register(src: &Source) -> Result<Registration, BpfError> {
        let lib = libbpf::get().map_err(BpfError::Unsupported)?;
        let (bytes, label) = src.bytes()?;
        let sha256 = crate::sha256_hex(&bytes);
        match Self::try_register(lib, &bytes, &label, &sha256, true) {
            // A kernel before 6.4 has no struct_ops links: register the map itself.
            Err(BpfError::Kernel { errno, .. })
                if errno == libc::EINVAL || errno == libc::EOPNOTSUPP =>
            {
                Self::try_register(lib, &bytes, &label, &sha256, false)
            }
            r => r,
        }
    }

    /// [`Registration::register`] held by the map as on kernels before 6.4, with its record
    /// for [`crate::clean_stale`] (tests of that path on newer kernels).
    #[doc(hidden)]
    pub fn register_held_by_map(src: &Source) -> Result<Registration, BpfError> {
        let lib = libbpf::get().map_err(BpfError::Unsupported)?;
        let (bytes, label) = src.bytes()?;
        let sha256 = crate::sha256_hex(&bytes);
        Self::try_register(lib, &bytes, &label, &sha256, false)
    }

    /// The record [`crate::clean_stale`] reads (map-held registrations only).
    pub fn record(&self) -> Option<&std::path::Path> {
        self.record.as_deref()
    }

    fn try_register(
        lib: &'static Libbpf,
        bytes: &[u8],
        label: &str,
        sha256: &str,
        link: bool,
    ) -> Result<Registration, BpfError> {
        let cap = libbpf::Capture::start(lib);
        // libbpf names the object in its messages: the file's stem.
        let stem = label
            .rsplit('/')
            .next()
            .unwrap_or(label)
            .split('.')
            .next()
            .unwrap_or("object");
        let name = std::ffi::CString::new(stem.replace(':', "_")).unwrap_or_default();
        let opts = OpenOpts {
            sz: std::mem::size_of::<OpenOpts>(),
            object_name: name.as_ptr(),
        };
        let obj = unsafe {
            (lib.open_mem)(
                bytes.as_ptr() as *const c_void,
                bytes.len(),
                &opts as *const OpenOpts as *const c_void,
            )
        };
        if obj.is_null() {
            return Err(BpfError::Rejected {
                object: label.into(),
                why: "not a BPF object libbpf can open".into(),
                log: tail(&cap.text()),
            });
        }
        // From here the object is closed on every path (the registration owns it on success).
        let mut reg = Registration {
            lib,
            obj,
            link_fd: None,
            map_link: std::ptr::null_mut(),
            record: None,
            name: String::new(),
            map_id: 0,
            hold: if link { Hold::Link } else { Hold::Map },
            source: label.into(),
            sha256: sha256.into(),
        };
        let map = reg.struct_ops_map(label)?;
        if link {
            unsafe { (lib.map_set_flags)(map, libbpf::F_LINK) };
        }
        let rc = unsafe { (lib.load)(obj) };
        if rc < 0 {
            return Err(BpfError::Rejected {
                object: label.into(),
                why: if -rc == libc::EACCES || -rc == libc::EINVAL {
                    "the kernel's verifier refused it".into()
                } else {
                    format!(
                        "loading it failed ({})",
                        std::io::Error::from_raw_os_error(-rc)
                    )
                },
                log: tail(&cap.text()),
            });
        }
        let before = available();
        // Fill the map with the program's operations; a map registered by itself is now live.
        let ml = unsafe { (lib.attach_struct_ops)(map) };
        if ml.is_null() {
            return Err(clash(label, &cap.text(), std::io::Error::last_os_error()));
        }
        reg.map_link = ml;
        let map_fd = unsafe { (lib.map_fd)(map) };
        reg.map_id = libbpf::map_info(lib, map_fd).map(|i| i.id).unwrap_or(0);
        if link {
            // The fill above only readied a link map; libbpf's handle must not try to
            // unregister it: the link owns the registration.
            unsafe { (lib.link_disconnect)(ml) };
            let fd = unsafe {
                (lib.link_create)(map_fd, 0, libbpf::ATTACH_STRUCT_OPS, std::ptr::null())
            };
            if fd < 0 {
                let err = std::io::Error::from_raw_os_error(-fd);
                if matches!(-fd, libc::EINVAL | libc::EOPNOTSUPP) {
                    return Err(BpfError::Kernel {
                        errno: -fd,
                        what: format!("creating a struct_ops link: {err}"),
                    });
                }
                return Err(clash(label, &cap.text(), err));
            }
            reg.link_fd = Some(unsafe { OwnedFd::from_raw_fd(fd) });
        } else {
            reg.record = stale::write_record(reg.map_id, label).ok();
        }
        let after = available();
        let new: Vec<&String> = after.iter().filter(|n| !before.contains(n)).collect();
        match new.as_slice() {
            [one] => reg.name = one.to_string(),
            _ => {
                return Err(BpfError::Rejected {
                    object: label.into(),
                    why: "it registered no new congestion control (is its struct_ops map a tcp_congestion_ops?)".into(),
                    log: String::new(),
                })
            }
        }
        Ok(reg)
    }

    /// The object's one struct_ops map.
    fn struct_ops_map(&self, label: &str) -> Result<*mut libbpf::Map, BpfError> {
        let mut found = Vec::new();
        let mut m = std::ptr::null_mut();
        loop {
            m = unsafe { (self.lib.next_map)(self.obj, m) };
            if m.is_null() {
                break;
            }
            if unsafe { (self.lib.map_type)(m) } == libbpf::MAP_TYPE_STRUCT_OPS {
                found.push(m);
            }
        }
        match found.as_slice() {
            [one] => Ok(*one),
            [] => Err(BpfError::Rejected {
                object: label.into(),
                why: "it has no SEC(\".struct_ops\") map of struct tcp_congestion_ops, so it is no congestion controller".into(),
                log: String::new(),
            }),
            many => {
                let names: Vec<String> = many
                    .iter()
                    .map(|m| unsafe { CStr::from_ptr((self.lib.map_name)(*m)) }.to_string_lossy().into_owned())
                    .collect();
                Err(BpfError::Rejected {
                    object: label.into(),
                    why: format!("it has {} struct_ops maps ({}); cclab registers one controller per object", many.len(), names.join(", ")),
                    log: String::new(),
                })
            }
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // Closing the link unregisters a linked controller; destroying libbpf's handle on a
        // map registered by itself deletes its entry, which unregisters it.
        self.link_fd = None;
        if !self.map_link.is_null() {
            unsafe { (self.lib.link_destroy)(self.map_link) };
        }
        unsafe { (self.lib.close)(self.obj) };
        if let Some(r) = self.record.take() {
            let _ = std::fs::remove_file(r);
        }
    }
}

/// A registration the kernel refused after loading: a name already taken, or another cause.
fn clash(label: &str, log: &str, err: std::io::Error) -> BpfError {
    if err.raw_os_error() == Some(libc::EEXIST) {
        BpfError::Rejected {
            object: label.into(),
            why: "a congestion control of the same name is already registered (the kernel's own, another run's, or a leftover that `cclab lab clean` removes)".into(),
            log: String::new(),
        }
    } else {
        BpfError::Rejected {
            object: label.into(),
            why: format!("registering it failed ({err})"),
            log: tail(log),
        }
    }
}

/// The last lines worth showing of libbpf's messages: the verifier's log ends with the
/// instruction it refused and why.
pub(crate) fn tail(log: &str) -> String {
    // libbpf's own summary lines ("failed to load object", the verifier's statistics) say
    // nothing the error does not; the verifier's last lines and libbpf's first complaint do.
    let lines: Vec<&str> = log
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty()
                && !l.contains("-- END PROG LOAD LOG --")
                && !l.contains("-- BEGIN PROG LOAD LOG --")
                && !l.starts_with("processed ")
                && !l.contains("failed to load object")
                && !l.contains("failed to load: -")
                && !l.starts_with("Error:")
        })
        .map(|l| l.trim_start_matches("libbpf: "))
        .collect();
    let end = lines.len();
    lines[end.saturating_sub(3)..]
        .iter()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// `struct bpf_object_open_opts`'s first members (libbpf takes a shorter struct from
/// callers built against an older version).
#[repr(C)]
struct OpenOpts {
    sz: usize,
    object_name: *const std::ffi::c_char,
}

impl Source {
    /// The object's bytes and the label errors and results use.
    fn bytes(&self) -> Result<(Vec<u8>, String), BpfError> {
        match self {
            Source::Builtin(b) => Ok((b.object.to_vec(), format!("builtin:{}", b.name))),
            Source::File(p) => {
                let label = p.display().to_string();
                let meta = std::fs::metadata(p).map_err(|e| {
                    BpfError::Unreadable(format!("cannot read BPF object {label}: {e}"))
                })?;
                if !meta.is_file() || meta.len() > 64 << 20 {
                    return Err(BpfError::Unreadable(format!("{label} is not a BPF object file (a regular file under 64 MiB built with clang -target bpf)")));
                }
                let b = std::fs::read(p).map_err(|e| {
                    BpfError::Unreadable(format!("cannot read BPF object {label}: {e}"))
                })?;
                Ok((b, label))
            }
        }
    }
}
