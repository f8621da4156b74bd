//! Tests of the SVG plots.

use super::axis::{linear_ticks, log_ticks, tick_label, Axis, Unit};
use super::bar::{bar_chart, group_labels, Bar, BarChart};
use super::line::{downsample, line_chart, Line, LineChart};
use super::scatter::{scatter, Scatter, ScatterPoint};
use super::{text_w, text_w_bold};

#[test]
fn nice_linear_ticks() {
    let (a, b, t) = linear_ticks(0.0, 9.65, 5, true);
    assert_eq!((a, b), (0.0, 10.0));
    assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
    let (_, _, t) = linear_ticks(0.0, 0.37, 5, true);
    assert_eq!(t.len(), 5, "{t:?}"); // 0, 0.1 .. 0.4
    assert!((t[4] - 0.4).abs() < 1e-12);
}

#[test]
fn log_ticks_end_at_the_data() {
    let (a, b, t) = log_ticks(1e-4, 0.01);
    assert!((a - 1e-4).abs() < 1e-18 && (b - 0.01).abs() < 1e-15);
    assert_eq!(t.len(), 7, "{t:?}"); // 1, 2, 5 x 1e-4 .. 1e-2
    let (a, b, t) = log_ticks(6.0, 40.0);
    assert_eq!((a, b), (6.0, 40.0));
    assert_eq!(t, vec![10.0, 20.0]);
    // Five decades: decades only.
    let (_, _, t) = log_ticks(1.0, 1e5);
    assert_eq!(t.len(), 6);
    // Fewer than two ticks inside: the ends.
    assert_eq!(log_ticks(3.0, 8.0), (3.0, 8.0, vec![3.0, 5.0, 8.0]));
    // One value: a tick at it, the axis around it.
    let (a, b, t) = log_ticks(0.01, 0.01);
    assert!(
        a < 0.01 && b > 0.01 && t.len() == 1 && (t[0] - 0.01).abs() < 1e-12,
        "{a} {b} {t:?}"
    );
}

#[test]
fn labels() {
    assert_eq!(tick_label(2.5), "2.5");
    assert_eq!(tick_label(0.001), "0.001");
    assert_eq!(tick_label(1000.0), "1000");
    assert_eq!(tick_label(0.0), "0");
}

#[test]
fn downsample_keeps_extremes() {
    let t: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
    let mut v = vec![1.0; 10_000];
    v[5_000] = 99.0;
    let d = downsample(&t, &v, 1000);
    assert!(d.len() <= 1000);
    assert!(d.iter().any(|p| p.1 == 99.0));
    assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn chart_has_lines_legend_and_units() {
    let mut c = LineChart::new(
        "goodput",
        Axis::new("time", Unit::Secs).range(0.0, 5.0),
        Axis::new("goodput", Unit::Rate),
    );
    c.lines.push(Line::new(
        "flow 0 (cubic)",
        "#2563eb",
        vec![(0.1, 9e9), (0.2, 9.6e9)],
    ));
    let s = line_chart(&c, "t");
    assert!(s.contains("goodput (Gbit/s)"), "{s}");
    assert!(s.contains("time (s)"));
    assert!(s.contains("flow 0 (cubic)"));
    assert!(s.contains("class=\"ln\""));
}

#[test]
fn scatter_has_diagonal_band_error_bars_and_tips() {
    let c = Scatter {
        title: "goodput".into(),
        x_label: "kernel".into(),
        y_label: "simulator".into(),
        unit: Unit::Rate,
        points: vec![
            ScatterPoint {
                x: 9e6,
                y: 9.2e6,
                x_range: Some((8e6, 9.5e6)),
                color: "#1c64d8".into(),
                tip: "cal-a · cubic".into(),
            },
            ScatterPoint {
                x: 90e6,
                y: 0.0,
                x_range: None,
                color: "#e8590c".into(),
                tip: "cal-b · bbr".into(),
            },
        ],
        band: 0.1,
        legend: vec![("cubic".into(), "#1c64d8".into())],
        width: 500.0,
        height: 460.0,
    };
    let s = scatter(&c, "s");
    assert_eq!(s.matches("class=\"pt\"").count(), 2);
    assert_eq!(s.matches("class=\"eb\"").count(), 1);
    assert!(s.contains("class=\"diag\"") && s.contains("class=\"band\""));
    assert!(s.contains("<title>cal-a · cubic</title>") && s.contains("±10%"));
    assert!(
        s.contains("kernel (Mbit/s)") && s.contains("simulator (Mbit/s)"),
        "{s}"
    );
    // A 0 is drawn hollow at the axis minimum.
    assert!(s.contains("fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#e8590c\""));
}

/// The `d` of every `class="ln"` path.
fn paths(svg: &str) -> Vec<&str> {
    svg.split("class=\"ln\" d=\"")
        .skip(1)
        .map(|p| p.split('"').next().unwrap())
        .collect()
}

#[test]
fn loss_axis_ends_at_the_data_and_no_line_crosses_the_break() {
    let mut c = LineChart::new(
        "g vs loss",
        Axis::new("loss", Unit::Loss).log(),
        Axis::new("goodput", Unit::Rate),
    );
    let mut l = Line::new(
        "cubic",
        "#000",
        vec![(0.0, 47e6), (0.005, 10e6), (0.01, 5e6), (0.02, 3.5e6)],
    );
    l.band = vec![(0.0, 46e6, 48e6), (0.005, 9e6, 11e6), (0.01, 4e6, 6e6)];
    c.lines.push(l);
    let s = line_chart(&c, "t");
    // Ticks 0, 0.5, 1, 2 (%), nothing up to 10%.
    let xt = |t: &str| format!("text-anchor=\"middle\">{t}<");
    for t in ["0", "0.5", "1", "2"] {
        assert!(s.contains(&xt(t)), "tick {t}: {s}");
    }
    assert!(!s.contains(&xt("10")) && !s.contains(&xt("5")), "{s}");
    // One line from 0.5% on: three points, one move.
    let p = paths(&s);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].matches('M').count(), 1, "{}", p[0]);
    assert_eq!(p[0].matches(',').count(), 3, "{}", p[0]);
    // The band: an error bar at 0, an area from 0.5% on (no area across the break).
    assert_eq!(s.matches("fill-opacity=\"0.16\"").count(), 1);
    assert_eq!(s.matches("h8M").count(), 1);
    // A linear x axis ends at the data too (no 0, no round-up past 4).
    let mut c = LineChart::new(
        "g vs buffer",
        Axis {
            from_zero: false,
            ..Axis::new("buffer (× BDP)", Unit::Plain)
        },
        Axis::new("goodput", Unit::Rate),
    );
    c.lines.push(Line::new(
        "bbr",
        "#000",
        vec![(0.5, 1e6), (1.0, 2e6), (4.0, 3e6)],
    ));
    let s = line_chart(&c, "t");
    let xs: Vec<&str> = s
        .split("text-anchor=\"middle\">")
        .skip(1)
        .map(|t| t.split('<').next().unwrap())
        .collect();
    assert_eq!(xs, ["1", "2", "3", "4"]);
}

/// (x, y, text) of every value label.
fn value_labels(svg: &str) -> Vec<(f64, f64, String)> {
    svg.split("<text class=\"vl\" x=\"")
        .skip(1)
        .map(|t| {
            let x: f64 = t.split('"').next().unwrap().parse().unwrap();
            let y: f64 = t
                .split("y=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let text = t.split('>').nth(1).unwrap().split('<').next().unwrap();
            (x, y, text.to_string())
        })
        .collect()
}

fn bars(values: &[(usize, &str, f64)], groups: usize, width: f64) -> BarChart {
    BarChart {
        title: "g".into(),
        y: Axis::new("goodput", Unit::Rate),
        groups: (0..groups)
            .map(|g| format!("loss {g}%\nrtt 231 ms"))
            .collect(),
        x_label: String::new(),
        bars: values
            .iter()
            .map(|(g, cc, v)| Bar {
                group: *g,
                color: "#000".into(),
                series: cc.to_string(),
                value: *v,
                spread: None,
                reference: None,
                label: format!("{:.1} Mbit/s", v / 1e6),
                tip: String::new(),
            })
            .collect(),
        width,
        height: 300.0,
    }
}

#[test]
fn bar_labels_never_overlap_or_leave_the_chart() {
    // Wide enough: full labels.
    let c = bars(&[(0, "cubic", 47.0e6), (0, "bbr", 46.3e6)], 1, 640.0);
    let v = value_labels(&bar_chart(&c, "b"));
    assert_eq!(v.len(), 2);
    assert!(v.iter().all(|l| l.2.ends_with("Mbit/s")), "{v:?}");
    // Narrow slots (the "47.0 Mbi46.3 Mbit/s" case): numbers only, apart.
    let many: Vec<(usize, &str, f64)> = (0..8)
        .flat_map(|g| [(g, "cubic", 47.0e6), (g, "bbr", 46.3e6)])
        .collect();
    let c = bars(&many, 8, 640.0);
    let s = bar_chart(&c, "b");
    let v = value_labels(&s);
    assert!(!v.is_empty());
    assert!(v.iter().all(|l| !l.2.contains("Mbit")), "{v:?}");
    let boxes: Vec<(f64, f64, f64)> = v
        .iter()
        .map(|(x, y, t)| {
            let w = text_w_bold(t, 11.0);
            (x - w / 2.0, x + w / 2.0, *y)
        })
        .collect();
    for (i, a) in boxes.iter().enumerate() {
        assert!(a.0 >= 0.0 && a.1 <= 640.0 && a.2 > 20.0, "{a:?}");
        for b in &boxes[i + 1..] {
            let apart = a.1 <= b.0 || b.1 <= a.0 || (a.2 - b.2).abs() >= 13.0;
            assert!(apart, "labels overlap: {a:?} {b:?}");
        }
    }
    // Group labels too wide for their slot are split (key over value) to fit.
    let (lines, size) = group_labels(&c.groups, 64.0);
    assert_eq!(
        (&lines[0][..], size),
        (&["loss 0%", "rtt 231 ms"].map(String::from)[..], 11.0)
    );
    let (lines, size) = group_labels(&c.groups, 40.0);
    assert_eq!(lines[0], ["loss", "0%", "rtt", "231 ms"]);
    assert!(lines[0].iter().all(|l| text_w(l, size) <= 40.0), "{size}");
}

#[test]
fn log_axis_places_zero_left_of_first_decade() {
    let mut c = LineChart::new(
        "g vs loss",
        Axis::new("loss", Unit::Loss).log(),
        Axis::new("goodput", Unit::Rate),
    );
    c.lines.push(Line::new(
        "cubic",
        "#000",
        vec![(0.0, 9e9), (0.001, 5e9), (0.01, 2e8)],
    ));
    let s = line_chart(&c, "t");
    assert!(s.contains("loss (%)"));
    assert!(
        s.contains(">0.1<") && s.contains(">1<") && s.contains(">0<"),
        "{s}"
    );
}
