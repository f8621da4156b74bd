//! The simulator as a [`Backend`].

use crate::engine::Simulation;
use crate::scenario::config_from_scenario;
use cclab_results::trace::TraceWriter;
use cclab_results::{Backend, BackendError, RunContext, RunResult};
use cclab_scenario::{CcCatalog, Scenario};

/// The `sim` backend: deterministic, needs nothing from the machine, runs in parallel.
#[derive(Clone, Copy, Debug, Default)]
pub struct SimBackend;

impl Backend for SimBackend {
    fn name(&self) -> &'static str {
        "sim"
    }

    fn summary(&self) -> &'static str {
        "packet-level simulator of Linux TCP (deterministic, no privileges)"
    }

    fn unavailable(&self) -> Option<String> {
        None
    }

    fn controllers(&self) -> CcCatalog {
        CcCatalog::simulator()
    }

    fn parallel_runs(&self) -> usize {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    }

    fn run(&self, sc: &Scenario, ctx: &RunContext) -> Result<RunResult, BackendError> {
        let cfg = config_from_scenario(sc).map_err(|e| BackendError::new(e.to_string()))?;
        let mut sim = Simulation::new(cfg);
        if let Some(path) = &ctx.trace {
            let t = TraceWriter::create(path, self.name(), &sc.name, sc.seed)
                .map_err(|e| BackendError::new(e.to_string()))?;
            sim.set_trace(t);
        }
        sim.run_to_end();
        if let Some(t) = sim.take_trace() {
            t.finish().map_err(|e| BackendError::new(e.to_string()))?;
        }
        Ok(sim.into_result())
    }
}
