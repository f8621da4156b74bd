//! The `cclab` command: parses the command line and runs the command's handler in `cmd/`.

mod cmd;

use cclab::backends;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use cmd::*;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cclab",
    version,
    about = "Congestion-control lab: describe a path and a workload once, run it, compare controllers",
    after_help = "Examples:\n  cclab run scenarios/seeds/*.toml\n  cclab run scenarios/seeds/lossy-lan.toml --set link.loss=[0,0.1%,1%] --json\n  cclab run scenarios/seeds/lossy-lan.toml --out results/lossy-lan   # + report.html\n  cclab report results/lossy-lan results/other --out both.html\n  cclab compare results/sim results/kernel\n  cclab bench"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run scenario files and print a table (or JSON); see `cclab run --help` for the format
    Run(run::RunArgs),
    /// List the congestion controllers: names, aliases, parameters with defaults and units
    Controllers(controllers::ControllersArgs),
    /// Build report.html (tables and plots, self-contained) from one or more results directories
    Report(report::ReportArgs),
    /// Compare two results (e.g. sim vs kernel, before vs after, drop-tail vs FQ-CoDel): setup
    /// differences, then per matrix point and controller the medians over seeds and B - A with
    /// a 95% interval, marked significant; per-seed rows and every metric with --all
    Compare(compare::CompareArgs),
    /// Measure simulator speed on the reference workloads (simulated packets per wall second)
    Bench(bench::BenchArgs),
    /// Run the calibration matrix on sim and kernel and report the simulator's error (docs/fidelity.md)
    Calibrate(calibrate::CalArgs),
    /// Rank controllers x sender settings for a path by an objective, and print how to apply the best
    Advise(advise::AdviseArgs),
    /// Show what this machine supports for the kernel backend (controllers, netem, fq, TUN, BPF, root)
    Doctor(JsonArg),
    /// Manage the kernel backend's lab (network namespaces)
    Lab {
        #[command(subcommand)]
        cmd: lab::LabCmd,
    },
    /// Serve `cclab perf` clients on this host (the far end of a real-path measurement)
    Serve(remote::ServeArgs),
    /// Measure the real path to a `cclab serve` host: one run per controller, same results schema
    Perf(remote::PerfArgs),
    /// Download a URL over plain HTTP/1.1 (any web server) and measure it, same results schema
    Get(remote::GetArgs),
    /// Fit a scenario to a `cclab perf` measurement (rate, RTT, loss, buffer with 95% intervals)
    Fit(remote::FitArgs),
    /// Make link traces (Mahimahi format, for link.trace) or describe one
    Trace {
        #[command(subcommand)]
        cmd: trace::TraceCmd,
    },
}

fn main() -> ExitCode {
    // Output into a closed pipe (`cclab bench | head -1`) ends the program quietly, as it
    // does other command-line tools, instead of failing a write.
    // SAFETY: setting a signal's disposition to the default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // `run --help` lists the registered controllers; `--backend` the registered backends.
    let cmd = Cli::command().mut_subcommand("run", |c| {
        c.after_help(run::format_help()).mut_arg("backend", |a| {
            a.help(format!(
                "Backend that runs the scenarios: {}",
                backends::names()
            ))
        })
    });
    let cli = match Cli::from_arg_matches(&cmd.get_matches()) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let res = match cli.cmd {
        Cmd::Run(a) => run::run(a),
        Cmd::Controllers(a) => controllers::run(a),
        Cmd::Report(a) => report::run(a),
        Cmd::Compare(a) => compare::run(a),
        Cmd::Bench(a) => bench::run(a),
        Cmd::Doctor(a) => doctor::run(a),
        Cmd::Trace { cmd } => trace::run(cmd),
        Cmd::Serve(a) => remote::serve(a),
        Cmd::Perf(a) => remote::perf(a),
        Cmd::Get(a) => remote::get(a),
        Cmd::Fit(a) => remote::fit(a),
        Cmd::Calibrate(a) => calibrate::run(a),
        Cmd::Advise(a) => advise::run(a),
        Cmd::Lab { cmd } => lab::run(cmd),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cclab: error: {e}");
            ExitCode::from(e.exit)
        }
    }
}
