//! `cclab doctor`: what this machine supports for the kernel backend.

use super::JsonArg;
use cclab::runner::Error;

/// Runs `cclab doctor`.
pub(crate) fn run(a: JsonArg) -> Result<(), Error> {
    let report = cclab_kernel::doctor();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        print!("{report}");
    }
    Ok(())
}
