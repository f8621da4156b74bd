//! Helpers shared by the simulator's integration tests (each test binary uses a subset).
#![allow(dead_code)]

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// Payload bytes in each 1500-byte packet on the wire.
pub const PAYLOAD: f64 = 1448.0 / 1500.0;

/// Goodput as a share of a link's payload capacity (1448 of every 1500 bytes).
pub fn share(goodput_bps: f64, rate_bps: f64) -> f64 {
    goodput_bps / (rate_bps * PAYLOAD)
}
