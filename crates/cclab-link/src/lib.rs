//! # cclab-link: what a "path" means
//!
//! The pieces a path is built from, shared by the simulator and the kernel lab's user-space
//! link element so that both backends mean the same thing by "100 Mbit/s, 50 ms, 1 BDP, 1%":
//!
//! - [`Bottleneck`]: a link of fixed rate serving a drop-tail FIFO limited in bytes
//!   (like an HTB class with a bfifo child). Rates count whole IP packets.
//! - [`DelayLine`]: a fixed propagation delay (FIFO, nothing is reordered).
//! - [`LossModel`]: random (Bernoulli) loss, applied where packets enter the path.
//! - [`Rng`]: the seeded generator behind every random choice, so runs are reproducible.
//!
//! Like the TCP core, nothing here reads a clock: time (ns) is passed in.

mod bottleneck;
mod delay;
mod loss;
mod rng;

pub use bottleneck::{Bottleneck, Departed, LinkCounters};
pub use delay::DelayLine;
pub use loss::LossModel;
pub use rng::Rng;

/// Time in nanoseconds.
pub type Nanos = u64;

/// Anything with a size on the wire.
pub trait WireLen {
    /// Bytes on the wire (IP packet size).
    fn wire_len(&self) -> u32;
}

/// Bandwidth-delay product in bytes.
pub fn bdp_bytes(rate_bps: f64, rtt_ns: Nanos) -> f64 {
    rate_bps / 8.0 * rtt_ns as f64 / 1e9
}
