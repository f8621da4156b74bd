//! A small driver of the kernel backend for tests, benchmarks and debugging:
//!
//! ```text
//! cclab-kernel-probe run --scenario FILE [--set KEY=VALUE]... [--seed N] [--sample-ms MS --series-ms MS] [--trace FILE]   (the first matrix point)
//! cclab-kernel-probe run [--rate BPS] [--rtt-ms MS] [--bdp X] [--loss P] [--cc NAME] [--secs S] [--flows N] [--timing spin|sleep|hybrid] [--mode segments|gso]
//! cclab-kernel-probe rtt [--rtt-ms MS] [--n N] [--timing ...]
//! cclab-kernel-probe bench [--secs S] [--timing ...] [--mode segments|gso]
//! cclab-kernel-probe doctor | clean
//! ```
//! `run` prints the RunResult (without series), the element's statistics and the sender
//! namespace's TCP counters (`TcpExt.TCPSackRecovery`, `TcpExt.TCPLossProbes`, ...) as JSON.

use cclab_kernel::*;
use cclab_scenario::{Buffer, FlowSpec, LinkSpec, Scenario};

fn arg<T: std::str::FromStr>(args: &[String], name: &str, def: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(def)
}

fn timing(args: &[String]) -> ElementTiming {
    match arg(args, "--timing", "hybrid".to_string()).as_str() {
        "spin" => ElementTiming::Spin,
        "sleep" => ElementTiming::Sleep,
        _ => ElementTiming::Hybrid,
    }
}

fn mode(args: &[String]) -> Option<ElementMode> {
    match arg(args, "--mode", "auto".to_string()).as_str() {
        "gso" => Some(ElementMode::Gso),
        "segments" => Some(ElementMode::Segments),
        _ => None,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = args.first().cloned().unwrap_or_default();
    let code = match cmd.as_str() {
        "run" => {
            let from_file = args
                .iter()
                .position(|a| a == "--scenario")
                .and_then(|i| args.get(i + 1))
                .map(|path| {
                    let mut file =
                        cclab_scenario::ScenarioFile::from_file(path).unwrap_or_else(|e| {
                            eprintln!("error: {e}");
                            std::process::exit(2)
                        });
                    for w in args.windows(2).filter(|w| w[0] == "--set") {
                        if let Err(e) = file.apply_override(&w[1]) {
                            eprintln!("error: {e}");
                            std::process::exit(2);
                        }
                    }
                    let mut sc = file
                        .expand()
                        .map(|mut p| p.remove(0).scenario)
                        .unwrap_or_else(|e| {
                            eprintln!("error: {e}");
                            std::process::exit(2)
                        });
                    sc.seed = arg(&args, "--seed", sc.seed);
                    sc
                });
            let sc = from_file.unwrap_or_else(|| Scenario {
                name: "probe".into(),
                description: None,
                duration_ns: Some((arg(&args, "--secs", 3.0f64) * 1e9) as u64),
                seed: arg(&args, "--seed", 1u64),
                link: LinkSpec {
                    path: cclab_path::LinkDesc {
                        rate_bps: (arg(&args, "--rate", 10e6f64) as u64) as f64,
                        rtt_ns: (arg(&args, "--rtt-ms", 20.0f64) * 1e6) as u64,
                        loss: arg(&args, "--loss", 0.0f64),
                        ack_loss: arg(&args, "--ack-loss", 0.0f64),
                        ecn_threshold_ns: None,
                        loss_burst: 1.0,
                        ..Default::default()
                    },
                    buffer: Buffer::Bdp(arg(&args, "--bdp", 1.0f64)),
                    mss: 1448,
                },
                hosts: Default::default(),
                flows: vec![FlowSpec {
                    cc_params: vec![],
                    cc: arg(&args, "--cc", "cubic".to_string()),
                    count: arg(&args, "--flows", 1u32),
                    start_ns: 0,
                    size_bytes: None,
                    rtt_extra_ns: 0,
                    init_cwnd: 10,
                    ecn: false,
                    accecn: false,
                }],
                probes: Vec::new(),
                reference: None,
            });
            let opts = KernelOptions {
                timing: timing(&args),
                realtime: args.iter().any(|a| a == "--rt"),
                mode: mode(&args),
                sample_interval_ns: (arg(&args, "--sample-ms", 10.0f64) * 1e6) as u64,
                series_interval_ns: (arg(&args, "--series-ms", 100.0f64) * 1e6) as u64,
                trace: args
                    .windows(2)
                    .find(|w| w[0] == "--trace")
                    .map(|w| std::path::PathBuf::from(&w[1])),
                ..Default::default()
            };
            let keep_series = args.iter().any(|a| a == "--series-ms");
            match run_scenario_detailed(&sc, &opts) {
                Ok(r) => {
                    let mut res = r.result.clone();
                    if !keep_series {
                        res.series = None;
                    }
                    let e = &r.element;
                    let q = |h: &cclab_results::Histogram, q: f64| {
                        h.quantile(q).unwrap_or(0) as f64 / 1e3
                    };
                    let turnaround: Vec<f64> = [0.1, 0.5, 0.9, 0.99]
                        .iter()
                        .map(|&x| q(&e.turnaround, x))
                        .collect();
                    println!(
                        "{}",
                        serde_json::json!({
                            "result": res,
                            "cc_used": r.cc_used,
                            "steered": r.steered,
                            "lab": r.result.lab,
                            "sender_mib": r.sender_mib.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
                            "element": {
                                "data_pkts_in": e.data_pkts_in, "acks_in": e.acks_in,
                                "drops_random": e.drops_random, "drops_buffer": e.drops_buffer,
                                "max_packet": e.max_packet, "packets_read": e.packets_read, "gso_splits": e.gso_splits, "burst_segs": e.burst_segs,
                                "rtt_elem_ms_p50": q(&e.flow_rtt[0], 0.5) / 1e3, "rtt_elem_ms_p99": q(&e.flow_rtt[0], 0.99) / 1e3,
                                "lateness_us_p50": q(&e.lateness, 0.5), "lateness_us_p99": q(&e.lateness, 0.99),
                                "lateness_us_max": e.lateness.max().unwrap_or(0) as f64 / 1e3,
                                "stalls": e.stalls,
                                "turnaround_us": turnaround,
                                "turnaround_n": e.turnaround.count(),
                            }
                        })
                    );
                    0
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    1
                }
            }
        }
        "rtt" => {
            let rtt = (arg(&args, "--rtt-ms", 10.0f64) * 1e6) as u64;
            match idle_rtt(rtt, arg(&args, "--n", 20usize), timing(&args)) {
                Ok(mut v) => {
                    v.sort();
                    let ms: Vec<f64> = v.iter().map(|x| *x as f64 / 1e6).collect();
                    println!(
                        "{}",
                        serde_json::json!({ "set_ms": rtt as f64 / 1e6, "samples_ms": ms })
                    );
                    0
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    1
                }
            }
        }
        "bench" => {
            let secs = arg(&args, "--secs", 2.0f64);
            let modes = match mode(&args) {
                Some(m) => vec![m],
                None => vec![ElementMode::Segments, ElementMode::Gso],
            };
            let mut code = 0;
            for m in modes {
                for d in [0u64, 50_000_000] {
                    code = code.max(print_sweep(capacity_sweep(
                        m,
                        d,
                        secs,
                        timing(&args),
                        &Default::default(),
                    )));
                }
            }
            code
        }
        "tcpbench" => {
            let secs = arg(&args, "--secs", 4.0f64);
            let m = mode(&args).unwrap_or(ElementMode::Gso);
            let rtt = (arg(&args, "--rtt-ms", 50.0f64) * 1e6) as u64;
            print_sweep(tcp_capacity_sweep(m, rtt, secs, timing(&args)))
        }
        "doctor" => {
            print!("{}", doctor());
            0
        }
        "clean" => match clean_stale() {
            Ok(r) => {
                println!("{r}");
                0
            }
            Err(e) => {
                eprintln!("error: {e}");
                1
            }
        },
        _ => {
            eprintln!("usage: cclab-kernel-probe run|rtt|bench|doctor|clean [options]");
            2
        }
    };
    std::process::exit(code);
}

/// Print a capacity sweep (one JSON line per point, then the summary); exit code 0 or 1.
fn print_sweep(r: Result<Capacity, KernelError>) -> i32 {
    match r {
        Ok(c) => {
            for p in &c.points {
                println!("{}", serde_json::to_string(p).unwrap());
            }
            println!("{c}");
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
