//! # cclab-report: results for people and for scripts
//!
//! - [`table`]: the terminal table (one row per run and flow, a link line per run).
//! - [`export`]: CSV (flows summary, time series) and JSON writers.
//! - [`units`]: human formatting of rates, times and ratios.
//! - [`html`]: the self-contained HTML report (`report.html`) with [`plot`], a small SVG
//!   plotting module.
//! - [`load`]: read results directories back (results.json + series/run-N.csv).
//! - [`compare`]: pair the runs of two results documents, metric by metric.

pub mod compare;
pub mod export;
pub mod html;
pub mod load;
pub mod plot;
pub mod table;
pub mod units;
