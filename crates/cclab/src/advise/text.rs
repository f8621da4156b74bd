//! The advice in words: what was searched and assumed, the rows with their medians and
//! ranges over seeds, each change against the current setting in units, and what to run.

use super::collapse::{cc_name, Group, CC, SETTINGS};
use super::{Advice, Objective, Row};
use cclab_report::units;
use std::fmt::Write;

/// One value of setting `d` ([`SETTINGS`] order) in words.
pub(super) fn value(d: usize, v: u64) -> String {
    match d {
        0 => units::size(v as f64),
        1 => format!("{v} ms"),
        2 => if v == 1 { "paced" } else { "unpaced" }.into(),
        CC => cc_name(v).into(),
        _ => v.to_string(),
    }
}

/// A row's settings in words: "bbr3, iw 40, any pacing, any send buffer, any rto_min".
pub(super) fn setting(g: &Group, universe: &[Vec<u64>; 5]) -> String {
    let mut fixed = Vec::new();
    let mut any = Vec::new();
    // Printed as the settings are usually thought of: controller, window, pacing, buffer,
    // rto_min.
    for d in [CC, 3, 2, 0, 1] {
        if g.any(d, universe) {
            any.push(format!("any {}", SETTINGS[d]));
            continue;
        }
        let vals: Vec<String> = g.values[d].iter().map(|&v| value(d, v)).collect();
        let vals = vals.join(" or ");
        fixed.push(match d {
            CC => vals,
            3 => format!("iw {vals}"),
            2 => vals,
            0 => format!("send buffer {vals}"),
            _ => format!("rto_min {vals}"),
        });
    }
    fixed.extend(any);
    fixed.join(", ")
}

/// The change from `base` to `v` in units and words: "735 ms less, 52% less time",
/// "+45.2 Mbit/s, 45% more", "12.0 ms lower, 30% lower"; from twice on, as a factor
/// ("+41.7 Mbit/s, 15.6x", not "1459% more").
pub(super) fn change(obj: Objective, base: f64, v: f64) -> String {
    let rel = if base != 0.0 { v / base - 1.0 } else { 0.0 };
    if rel.abs() < 0.005 {
        return "same as current".into();
    }
    let pct = (rel.abs() * 100.0).round();
    let more = rel > 0.0;
    if rel >= 1.0 {
        let d = units_of(obj, v - base);
        return match obj {
            Objective::Fct(_) => format!("{d} more, {:.1}x the time", rel + 1.0),
            Objective::Goodput => format!("+{d}, {:.1}x", rel + 1.0),
            Objective::RttP99 => format!("{d} higher, {:.1}x", rel + 1.0),
        };
    }
    let d = (v - base).abs();
    match obj {
        Objective::Fct(_) => format!(
            "{} {}, {pct:.0}% {} time",
            units::secs(d),
            if more { "more" } else { "less" },
            if more { "more" } else { "less" }
        ),
        Objective::Goodput => format!(
            "{}{}, {pct:.0}% {}",
            if more { "+" } else { "-" },
            units::rate(d),
            if more { "more" } else { "less" }
        ),
        Objective::RttP99 => format!(
            "{} {}, {pct:.0}% {}",
            units::ms(d),
            if more { "higher" } else { "lower" },
            if more { "higher" } else { "lower" }
        ),
    }
}

/// A difference in the objective's unit.
fn units_of(obj: Objective, d: f64) -> String {
    match obj {
        Objective::Fct(_) => units::secs(d),
        Objective::Goodput => units::rate(d),
        Objective::RttP99 => units::ms(d),
    }
}

fn figure(obj: Objective, median: f64, min: f64, max: f64) -> String {
    if obj.fmt(min) == obj.fmt(max) {
        obj.fmt(median)
    } else {
        format!("{} [{} - {}]", obj.fmt(median), obj.fmt(min), obj.fmt(max))
    }
}

fn apply_block(s: &mut String, what: &str, i: usize, r: &Row) {
    let _ = writeln!(
        s,
        "{what} #{i}, {} ({}), on a Linux server as root:",
        r.setting, r.change
    );
    if r.commands.is_empty() {
        let _ = writeln!(s, "  (no command: see below)");
    }
    for c in &r.commands {
        let _ = writeln!(s, "  {c}");
    }
    for c in &r.caveats {
        let _ = writeln!(s, "  note: {c}");
    }
}

/// The advice for a person: what was searched and assumed, the best `top` rows, and what
/// to run for the best one (and for the best a stock kernel runs, when that differs).
pub fn text(a: &Advice, obj: Objective, top: usize) -> String {
    let mut s = String::new();
    let better = if a.lower_is_better { "lower" } else { "higher" };
    let _ = writeln!(
        s,
        "advise: {}, objective {} ({better} is better), simulator",
        a.scenario, a.objective
    );
    let _ = writeln!(
        s,
        "searched: {}: {} settings x {} seed(s) = {} runs",
        a.searched.join(", "),
        a.candidates,
        a.repeat,
        a.runs
    );
    if !a.left_out.is_empty() {
        let _ = writeln!(s, "left out: {}", a.left_out);
    }
    let _ = writeln!(s, "workload: {}", a.workload);
    let c = &a.current;
    let _ = writeln!(
        s,
        "current:  {} -> {}{}",
        c.candidate
            .label()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" "),
        figure(obj, c.predicted, c.predicted_min, c.predicted_max),
        c.measured
            .map(|m| format!(" (kernel {})", obj.fmt(m)))
            .unwrap_or_default()
    );
    let _ = writeln!(s, "          assumed: {}", a.current_from);
    let _ = writeln!(s, "held:     {}", a.held);
    let verified = a.rows.iter().any(|r| r.measured.is_some());
    let _ = writeln!(
        s,
        "settings that give the same result within noise share a row (\"any ...\"); figures: \
         median [min - max] over seeds{}",
        if verified {
            "; kernel: measured with --verify"
        } else {
            ""
        }
    );
    let shown: Vec<&Row> = a.rows.iter().take(top).collect();
    let w = shown
        .iter()
        .map(|r| r.setting.len())
        .max()
        .unwrap_or(8)
        .max(8);
    for (i, r) in shown.iter().enumerate() {
        let _ = write!(
            s,
            "{:>3}  {:<w$}  {}  {}",
            i + 1,
            r.setting,
            figure(obj, r.predicted, r.predicted_min, r.predicted_max),
            if r.current {
                "(current)".to_string()
            } else {
                r.change.clone()
            }
        );
        if r.settings > 1 {
            let _ = write!(s, "  [{} settings]", r.settings);
        }
        if !r.stock_kernel {
            let _ = write!(s, "  [not in stock kernels]");
        }
        if let (Some(m), Some(g)) = (r.measured, r.measured_gain) {
            let _ = write!(s, "  kernel {} ({:+.0}%)", obj.fmt(m), g * 100.0);
        }
        s.push('\n');
    }
    if a.rows.len() > top {
        let _ = writeln!(
            s,
            "  ... {} more rows (--top N shows more)",
            a.rows.len() - top
        );
    }
    let Some(best) = a.rows.first() else {
        return s;
    };
    if best.current || best.predicted_gain <= 0.0 {
        let _ = writeln!(
            s,
            "the current setting is already among the best of those tried"
        );
        return s;
    }
    apply_block(&mut s, "apply", 1, best);
    if !best.stock_kernel {
        if let Some((i, r)) = a
            .rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.stock_kernel && r.predicted_gain > 0.0 && !r.current)
        {
            apply_block(&mut s, "with a stock kernel: apply", i + 1, r);
        }
    }
    // The best that keeps the controller in use, when the advice so far changes it.
    let cc = &a.current.candidate.cc;
    if !best.controllers.contains(cc) {
        if let Some((i, r)) = a
            .rows
            .iter()
            .enumerate()
            .find(|(_, r)| r.controllers.contains(cc) && r.predicted_gain > 0.0 && !r.current)
        {
            apply_block(&mut s, &format!("keeping {cc}: apply"), i + 1, r);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_read_as_units_and_words() {
        let fct = Objective::Fct(1_000_000);
        assert_eq!(change(fct, 1.4, 0.665), "735 ms less, 52% less time");
        assert_eq!(change(fct, 1.0, 1.2), "200 ms more, 20% more time");
        assert_eq!(change(fct, 1.0, 1.001), "same as current");
        assert_eq!(
            change(Objective::Goodput, 100e6, 145e6),
            "+45.0 Mbit/s, 45% more"
        );
        assert!(change(Objective::RttP99, 40.0, 28.0).starts_with("12.0 ms lower, 30% lower"));
        // From twice on, a factor.
        assert_eq!(
            change(Objective::Goodput, 2.86e6, 44.6e6),
            "+41.7 Mbit/s, 15.6x"
        );
        assert_eq!(change(fct, 1.0, 3.0), "2.00 s more, 3.0x the time");
    }
}
