//! Throughput against delay per controller (as Pantheon plots it): where each controller
//! sits between "fast" and "low latency" on this path. One marker per controller and matrix
//! point at the median over seeds of its goodput and of its flows' RTT p95, bars from the
//! seeds' minimum to maximum on both axes, and a hollow diamond at the median RTT p50 (the
//! dashed segment from it to the marker is the RTT's spread within the runs).

use super::lookup::{ccs_of, goodput_of, is_cc_key, median_min_max, params_label};
use super::palette::{Palette, NEUTRAL};
use crate::plot::{Axis, Line, LineChart, Marker, Unit};
use crate::units;
use cclab_results::{ResultsDoc, RunResult};

/// One controller at one point over its seeds: goodput (bit/s) and RTT p50 and p95 (ms).
struct Spot {
    cc: String,
    point: String,
    goodput: Vec<f64>,
    p50: Vec<f64>,
    p95: Vec<f64>,
}

/// Mean over `cc`'s flows of a run of one RTT percentile; None when they have no samples.
fn rtt_of(run: &RunResult, cc: &str, pick: fn(&cclab_results::Percentiles) -> f64) -> Option<f64> {
    let v: Vec<f64> = run
        .flows
        .iter()
        .filter(|f| f.cc == cc)
        .map(|f| pick(&f.rtt_ms))
        .filter(|v| *v > 0.0)
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn spots(doc: &ResultsDoc) -> Vec<Spot> {
    let mut out: Vec<Spot> = Vec::new();
    for r in &doc.runs {
        let point = params_label(r, &is_cc_key);
        for cc in ccs_of(r) {
            let (Some(p50), Some(p95)) = (rtt_of(r, &cc, |p| p.p50), rtt_of(r, &cc, |p| p.p95))
            else {
                continue;
            };
            let i = match out.iter().position(|s| s.cc == cc && s.point == point) {
                Some(i) => i,
                None => {
                    out.push(Spot {
                        cc: cc.clone(),
                        point: point.clone(),
                        goodput: Vec::new(),
                        p50: Vec::new(),
                        p95: Vec::new(),
                    });
                    out.len() - 1
                }
            };
            out[i].goodput.push(goodput_of(r, &cc));
            out[i].p50.push(p50);
            out[i].p95.push(p95);
        }
    }
    out
}

/// The chart, for a document whose runs have two or more controllers with RTT samples;
/// None otherwise.
pub(crate) fn chart(doc: &ResultsDoc, pal: &Palette) -> Option<LineChart> {
    let spots = spots(doc);
    let mut ccs: Vec<&str> = Vec::new();
    for s in &spots {
        if !ccs.contains(&s.cc.as_str()) {
            ccs.push(&s.cc);
        }
    }
    if ccs.len() < 2 {
        return None;
    }
    let max_seeds = spots.iter().map(|s| s.goodput.len()).max().unwrap_or(1);
    let title = format!(
        "{}: goodput vs delay per controller ({})",
        doc.scenario,
        if max_seeds > 1 {
            format!("median of {max_seeds} seeds, bars min–max")
        } else {
            "one seed".to_string()
        }
    );
    let mut c = LineChart::new(
        &title,
        Axis::new("RTT p95 of the controller's flows", Unit::Ms),
        Axis::new("goodput", Unit::Rate),
    );
    for cc in &ccs {
        let col = pal.color(cc);
        let mine: Vec<&Spot> = spots.iter().filter(|s| s.cc == *cc).collect();
        let mut main = Line::new(cc, &col, Vec::new());
        main.line = false;
        main.marker = Marker::Dot;
        let mut p50 = Line::new(&format!("{cc} RTT p50"), &col, Vec::new());
        p50.line = false;
        p50.marker = Marker::Diamond;
        p50.legend = false;
        for s in mine {
            let (g, glo, ghi) = median_min_max(&s.goodput);
            let (d95, dlo, dhi) = median_min_max(&s.p95);
            let (d50, _, _) = median_min_max(&s.p50);
            let at = if s.point.is_empty() {
                String::new()
            } else {
                format!(" at {}", s.point)
            };
            main.points.push((d95, g));
            main.tips.push(format!(
                "{cc}{at}: goodput {} [{} – {}], RTT p95 {} [{} – {}], RTT p50 {} ({} seed{})",
                units::rate(g),
                units::rate(glo),
                units::rate(ghi),
                units::ms(d95),
                units::ms(dlo),
                units::ms(dhi),
                units::ms(d50),
                s.goodput.len(),
                if s.goodput.len() == 1 { "" } else { "s" }
            ));
            p50.points.push((d50, g));
            p50.tips
                .push(format!("{cc}{at}: RTT p50 {}", units::ms(d50)));
            let mut seg = Line::new("", &col, vec![(d50, g), (d95, g)]);
            seg.dash = crate::plot::DOT;
            seg.width = 1.0;
            seg.legend = false;
            c.lines.push(seg);
            if s.goodput.len() > 1 {
                for pts in [vec![(dlo, g), (dhi, g)], vec![(d95, glo), (d95, ghi)]] {
                    let mut bar = Line::new("", &col, pts);
                    bar.width = 1.2;
                    bar.legend = false;
                    c.lines.push(bar);
                }
            }
        }
        c.lines.push(p50);
        c.lines.push(main);
    }
    c.notes
        .push(("RTT p95".into(), NEUTRAL.into(), Marker::Dot, ""));
    c.notes
        .push(("RTT p50".into(), NEUTRAL.into(), Marker::Diamond, ""));
    Some(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};

    #[test]
    fn one_marker_per_controller_at_its_medians() {
        let mut b = DocBuilder::new().scenario("t");
        for (seed, gp, p95) in [(1, 10e6, 80.0), (2, 12e6, 90.0), (3, 11e6, 100.0)] {
            for (cc, k) in [("cubic", 1.0), ("bbr", 0.5)] {
                b = b.run(
                    RunBuilder::new()
                        .seed(seed)
                        .param("flows.cc", cc)
                        .flow(cc, gp * k)
                        .rtt_ms(40.0, 50.0 * k, p95 * k, 120.0),
                );
            }
        }
        let doc = b.build();
        let pal = Palette::new(["cubic", "bbr"]);
        let c = chart(&doc, &pal).expect("two controllers");
        let main: Vec<&Line> = c.lines.iter().filter(|l| l.legend).collect();
        assert_eq!(main.len(), 2);
        assert_eq!(main[0].name, "cubic");
        assert_eq!(main[0].points, vec![(90.0, 11e6)]);
        assert_eq!(main[1].points, vec![(45.0, 5.5e6)]);
        assert_eq!(main[1].color, pal.color("bbr"));
        // Bars over the seeds: RTT 80-100 ms at the median goodput, goodput 10-12 Mbit/s.
        assert!(c
            .lines
            .iter()
            .any(|l| l.points == vec![(80.0, 11e6), (100.0, 11e6)]));
        assert!(c
            .lines
            .iter()
            .any(|l| l.points == vec![(90.0, 10e6), (90.0, 12e6)]));
        assert!(c.title.contains("median of 3 seeds"), "{}", c.title);
    }

    #[test]
    fn one_controller_has_no_chart() {
        let doc = DocBuilder::new()
            .run(
                RunBuilder::new()
                    .flow("cubic", 1e6)
                    .rtt_ms(1.0, 2.0, 3.0, 4.0),
            )
            .build();
        assert!(chart(&doc, &Palette::new(["cubic"])).is_none());
    }
}
