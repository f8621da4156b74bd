//! SIGINT and SIGTERM as a flag a run polls, so it can stop and clean up.

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
