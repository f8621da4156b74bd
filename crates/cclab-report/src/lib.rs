//! # cclab-report: results for people and for scripts
//!
//! - [`table`]: the terminal table (one row per run and flow, a link line per run).
//! - [`export`]: CSV (flows summary, time series) and JSON writers.
//! - [`units`]: human formatting of rates, times and ratios.

pub mod export;
pub mod table;
pub mod units;
