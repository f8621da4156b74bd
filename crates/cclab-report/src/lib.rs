//! # cclab-report: results for people and for scripts
//!
//! - [`table`]: the terminal table (one row per run and flow, a link line per run);
//!   [`steady`]: its figures from a moment on (`cclab run --from`), from the time series.
//! - [`export`]: CSV (flows summary, time series) and JSON writers; [`columns`]: the
//!   results as typed tables (flows, runs, series), written as [`parquet`] files.
//! - [`units`]: human formatting of rates, times and ratios.
//! - [`html`]: the self-contained HTML report (`report.html`; its overlays put several
//!   documents of one scenario in the same charts) with [`plot`], a small SVG plotting
//!   module; [`ts`]: time-series
//!   charts (static SVG + the data of the interactive uPlot chart); [`calpage`]: the
//!   calibration page (simulator against kernel).
//! - [`stream`]: a results directory written as its runs come (sweeps too large to hold).
//! - [`load`]: read results directories back (results.json + series/run-N.csv).
//! - [`compare`]: pair the runs of two results documents, metric by metric.
//! - [`chartfile`]: every chart of a report as an SVG or PNG file (PNG rendered by resvg).
//! - [`describe`]: the path a document ran, in one line (terminal header, report sections).
//! - [`host`]: measurements of real hosts: their link fields are unknown, their fitted path
//!   and prediction (the document's `fit`).

pub mod calpage;
pub mod chartfile;
pub mod columns;
pub mod compare;
pub mod describe;
pub mod export;
pub mod host;
pub mod html;
pub mod load;
pub mod parquet;
pub mod plot;
pub mod steady;
pub mod stream;
pub mod table;
pub mod ts;
pub mod units;
