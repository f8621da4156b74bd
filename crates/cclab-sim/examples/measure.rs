//! Figures quoted in the issue notes, measured on the current model.
use cclab_sim::{run, SimConfig};
const MS: u64 = 1_000_000;
const S: u64 = 1_000_000_000;
fn main() {
    for p in [1e-4, 1e-3, 1e-2] {
        let m = 1448.0 * 8.0 / 0.1 * 1.22 / f64::sqrt(p);
        let (mut half, mut whole) = (vec![], vec![]);
        for seed in 1..=4 {
            let mut c = SimConfig::single("reno", 100e6, 100 * MS, 1.0, p, 60 * S);
            c.seed = seed;
            let r = run(&c);
            half.push(r.series.as_ref().unwrap().mean_goodput_between(30.0, 60.0)[0] / m);
            whole.push(r.flows[0].goodput_bps / m);
        }
        let mean = half.iter().sum::<f64>() / 4.0;
        println!("mathis p={p}: second-half ratio per seed {half:.2?} mean {mean:.2}; whole-run {whole:.2?}");
    }
    for cc in ["reno", "cubic", "bbr"] {
        let r = run(&SimConfig::single(cc, 100e6, 50 * MS, 1.0, 0.0, 30 * S));
        let u =
            r.series.as_ref().unwrap().mean_goodput_between(5.0, 30.0)[0] / 100e6 * 1500.0 / 1448.0;
        println!(
            "lossless {cc}: util after 5 s {u:.3}, rtt p50 {:.1} ms = {:.2}x base",
            r.flows[0].rtt_ms.p50,
            r.flows[0].rtt_ms.p50 / 50.0
        );
    }
    for cc in ["bbr", "cubic"] {
        let r = run(&SimConfig::single(cc, 100e6, 100 * MS, 1.0, 0.01, 60 * S));
        println!("1% loss {cc}: {:.2} Mbit/s", r.flows[0].goodput_bps / 1e6);
    }
    let mut c = SimConfig::single("bbr", 100e6, 50 * MS, 1.0, 0.0, 60 * S);
    let mut f2 = c.flows[0].clone();
    f2.start_ns = 2 * S;
    c.flows.push(f2);
    let r = run(&c);
    let g = r.series.as_ref().unwrap().mean_goodput_between(30.0, 60.0);
    println!(
        "two bbr: jain second half {:.3} ({:.1} / {:.1} Mbit/s)",
        cclab_results::jain(&g),
        g[0] / 1e6,
        g[1] / 1e6
    );
}
