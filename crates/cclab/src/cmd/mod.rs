//! One module per command: its arguments (clap) beside its handler. `main.rs` parses the
//! command line and dispatches here; what the commands share (writing results directories,
//! real-host errors, controller lists) is below.

pub(crate) mod advise;
pub(crate) mod bench;
pub(crate) mod calibrate;
pub(crate) mod compare;
pub(crate) mod controllers;
pub(crate) mod doctor;
pub(crate) mod lab;
pub(crate) mod remote;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod trace;

use cclab::runner::Error;
use clap::Args;

#[derive(Args)]
pub(crate) struct JsonArg {
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

pub(crate) use cclab::output::{prepare_dir, write_docs, write_file};

pub(crate) fn remote_err(e: cclab_remote::RemoteError) -> Error {
    Error {
        msg: e.to_string(),
        exit: e.exit_code(),
    }
}

pub(crate) fn cc_list(s: Option<&str>) -> Vec<String> {
    s.unwrap_or("")
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// `--from TIME` (the steady-state figures' start) in seconds; a bad time is one line.
pub(crate) fn from_secs(t: Option<&str>) -> Result<Option<f64>, Error> {
    t.map(|t| {
        cclab_scenario::units::parse_time(t)
            .map(|ns| ns as f64 / 1e9)
            .map_err(|e| Error::new(format!("--from {t}: {e}")))
    })
    .transpose()
}
