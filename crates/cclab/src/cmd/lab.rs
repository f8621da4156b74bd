//! `cclab lab`: the kernel backend's lab: `clean`, `up` and `fit-check`.

use super::{cc_list, remote_err, write_docs, JsonArg};
use cclab::runner::Error;
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

#[derive(Subcommand)]
pub(crate) enum LabCmd {
    /// Remove every namespace, link and process a killed kernel run left behind (cclab-* names)
    Clean(JsonArg),
    /// Hold a scenario's path open between two lab namespaces for any traffic (iperf3, wget, cclab serve/perf) until Ctrl-C or --for (needs root)
    Up(LabUpArgs),
    /// Hold `cclab perf`'s fit and prediction against known paths: serve and perf across the lab's element over each scenario's [link], then the fit against the link as configured and the prediction against the measurement (needs root)
    #[command(name = "fit-check")]
    FitCheck(FitCheckArgs),
}

#[derive(Args)]
pub(crate) struct LabUpArgs {
    /// Scenario file: its [link] (one path: --set picks a matrix point) and [hosts]
    #[arg(value_name = "SCENARIO")]
    scenario: String,
    /// Override a scenario value first, as `cclab run --set` (repeatable)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Take the lab down after this long (e.g. 90s, 30min, 2h; at most 24h)
    #[arg(long = "for", default_value = "30min", value_name = "TIME")]
    hold: String,
    /// Print what is up, then what crossed the path, as two JSON lines on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub(crate) struct FitCheckArgs {
    /// Scenario files: each distinct [link] of their matrices is a path to check (their flows are not used)
    #[arg(required = true, value_name = "SCENARIO")]
    scenarios: Vec<String>,
    /// Override a scenario value first, as `cclab run --set` (repeatable)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Controllers measured (and predicted), comma-separated
    #[arg(long, default_value = "cubic,bbr", value_name = "CC,...")]
    cc: String,
    /// Length of each measured run [default: the scenario's duration]
    #[arg(long, value_name = "TIME")]
    duration: Option<String>,
    /// Runs per controller (the measured goodput is their mean)
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: u32,
    /// Streams per run
    #[arg(short = 'P', long, default_value_t = 1, value_name = "N")]
    parallel: u16,
    /// Simulator seeds per prediction
    #[arg(long, default_value_t = 20, value_name = "N")]
    seeds: u32,
    /// Print the checks as JSON on stdout (no progress)
    #[arg(long)]
    json: bool,
    /// Write each path's measurement (results.json with its fit, report.html) into DIR/<scenario>[-N]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// No progress on stderr
    #[arg(short, long)]
    quiet: bool,
}

fn clean(a: JsonArg) -> Result<(), Error> {
    let report = cclab_kernel::clean_stale()?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        println!("{report}");
    }
    Ok(())
}

fn up(a: LabUpArgs) -> Result<(), Error> {
    let hold = cclab::labup::parse_hold(&a.hold)?;
    let json = a.json;
    let summary = cclab::labup::up(&a.scenario, &a.set, hold, |info| {
        let mut o = std::io::stdout().lock();
        if json {
            let _ = writeln!(o, "{}", serde_json::to_string(info).expect("json"));
        } else {
            let _ = write!(o, "{}", cclab::labup::render_info(info));
        }
        let _ = o.flush();
    })?;
    if json {
        println!("{}", serde_json::to_string(&summary).expect("json"));
    } else {
        print!("{}", cclab::labup::render_summary(&summary));
    }
    Ok(())
}

fn fit_check(a: FitCheckArgs) -> Result<(), Error> {
    if a.repeat == 0 || a.seeds == 0 || a.parallel == 0 {
        return Err(Error::new(
            "--repeat, --seeds and --parallel must be at least 1",
        ));
    }
    let ccs = cc_list(Some(&a.cc));
    if ccs.is_empty() {
        return Err(Error::new("--cc names no controller (e.g. --cc cubic,bbr)"));
    }
    let duration = a
        .duration
        .as_deref()
        .map(|d| cclab_remote::parse_duration("--duration", d))
        .transpose()
        .map_err(remote_err)?;
    let o = cclab::fitcheck::CheckOptions {
        ccs,
        duration,
        repeat: a.repeat,
        parallel: a.parallel,
        predict: cclab::predict::PredictOptions {
            seeds: a.seeds,
            ..Default::default()
        },
        progress: !a.quiet && !a.json,
    };
    let rows = cclab::fitcheck::run(&a.scenarios, &a.set, &o)?;
    if let Some(dir) = &a.out {
        let names: Vec<String> = rows
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if rows.iter().filter(|x| x.scenario == r.scenario).count() > 1 {
                    format!("{}-{}", r.scenario, i + 1)
                } else {
                    r.scenario.clone()
                }
            })
            .collect();
        let metas: Vec<(&str, &str, Option<&str>)> = names
            .iter()
            .map(|n| (n.as_str(), "cclab lab fit-check", None))
            .collect();
        let docs: Vec<cclab_results::ResultsDoc> = rows.iter().map(|r| r.doc.clone()).collect();
        write_docs(dir, &metas, &docs)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows).expect("json"));
    } else {
        print!("{}", cclab::fitcheck::render_markdown(&rows));
    }
    let failed: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            r.criteria
                .iter()
                .filter(|c| !c.pass)
                .map(move |c| format!("{} {}: {}", r.scenario, c.name, c.detail))
        })
        .collect();
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::new(format!(
            "{} criteria failed: {}",
            failed.len(),
            failed.join("; ")
        )))
    }
}

/// Runs `cclab lab CMD`.
pub(crate) fn run(cmd: LabCmd) -> Result<(), Error> {
    match cmd {
        LabCmd::Clean(a) => clean(a),
        LabCmd::Up(a) => up(a),
        LabCmd::FitCheck(a) => fit_check(a),
    }
}
