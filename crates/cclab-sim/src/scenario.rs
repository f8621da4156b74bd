//! Scenario (the format every backend reads) -> simulator configuration.

use crate::config::{SimConfig, SimFlow, SimProbe};
use cclab_results::RunResult;
use cclab_scenario::Scenario;
use std::fmt;

/// A scenario asks for something this backend cannot do.
#[derive(Debug, Clone)]
pub struct UnsupportedError(pub String);

impl fmt::Display for UnsupportedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for UnsupportedError {}

/// Most flows one simulated run accepts (memory and time stay sane).
pub const MAX_FLOWS: u64 = 10_000;

/// Build the simulator configuration for one concrete scenario.
pub fn config_from_scenario(sc: &Scenario) -> Result<SimConfig, UnsupportedError> {
    if sc.total_flows() > MAX_FLOWS {
        return Err(UnsupportedError(format!(
            "{}: {} flows in one run; the simulator takes at most {MAX_FLOWS}",
            sc.name,
            sc.total_flows()
        )));
    }
    let mut flows = Vec::new();
    for (g, f) in sc.flows.iter().enumerate() {
        let cc = f
            .controller()
            .map_err(|e| UnsupportedError(format!("{}: {e}", sc.name)))?;
        for _ in 0..f.count {
            flows.push(SimFlow {
                cc: cc.clone(),
                group: g as u32,
                start_ns: f.start_ns,
                size: f.size_bytes,
                rtt_extra_ns: f.rtt_extra_ns,
                init_cwnd: f.init_cwnd,
                // `hosts.pacing`: every sender paced, as under the fq qdisc.
                pacing: sc.hosts.pacing.then_some(true),
                host: sc.hosts.tcp.clone(),
                ecn: f.ecn,
                accecn: f.accecn,
            });
        }
    }
    Ok(SimConfig {
        link: sc.link.path.clone(),
        buffer_bytes: sc.link.buffer_bytes(),
        mss: sc.link.mss,
        flows,
        probes: sc
            .probes
            .iter()
            .map(|p| SimProbe {
                group: p.group,
                start_ns: p.start_ns,
                interval_ns: p.interval_ns,
                size_bytes: p.size_bytes,
            })
            .collect(),
        duration_ns: sc.duration_ns,
        max_duration_ns: sc.run_limit_ns(),
        seed: sc.seed,
        series_interval_ns: 100_000_000,
        delayed_ack: true,
        tso: true,
        gro: crate::config::gro_for_rate(sc.link.path.rate_bps),
        hz: sc.hosts.hz,
        host_wake: sc.hosts.wake.map(|w| crate::hosts::HostWake {
            idle_ns: w.idle_ns,
            wake_ns: w.delay_ns,
            shared_cpu: w.shared_cpu,
        }),
        host_latency: (sc.hosts.latency_ns > 0 || sc.hosts.jitter_ns > 0).then_some(
            crate::hosts::HostLatency {
                base_ns: sc.hosts.latency_ns,
                mean_ns: sc.hosts.jitter_ns,
            },
        ),
        nic_rate_bps: sc.hosts.nic_rate_bps,
    })
}

/// Run one concrete scenario on the simulator.
pub fn run_scenario(sc: &Scenario) -> Result<RunResult, UnsupportedError> {
    let cfg = config_from_scenario(sc)?;
    Ok(crate::engine::run(&cfg))
}
