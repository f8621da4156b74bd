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
    /// Second results: a results directory or a results.json file (or, with --by, none)
    #[arg(value_name = "B")]
    b: Option<PathBuf>,
    /// Compare within A: the runs where this swept parameter has one value against those
    /// where it has another, e.g. --by link.aqm (a sweep of two values) or
    /// --by link.aqm=droptail,fq_codel (two of several)
    #[arg(long, value_name = "KEY[=A,B]")]
    by: Option<String>,
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
    let (c, b_label) = match (&a.b, &a.by) {
        (Some(b), None) => (
            reports::compare_paths(&a.a, b, from_s)?,
            b.display().to_string(),
        ),
        (None, Some(by)) => (
            reports::compare_by(&a.a, by, from_s)?,
            format!("--by {by}"),
        ),
        (Some(_), Some(_)) => {
            return Err(Error::new(
                "give a second results set B or --by KEY (to compare within A), not both",
            ))
        }
        (None, None) => {
            return Err(Error::new(
                "compare needs a second results set B, or --by KEY to compare the runs of A by a swept parameter (e.g. --by link.aqm)",
            ))
        }
    };
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
            "{} and {b_label} share no runs (same scenario name and params)",
            a.a.display(),
        )));
    }
    Ok(())
}
