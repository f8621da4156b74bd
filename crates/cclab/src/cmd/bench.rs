//! `cclab bench`: the simulator's speed (wall time, or instructions under valgrind), the
//! report's load in Chromium, and the kernel element's capacity.

use cclab::bench;
use cclab::runner::Error;
use clap::Args;
use std::io::IsTerminal;

#[derive(Args)]
pub(crate) struct BenchArgs {
    /// Print the measurements as JSON
    #[arg(long)]
    json: bool,
    /// Repeat each case N times and keep the best wall time (the least disturbed by the rest
    /// of the machine)
    #[arg(long, default_value_t = 5, value_name = "N")]
    repeat: u32,
    /// Measure the kernel backend's link element instead (root): the highest rate it carries
    /// with <= 1% loss, 1500-byte packets (UDP) and GSO super-packets (TCP), at 0 and 50 ms
    #[arg(long)]
    kernel: bool,
    /// With --kernel: seconds per offered rate
    #[arg(long, default_value_t = 2.0, value_name = "S")]
    secs: f64,
    /// Count the instructions each case executes (one run each under valgrind's callgrind,
    /// ~20x slower) instead of timing it: the same count on any machine, however busy, held
    /// to a budget per packet
    #[arg(long, conflicts_with = "kernel")]
    instructions: bool,
    /// Untimed runs of the first case before the timed ones
    #[arg(long, default_value_t = 1, value_name = "N")]
    warmup: u32,
    /// Only the cases whose name contains TEXT (e.g. "100mbit", "fq_codel"; "report" for the
    /// report's load in Chromium alone, which --json then prints as one object)
    #[arg(long, value_name = "TEXT")]
    case: Option<String>,
}

/// Runs `cclab bench`.
pub(crate) fn run(a: BenchArgs) -> Result<(), Error> {
    if a.kernel {
        return bench_kernel(&a);
    }
    let mut cases = bench::cases();
    // The report case runs after the simulator's; its figures are not in the simulator
    // cases' JSON array (a list of simulator measurements), only alone (--case report).
    let mut report = !a.json;
    let mut cli = !a.json;
    if let Some(text) = &a.case {
        if cases.iter().any(|c| c.name == text.as_str()) {
            cases.retain(|c| c.name == text.as_str());
        } else {
            cases.retain(|c| c.name.contains(text.as_str()));
        }
        report = "report".contains(text.as_str()) && cases.is_empty();
        cli = "cli".contains(text.as_str()) && cases.is_empty() && !report;
        if cases.is_empty() && !report && !cli {
            let names: Vec<_> = bench::cases().iter().map(|c| c.name).collect();
            return Err(Error::new(format!(
                "no bench case's name contains {text:?}; the cases are: {}, report, cli",
                names.join(", ")
            )));
        }
    }
    if a.instructions {
        if cases.is_empty() {
            return Err(Error::new(
                "--instructions counts the simulator cases; the report case is timed only",
            ));
        }
        return bench_instructions(&a, &cases);
    }
    if cases.is_empty() && cli {
        return bench_cli(&a);
    }
    if cases.is_empty() {
        return bench_report(&a);
    }
    let tty = std::io::stderr().is_terminal();
    // One untimed run first, as hyperfine's --warmup: a CPU that was idle (a virtual one
    // especially) runs the first fraction of a second measurably slower.
    if let Some(c) = cases.first() {
        for _ in 0..a.warmup {
            bench::measure(c, 1);
        }
    }
    let repeat = a.repeat.max(1);
    let mut results = bench::measure_all(&cases, repeat, |round, c| {
        if !a.json && tty {
            eprint!("\x1b[2K\rround {} of {repeat}: {} ...", round + 1, c.name);
        }
    });
    if !a.json && tty {
        eprint!("\x1b[2K\r");
    }
    if !a.json {
        for m in &results {
            println!(
                "{:<32} {:>7.3} s wall (target {:>4} s) {}  {:>5.2} M packets/s  {:>6.1} s simulated, {:.1} M packets",
                m.name,
                m.wall_s,
                m.target_s,
                if m.met_target { "ok  " } else { "SLOW" },
                m.packets_per_s / 1e6,
                m.simulated_s,
                m.packets as f64 / 1e6
            );
            if let (Some(n), Some(per_s), Some(target)) =
                (m.steps, m.steps_per_s, m.target_steps_per_s)
            {
                println!(
                    "{:<32} {n} steps, {per_s:.0} steps/s (target >= {target:.0})",
                    ""
                );
            }
        }
    }
    // Cases held to a ratio of another's wall time (FQ-CoDel's cost with many flows).
    for (case, reference, at_most) in bench::RATIOS {
        let wall = |n: &str| results.iter().find(|m| m.name == *n).map(|m| m.wall_s);
        if let (Some(x), Some(r)) = (wall(case), wall(reference)) {
            let ratio = x / r.max(1e-9);
            if ratio > *at_most {
                if let Some(m) = results.iter_mut().find(|m| m.name == *case) {
                    m.met_target = false;
                }
            }
            if !a.json {
                println!(
                    "{case} / {reference}: {ratio:.2}x (at most {at_most}x) {}",
                    if ratio <= *at_most { "ok" } else { "SLOW" }
                );
            }
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&results).expect("json"));
    }
    if cli {
        bench_cli(&a)?;
    }
    if report {
        bench_report(&a)?;
    }
    Ok(())
}

/// `cclab bench`'s CLI case: what `cclab run` adds to a 1 s scenario's simulation, over 100
/// runs (no fixed wait: issue #33).
fn bench_cli(a: &BenchArgs) -> Result<(), Error> {
    let m = measured(
        a,
        "running a 1 s scenario through `cclab run` 100 times ...",
        |exe| bench::cli_overhead(exe, 100),
    )?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&m).expect("json"));
    } else {
        println!(
            "{:<32} {:>7.1} ms per run, {:.1} ms above its simulation ({:.1} ms; target {} ms) {}",
            m.name,
            m.per_run_ms,
            m.overhead_ms,
            m.simulation_ms,
            m.target_ms,
            if m.met_target { "ok" } else { "SLOW" }
        );
    }
    Ok(())
}

/// `cclab bench --instructions`: each case's instructions per packet against its budget.
fn bench_instructions(a: &BenchArgs, cases: &[bench::Case]) -> Result<(), Error> {
    let Some(valgrind) = bench::valgrind() else {
        return Err(Error::new(
            "--instructions needs valgrind on PATH (apt-get install valgrind)",
        ));
    };
    let exe = std::env::current_exe()
        .map_err(|e| Error::new(format!("cannot find this program's path: {e}")))?;
    let tty = std::io::stderr().is_terminal();
    let mut all = Vec::new();
    for c in cases {
        if !a.json && tty {
            eprint!("\x1b[2K\rcounting {} under valgrind ...", c.name);
        }
        let m = bench::count_instructions(&exe, &valgrind, c).map_err(Error::new);
        if !a.json && tty {
            eprint!("\x1b[2K\r");
        }
        let m = m?;
        if !a.json {
            println!(
                "{:<32} {:>8.1} M instructions  {:>6.0} per packet (budget {:.0}) {}  {:.1} M packets",
                m.name,
                m.instructions as f64 / 1e6,
                m.instructions_per_packet,
                m.budget_per_packet,
                if m.met_budget { "ok" } else { "OVER" },
                m.packets as f64 / 1e6
            );
            if let (Some(n), Some(per), Some(budget)) =
                (m.steps, m.instructions_per_step, m.budget_per_step)
            {
                println!(
                    "{:<32} {per:>8.0} per step (budget {budget:.0}), {n} steps",
                    ""
                );
            }
        }
        all.push(m);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all).expect("json"));
    }
    Ok(())
}

/// `measure` given this program's path, with `status` on stderr meanwhile for a person at
/// a terminal (cleared after).
fn measured<T>(
    a: &BenchArgs,
    status: &str,
    measure: impl FnOnce(&std::path::Path) -> Result<T, String>,
) -> Result<T, Error> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::new(format!("cannot find this program's path: {e}")))?;
    let tty = std::io::stderr().is_terminal();
    if !a.json && tty {
        eprint!("{status}");
    }
    let m = measure(&exe).map_err(Error::new);
    if !a.json && tty {
        eprint!("\x1b[2K\r");
    }
    m
}

/// `cclab bench`'s report case: the page of a 60 s, 10-flow run loaded in headless
/// Chromium. Without Chromium on PATH it is skipped, and says so.
fn bench_report(a: &BenchArgs) -> Result<(), Error> {
    let Some(browser) = cclab::browser::find() else {
        let msg = "report case skipped: no chromium, chromium-browser or google-chrome on PATH (install one to time the report's load)";
        if a.json {
            return Err(Error::new(msg));
        }
        println!("{msg}");
        return Ok(());
    };
    let status = format!("loading the report in {} ...", browser.display());
    let m = measured(a, &status, |exe| {
        bench::report_load(exe, &browser, a.repeat)
    })?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&m).expect("json"));
    } else {
        println!(
            "{:<32} {:>7} ms to load (target {} ms) {}  charts drawn at {} ms, {:.0} kB page",
            m.name,
            m.load_ms,
            m.target_ms,
            if m.met_target { "ok  " } else { "SLOW" },
            m.charts_ms,
            m.page_bytes as f64 / 1e3
        );
    }
    Ok(())
}

fn bench_kernel(a: &BenchArgs) -> Result<(), Error> {
    cclab_kernel::check_privileges()?;
    let mut all = Vec::new();
    for (what, mode, delay, aqm) in bench::kernel_cases() {
        if !a.json {
            eprintln!("measuring {what} ...");
        }
        let c = bench::kernel_case(mode, delay, a.secs, &aqm)?;
        if !a.json {
            println!("{what:<44} {c}");
        }
        all.push(serde_json::json!({ "case": what, "result": c }));
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all).expect("json"));
    }
    Ok(())
}
