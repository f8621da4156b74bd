//! A run whose external flows are decided from outside, one monitor interval at a time.
//!
//! [`drive`] is the loop every driver shares (the Python-driven controller, a Rust test):
//! advance to the next interval's end, show its statistics to the [`Driver`], apply its
//! decision, continue; for a flow the driver watches, every ACK is shown too (the per-ACK
//! hooks: slow, the run stops at each ACK event). [`run_driven`] is the same with a closure
//! for the intervals alone. A driver that needs to hold the run between decisions (the
//! Gymnasium environment) uses the same [`Simulation`] methods one step at a time.

use crate::config::SimConfig;
use crate::engine::Simulation;
use crate::monitor::{AckStats, IntervalStats};
use cclab_core::cc::external::Action;
use cclab_results::RunResult;

/// What decides a run's external flows.
pub trait Driver {
    type Error;
    /// The action for external flow `flow` at the end of one of its monitor intervals.
    fn on_interval(&mut self, flow: usize, st: &IntervalStats) -> Result<Action, Self::Error>;
    /// Whether `flow`'s ACKs go to [`Self::on_ack`] one by one (asked once per external
    /// flow before the run; no by default: watching costs a stop per ACK event).
    fn watch_acks(&mut self, _flow: usize) -> Result<bool, Self::Error> {
        Ok(false)
    }
    /// One ACK of a watched flow; an action (applied at once, at the ACK's time, after the
    /// sender processed the ACKs that arrived with it) or `None` to keep the decision.
    fn on_ack(&mut self, _flow: usize, _ack: &AckStats) -> Result<Option<Action>, Self::Error> {
        Ok(None)
    }
}

/// A closure deciding at intervals only.
struct Intervals<F>(F);

impl<E, F: FnMut(usize, &IntervalStats) -> Result<Action, E>> Driver for Intervals<F> {
    type Error = E;
    fn on_interval(&mut self, flow: usize, st: &IntervalStats) -> Result<Action, E> {
        (self.0)(flow, st)
    }
}

/// Run `cfg` to its end, asking `decide(flow, stats)` for each external flow's action at the
/// end of each of its monitor intervals. Its first error stops the run and is returned.
pub fn run_driven<E>(
    cfg: &SimConfig,
    decide: impl FnMut(usize, &IntervalStats) -> Result<Action, E>,
) -> Result<RunResult, E> {
    drive(cfg, &mut Intervals(decide))
}

/// Run `cfg` to its end with `d` deciding its external flows (see [`Driver`]). Its first
/// error stops the run and is returned.
pub fn drive<D: Driver + ?Sized>(cfg: &SimConfig, d: &mut D) -> Result<RunResult, D::Error> {
    let mut sim = Simulation::new(cfg.clone());
    let mut watched = Vec::new();
    for f in 0..cfg.flows.len() {
        if sim.is_external(f) && d.watch_acks(f)? {
            // (`f` is external, so watching it cannot fail.)
            let _ = sim.watch_acks(f);
            watched.push(f);
        }
    }
    let mut acks = Vec::new();
    while let Some((f, t)) = sim.next_decision() {
        let running = sim.advance_to(t);
        if sim.acks_waiting() {
            show_acks(&mut sim, &watched, d, &mut acks)?;
            if running {
                continue;
            }
        }
        if !running {
            break;
        }
        let Some(st) = sim.take_interval(f) else {
            break;
        };
        let a = d.on_interval(f, &st)?;
        // (`f` is external: next_decision only names external flows.)
        let _ = sim.set_action(f, &a);
    }
    let end = sim.end();
    while sim.advance_to(end) && sim.acks_waiting() {
        show_acks(&mut sim, &watched, d, &mut acks)?;
    }
    if sim.acks_waiting() {
        show_acks(&mut sim, &watched, d, &mut acks)?;
    }
    sim.finish();
    Ok(sim.into_result())
}

/// Show the watched flows' waiting ACKs to `d`, applying its actions as they come.
fn show_acks<D: Driver + ?Sized>(
    sim: &mut Simulation,
    watched: &[usize],
    d: &mut D,
    acks: &mut Vec<AckStats>,
) -> Result<(), D::Error> {
    for &w in watched {
        sim.take_acks(w, acks);
        for a in acks.iter() {
            if let Some(action) = d.on_ack(w, a)? {
                let _ = sim.set_action(w, &action);
            }
        }
    }
    Ok(())
}
