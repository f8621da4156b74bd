//! Registrations a crashed run left behind, and their removal (`cclab lab clean`).
//!
//! A controller held by a link ([`crate::Hold::Link`], kernels >= 6.4) goes when its
//! process does, however it ends. One registered as a map on an older kernel stays until
//! someone unregisters it, so each such registration leaves a record here naming its
//! process and map; [`clean_stale`] unregisters the maps of processes that are gone.

use crate::libbpf;
use std::path::{Path, PathBuf};

/// Where records of map-held registrations are kept (a tmpfs: gone at reboot, as are the
/// registrations).
pub const RECORD_DIR: &str = "/run/cclab/bpf";

pub(crate) fn write_record(map_id: u32, label: &str) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(RECORD_DIR)?;
    let path = Path::new(RECORD_DIR).join(format!("{}-{map_id}", std::process::id()));
    std::fs::write(&path, format!("{map_id} {label}\n"))?;
    Ok(path)
}

fn alive(pid: i32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let zombie = status
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .is_some_and(|s| s.trim_start().starts_with('Z'));
    !status.is_empty() && !zombie
}

/// Unregisters the controllers whose record names a process that is gone; returns one
/// line for each (`"map 31 (builtin:dctcp) of process 4242"`). Records of running
/// processes are left alone.
pub fn clean_stale() -> Result<Vec<String>, String> {
    let Ok(dir) = std::fs::read_dir(RECORD_DIR) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for e in dir.flatten() {
        let path = e.path();
        let file = e.file_name().to_string_lossy().into_owned();
        let Some((pid, map_id)) = file
            .split_once('-')
            .and_then(|(p, m)| Some((p.parse::<i32>().ok()?, m.parse::<u32>().ok()?)))
        else {
            continue;
        };
        if alive(pid) {
            continue;
        }
        let label = std::fs::read_to_string(&path)
            .ok()
            .and_then(|t| t.split_whitespace().nth(1).map(str::to_string))
            .unwrap_or_default();
        unregister_map(map_id)?;
        let _ = std::fs::remove_file(&path);
        out.push(format!("map {map_id} ({label}) of process {pid}"));
    }
    Ok(out)
}

/// Unregisters the struct_ops map `id` if it is still there.
fn unregister_map(id: u32) -> Result<(), String> {
    let lib = libbpf::get()?;
    let fd = unsafe { (lib.map_get_fd_by_id)(id) };
    if fd < 0 {
        return Ok(()); // gone already
    }
    let fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
    use std::os::fd::AsRawFd;
    let info = libbpf::map_info(lib, fd.as_raw_fd()).map_err(|e| format!("map {id}: {e}"))?;
    if info.kind as i32 != libbpf::MAP_TYPE_STRUCT_OPS {
        return Ok(()); // the id now belongs to another map
    }
    let key = 0u32;
    let rc = unsafe {
        (lib.map_delete_elem)(
            fd.as_raw_fd(),
            &key as *const u32 as *const std::ffi::c_void,
        )
    };
    if rc < 0 && -rc != libc::ENOENT && -rc != libc::EINVAL {
        return Err(format!(
            "cannot unregister struct_ops map {id} ({}): {}",
            info.name(),
            std::io::Error::from_raw_os_error(-rc)
        ));
    }
    Ok(())
}
