//! `cclab advise`: controllers x sender settings ranked for a path.

use cclab::runner::Error;
use clap::Args;

#[derive(Args)]
pub(crate) struct AdviseArgs {
    /// Scenario file: the path, its hosts as they are now, and the workload
    scenario: String,
    /// What to optimise: fct:SIZE (completion time of a SIZE transfer, e.g. fct:640kb; fct
    /// alone: of --size, or of the scenario's own sized flows), goodput, or rtt_p99
    #[arg(long, value_name = "OBJECTIVE")]
    objective: String,
    /// The controller in use now, the baseline of every gain (default: the scenario's first
    /// flow's controller)
    #[arg(long, value_name = "CC")]
    current: Option<String>,
    /// Every flow becomes a transfer of SIZE (e.g. 640kb, 25mb) in place of the scenario's
    /// flows; the output says when bulk flows were replaced
    #[arg(long, value_name = "SIZE")]
    size: Option<String>,
    /// Seeds per matrix point and setting
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeat: u32,
    /// Settings to print
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,
    /// Re-run the best three and the current setting on the kernel backend (root) and print
    /// measured beside predicted
    #[arg(long)]
    verify: bool,
    /// Override a scenario key first (as `cclab run --set`)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Worker threads (0 = one per core)
    #[arg(short, long, default_value_t = 0)]
    jobs: usize,
    /// Print the ranking as JSON
    #[arg(long)]
    json: bool,
    /// No progress messages on stderr
    #[arg(short, long)]
    quiet: bool,
}

/// Runs `cclab advise`.
pub(crate) fn run(a: AdviseArgs) -> Result<(), Error> {
    let objective = cclab::advise::Objective::parse(&a.objective).map_err(Error::new)?;
    if a.repeat == 0 {
        return Err(Error::new("--repeat must be at least 1"));
    }
    let size = match &a.size {
        None => None,
        Some(t) => match cclab_scenario::units::parse_size(t) {
            Ok(0) => return Err(Error::new("--size must be positive (e.g. --size 640kb)")),
            Ok(b) => Some(b),
            Err(e) => return Err(Error::new(format!("--size {t}: {e} (e.g. --size 640kb)"))),
        },
    };
    let opts = cclab::advise::AdviseOptions {
        objective,
        repeat: a.repeat,
        jobs: a.jobs,
        progress: !a.quiet && !a.json,
        verify: a.verify,
        overrides: a.set.clone(),
        current_cc: a.current.clone(),
        size,
    };
    let advice = cclab::advise::advise(&a.scenario, &opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&advice).expect("json"));
    } else {
        print!("{}", cclab::advise::text(&advice, objective, a.top));
    }
    Ok(())
}
