//! The backends `cclab` can run scenarios on, one line each. A new backend implements
//! [`cclab_results::Backend`] in its own crate or module and is added here.

use cclab_results::Backend;
use std::sync::Arc;

/// Every backend, the default first.
pub fn all() -> Vec<Arc<dyn Backend>> {
    vec![
        Arc::new(cclab_sim::SimBackend),
        Arc::new(cclab_kernel::KernelBackend::default()),
    ]
}

/// The backend called `name`; an unknown name is a one-line error listing the known ones.
pub fn by_name(name: &str) -> Result<Arc<dyn Backend>, String> {
    let all = all();
    let names: Vec<&str> = all.iter().map(|b| b.name()).collect();
    let known = names.join(", ");
    all.iter()
        .find(|b| b.name() == name)
        .cloned()
        .ok_or_else(|| format!("unknown backend \"{name}\" (available: {known})"))
}

/// "sim | kernel", for help texts.
pub fn names() -> String {
    all()
        .iter()
        .map(|b| b.name())
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The controllers a backend offers, as `cclab controllers --json` prints them: each with
/// its aliases, title, summary and parameters (name, default, kind, unit, help).
pub fn controllers_json(backend: &dyn Backend) -> serde_json::Value {
    use cclab_core::cc::{ParamKind, ParamValue};
    use serde_json::json;
    let v: Vec<serde_json::Value> = backend
        .controllers()
        .entries
        .iter()
        .map(|e| {
            let c = e.controller;
            let params = c.map_or(Vec::new(), |c| {
                c.params
                    .iter()
                    .map(|p| {
                        json!({
                            "name": p.name,
                            "default": match p.default {
                                ParamValue::Bool(b) => json!(b),
                                ParamValue::Int(i) => json!(i),
                            },
                            "kind": match p.kind {
                                ParamKind::Bool => json!("bool"),
                                ParamKind::Int { min, max } => json!({"int": [min, max]}),
                            },
                            "unit": p.unit,
                            "help": p.help,
                        })
                    })
                    .collect()
            });
            let bpf = cclab_kernel::controllers::bpf_summary(e);
            json!({
                "name": e.name,
                "aliases": e.aliases,
                "title": c.map(|c| c.title),
                "summary": c.map(|c| c.summary).or(bpf),
                "via": e.via,
                "params": params,
            })
        })
        .collect();
    let cat = backend.controllers();
    json!({"backend": backend.name(), "controllers": v, "bpf_objects": cat.bpf_objects})
}
