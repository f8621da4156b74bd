//! # cclab-sim: the `sim` backend
//!
//! A discrete-event simulator of a dumbbell: N TCP flows (the sans-IO sender and receiver of
//! `cclab-core`) share one path (`cclab-path`: the chains of elements the kernel lab's
//! element runs too). Time is simulated, in nanoseconds, so a
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
//! The event loop keeps one pending event per component (each path direction, each
//! endpoint's timer), so its heap stays small whatever the window.
//!
//! - [`engine`](Simulation): the event loop; `timers`: its event queue;
//! - [`hosts`](HostLatency): the end hosts' handling time and sleeping CPUs;
//! - `scenario`: a scenario becomes a [`SimConfig`]; [`SimBackend`]: the backend seam;
//! - `monitor` ([`IntervalStats`], [`AckStats`]) and `step` ([`drive`], [`run_driven`]): runs whose `external` flows
//!   are decided from outside at monitor intervals ([`Simulation::advance_to`],
//!   [`Simulation::take_interval`], [`Simulation::set_action`]), and ACK by ACK for a driver
//!   that watches a flow ([`Simulation::watch_acks`]).

mod backend;
mod config;
mod engine;
mod hosts;
mod monitor;
mod probe;
mod scenario;
mod step;
mod timers;

pub use backend::SimBackend;
pub use config::{SimConfig, SimFlow, SimProbe};
pub use engine::{run, Simulation};
pub use hosts::{HostLatency, HostWake};
pub use monitor::{AckStats, IntervalStats};
pub use scenario::{config_from_scenario, run_scenario, UnsupportedError};
pub use step::{drive, run_driven, Driver};
