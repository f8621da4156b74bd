use cclab_sim::{run, SimConfig};
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let cc = a[1].as_str();
    let rate: f64 = a[2].parse().unwrap();
    let rtt_us: f64 = a[3].parse::<f64>().unwrap() * 1000.0;
    let loss: f64 = a[4].parse().unwrap();
    let dur: u64 = a[5].parse().unwrap();
    let cfg = SimConfig::single(
        cc,
        rate,
        (rtt_us * 1000.0) as u64,
        1.0,
        loss,
        dur * 1_000_000_000,
    );
    let t = std::time::Instant::now();
    let r = run(&cfg);
    let el = t.elapsed().as_secs_f64();
    let f = &r.flows[0];
    println!("{} goodput {:.2} Mbit/s util {:.3} retx {} ({:.4}) rtt p50 {:.1} ms min {:.1} rto {} drops b{} r{} wall {:.3}s pkts {}",
        f.cc, f.goodput_bps / 1e6, r.link.utilization, f.retransmits, f.retrans_ratio, f.rtt_ms.p50, f.rtt_ms.min, f.rto_count, r.link.drops_buffer, r.link.drops_random, el, r.link.forwarded_pkts);
    if a.len() > 6 {
        let s = r.series.unwrap();
        for (i, t) in s.t_s.iter().enumerate().step_by(a[6].parse().unwrap()) {
            let fs = &s.flows[0];
            println!(
                "{t:.1} gp {:.1} cwnd {} infl {} pace {:.1} srtt {:.1} q {}",
                fs.goodput_bps[i] / 1e6,
                fs.cwnd_pkts[i],
                fs.inflight_pkts[i],
                fs.pacing_rate_bps[i] / 1e6,
                fs.srtt_ms[i],
                s.link_queue_bytes[i]
            );
        }
    }
}
