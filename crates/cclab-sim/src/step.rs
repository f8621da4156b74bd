//! A run whose external flows are decided from outside, one monitor interval at a time.
//!
//! [`run_driven`] is the loop every driver shares (the Python-driven controller, a Rust
//! test): advance to the next interval's end, show its statistics to the decider, apply its
//! decision, continue. A driver that needs to hold the run between decisions (the Gymnasium
//! environment) uses the same [`Simulation`] methods one step at a time.

use crate::config::SimConfig;
use crate::engine::Simulation;
use crate::monitor::IntervalStats;
use cclab_core::cc::external::Action;
use cclab_results::RunResult;

/// Run `cfg` to its end, asking `decide(flow, stats)` for each external flow's action at the
/// end of each of its monitor intervals. Its first error stops the run and is returned.
pub fn run_driven<E>(
    cfg: &SimConfig,
    mut decide: impl FnMut(usize, &IntervalStats) -> Result<Action, E>,
) -> Result<RunResult, E> {
    let mut sim = Simulation::new(cfg.clone());
    while let Some((f, t)) = sim.next_decision() {
        if !sim.advance_to(t) {
            break;
        }
        let Some(st) = sim.take_interval(f) else {
            break;
        };
        let a = decide(f, &st)?;
        // (`f` is external: next_decision only names external flows.)
        let _ = sim.set_action(f, &a);
    }
    let end = sim.end();
    sim.advance_to(end);
    sim.finish();
    Ok(sim.into_result())
}
