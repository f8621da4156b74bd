//! Run the first matrix point of a scenario file on the simulator and print the result with
//! the senders' counters (recoveries, probes, RTOs): the simulator's side of
//! `cclab-kernel-probe run --scenario FILE`, for fidelity work.
//!
//! `cargo run --release -p cclab-sim --example diag -- FILE [--set KEY=VALUE]... [--seed N] [--segments] [--series-ms MS] [--hz HZ] [--trace FILE]`
//! (`--trace FILE` writes a packet trace in the format `cclab run --trace` and the probe write.)
use cclab_scenario::ScenarioFile;
use cclab_sim::{config_from_scenario, Simulation};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: diag FILE [--set KEY=VALUE]... [--seed N]");
        std::process::exit(2)
    };
    let fail = |e: &dyn std::fmt::Display| -> ! {
        eprintln!("error: {e}");
        std::process::exit(2)
    };
    let mut file = ScenarioFile::from_file(path).unwrap_or_else(|e| fail(&e));
    for w in args.windows(2).filter(|w| w[0] == "--set") {
        file.apply_override(&w[1]).unwrap_or_else(|e| fail(&e));
    }
    let mut sc = file
        .expand()
        .map(|mut p| p.remove(0).scenario)
        .unwrap_or_else(|e| fail(&e));
    if let Some(w) = args.windows(2).find(|w| w[0] == "--seed") {
        sc.seed = w[1].parse().unwrap_or_else(|e| fail(&e));
    }
    let mut cfg = config_from_scenario(&sc).unwrap_or_else(|e| fail(&e));
    // As the kernel element's segments mode: no TSO bursts, no GRO.
    if args.iter().any(|a| a == "--segments") {
        cfg.tso = false;
        cfg.gro = false;
    }
    if let Some(w) = args.windows(2).find(|w| w[0] == "--hz") {
        cfg.hz = w[1].parse().unwrap_or_else(|e| fail(&e));
    }
    let series_ms = args
        .windows(2)
        .find(|w| w[0] == "--series-ms")
        .and_then(|w| w[1].parse::<f64>().ok());
    if let Some(ms) = series_ms {
        cfg.series_interval_ns = (ms * 1e6) as u64;
    }
    let mut sim = Simulation::new(cfg);
    if let Some(w) = args.windows(2).find(|w| w[0] == "--trace") {
        let t = cclab_results::trace::TraceWriter::create(
            std::path::Path::new(&w[1]),
            "sim",
            &sc.name,
            sc.seed,
        )
        .unwrap_or_else(|e| fail(&e));
        sim.set_trace(t);
    }
    sim.run_to_end();
    if let Some(t) = sim.take_trace() {
        t.finish().unwrap_or_else(|e| fail(&e));
    }
    let stats = sim.sender_stats();
    let mut r = sim.into_result();
    if series_ms.is_none() {
        r.series = None;
    }
    let stats: Vec<_> = stats
        .iter()
        .map(|s| {
            serde_json::json!({"segments_sent": s.segments_sent, "retransmits": s.retransmits,
                "recoveries": s.recoveries, "tlp": s.tlp_count, "rto": s.rto_count, "bursts": s.bursts, "burst_segs": s.burst_segs})
        })
        .collect();
    println!("{}", serde_json::json!({ "result": r, "sender": stats }));
}
