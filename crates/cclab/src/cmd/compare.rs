//! `cclab compare`: two results side by side.

use cclab::reports;
use cclab::runner::Error;
use cclab_report::compare;
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub(crate) struct CompareArgs {
    /// First results: a results directory or a results.json file
    #[arg(value_name = "A")]
    a: PathBuf,
    /// Second results: a results directory or a results.json file
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Per-seed rows, and every metric of every pair of runs (throughput, queue delay, drops
    /// by cause, FCT...), after the setup differences and the summary per matrix point
    #[arg(long)]
    all: bool,
    /// Print the comparison as JSON
    #[arg(long)]
    json: bool,
    /// Add steady-state rows: each controller's goodput and smoothed-RTT p99 and the
    /// bottleneck queue's delay p99 over the time-series bins from this time on (e.g. 10s),
    /// beside the whole-run figures, which include the start-up
    #[arg(long, value_name = "TIME")]
    from: Option<String>,
}

/// Runs `cclab compare`.
pub(crate) fn run(a: CompareArgs) -> Result<(), Error> {
    let from_s = super::from_secs(a.from.as_deref())?;
    let c = reports::compare_paths(&a.a, &a.b, from_s)?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&compare::to_json(&c)).expect("json")
        );
    } else {
        print!("{}", compare::render_text(&c, a.all));
    }
    if c.pairs.is_empty() {
        return Err(Error::new(format!(
            "{} and {} share no runs (same scenario name and params)",
            a.a.display(),
            a.b.display()
        )));
    }
    Ok(())
}
