//! Unit tests of the calibration: errors, ranges and targets, the simulator's median, disturbed
//! runs left out with their seeds, identical flows compared by rank.

use super::compare::{compare_point, summarize};
use super::report::flow_label;
use super::*;
use cclab_results::testing::RunBuilder;

/// A BBR flow with this goodput, retransmitted share and RTT (every percentile), added to `b`.
fn with_flow(b: RunBuilder, goodput: f64, retrans: f64, rtt: f64) -> RunBuilder {
    b.flow("bbr", goodput)
        .retrans_ratio(retrans)
        .rtt_ms(rtt, rtt, rtt, rtt)
}

/// A run of seed 1 over 1 s with one such flow.
fn run(goodput: f64, retrans: f64, rtt: f64) -> RunBuilder {
    with_flow(
        RunBuilder::new().seed(1).duration(1.0),
        goodput,
        retrans,
        rtt,
    )
    .jain(1.0)
}

fn run_with(goodput: f64, retrans: f64, rtt: f64) -> RunResult {
    run(goodput, retrans, rtt).build()
}

fn two_flows(a: f64, b: f64) -> RunResult {
    with_flow(run(a, 0.01, 10.0), b, 0.02, 10.0).build()
}

#[test]
fn errors_ranges_and_targets() {
    let sim = [run_with(95.0, 0.02, 50.0)];
    let sr: Vec<&RunResult> = sim.iter().collect();
    let k = [
        run_with(100.0, 0.01, 40.0),
        run_with(80.0, 0.012, 41.0),
        run_with(120.0, 0.0125, 42.0),
    ];
    let kr: Vec<&RunResult> = k.iter().collect();
    let p = compare_point("s", "-".into(), &[0], &sr, &kr);
    let g = &p[0].metrics[0];
    assert_eq!(g.kernel.as_ref().unwrap().median, 100.0);
    assert!((g.error.unwrap() + 0.05).abs() < 1e-12);
    assert_eq!(g.ok, Some(true));
    // Retransmits 0.02 vs median 0.012: 1.67x, outside 1.5x.
    assert_eq!(p[0].metrics[1].ok, Some(false));
    // RTT 50 vs 41: +22%, outside 15%.
    assert_eq!(p[0].metrics[2].ok, Some(false));
    let s = summarize(&p);
    assert!(!s.pass);
    assert_eq!(s.goodput_within_10pct, 1.0);
    // The terminal line names the metrics outside their targets.
    let cal = Calibration {
        cclab: String::new(),
        repeat: 3,
        kernel: true,
        kernel_from: None,
        points: p.clone(),
        summary: s,
        disturbed: Vec::new(),
        rerun_runs: 0,
        rerun_attempts: 0,
    };
    let line = text(&cal).lines().next().unwrap().to_string();
    assert!(line.ends_with("| outside target: retrans, rtt"), "{line}");
    // Outside 10% but inside the kernel's range still counts.
    let sim = [run_with(119.0, 0.0, 41.0)];
    let sr: Vec<&RunResult> = sim.iter().collect();
    let p = compare_point("s", "-".into(), &[0], &sr, &kr);
    assert_eq!(p[0].metrics[0].ok, Some(true));
    assert_eq!(p[0].metrics[1].ok, Some(false), "kernel 1.2% vs sim 0%");
}

#[test]
fn the_simulator_value_is_its_median_over_seeds() {
    let sim = [
        run_with(50.0, 0.01, 10.0),
        run_with(100.0, 0.01, 10.0),
        run_with(300.0, 0.01, 10.0),
    ];
    let sr: Vec<&RunResult> = sim.iter().collect();
    let k = [run_with(105.0, 0.01, 10.0)];
    let kr: Vec<&RunResult> = k.iter().collect();
    let g = &compare_point("s", "-".into(), &[0], &sr, &kr)[0].metrics[0];
    assert_eq!(g.sim, 100.0);
    assert_eq!(
        (g.sim_stats.min, g.sim_stats.max, g.sim_stats.n),
        (50.0, 300.0, 3)
    );
    assert_eq!(g.ok, Some(true));
}

#[test]
fn disturbed_kernel_runs_are_left_out_with_their_seeds() {
    // A kernel run of `seed` over 20 s that lost `steal_ms` of CPU time over 2 CPUs.
    let with = |r: RunBuilder, seed: u64, steal_ms: f64| {
        r.seed(seed).duration(20.0).lab(steal_ms, 2, 0).build()
    };
    // Seed 2's kernel run lost 22% of the CPU and its figure went the other way.
    let sim = [
        run_with(84.0, 0.01, 34.0),
        run_with(80.0, 0.01, 34.0),
        run_with(83.0, 0.01, 34.0),
    ];
    let k = [
        with(run(82.0, 0.01, 34.0), 1, 300.0),
        with(run(30.0, 0.01, 26.0), 2, 8900.0),
        with(run(83.0, 0.01, 34.0), 3, 500.0),
    ];
    let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
        (sim.iter().collect(), k.iter().collect());
    let d = leave_out_disturbed(&mut sr, &mut kr, false);
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].0, d[0].2), (2, false));
    assert!(d[0].1.contains("22%"), "{}", d[0].1);
    assert_eq!(kr.iter().map(|r| r.seed).collect::<Vec<_>>(), [1, 3]);
    assert_eq!(
        sr.iter()
            .map(|r| r.flows[0].goodput_bps)
            .collect::<Vec<_>>(),
        [84.0, 83.0],
        "the simulator's seed 2 goes too"
    );
    let g = &compare_point("s", "-".into(), &[0], &sr, &kr)[0].metrics[0];
    assert_eq!((g.kernel.as_ref().unwrap().n, g.ok), (2, Some(true)));
    // --keep-disturbed keeps everything, and so does a point with no quiet run.
    let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
        (sim.iter().collect(), k.iter().collect());
    assert!(leave_out_disturbed(&mut sr, &mut kr, true)[0].2);
    assert_eq!((sr.len(), kr.len()), (3, 3));
    let all_bad = [with(run(30.0, 0.01, 26.0), 1, 9000.0)];
    let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
        (sim[..1].iter().collect(), all_bad.iter().collect());
    assert!(leave_out_disturbed(&mut sr, &mut kr, false)[0].2);
    assert_eq!(kr.len(), 1);
    // Simulator-only or stored pre-`lab` kernel documents: nothing is disturbed.
    let plain = [run_with(82.0, 0.01, 34.0)];
    let (mut sr, mut kr): (Vec<&RunResult>, Vec<&RunResult>) =
        (sim[..1].iter().collect(), plain.iter().collect());
    assert!(leave_out_disturbed(&mut sr, &mut kr, false).is_empty());
}

#[test]
fn identical_flows_are_compared_by_rank() {
    // Flow 0 wins in the simulator, flow 1 in the kernel: by id both rows would be 70%
    // off; by rank they agree.
    let sim = [two_flows(60.0, 30.0)];
    let k = [two_flows(31.0, 61.0)];
    let (sr, kr): (Vec<&RunResult>, Vec<&RunResult>) = (sim.iter().collect(), k.iter().collect());
    let p = compare_point("s", "-".into(), &[0, 0], &sr, &kr);
    assert_eq!(
        (p[0].rank, p[1].rank, p[0].identical),
        (Some(1), Some(2), 2)
    );
    assert_eq!(p[0].metrics[0].kernel.as_ref().unwrap().median, 61.0);
    assert_eq!(p[1].metrics[0].kernel.as_ref().unwrap().median, 31.0);
    assert!(p.iter().all(|f| f.metrics[0].ok == Some(true)));
    // Each row's other metrics follow its flow: the kernel's faster flow had 2% retransmits.
    assert_eq!(p[0].metrics[1].kernel.as_ref().unwrap().median, 0.02);
    assert_eq!(p[0].metrics[1].sim, 0.01);
    assert_eq!(flow_label(&p[0]), "bbr #1/2");
    // Different flows keep their ids.
    let p = compare_point("s", "-".into(), &[0, 1], &sr, &kr);
    assert_eq!(p[0].rank, None);
    assert_eq!(p[0].metrics[0].kernel.as_ref().unwrap().median, 31.0);
    assert_eq!(p[0].metrics[0].ok, Some(false));
}

#[test]
fn identical_means_same_controller_start_size_and_rtt() {
    let text = "name = \"x\"\nduration = \"5s\"\n[link]\nrate = \"10mbit\"\nrtt = \"10ms\"\n\
        [[flows]]\ncc = \"cubic\"\ncount = 2\n[[flows]]\ncc = \"cubic\"\n\
        [[flows]]\ncc = \"cubic\"\nstart = \"1s\"\n[[flows]]\ncc = \"bbr\"\n";
    let file = cclab_scenario::ScenarioFile::from_str(text, "x.toml").unwrap();
    let pts = file.expand().unwrap();
    assert_eq!(identical_flows(&pts[0].scenario), vec![0, 0, 0, 3, 4]);
}
