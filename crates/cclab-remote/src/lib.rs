//! # cclab-remote: measuring real paths between real hosts
//!
//! - [`server`]: `cclab serve`, the far end of a measurement (authenticates clients, sends or
//!   receives their runs' data, samples TCP_INFO of its sending sockets);
//! - [`client`]: `cclab perf`, runs one or more controllers against a server;
//! - [`get`]: `cclab get`, a download from any HTTP/1.1 server (no cclab on the far end);
//! - [`protocol`]: the framed, versioned control protocol and its bounded parser;
//! - [`auth`]: pre-shared-key challenge-response (HMAC-SHA256), data-connection tokens;
//! - [`sampler`] and [`transfer`]: TCP_INFO sampling every 10 ms, the data streams;
//! - [`fit`]: the path (rate, base RTT, random loss, buffer, each with a 95% interval) fitted
//!   to the probe phase `cclab perf` runs first (`probe`), and the scenario it makes;
//! - [`results`]: measurements -> the results schema (`backend: "host"`) through
//!   `cclab_results::RunRecord::build`, the one result builder.
//!
//! The protocol, the security model and the defaults: `docs/remote.md`.

pub mod auth;
pub mod client;
pub mod fit;
pub mod get;
#[doc(hidden)]
pub mod httpd;
pub mod protocol;
pub mod results;
pub mod sampler;
pub mod server;
pub mod text;
pub mod transfer;

pub use auth::Key;
pub use client::{perf, PerfOptions};
pub use get::{get, GetOptions};
pub use server::{Limits, ServeOptions, Server, ServerHandle};

/// The port `cclab serve` listens on unless told otherwise (iperf3's is 5201).
pub const DEFAULT_PORT: u16 = 5301;

/// Why a measurement could not happen; `Display` is one line saying what is wrong and what
/// would fix it.
#[derive(Clone, Debug, PartialEq)]
pub enum RemoteError {
    /// Bad input on this side (an option, a key file, a URL).
    Usage(String),
    /// A socket or system call failed.
    Io(String),
    /// The peer sent something this side cannot accept.
    Protocol(String),
    /// Authentication failed.
    Auth(String),
    /// The server refused (its own words).
    Refused(String),
    /// Something did not happen in time.
    Timeout(String),
    /// SIGINT/SIGTERM: the connections were closed.
    Interrupted(i32),
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::Usage(m)
            | RemoteError::Io(m)
            | RemoteError::Auth(m)
            | RemoteError::Timeout(m) => f.write_str(m),
            RemoteError::Protocol(m) => write!(f, "protocol error: {m}"),
            RemoteError::Refused(m) => write!(f, "the server refused: {m}"),
            RemoteError::Interrupted(s) => write!(
                f,
                "interrupted by {}; connections closed",
                if *s == libc::SIGTERM {
                    "SIGTERM"
                } else {
                    "SIGINT"
                }
            ),
        }
    }
}

impl std::error::Error for RemoteError {}

impl RemoteError {
    /// Process exit status: 1, or 128 + the signal.
    pub fn exit_code(&self) -> u8 {
        match self {
            RemoteError::Interrupted(s) => 128u8.saturating_add(*s as u8),
            _ => 1,
        }
    }
}

impl From<protocol::ProtoError> for RemoteError {
    fn from(e: protocol::ProtoError) -> Self {
        use protocol::ProtoError as P;
        match e {
            P::Closed => RemoteError::Io("the server closed the connection".into()),
            P::Timeout => RemoteError::Timeout("the server did not answer in time".into()),
            P::Interrupted(s) => RemoteError::Interrupted(s),
            P::Io(e) => RemoteError::Io(format!("control connection: {e}")),
            e => RemoteError::Protocol(e.to_string()),
        }
    }
}

/// `1.5s`, `30s`, `200ms` -> a duration (cclab's time units).
pub fn parse_duration(what: &str, s: &str) -> Result<std::time::Duration, RemoteError> {
    cclab_scenario::units::parse_time(s)
        .map(std::time::Duration::from_nanos)
        .map_err(|m| RemoteError::Usage(format!("{what}: {m}")))
}

/// `25mb`, `1gb`, `640kb` -> bytes (cclab's size units).
pub fn parse_size(what: &str, s: &str) -> Result<u64, RemoteError> {
    cclab_scenario::units::parse_size(s).map_err(|m| RemoteError::Usage(format!("{what}: {m}")))
}
