//! `cclab trace`: link traces made or described.

use super::write_file;
use cclab::runner::Error;
use clap::Subcommand;

#[derive(Subcommand)]
pub(crate) enum TraceCmd {
    /// A rate step down and back up: --high for --high-for, --low for --low-for, then --high
    /// again to --length
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
    /// A periodic outage: --rate, except nothing for --outage of every --period
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

/// Runs `cclab trace TRACE-CMD`.
pub(crate) fn run(cmd: TraceCmd) -> Result<(), Error> {
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
