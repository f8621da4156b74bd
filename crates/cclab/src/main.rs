use cclab::runner::{self, Error, RunOptions};
use cclab::{backends, bench, reports};
use cclab_report::{compare, describe, export, html, load, table};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
fn format_help() -> String {
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
    Run(RunArgs),
    /// List the congestion controllers: names, aliases, parameters with defaults and units
    Controllers(ControllersArgs),
    /// Build report.html (tables and plots, self-contained) from one or more results directories
    Report(ReportArgs),
    /// Compare two results (e.g. sim vs kernel, before vs after): setup differences, a summary per
    /// run, every metric with --all
    Compare(CompareArgs),
    /// Measure simulator speed on the reference workloads (simulated packets per wall second)
    Bench(BenchArgs),
    /// Run the calibration matrix on sim and kernel and report the simulator's error (docs/fidelity.md)
    Calibrate(CalArgs),
    /// Rank controllers x sender settings for a path by an objective, and print how to apply the best
    Advise(AdviseArgs),
    /// Show what this machine supports for the kernel backend (controllers, netem, fq, TUN, BPF, root)
    Doctor(JsonArg),
    /// Manage the kernel backend's lab (network namespaces)
    Lab {
        #[command(subcommand)]
        cmd: LabCmd,
    },
    /// Serve `cclab perf` clients on this host (the far end of a real-path measurement)
    Serve(ServeArgs),
    /// Measure the real path to a `cclab serve` host: one run per controller, same results schema
    Perf(PerfArgs),
    /// Download a URL over plain HTTP/1.1 (any web server) and measure it, same results schema
    Get(GetArgs),
    /// Fit a scenario to a `cclab perf` measurement (rate, RTT, loss, buffer with 95% intervals)
    Fit(FitArgs),
    /// Make link traces (Mahimahi format, for link.trace) or describe one
    Trace {
        #[command(subcommand)]
        cmd: TraceCmd,
    },
}

#[derive(Subcommand)]
enum TraceCmd {
    /// A rate step down and back up: HIGH for --high, LOW for --low, HIGH again to --length
    Step {
        /// The high rate (e.g. 48mbit)
        #[arg(long)]
        high: String,
        /// The low rate (0 for an outage)
        #[arg(long)]
        low: String,
        /// How long the first high stretch lasts (e.g. 6s)
        #[arg(long)]
        high_for: String,
        /// How long the low stretch lasts
        #[arg(long)]
        low_for: String,
        /// The trace's length (it loops)
        #[arg(long)]
        length: String,
        /// Write to this file instead of standard output
        #[arg(long, value_name = "FILE")]
        out: Option<String>,
    },
    /// A periodic outage: RATE, except nothing for --outage of every --period
    Outage {
        #[arg(long)]
        rate: String,
        #[arg(long)]
        period: String,
        #[arg(long)]
        outage: String,
        /// The trace's length, a whole number of periods
        #[arg(long)]
        length: String,
        #[arg(long, value_name = "FILE")]
        out: Option<String>,
    },
    /// A cellular-like random walk of the rate (log-normal steps, reflected at --min/--max)
    Walk {
        /// The mean rate over the trace
        #[arg(long)]
        mean: String,
        #[arg(long)]
        min: String,
        #[arg(long)]
        max: String,
        /// A new rate every this long (e.g. 100ms)
        #[arg(long)]
        step: String,
        /// Standard deviation of each step of the log-rate (0.1 = about 10%)
        #[arg(long)]
        sigma: f64,
        #[arg(long)]
        length: String,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, value_name = "FILE")]
        out: Option<String>,
    },
    /// Describe a trace file: its loop, mean rate, and lowest and highest rate per second
    Info {
        file: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
struct ServeArgs {
    /// Address and port to listen on (docs/remote.md)
    #[arg(long, default_value = "0.0.0.0:5301", value_name = "ADDR:PORT")]
    listen: String,
    /// Pre-shared key (a file of mode 600, at least 16 bytes); without one only loopback
    /// clients are served
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Longest run a client may ask for
    #[arg(long, default_value = "60s", value_name = "TIME")]
    max_duration: String,
    /// Most streams in one run
    #[arg(long, default_value_t = 8, value_name = "N")]
    max_parallel: u16,
    /// Runs one client address may have going at once
    #[arg(long, default_value_t = 2, value_name = "N")]
    max_runs: u16,
    /// Bytes one client address, and the key (all its holders together), may move in any hour
    #[arg(long, default_value = "100gb", value_name = "SIZE")]
    max_bytes: String,
    /// Authenticated sessions served at once, all clients together (connections still in
    /// their 2 s handshake have a pool of their own: docs/remote.md, "Admission")
    #[arg(long, default_value_t = 32, value_name = "N")]
    max_clients: usize,
    /// No log lines on stderr
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Args)]
struct PerfArgs {
    /// The host running `cclab serve`: HOST or HOST:PORT (port 5301 by default)
    #[arg(value_name = "HOST[:PORT]")]
    target: String,
    /// Congestion controls of the sending side, one run each, comma-separated
    #[arg(long, default_value = "cubic", value_name = "CC,...")]
    cc: String,
    /// Length of each run (also the bound of a --size run)
    #[arg(long, default_value = "10s", value_name = "TIME")]
    duration: String,
    /// Runs per controller
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: u32,
    /// A sized transfer per stream (e.g. 25mb) instead of bulk for the duration
    #[arg(long, value_name = "SIZE")]
    size: Option<String>,
    /// Upload (this host sends) instead of a download (the server sends)
    #[arg(long, short = 'R')]
    reverse: bool,
    /// Streams per run
    #[arg(long, short = 'P', default_value_t = 1, value_name = "N")]
    parallel: u16,
    /// Pre-shared key (the server's --key-file)
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
    /// Print the results document as JSON on stdout (no per-second lines)
    #[arg(long)]
    json: bool,
    /// Write results.json, flows.csv, series/run-N.csv and report.html into DIR
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Name of the measurement in the results (what `cclab compare` matches on)
    #[arg(long, default_value = "perf", value_name = "NAME")]
    name: String,
    /// No per-second lines
    #[arg(short, long)]
    quiet: bool,
    /// Skip the probe phase (15-55 s before the runs that fits the path: min RTT, bottleneck
    /// rate, random loss, buffer; stored as the results' `fit`, read by `cclab fit`; a
    /// loopback server skips it anyway)
    #[arg(long, conflicts_with = "predict")]
    no_probe: bool,
    /// Simulate the fitted path and print the predicted goodput beside each measured
    /// controller, and for bbr3 and --predict-cc (recorded in the results' `fit`)
    #[arg(long)]
    predict: bool,
    /// More controllers to predict (the simulator's names), comma-separated
    #[arg(long, value_name = "CC,...", requires = "predict")]
    predict_cc: Option<String>,
}

#[derive(Args)]
struct FitArgs {
    /// A results directory or results.json written by `cclab perf --out` or `--json`
    #[arg(value_name = "RESULTS")]
    results: PathBuf,
    /// Write the fitted path as a scenario (`cclab run` loads it; the measured controllers
    /// and bbr3 as a matrix over flows.cc)
    #[arg(long, value_name = "FILE.toml")]
    out: Option<PathBuf>,
    /// Print the fit (with predictions, if asked) as JSON
    #[arg(long)]
    json: bool,
    /// Simulate the fitted path: predicted vs measured goodput per controller, and bbr3
    #[arg(long)]
    predict: bool,
    /// More controllers to predict, comma-separated
    #[arg(long, value_name = "CC,...", requires = "predict")]
    predict_cc: Option<String>,
}

#[derive(Args)]
struct GetArgs {
    /// http://HOST[:PORT]/PATH (plain HTTP/1.1)
    url: String,
    /// Downloads
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: u32,
    /// Longest one download may take
    #[arg(long, default_value = "60s", value_name = "TIME")]
    timeout: String,
    /// Most bytes read per download
    #[arg(long, default_value = "1gb", value_name = "SIZE")]
    max_size: String,
    /// Print the results document as JSON on stdout (no per-second lines)
    #[arg(long)]
    json: bool,
    /// Write results.json, flows.csv, series/run-N.csv and report.html into DIR
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Name of the measurement in the results
    #[arg(long, default_value = "get", value_name = "NAME")]
    name: String,
    /// No per-second lines
    #[arg(short, long)]
    quiet: bool,
}

#[derive(Subcommand)]
enum LabCmd {
    /// Remove every namespace, link and process a killed kernel run left behind (cclab-* names)
    Clean(JsonArg),
    /// Hold a scenario's path open between two lab namespaces for any traffic (iperf3, wget, cclab serve/perf) until Ctrl-C or --for (needs root)
    Up(LabUpArgs),
    /// Hold `cclab perf`'s fit and prediction against known paths: serve and perf across the lab's element over each scenario's [link], then the fit against the link as configured and the prediction against the measurement (needs root)
    #[command(name = "fit-check")]
    FitCheck(FitCheckArgs),
}

#[derive(Args)]
struct LabUpArgs {
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
struct FitCheckArgs {
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

#[derive(Args)]
struct AdviseArgs {
    /// Scenario file: the path, its hosts as they are now, and the workload
    scenario: String,
    /// What to optimise: fct:SIZE (completion time of a SIZE transfer, e.g. fct:640kb),
    /// goodput, or rtt_p99
    #[arg(long, value_name = "OBJECTIVE")]
    objective: String,
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

#[derive(Args)]
struct CalArgs {
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

#[derive(Args)]
struct ControllersArgs {
    /// The controllers of this backend (sim: the simulator's registry; kernel: this kernel's)
    #[arg(long, default_value = "sim", value_name = "NAME")]
    backend: String,
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct JsonArg {
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ReportArgs {
    /// Results directories (written by `cclab run --out DIR`) or results.json files; several are merged into one page
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Write the page here instead of DIR/report.html (the first DIR when several are given)
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Page title
    #[arg(long, value_name = "TEXT")]
    title: Option<String>,
    /// Draw every document in the same charts, whatever its scenario's name (documents of the
    /// same scenario always share charts)
    #[arg(long)]
    overlay: bool,
    /// A document's name in overlays (repeatable: one per document, in order; default: its
    /// backend and directory)
    #[arg(long, value_name = "TEXT")]
    label: Vec<String>,
    /// Also write every chart as a standalone SVG file, NN-NAME.svg in page order (see
    /// --charts-dir)
    #[arg(long)]
    svg: bool,
    /// Also write every chart as a PNG file, NN-NAME.png, rendered by resvg with the system's
    /// fonts (see --charts-dir, --png-scale)
    #[arg(long)]
    png: bool,
    /// Where --svg/--png write the charts (default: charts/ next to the page)
    #[arg(long, value_name = "DIR")]
    charts_dir: Option<PathBuf>,
    /// Pixels per SVG unit of the --png files (2 = sharp on HiDPI screens and in tickets)
    #[arg(long, default_value_t = cclab_report::chartfile::DEFAULT_SCALE, value_name = "X")]
    png_scale: f32,
}

#[derive(Args)]
struct CompareArgs {
    /// First results: a results directory or a results.json file
    #[arg(value_name = "A")]
    a: PathBuf,
    /// Second results: a results directory or a results.json file
    #[arg(value_name = "B")]
    b: PathBuf,
    /// Every metric of every pair of runs (throughput, queue delay, drops by cause, FCT...),
    /// after the setup differences and the summary
    #[arg(long)]
    all: bool,
    /// Print the comparison as JSON
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct RunArgs {
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
}

#[derive(Args)]
struct BenchArgs {
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

fn main() -> ExitCode {
    // Output into a closed pipe (`cclab bench | head -1`) ends the program quietly, as it
    // does other command-line tools, instead of failing a write.
    // SAFETY: setting a signal's disposition to the default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    // `run --help` lists the registered controllers; `--backend` the registered backends.
    let cmd = Cli::command().mut_subcommand("run", |c| {
        c.after_help(format_help()).mut_arg("backend", |a| {
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
        Cmd::Run(a) => cmd_run(a),
        Cmd::Controllers(a) => cmd_controllers(a),
        Cmd::Report(a) => cmd_report(a),
        Cmd::Compare(a) => cmd_compare(a),
        Cmd::Bench(a) => cmd_bench(a),
        Cmd::Doctor(a) => cmd_doctor(a),
        Cmd::Trace { cmd } => cmd_trace(cmd),
        Cmd::Serve(a) => cmd_serve(a),
        Cmd::Perf(a) => cmd_perf(a),
        Cmd::Get(a) => cmd_get(a),
        Cmd::Fit(a) => cmd_fit(a),
        Cmd::Calibrate(a) => cmd_calibrate(a),
        Cmd::Advise(a) => cmd_advise(a),
        Cmd::Lab {
            cmd: LabCmd::Clean(a),
        } => cmd_lab_clean(a),
        Cmd::Lab {
            cmd: LabCmd::FitCheck(a),
        } => cmd_fit_check(a),
        Cmd::Lab { cmd: LabCmd::Up(a) } => cmd_lab_up(a),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cclab: error: {e}");
            ExitCode::from(e.exit)
        }
    }
}

fn cmd_run(a: RunArgs) -> Result<(), Error> {
    let backend = backends::by_name(&a.backend).map_err(Error::new)?;
    if a.repeat == 0 {
        return Err(Error::new("--repeat must be at least 1"));
    }
    if a.json && a.markdown {
        return Err(Error::new(
            "--json and --markdown both choose what stdout carries: give one of them",
        ));
    }
    let opts = RunOptions {
        backend: backend.name().to_string(),
        overrides: a.set.clone(),
        seed: a.seed,
        repeat: a.repeat,
        jobs: a.jobs,
        progress: !a.quiet,
        retry_disturbed: a.retry_disturbed,
        trace_dir: a.trace.clone(),
    };
    let mut plans = Vec::new();
    for f in &a.files {
        plans.push(runner::plan(&f.to_string_lossy(), &opts)?);
    }
    // Check the output directory before spending time on runs.
    if let Some(dir) = &a.out {
        prepare_dir(dir)?;
    }
    let docs = runner::execute(&plans, &opts)?;
    if let Some(dir) = &a.out {
        write_out(dir, &plans, &docs)?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if a.json {
        let text = if docs.len() == 1 {
            export::json(&docs[0])
        } else {
            let vals: Vec<serde_json::Value> = docs
                .iter()
                .map(|d| serde_json::from_str(&export::json(d)).expect("valid json"))
                .collect();
            serde_json::to_string_pretty(&vals).expect("json")
        };
        let _ = writeln!(out, "{text}");
    } else {
        for (p, d) in plans.iter().zip(&docs) {
            let runs = d.runs.len();
            let mut title = format!(
                "{}  ({}, {} backend, {} run{})",
                p.name,
                p.path,
                d.backend,
                runs,
                if runs == 1 { "" } else { "s" }
            );
            if let Some(desc) = &p.description {
                title.push_str(&format!("\n  {}", desc.trim()));
            }
            if let Some(path) = describe::path_line(d) {
                title.push_str(&format!("\n  {path}"));
            }
            if let Some(o) = describe::overrides_line(d) {
                title.push_str(&format!("\n  {o}"));
            }
            let text = if a.markdown {
                table::render_markdown(d, &title)
            } else {
                table::render(d, &title)
            };
            let _ = writeln!(out, "{text}");
        }
        if let Some(dir) = &a.out {
            let _ = writeln!(out, "results written to {}", dir.display());
            let _ = writeln!(out, "report: {}", dir.join("report.html").display());
        }
    }
    Ok(())
}

fn cmd_controllers(a: ControllersArgs) -> Result<(), Error> {
    let backend = backends::by_name(&a.backend).map_err(Error::new)?;
    let cat = backend.controllers();
    if a.json {
        let v: Vec<serde_json::Value> = cat
            .entries
            .iter()
            .map(|e| {
                let c = e.controller;
                serde_json::json!({
                    "name": e.name,
                    "aliases": e.aliases,
                    "title": c.map(|c| c.title),
                    "summary": c.map(|c| c.summary),
                    "params": c.map_or(Vec::new(), |c| c.params.iter().map(|p| serde_json::json!({
                        "name": p.name,
                        "default": match p.default {
                            cclab_core::cc::ParamValue::Bool(b) => serde_json::json!(b),
                            cclab_core::cc::ParamValue::Int(i) => serde_json::json!(i),
                        },
                        "kind": match p.kind {
                            cclab_core::cc::ParamKind::Bool => serde_json::json!("bool"),
                            cclab_core::cc::ParamKind::Int { min, max } => serde_json::json!({"int": [min, max]}),
                        },
                        "unit": p.unit,
                        "help": p.help,
                    })).collect()),
                })
            })
            .collect();
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"backend": backend.name(), "controllers": v})
            )
            .expect("json")
        );
        return Ok(());
    }
    println!(
        "controllers of the {} backend ({}):",
        backend.name(),
        cat.owner
    );
    for e in &cat.entries {
        let aliases = if e.aliases.is_empty() {
            String::new()
        } else {
            format!(" (or {})", e.aliases.join(", "))
        };
        match e.controller {
            Some(c) => {
                println!("\n  {}{aliases}: {}", e.name, c.summary);
                if c.params.is_empty() {
                    println!("    no parameters");
                }
                for p in c.params {
                    let range = match p.kind {
                        cclab_core::cc::ParamKind::Bool => "true|false".to_string(),
                        cclab_core::cc::ParamKind::Int { min, max } => format!("{min}..{max}"),
                    };
                    let unit = if p.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", p.unit)
                    };
                    println!(
                        "    cc_params.{:<22} default {}{unit} ({range}): {}",
                        p.name, p.default, p.help
                    );
                }
            }
            None => println!("\n  {}{aliases}: the kernel's own (no parameters)", e.name),
        }
    }
    Ok(())
}

fn prepare_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(format!(
            "cannot create output directory {}: {e}",
            dir.display()
        ))
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text)
        .map_err(|e| Error::new(format!("cannot write {}: {e}", path.display())))
}

/// DIR/results.json, DIR/flows.csv, DIR/series/run-<k>.csv, DIR/meta.json; with several
/// files, one sub-directory per scenario name. Then DIR/report.html over all of them, built
/// from those files (so `cclab report DIR` rebuilds the same page).
fn write_out(
    dir: &Path,
    plans: &[runner::Plan],
    docs: &[cclab_results::ResultsDoc],
) -> Result<(), Error> {
    let metas: Vec<(&str, &str, Option<&str>)> = plans
        .iter()
        .map(|p| (p.name.as_str(), p.path.as_str(), p.description.as_deref()))
        .collect();
    write_docs(dir, &metas, docs)
}

/// [`write_out`] for documents described by (name, source, description).
fn write_docs(
    dir: &Path,
    metas: &[(&str, &str, Option<&str>)],
    docs: &[cclab_results::ResultsDoc],
) -> Result<(), Error> {
    let mut bases = Vec::new();
    for ((name, path, description), d) in metas.iter().zip(docs) {
        let base = if docs.len() == 1 {
            dir.to_path_buf()
        } else {
            dir.join(name)
        };
        prepare_dir(&base)?;
        bases.push(base.clone());
        write_file(&base.join("results.json"), &export::json(d))?;
        write_file(
            &base.join("meta.json"),
            &load::meta_json(name, path, *description, d),
        )?;
        write_file(&base.join("flows.csv"), &export::flows_csv(d))?;
        let sdir = base.join("series");
        prepare_dir(&sdir)?;
        for (i, r) in d.runs.iter().enumerate() {
            if let Some(s) = &r.series {
                write_file(&sdir.join(format!("run-{}.csv", i + 1)), &s.to_csv())?;
            }
        }
    }
    reports::write_report(&bases, &dir.join("report.html"), &html::Options::default())?;
    Ok(())
}

fn remote_err(e: cclab_remote::RemoteError) -> Error {
    Error {
        msg: e.to_string(),
        exit: e.exit_code(),
    }
}

fn cmd_serve(a: ServeArgs) -> Result<(), Error> {
    use cclab_remote::{parse_duration, parse_size};
    let listen = cclab_remote::server::parse_listen(&a.listen).map_err(remote_err)?;
    let key = a
        .key_file
        .as_deref()
        .map(cclab_remote::Key::load)
        .transpose()
        .map_err(remote_err)?;
    let limits = cclab_remote::Limits {
        max_duration: parse_duration("--max-duration", &a.max_duration).map_err(remote_err)?,
        max_parallel: a.max_parallel,
        max_runs: a.max_runs,
        max_bytes: parse_size("--max-bytes", &a.max_bytes).map_err(remote_err)?,
        max_clients: a.max_clients,
        ..Default::default()
    };
    if limits.max_duration.is_zero() || a.max_parallel == 0 || a.max_runs == 0 || a.max_clients == 0
    {
        return Err(Error::new(
            "--max-duration, --max-parallel, --max-runs and --max-clients must be more than 0",
        ));
    }
    let server = cclab_remote::Server::bind(cclab_remote::ServeOptions {
        listen,
        key,
        limits,
        log_stderr: !a.quiet,
    })
    .map_err(remote_err)?;
    // Runs until SIGINT/SIGTERM, then closes every session and returns (exit status 0).
    server.run().map_err(remote_err)
}

/// Print a host results document (table or JSON) and write `--out`.
fn print_host_doc(
    doc: &cclab_results::ResultsDoc,
    title: &str,
    json: bool,
    out: Option<&Path>,
) -> Result<(), Error> {
    if let Some(dir) = out {
        write_docs(
            dir,
            &[(&doc.scenario, title, None)],
            std::slice::from_ref(doc),
        )?;
    }
    let stdout = std::io::stdout();
    let mut o = stdout.lock();
    if json {
        let _ = writeln!(o, "{}", export::json(doc));
        return Ok(());
    }
    // What was measured (and fitted), in one line under the title; the table leaves out a
    // real path's link lines itself (backend "host").
    let title = match describe::path_line(doc) {
        Some(p) => format!("{title}\n  {p}"),
        None => title.to_string(),
    };
    let _ = write!(o, "{}", table::render(doc, &title));
    if let Some(dir) = out {
        let _ = writeln!(o, "results written to {}", dir.display());
        let _ = writeln!(o, "report: {}", dir.join("report.html").display());
    }
    Ok(())
}

fn cmd_perf(a: PerfArgs) -> Result<(), Error> {
    use cclab_remote::{parse_duration, parse_size};
    let key = a
        .key_file
        .as_deref()
        .map(cclab_remote::Key::load)
        .transpose()
        .map_err(remote_err)?;
    let ccs: Vec<String> =
        a.cc.split(',')
            .map(|c| c.trim().to_string())
            .filter(|c| !c.is_empty())
            .collect();
    let opts = cclab_remote::PerfOptions {
        target: a.target.clone(),
        ccs,
        duration: parse_duration("--duration", &a.duration).map_err(remote_err)?,
        repeat: a.repeat,
        size: a
            .size
            .as_deref()
            .map(|s| parse_size("--size", s))
            .transpose()
            .map_err(remote_err)?,
        reverse: a.reverse,
        parallel: a.parallel,
        key,
        progress: !a.json && !a.quiet,
        name: a.name.clone(),
        probe: !a.no_probe,
    };
    if let Some(dir) = &a.out {
        prepare_dir(dir)?;
    }
    let mut doc = cclab_remote::perf(&opts).map_err(remote_err)?;
    // A failed prediction leaves the measurement to be written and printed (with a note).
    if a.predict {
        let extra = cc_list(a.predict_cc.as_deref());
        let o = cclab::predict::PredictOptions::default();
        if let Err(e) = cclab::predict::predict_doc(&mut doc, "the measurement", &extra, &o) {
            eprintln!("cclab: note: no prediction: {e}");
        }
    }
    let fit = cclab_remote::fit::PathFit::from_doc(&doc, "the measurement").ok();
    let title = format!(
        "{}  (host backend: {} {}, {} run{})",
        doc.scenario,
        if a.reverse {
            "upload to"
        } else {
            "download from"
        },
        a.target,
        doc.runs.len(),
        if doc.runs.len() == 1 { "" } else { "s" }
    );
    print_host_doc(&doc, &title, a.json, a.out.as_deref())?;
    if let (Some(f), false) = (fit, a.json) {
        print!("{}", f.render_text());
        if a.predict {
            print!("{}", f.render_predictions());
        }
    }
    Ok(())
}

fn cc_list(s: Option<&str>) -> Vec<String> {
    s.unwrap_or("")
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

fn cmd_fit(a: FitArgs) -> Result<(), Error> {
    let mut doc = cclab::predict::load(&a.results)?;
    let name = a.results.display().to_string();
    let mut fit = cclab_remote::fit::PathFit::from_doc(&doc, &name).map_err(Error::new)?;
    if a.predict {
        let extra = cc_list(a.predict_cc.as_deref());
        let o = cclab::predict::PredictOptions::default();
        fit = cclab::predict::predict_doc(&mut doc, &name, &extra, &o)?;
    }
    if let Some(out) = &a.out {
        let ccs = cclab::predict::controllers(&fit, &cc_list(a.predict_cc.as_deref()));
        let stem = out
            .file_stem()
            .map_or("fitted".into(), |s| s.to_string_lossy().to_string());
        std::fs::write(out, fit.scenario_toml(&stem, &name, &ccs))
            .map_err(|e| Error::new(format!("cannot write {}: {e}", out.display())))?;
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&fit.to_value()).expect("json")
        );
    } else {
        print!("{}", fit.render_text());
        if a.predict {
            print!("{}", fit.render_predictions());
        }
        if let Some(out) = &a.out {
            println!(
                "scenario written to {} (cclab run {} runs it)",
                out.display(),
                out.display()
            );
        }
    }
    Ok(())
}

fn cmd_get(a: GetArgs) -> Result<(), Error> {
    use cclab_remote::{parse_duration, parse_size};
    let opts = cclab_remote::GetOptions {
        url: a.url.clone(),
        repeat: a.repeat,
        timeout: parse_duration("--timeout", &a.timeout).map_err(remote_err)?,
        max_size: parse_size("--max-size", &a.max_size).map_err(remote_err)?,
        progress: !a.json && !a.quiet,
        name: a.name.clone(),
    };
    if let Some(dir) = &a.out {
        prepare_dir(dir)?;
    }
    let doc = cclab_remote::get(&opts).map_err(remote_err)?;
    let title = format!(
        "{}  (host backend: GET {}, {} download{})",
        doc.scenario,
        a.url,
        doc.runs.len(),
        if doc.runs.len() == 1 { "" } else { "s" }
    );
    print_host_doc(&doc, &title, a.json, a.out.as_deref())
}

fn cmd_report(a: ReportArgs) -> Result<(), Error> {
    let out = match &a.out {
        Some(f) => f.clone(),
        None => {
            let first = &a.dirs[0];
            if first.is_file() {
                first.with_file_name("report.html")
            } else {
                first.join("report.html")
            }
        }
    };
    let opts = html::Options {
        title: a.title.clone(),
        overlay: a.overlay,
        labels: a.label.clone(),
        ..Default::default()
    };
    if a.charts_dir.is_some() && !a.svg && !a.png {
        return Err(Error::new(
            "--charts-dir is where --svg/--png write the charts: add --svg and/or --png",
        ));
    }
    if a.png {
        cclab_report::chartfile::check_scale(a.png_scale).map_err(Error::new)?;
    }
    let page = reports::write_report_page(&a.dirs, &out, &opts)?;
    println!(
        "report written to {} ({:.1} kB)",
        out.display(),
        page.len() as f64 / 1e3
    );
    if a.svg || a.png {
        let dir = a.charts_dir.clone().unwrap_or_else(|| {
            out.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .join("charts")
        });
        let scale = a.png.then_some(a.png_scale);
        let w = reports::write_charts(&page, &dir, a.svg, scale)?;
        let n = w.charts;
        if n == 0 {
            println!(
                "the report has no charts: nothing written to {}",
                dir.display()
            );
            return Ok(());
        }
        let mut kinds = Vec::new();
        if a.svg {
            kinds.push("SVG".to_string());
        }
        if a.png {
            kinds.push(format!(
                "PNG ({}x, font {})",
                a.png_scale,
                w.family.as_deref().unwrap_or("-")
            ));
        }
        println!(
            "{n} chart{} written to {} as {} ({:.1} kB)",
            if n == 1 { "" } else { "s" },
            dir.display(),
            kinds.join(" + "),
            w.bytes as f64 / 1e3
        );
    }
    Ok(())
}

fn cmd_compare(a: CompareArgs) -> Result<(), Error> {
    let c = reports::compare_paths(&a.a, &a.b)?;
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

fn cmd_bench(a: BenchArgs) -> Result<(), Error> {
    if a.kernel {
        return cmd_bench_kernel(&a);
    }
    let mut cases = bench::cases();
    // The report case runs after the simulator's; its figures are not in the simulator
    // cases' JSON array (a list of simulator measurements), only alone (--case report).
    let mut report = !a.json;
    if let Some(text) = &a.case {
        if cases.iter().any(|c| c.name == text.as_str()) {
            cases.retain(|c| c.name == text.as_str());
        } else {
            cases.retain(|c| c.name.contains(text.as_str()));
        }
        report = "report".contains(text.as_str()) && cases.is_empty();
        if cases.is_empty() && !report {
            let names: Vec<_> = bench::cases().iter().map(|c| c.name).collect();
            return Err(Error::new(format!(
                "no bench case's name contains {text:?}; the cases are: {}, report",
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
    if report {
        bench_report(&a)?;
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
        }
        all.push(m);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&all).expect("json"));
    }
    Ok(())
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
    let exe = std::env::current_exe()
        .map_err(|e| Error::new(format!("cannot find this program's path: {e}")))?;
    let tty = std::io::stderr().is_terminal();
    if !a.json && tty {
        eprint!("loading the report in {} ...", browser.display());
    }
    let m = bench::report_load(&exe, &browser, a.repeat).map_err(Error::new);
    if !a.json && tty {
        eprint!("\x1b[2K\r");
    }
    let m = m?;
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

fn cmd_bench_kernel(a: &BenchArgs) -> Result<(), Error> {
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

fn cmd_trace(cmd: TraceCmd) -> Result<(), Error> {
    use cclab_path::tracegen;
    use cclab_scenario::units::{parse_rate, parse_time};
    let rate = |what: &str, s: &str| -> Result<f64, Error> {
        if s.trim() == "0" {
            return Ok(0.0);
        }
        parse_rate(s)
            .map(|r| r as f64)
            .map_err(|m| Error::new(format!("--{what}: {m}")))
    };
    let ms = |what: &str, s: &str| -> Result<u64, Error> {
        let ns = parse_time(s).map_err(|m| Error::new(format!("--{what}: {m}")))?;
        if ns % 1_000_000 != 0 {
            return Err(Error::new(format!(
                "--{what}: a trace counts whole milliseconds ({s} is not one)"
            )));
        }
        Ok(ns / 1_000_000)
    };
    let (text, out) = match cmd {
        TraceCmd::Step {
            high,
            low,
            high_for,
            low_for,
            length,
            out,
        } => (
            tracegen::step(
                rate("high", &high)?,
                rate("low", &low)?,
                ms("high-for", &high_for)?,
                ms("low-for", &low_for)?,
                ms("length", &length)?,
            ),
            out,
        ),
        TraceCmd::Outage {
            rate: r,
            period,
            outage,
            length,
            out,
        } => (
            tracegen::outage(
                rate("rate", &r)?,
                ms("period", &period)?,
                ms("outage", &outage)?,
                ms("length", &length)?,
            ),
            out,
        ),
        TraceCmd::Walk {
            mean,
            min,
            max,
            step,
            sigma,
            length,
            seed,
            out,
        } => (
            tracegen::random_walk(
                rate("mean", &mean)?,
                rate("min", &min)?,
                rate("max", &max)?,
                ms("step", &step)?,
                sigma,
                ms("length", &length)?,
                seed,
            ),
            out,
        ),
        TraceCmd::Info { file, json } => return trace_info(&file, json),
    };
    let text = text.map_err(Error::new)?;
    match out {
        Some(path) => write_file(std::path::Path::new(&path), &text),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

/// `cclab trace info FILE`: the loop, the mean rate, and the range of per-second rates.
fn trace_info(file: &str, json: bool) -> Result<(), Error> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::new(format!("cannot read trace file {file}: {e}")))?;
    let t = cclab_path::TraceDesc::parse(file, &text).map_err(Error::new)?;
    let desc = cclab_path::RateDesc::Trace(std::sync::Arc::new(t.clone()));
    let period = t.opportunities.last().copied().unwrap_or(0);
    let mean = desc.mean_bps();
    let secs = (period / 1_000_000_000).max(1);
    let per_s: Vec<f64> = (0..secs)
        .map(|k| desc.capacity_bits(k * 1_000_000_000, (k + 1) * 1_000_000_000))
        .collect();
    let lo = per_s.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = per_s.iter().copied().fold(0.0, f64::max);
    if json {
        println!(
            "{}",
            serde_json::json!({
                "file": file,
                "opportunities": t.opportunities.len(),
                "loop_s": period as f64 / 1e9,
                "mean_bps": mean,
                "min_bps_per_s": lo,
                "max_bps_per_s": hi,
            })
        );
    } else {
        println!(
            "{file}: {} delivery opportunities of {} bytes, looping every {}; mean {}, per second {} to {}",
            t.opportunities.len(),
            cclab_path::TRACE_OPPORTUNITY_BYTES,
            cclab_scenario::units::fmt_time(period),
            cclab_report::units::rate(mean),
            cclab_report::units::rate(lo),
            cclab_report::units::rate(hi),
        );
    }
    Ok(())
}

fn cmd_doctor(a: JsonArg) -> Result<(), Error> {
    let report = cclab_kernel::doctor();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        print!("{report}");
    }
    Ok(())
}

fn cmd_lab_clean(a: JsonArg) -> Result<(), Error> {
    let report = cclab_kernel::clean_stale()?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("json"));
    } else {
        println!("{report}");
    }
    Ok(())
}

fn cmd_lab_up(a: LabUpArgs) -> Result<(), Error> {
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

fn cmd_fit_check(a: FitCheckArgs) -> Result<(), Error> {
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

fn cmd_advise(a: AdviseArgs) -> Result<(), Error> {
    let objective = cclab::advise::Objective::parse(&a.objective).map_err(Error::new)?;
    if a.repeat == 0 {
        return Err(Error::new("--repeat must be at least 1"));
    }
    let opts = cclab::advise::AdviseOptions {
        objective,
        repeat: a.repeat,
        jobs: a.jobs,
        progress: !a.quiet && !a.json,
        verify: a.verify,
        overrides: a.set.clone(),
    };
    let advice = cclab::advise::advise(&a.scenario, &opts)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&advice).expect("json"));
    } else {
        print!("{}", cclab::advise::text(&advice, objective, a.top));
    }
    Ok(())
}

fn cmd_calibrate(a: CalArgs) -> Result<(), Error> {
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
            &serde_json::to_string_pretty(&cal).expect("json"),
        )?;
        write_file(
            &dir.join("calibration.md"),
            &cclab::calibrate::markdown(&cal),
        )?;
        write_file(&dir.join("report.html"), &cclab::calibrate::html(&cal))?;
        for (kind, docs) in [("sim", &sim_docs), ("kernel", &kernel_docs)] {
            for d in docs.iter() {
                write_file(
                    &dir.join(format!("{kind}-{}.json", d.scenario)),
                    &export::json(d),
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
