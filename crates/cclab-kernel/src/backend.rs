//! The kernel lab as a [`Backend`].

use crate::{mode_for, run_scenario_detailed, KernelError, KernelOptions};
use cclab_results::{Backend, BackendError, RunContext, RunResult};
use cclab_scenario::{CcCatalog, Scenario};
use serde_json::{json, Value};

/// The `kernel` backend: this machine's Linux TCP, one run at a time.
#[derive(Clone, Debug, Default)]
pub struct KernelBackend {
    pub opts: KernelOptions,
}

impl From<KernelError> for BackendError {
    fn from(e: KernelError) -> Self {
        let signal = match e {
            KernelError::Interrupted(sig) => Some(sig),
            _ => None,
        };
        BackendError {
            message: e.to_string(),
            signal,
        }
    }
}

impl Backend for KernelBackend {
    fn name(&self) -> &'static str {
        "kernel"
    }

    fn summary(&self) -> &'static str {
        "this machine's Linux TCP in network namespaces, through cclab's user-space path element (root)"
    }

    fn unavailable(&self) -> Option<String> {
        crate::lab_unavailable(&[]).map(|why| {
            format!("the kernel backend cannot run here: {why}; --backend sim needs nothing")
        })
    }

    fn controllers(&self) -> CcCatalog {
        crate::controllers::catalog()
    }

    fn parallel_runs(&self) -> usize {
        1
    }

    fn refuses(&self, sc: &Scenario) -> Option<String> {
        crate::scenario_unsupported(sc)
    }

    fn run(&self, sc: &Scenario, ctx: &RunContext) -> Result<RunResult, BackendError> {
        if let Some(f) = sc.flows.iter().find(|f| !f.cc_params.is_empty()) {
            return Err(KernelError::Unsupported(format!(
                "{}: cc_params ({}) are the simulator's: a kernel's controller parameters are module parameters of the host, which cclab does not change; use --backend sim",
                sc.name,
                f.cc_params.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>().join(", ")
            ))
            .into());
        }
        let opts = KernelOptions {
            trace: ctx.trace.clone(),
            ..self.opts.clone()
        };
        let run = run_scenario_detailed(sc, &opts)?;
        let mut r = run.result;
        let mode = opts.mode.unwrap_or_else(|| mode_for(&sc.link));
        let s = &mut r.settings;
        s.insert("kernel.element_mode".into(), json!(mode.name()));
        s.insert(
            "kernel.element_timing".into(),
            json!(format!("{:?}", opts.timing).to_lowercase()),
        );
        s.insert("kernel.element_pinned".into(), json!(opts.pin));
        s.insert("kernel.rps_steered".into(), json!(run.steered));
        // What the lab applied in the hosts' namespaces (sysctl = value).
        let applied: serde_json::Map<String, Value> = crate::topo::host_sysctls(&sc.hosts.tcp)
            .into_iter()
            .map(|(_, k, v)| (k.to_string(), json!(v)))
            .collect();
        s.insert("kernel.host_sysctls".into(), Value::Object(applied));
        s.insert("kernel.cc_used".into(), json!(run.cc_used));
        if let Some(b) = run.bpf {
            s.insert("kernel.bpf".into(), b);
        }
        if let Ok(rel) = std::fs::read_to_string("/proc/sys/kernel/osrelease") {
            s.insert("kernel.release".into(), json!(rel.trim()));
        }
        Ok(r)
    }
}
