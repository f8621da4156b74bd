//! The system's libbpf (`libbpf.so.1`), opened at run time.
//!
//! libbpf is the kernel community's loader: it relocates a CO-RE object against the running
//! kernel's BTF, loads its programs through the verifier and fills a struct_ops map. cclab
//! opens the distribution's shared library when a BPF controller is first asked for, so
//! the build needs no C library and a machine without libbpf still runs everything else.
//! Only the handful of calls below are used; they are in libbpf's stable 1.x ABI.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Mutex, OnceLock};

#[repr(C)]
pub struct Object {
    _p: [u8; 0],
}
#[repr(C)]
pub struct Map {
    _p: [u8; 0],
}
#[repr(C)]
pub struct Link {
    _p: [u8; 0],
}

/// `libbpf_print_fn_t`; the `va_list` is passed as a pointer on the ABIs cclab builds for.
type PrintFn = unsafe extern "C" fn(c_int, *const c_char, *mut c_void) -> c_int;

/// The functions cclab calls, resolved once.
pub struct Libbpf {
    _lib: libloading::Library,
    pub open_mem: unsafe extern "C" fn(*const c_void, usize, *const c_void) -> *mut Object,
    pub load: unsafe extern "C" fn(*mut Object) -> c_int,
    pub close: unsafe extern "C" fn(*mut Object),
    pub next_map: unsafe extern "C" fn(*const Object, *const Map) -> *mut Map,
    pub map_type: unsafe extern "C" fn(*const Map) -> c_int,
    pub map_name: unsafe extern "C" fn(*const Map) -> *const c_char,
    pub map_fd: unsafe extern "C" fn(*const Map) -> c_int,
    pub map_set_flags: unsafe extern "C" fn(*mut Map, u32) -> c_int,
    pub attach_struct_ops: unsafe extern "C" fn(*const Map) -> *mut Link,
    pub link_disconnect: unsafe extern "C" fn(*mut Link),
    pub link_destroy: unsafe extern "C" fn(*mut Link) -> c_int,
    pub link_create: unsafe extern "C" fn(c_int, c_int, c_int, *const c_void) -> c_int,
    pub map_delete_elem: unsafe extern "C" fn(c_int, *const c_void) -> c_int,
    pub map_get_fd_by_id: unsafe extern "C" fn(u32) -> c_int,
    pub obj_get_info_by_fd: unsafe extern "C" fn(c_int, *mut c_void, *mut u32) -> c_int,
    set_print: unsafe extern "C" fn(Option<PrintFn>) -> Option<PrintFn>,
}

/// `BPF_MAP_TYPE_STRUCT_OPS`.
pub const MAP_TYPE_STRUCT_OPS: c_int = 26;
/// `BPF_F_LINK`: the map registers through a link, which unregisters when closed.
pub const F_LINK: u32 = 1 << 13;
/// `BPF_STRUCT_OPS` (enum bpf_attach_type).
pub const ATTACH_STRUCT_OPS: c_int = 44;

static LIB: OnceLock<Result<Libbpf, String>> = OnceLock::new();

/// The system's libbpf, or why it cannot be used.
pub fn get() -> Result<&'static Libbpf, String> {
    LIB.get_or_init(open).as_ref().map_err(|e| e.clone())
}

fn open() -> Result<Libbpf, String> {
    let lib = unsafe { libloading::Library::new("libbpf.so.1") }.map_err(|e| {
        format!("cannot open the system's libbpf ({e}); install it (Debian/Ubuntu: apt-get install libbpf1)")
    })?;
    macro_rules! sym {
        ($name:literal) => {
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }.map_err(|e| {
                format!(
                    "the system's libbpf lacks {} ({e}); cclab needs libbpf 1.x",
                    $name
                )
            })?
        };
    }
    Ok(Libbpf {
        open_mem: sym!("bpf_object__open_mem"),
        load: sym!("bpf_object__load"),
        close: sym!("bpf_object__close"),
        next_map: sym!("bpf_object__next_map"),
        map_type: sym!("bpf_map__type"),
        map_name: sym!("bpf_map__name"),
        map_fd: sym!("bpf_map__fd"),
        map_set_flags: sym!("bpf_map__set_map_flags"),
        attach_struct_ops: sym!("bpf_map__attach_struct_ops"),
        link_disconnect: sym!("bpf_link__disconnect"),
        link_destroy: sym!("bpf_link__destroy"),
        link_create: sym!("bpf_link_create"),
        map_delete_elem: sym!("bpf_map_delete_elem"),
        map_get_fd_by_id: sym!("bpf_map_get_fd_by_id"),
        obj_get_info_by_fd: sym!("bpf_obj_get_info_by_fd"),
        set_print: sym!("libbpf_set_print"),
        _lib: lib,
    })
}

/// What libbpf printed (warnings and information; its debug chatter is dropped) while the
/// current [`Capture`] was held.
static LOG: Mutex<String> = Mutex::new(String::new());
/// One load at a time: libbpf's print function is process-wide.
static LOADING: Mutex<()> = Mutex::new(());

extern "C" {
    fn vsnprintf(buf: *mut c_char, n: usize, fmt: *const c_char, ap: *mut c_void) -> c_int;
}

unsafe extern "C" fn print(level: c_int, fmt: *const c_char, ap: *mut c_void) -> c_int {
    const DEBUG: c_int = 2;
    if level >= DEBUG {
        return 0;
    }
    let mut buf = vec![0 as c_char; 8192];
    let n = vsnprintf(buf.as_mut_ptr(), buf.len(), fmt, ap);
    if n > 0 {
        let s = CStr::from_ptr(buf.as_ptr()).to_string_lossy();
        if let Ok(mut log) = LOG.lock() {
            log.push_str(&s);
        }
    }
    n
}

/// While held: loads are serialised and libbpf's messages collected for errors.
pub struct Capture<'a> {
    lib: &'a Libbpf,
    _one: std::sync::MutexGuard<'static, ()>,
}

impl<'a> Capture<'a> {
    pub fn start(lib: &'a Libbpf) -> Capture<'a> {
        let one = LOADING.lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(mut log) = LOG.lock() {
            log.clear();
        }
        unsafe { (lib.set_print)(Some(print)) };
        Capture { lib, _one: one }
    }

    /// What libbpf printed so far.
    pub fn text(&self) -> String {
        LOG.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

impl Drop for Capture<'_> {
    fn drop(&mut self) {
        unsafe { (self.lib.set_print)(None) };
    }
}

/// `struct bpf_map_info`'s leading members (the kernel fills what fits).
#[repr(C)]
#[derive(Default)]
pub struct MapInfo {
    pub kind: u32,
    pub id: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub name: [u8; 16],
}

impl MapInfo {
    pub fn name(&self) -> String {
        let end = self.name.iter().position(|&b| b == 0).unwrap_or(16);
        String::from_utf8_lossy(&self.name[..end]).into_owned()
    }
}

/// The kernel's description of the map behind `fd`.
pub fn map_info(lib: &Libbpf, fd: c_int) -> std::io::Result<MapInfo> {
    let mut info = MapInfo::default();
    let mut len = std::mem::size_of::<MapInfo>() as u32;
    let rc =
        unsafe { (lib.obj_get_info_by_fd)(fd, &mut info as *mut MapInfo as *mut c_void, &mut len) };
    if rc < 0 {
        return Err(std::io::Error::from_raw_os_error(-rc));
    }
    Ok(info)
}
