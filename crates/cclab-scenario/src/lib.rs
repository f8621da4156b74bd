//! Scenario files for cclab: parsing, units, validation, matrix expansion and overrides.
//!
//! A scenario file (TOML) describes a network path (`[link]`) and a workload (`[[flows]]`).
//! Any scalar value may be a list; the file then expands to the cartesian product of
//! concrete scenarios (a matrix). The format is documented in `docs/scenarios.md`.
//!
//! ```
//! use cclab_scenario::ScenarioFile;
//! let mut f = ScenarioFile::from_str(r#"
//!     name = "lossy-lan"
//!     duration = "10s"
//!     [link]
//!     rate = "100mbit"
//!     rtt = "10ms"
//!     loss = [0, "1%"]
//!     [[flows]]
//!     cc = "cubic"
//! "#, "lossy-lan.toml").unwrap();
//! f.apply_override("flows.cc=[cubic, bbr]").unwrap(); // or 'flows.cc=["cubic", "bbr"]'
//! assert_eq!(f.sweep_keys(), ["link.loss", "flows.cc"]);
//! let points = f.expand().unwrap();
//! assert_eq!(points.len(), 4);
//! assert_eq!(points[1].label(), "link.loss=0.0,flows.cc=bbr");
//! assert_eq!(points[3].scenario.link.path.loss, 0.01);
//! ```

// Errors are built once per failed load, so their size does not matter; pub fields keep them
// easy to inspect.
#![allow(clippy::result_large_err)]

mod error;
mod file;
mod model;
mod raw;
pub mod units;

pub use cclab_core::cc::ParamValue;
pub use error::{ErrorKind, ScenarioError, MAX_REPORTED};
pub use file::{MatrixPoint, ScenarioFile, AQM_ALIASES};
pub use model::*;
pub use units::Buffer;
