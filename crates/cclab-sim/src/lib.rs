//! # cclab-sim: the `sim` backend
//!
//! A discrete-event simulator of a dumbbell: N TCP flows (the sans-IO sender and receiver of
//! `cclab-core`) share one bottleneck (`cclab-link`). Time is simulated, in nanoseconds, so a
//! run is fast and exactly reproducible: the same configuration and seed give the same
//! results, byte for byte.
//!
//! Topology, per flow `i`:
//! ```text
//! sender_i -> [random loss] -> bottleneck FIFO (rate, buffer) -> delay (rtt_i/2) -> receiver_i
//! sender_i <- delay (rtt_i/2) <- [random ACK loss] <---------------------------------- receiver_i
//! ```
//! where `rtt_i = link.rtt + flow.rtt_extra`. Senders are attached to the bottleneck by
//! infinitely fast links (packets a sender releases join the queue at once) and the ACK path
//! is uncongested. Random loss is decided before the queue, so a lost packet does not use
//! bottleneck capacity (as with netem on the sender's egress).
//!
//! The event loop keeps one pending event per component (the link's next departure, the head
//! of each delay line, each endpoint's timer), so its heap stays small whatever the window.

mod config;
mod engine;
mod scenario;
mod timers;

pub use config::{HostLatency, HostWake, SimConfig, SimFlow, SimLink};
pub use engine::{run, Simulation};
pub use scenario::{config_from_scenario, run_scenario, UnsupportedError};
