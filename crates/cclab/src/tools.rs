//! What cclab needs to drive another program (headless Chromium for the report, valgrind for
//! instruction counts): finding it on `PATH`, and a scratch directory that is removed
//! afterwards.

use std::path::{Path, PathBuf};

/// The first of `names` found as a file in a `PATH` directory (in the order of `names`).
pub fn on_path(names: &[&str]) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    names
        .iter()
        .find_map(|n| dirs.iter().map(|d| d.join(n)).find(|p| p.is_file()))
}

/// A directory removed when dropped (on error and panic too).
pub struct TempDir(PathBuf);

impl TempDir {
    /// A new directory `cclab-WHAT-PID-NANOS` in the system's temporary directory.
    pub fn new(what: &str) -> std::io::Result<Self> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let p = std::env::temp_dir().join(format!("cclab-{what}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&p)?;
        Ok(TempDir(p))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
