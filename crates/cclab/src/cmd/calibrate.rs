//! `cclab calibrate`: the calibration matrix on sim and kernel, and the simulator's error.

use super::{prepare_dir, write_file};
use cclab::runner::Error;
use cclab_report::export;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct CalArgs {
    /// Directory of calibration scenarios
    #[arg(long, default_value = cclab::calibrate::DEFAULT_DIR, value_name = "DIR")]
    dir: PathBuf,
    /// Runs per point on each backend, with the same consecutive seeds (the kernel's run-to-run
    /// spread needs several; the acceptance targets assume >= 3)
    #[arg(long, default_value_t = 5, value_name = "N")]
    repeat: u32,
    /// Run only the simulator side (checks the matrix; compares nothing)
    #[arg(long, conflicts_with = "kernel_from")]
    sim_only: bool,
    /// Compare with the kernel results stored in DIR by an earlier `--out DIR` instead of
    /// running the kernel (no root needed; for iterating on the simulator)
    #[arg(long, value_name = "DIR")]
    kernel_from: Option<PathBuf>,
    /// Keep kernel runs the machine disturbed (over 5% CPU steal or 2 element stalls/s) in
    /// the comparison; by default they are left out while their point has undisturbed runs
    #[arg(long)]
    keep_disturbed: bool,
    /// Run a disturbed kernel run again, after a 30 s pause, up to N times (the first quiet
    /// attempt counts, else the least disturbed)
    #[arg(long, default_value_t = 2, value_name = "N")]
    retry_disturbed: u32,
    /// Write calibration.json, calibration.md, report.html (scatters of simulator against
    /// kernel) and the raw results documents into DIR
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the calibration as JSON
    #[arg(long)]
    json: bool,
    /// No progress messages on stderr
    #[arg(short, long)]
    quiet: bool,
}

/// Runs `cclab calibrate`.
pub(crate) fn run(a: CalArgs) -> Result<(), Error> {
    if a.repeat == 0 {
        return Err(Error::new("--repeat must be at least 1"));
    }
    if let Some(dir) = &a.out {
        prepare_dir(dir)?;
    }
    let opts = cclab::calibrate::CalOptions {
        dir: a.dir.clone(),
        repeat: a.repeat,
        sim_only: a.sim_only,
        kernel_from: a.kernel_from.clone(),
        keep_disturbed: a.keep_disturbed,
        retry_disturbed: a.retry_disturbed,
        progress: !a.quiet,
    };
    let (cal, sim_docs, kernel_docs) = cclab::calibrate::run(&opts)?;
    if let Some(dir) = &a.out {
        write_file(
            &dir.join("calibration.json"),
            serde_json::to_string_pretty(&cal).expect("json"),
        )?;
        write_file(
            &dir.join("calibration.md"),
            cclab::calibrate::markdown(&cal),
        )?;
        write_file(&dir.join("report.html"), cclab::calibrate::html(&cal))?;
        for (kind, docs) in [("sim", &sim_docs), ("kernel", &kernel_docs)] {
            for d in docs.iter() {
                write_file(
                    &dir.join(format!("{kind}-{}.json", d.scenario)),
                    export::json(d),
                )?;
            }
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&cal).expect("json"));
    } else {
        print!("{}", cclab::calibrate::text(&cal));
    }
    Ok(())
}
