//! The backend seam: everything that can run a scenario implements [`Backend`] and returns
//! its measurements through the one result builder ([`crate::RunRecord`]).
//!
//! A backend is a name, what it needs from the machine, the controllers it offers, and a way
//! to run one matrix point. The CLI lists its backends in one place (one line each), so a new
//! backend is its crate or module plus that line.

use crate::RunResult;
use cclab_scenario::{CcCatalog, Scenario};
use std::fmt;
use std::path::PathBuf;

/// What a run may need beyond the scenario: debugging output, never anything that changes
/// the result.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    /// Write a packet trace of the run here ([`crate::trace`]); a file that cannot be
    /// written is an error.
    pub trace: Option<PathBuf>,
}

/// Why a run could not happen or did not finish: one line saying what is wrong and what would
/// fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct BackendError {
    pub message: String,
    /// The signal (SIGINT, SIGTERM) that stopped the run, if one did.
    pub signal: Option<i32>,
}

impl BackendError {
    pub fn new(message: impl Into<String>) -> Self {
        BackendError {
            message: message.into(),
            signal: None,
        }
    }
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for BackendError {}

/// A way to run scenarios.
pub trait Backend: Send + Sync {
    /// Name on the command line and in results (`"sim"`, `"kernel"`).
    fn name(&self) -> &'static str;
    /// One line on what it is, for `--help`.
    fn summary(&self) -> &'static str;
    /// What it needs from the machine (root, kernel features), if this machine lacks any of
    /// it: one line naming what is missing and what would fix it. `None`: it can run here.
    fn unavailable(&self) -> Option<String>;
    /// The controllers its runs may use (what `flows.cc` may name).
    fn controllers(&self) -> CcCatalog;
    /// Runs it can do at once; 1 for a backend that measures real time.
    fn parallel_runs(&self) -> usize;
    /// Why it cannot run scenario `sc` as written (a setting it cannot give, whatever the
    /// machine), in one line; `None` if it can. Callers ask for every point before the
    /// first run, so a matrix fails before any of it runs.
    fn refuses(&self, _sc: &Scenario) -> Option<String> {
        None
    }
    /// Run one concrete scenario (one matrix point, one seed). The result's `params`,
    /// `reference` and `resolved` are the caller's to fill in; `settings` holds what the
    /// backend itself decided.
    fn run(&self, sc: &Scenario, ctx: &RunContext) -> Result<RunResult, BackendError>;
}
