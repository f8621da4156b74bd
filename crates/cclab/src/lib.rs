//! # cclab: the command-line tool's library
//!
//! Everything `cclab` does, callable from tests and other programs:
//! - [`backends`]: the backends, one line each.
//! - [`runner`]: load scenario files, apply `--set` overrides, expand matrices, run every
//!   point on a backend (in parallel), and collect one [`cclab_results::ResultsDoc`] per file.
//! - [`reference`]: match a scenario's `[reference]` table (published figures) to its runs.
//! - [`bench`]: simulator speed benchmarks and the report's load time (`cclab bench`).
//! - [`browser`]: headless Chromium, to load a report as a reader's browser does.
//! - [`tools`]: finding other programs on `PATH`, and scratch directories.
//! - [`calibrate`]: simulator vs kernel on the calibration matrix (`cclab calibrate`).
//! - [`fitcheck`]: `cclab lab fit-check`, the fit and prediction against lab paths.
//! - [`labup`]: `cclab lab up`, a scenario's path held open in the kernel lab for any traffic.
//! - [`perf_lab`]: `cclab serve` and `cclab perf` across the kernel lab's element over a known
//!   path (`cclab lab fit-check`, the real-host tests in the lab).
//! - [`predict`]: the simulator on a path fitted to a real-host measurement (`--predict`).
//! - [`output`]: results directories (`--out DIR`): JSON, CSV, Parquet and the report.
//! - [`reports`]: `report.html` (`cclab run --out`, `cclab report`) and `cclab compare`.

pub mod advise;
pub mod backends;
pub mod bench;
pub mod browser;
pub mod calibrate;
pub mod fitcheck;
pub mod labup;
pub mod output;
pub mod perf_lab;
pub mod predict;
pub mod reference;
pub mod reports;
pub mod runner;
pub mod tools;
