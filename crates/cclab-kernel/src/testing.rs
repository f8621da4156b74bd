//! For the kernel lab's tests (this crate's and cclab's): a test that cannot run here says so
//! and returns, and lab tests run one at a time.
//!
//! A lab test starts with
//! `let Some(_g) = lab_lock("its_name", &["cubic"]) else { return };`: without root or a
//! kernel feature it needs, that prints `SKIP its_name: <reason>` to stderr and the test
//! returns; otherwise it holds the lab lock until the guard goes (measurements need the
//! CPUs, so one lab at a time in a test process).

use std::io::Write;
use std::sync::{Mutex, MutexGuard};

static LAB: Mutex<()> = Mutex::new(());

/// Says that `test` was skipped and why: `SKIP <test>: <why>` on stderr.
pub fn skip(test: &str, why: &str) {
    // Written to the stderr handle directly: libtest captures print!/eprint!, not this.
    let _ = writeln!(std::io::stderr(), "SKIP {test}: {why}");
}

/// The lab lock, or None (after [`skip`] says why) when this machine cannot run the lab
/// with the controllers `ccs` ([`crate::lab_unavailable`]).
pub fn lab_lock(test: &str, ccs: &[&str]) -> Option<MutexGuard<'static, ()>> {
    if let Some(why) = crate::lab_unavailable(ccs) {
        skip(test, &why);
        return None;
    }
    Some(lock())
}

/// The lab lock, whether or not this machine can run the lab (a test that counts
/// namespaces, or makes one, while no other lab test runs).
pub fn lock() -> MutexGuard<'static, ()> {
    LAB.lock().unwrap_or_else(|e| e.into_inner())
}

/// Namespaces this test process made and did not remove (another process's leftovers are
/// not this test's failure).
pub fn ours_left() -> Vec<String> {
    crate::namespaces_of(std::process::id())
}
