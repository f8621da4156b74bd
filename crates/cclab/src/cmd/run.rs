//! `cclab run`: scenario files on a backend, a table, JSON or Markdown on stdout, and with
//! `--out` the results directory and its report.

use cclab::backends;
use cclab::output::{StreamOut, STREAM_REPORT_MOST};
use cclab::reference::score;
use cclab::runner::{self, Error, RunOptions};
use cclab_report::{export, table};
use cclab_results::RunResult;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

const FORMAT_HELP: &str = "\
SCENARIO FORMAT (full reference: docs/scenarios.md)
  name = \"lossy-lan\"        duration = \"10s\"        seed = 1
  [link]   rate = \"100mbit\"  rtt = \"50ms\"  buffer = \"1bdp\"  loss = \"1%\"  ack_loss = 0  mss = 1448
  [hosts]  latency = \"40us\"  jitter = \"40us\"  wake = \"100us\"  wake_idle = \"500us\"  shared_cpu = true  hz = 250
  [[flows]] cc = \"bbr\"  count = 1  start = \"0s\"  size = \"25mb\"  rtt_extra = \"0ms\"  init_cwnd = 10
            cc_params = { hystart = false }   (the controller's own parameters)
  [reference]  published figures shown beside cclab's (see docs/scenarios.md)
  Units: rates 100mbit 10gbit 12.5MB/s; times 50ms 10s; sizes 640kb 25mb (decimal; kib/mib binary);
  loss 1% or 0.01; buffer 1bdp 100pkt 256kb. Any value may be a list: the runs are the cartesian
  product (a matrix), e.g. loss = [0, \"1%\"] with cc = [\"cubic\", \"bbr\"] is 4 runs.";

/// The format help with the registered controllers and their parameters.
pub(crate) fn format_help() -> String {
    let mut s = String::from(FORMAT_HELP);
    s.push_str("\n\nCONTROLLERS (sim backend; `cclab controllers` for details; kernel: what the kernel offers)");
    for c in cclab_core::cc::CONTROLLERS {
        let names = std::iter::once(c.name)
            .chain(c.aliases.iter().copied())
            .collect::<Vec<_>>()
            .join(", ");
        let params = if c.params.is_empty() {
            String::new()
        } else {
            format!(
                "  cc_params: {}",
                c.params
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        s.push_str(&format!("\n  {names:<22} {}{params}", c.title));
    }
    s
}

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Scenario files (TOML)
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Backend that runs the scenarios: sim (simulator, no privileges) or kernel (real Linux TCP in
    /// network namespaces; needs root)
    #[arg(long, default_value = "sim", value_name = "NAME")]
    backend: String,
    /// Write a packet trace of every run into DIR (one file per run, one format for every
    /// backend: docs/fidelity.md)
    #[arg(long, value_name = "DIR")]
    trace: Option<PathBuf>,
    /// Print the results document(s) as JSON on stdout instead of the table
    #[arg(long)]
    json: bool,
    /// Print the table as GitHub-flavoured Markdown (for tickets): one table per scenario
    /// under its title
    #[arg(long)]
    markdown: bool,
    /// Write results.json, flows.csv, per-run time-series CSV and report.html into DIR
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Use this seed instead of the scenario's
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Override a scenario value, e.g. --set link.loss=1% or --set 'flows.cc=[cubic,bbr]' (repeatable)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Run every matrix point N times with consecutive seeds
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: u32,
    /// Parallel runs (default: one per core)
    #[arg(short, long, default_value_t = 0, value_name = "N")]
    jobs: usize,
    /// Kernel backend: run a run the machine disturbed (over 5% CPU steal or 2 element
    /// stalls/s) again, after a 30 s pause, up to N times (the first quiet attempt counts,
    /// else the least disturbed)
    #[arg(long, default_value_t = 0, value_name = "N")]
    retry_disturbed: u32,
    /// No progress messages on stderr
    #[arg(short, long)]
    quiet: bool,
    /// Add steady-state columns to the table: goodput, smoothed RTT and queue delay over the
    /// time-series bins from this time on (e.g. 10s), beside the whole-run figures, which
    /// include the start-up (docs/report.md)
    #[arg(long, value_name = "TIME")]
    from: Option<String>,
}

/// Runs `cclab run`.
pub(crate) fn run(a: RunArgs) -> Result<(), Error> {
    let backend = backends::by_name(&a.backend).map_err(Error::new)?;
    if a.repeat == 0 {
        return Err(Error::new("--repeat must be at least 1"));
    }
    if a.json && a.markdown {
        return Err(Error::new(
            "--json and --markdown both choose what stdout carries: give one of them",
        ));
    }
    let from_s = super::from_secs(a.from.as_deref())?;
    if from_s.is_some() && a.json {
        return Err(Error::new(
            "--from adds columns to the table, which --json does not print: drop one of them (--out DIR keeps the series, 100 ms bins, for your own steady-state figures)",
        ));
    }
    let table_opts = table::Options { from_s };
    let opts = RunOptions {
        backend: backend.name().to_string(),
        overrides: a.set.clone(),
        seed: a.seed,
        repeat: a.repeat,
        jobs: a.jobs,
        progress: !a.quiet,
        retry_disturbed: a.retry_disturbed,
        trace_dir: a.trace.clone(),
        cancel: None,
        stop_on_signal: a.out.is_some(),
        // The CLI does not embed Python: `py:` controllers are refused with a pointer to
        // the Python package.
        py_controllers: false,
    };
    let mut plans = Vec::new();
    for f in &a.files {
        plans.push(runner::plan(&f.to_string_lossy(), &opts)?);
    }
    // With --out the runs are written as they come (a sweep is not held in memory), into a
    // directory made before any run; a failed or interrupted matrix leaves none of it.
    let mut report_written = true;
    let docs = match &a.out {
        None => runner::execute(&plans, &opts)?,
        Some(dir) => {
            // Ctrl-C stops the matrix between runs, so the directory can be removed.
            let _signals = cclab_sys::SignalGuard::install();
            let mut out = StreamOut::create(dir, &plans, backend.name())?;
            let mut sink = |plan: usize, r: &RunResult| out.push(plan, r);
            // The steady-state columns (--from) read the series; otherwise they are on disk.
            match runner::execute_into(&plans, &opts, Some(&mut sink), from_s.is_some()) {
                Ok(docs) => {
                    report_written = out.finish()?;
                    docs
                }
                Err(e) => {
                    out.abort();
                    return Err(e);
                }
            }
        }
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // The published figures and claims of each scenario's `[reference]`, scored on its runs
    // (a plan whose `--set` changed the setup they were measured on has none).
    let scores: Vec<Option<(score::Score, Option<String>)>> = plans
        .iter()
        .zip(&docs)
        .map(|(p, d)| {
            let r = p.points.first()?.scenario.reference.as_deref()?;
            let s = score::score(r, d);
            let unit = r.get("unit").and_then(|u| u.as_str()).map(String::from);
            (!s.is_empty()).then_some((s, unit))
        })
        .collect();
    let scored: Vec<&score::Score> = scores.iter().flatten().map(|(s, _)| s).collect();
    if a.json {
        // The results document, and beside its runs the scenario's score (`score`: every
        // figure and claim, as the text under the table says them).
        let vals: Vec<serde_json::Value> = docs
            .iter()
            .zip(&scores)
            .map(|(d, s)| {
                let mut v: serde_json::Value =
                    serde_json::from_str(&export::json(d)).expect("valid json");
                if let (Some((s, _)), Some(o)) = (s, v.as_object_mut()) {
                    o.insert("score".into(), serde_json::to_value(s).expect("json"));
                }
                v
            })
            .collect();
        let text = match &vals[..] {
            [one] => serde_json::to_string_pretty(one).expect("json"),
            _ => serde_json::to_string_pretty(&vals).expect("json"),
        };
        let _ = writeln!(out, "{text}");
    } else {
        for ((p, d), s) in plans.iter().zip(&docs).zip(&scores) {
            let title = cclab::output::title(&p.name, &p.path, p.description.as_deref(), d);
            let text = if a.markdown {
                table::render_markdown_with(d, &title, &table_opts)
            } else {
                table::render_with(d, &title, &table_opts)
            };
            let _ = writeln!(out, "{text}");
            if !p.reference_set_aside.is_empty() {
                let _ = writeln!(
                    out,
                    "  score: not scored: --set {} changes the setup the published figures were \
                     measured on (run the file as written to score it)\n",
                    p.reference_set_aside.join(", --set ")
                );
            }
            // The published figures and claims, scored under the table (as a text block in
            // Markdown, which keeps its alignment).
            if let Some((s, unit)) = s {
                let t = score::text(s, unit.as_deref());
                if a.markdown {
                    let _ = writeln!(out, "```text\n{}\n```\n", t.trim_end());
                } else {
                    let _ = writeln!(out, "{}", t.trim_end());
                    let _ = writeln!(out);
                }
            }
        }
        if scored.len() > 1 {
            let total = format!(
                "total over {} scenario files: {}",
                scored.len(),
                score::totals(&scored)
            );
            let _ = writeln!(
                out,
                "{}",
                if a.markdown {
                    format!("**{total}**")
                } else {
                    total
                }
            );
        }
        if let Some(dir) = &a.out {
            let _ = writeln!(out, "results written to {}", dir.display());
            if report_written {
                let _ = writeln!(out, "report: {}", dir.join("report.html").display());
            } else {
                let _ = writeln!(
                    out,
                    "report: not written (over {STREAM_REPORT_MOST} runs for one page); the \
                     tables (flows.parquet, runs.parquet, series.parquet) hold every run"
                );
            }
        }
    }
    Ok(())
}
