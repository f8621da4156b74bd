//! The real-host commands: `cclab serve`, `perf`, `get` and `fit`.

use super::{cc_list, prepare_dir, remote_err, write_docs};
use cclab::runner::Error;
use cclab_report::{describe, export, table};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub(crate) struct ServeArgs {
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
pub(crate) struct PerfArgs {
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
pub(crate) struct FitArgs {
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
pub(crate) struct GetArgs {
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

/// The key in `--key-file`, if one is given.
fn load_key(path: Option<&Path>) -> Result<Option<cclab_remote::Key>, Error> {
    path.map(cclab_remote::Key::load)
        .transpose()
        .map_err(remote_err)
}

/// Runs `cclab serve`.
pub(crate) fn serve(a: ServeArgs) -> Result<(), Error> {
    use cclab_remote::{parse_duration, parse_size};
    let listen = cclab_remote::server::parse_listen(&a.listen).map_err(remote_err)?;
    let key = load_key(a.key_file.as_deref())?;
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

/// Runs `cclab perf`.
pub(crate) fn perf(a: PerfArgs) -> Result<(), Error> {
    use cclab_remote::{parse_duration, parse_size};
    let key = load_key(a.key_file.as_deref())?;
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

/// Runs `cclab fit`.
pub(crate) fn fit(a: FitArgs) -> Result<(), Error> {
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

/// Runs `cclab get`.
pub(crate) fn get(a: GetArgs) -> Result<(), Error> {
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
