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
