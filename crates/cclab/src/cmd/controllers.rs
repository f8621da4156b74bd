//! `cclab controllers`: the registered controllers, their aliases and parameters.

use cclab::backends;
use cclab::runner::Error;
use clap::Args;

#[derive(Args)]
pub(crate) struct ControllersArgs {
    /// The controllers of this backend (sim: the simulator's registry; kernel: this kernel's)
    #[arg(long, default_value = "sim", value_name = "NAME")]
    backend: String,
    /// Print JSON instead of text
    #[arg(long)]
    json: bool,
}

/// Runs `cclab controllers`.
pub(crate) fn run(a: ControllersArgs) -> Result<(), Error> {
    let backend = backends::by_name(&a.backend).map_err(Error::new)?;
    let cat = backend.controllers();
    if a.json {
        let v = backends::controllers_json(backend.as_ref());
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        return Ok(());
    }
    println!(
        "controllers of the {} backend ({}):",
        backend.name(),
        cat.owner
    );
    for e in &cat.entries {
        let aliases = if e.aliases.is_empty() {
            String::new()
        } else {
            format!(" (or {})", e.aliases.join(", "))
        };
        match e.controller {
            Some(c) => {
                println!("\n  {}{aliases}: {}", e.name, c.summary);
                if c.params.is_empty() {
                    println!("    no parameters");
                }
                for p in c.params {
                    let range = match p.kind {
                        cclab_core::cc::ParamKind::Bool => "true|false".to_string(),
                        cclab_core::cc::ParamKind::Int { min, max } => format!("{min}..{max}"),
                    };
                    let unit = if p.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", p.unit)
                    };
                    println!(
                        "    cc_params.{:<22} default {}{unit} ({range}): {}",
                        p.name, p.default, p.help
                    );
                }
            }
            None => match cclab_kernel::controllers::bpf_summary(e) {
                Some(summary) => println!(
                    "\n  {} (bpf){aliases}: {summary}; registered in the kernel for each run that uses it (no parameters)",
                    e.name
                ),
                None => println!("\n  {}{aliases}: the kernel's own (no parameters)", e.name),
            },
        }
    }
    if cat.bpf_objects {
        println!("\n  bpf:PATH: your own BPF struct_ops object (a tcp_congestion_ops built with clang -target bpf; docs/kernel.md)");
    }
    println!("\nqueue disciplines for link.aqm (docs/scenarios.md):");
    for name in cclab_path::AQMS.iter().map(|a| a.name) {
        let aliases: Vec<&str> = cclab_scenario::AQM_ALIASES
            .iter()
            .filter(|(_, n)| *n == name)
            .map(|(a, _)| *a)
            .collect();
        if aliases.is_empty() {
            println!("  {name}");
        } else {
            println!("  {name} (or {})", aliases.join(", "));
        }
    }
    println!("  (names match in any case, with - or _)");
    Ok(())
}
