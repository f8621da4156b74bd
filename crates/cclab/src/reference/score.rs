//! Every published figure and every claim of a scenario's `[reference]`, scored on cclab's
//! runs.
//!
//! **Figures**: each `[[reference.results]]` row selects runs (its non-figure keys, as in
//! [`super::for_run`]); each figure it publishes is held against the median over those
//! runs (seeds) of the run's figure: `goodput` (the run's flows summed), `retransmits`
//! (summed), `fct` (the slowest flow's completion time), `rtt` (the flows' mean RTT p50). A
//! figure scores when cclab / published is within its tolerance either way: x1.5 for rates
//! and times ([`cclab_report::units::within`], the band the table marks), x2 for
//! retransmit counts, which swing with the seed and the path's details far more than rates.
//!
//! **Claims**: a report's qualitative statements ("CUBIC falls to about 1/6 of the link",
//! "BBR has about 30x CUBIC's retransmits") as relations between cclab's runs:
//! ```toml
//! [[reference.relations]]
//! claim = "at 1% loss CUBIC falls to about 1/6 of the link"   # the statement, in words
//! metric = "goodput"        # goodput, retransmits, fct, rtt_min, rtt_p50, rtt_p99, utilization
//! of = { "flows.cc" = "cubic", "link.loss" = "1%" }           # the runs measured
//! to = { "flows.cc" = "cubic", "link.loss" = 0 }              # optional: divided by these runs'
//! expect = 0.167            # about this value (a ratio when `to` is given) ...
//! within = 1.5              # ... within this factor either way (default 1.5)
//! # or bounds instead of (or beside) expect: min = 0.9, max = 1.1
//! at = [{ "link.rtt" = "6ms" }, { "link.rtt" = "99ms" }]   # optional: must hold at each,
//!                           # its keys added to both sides
//! ```
//! Each side's value is the median over the selected runs (seeds); a side that selects no
//! run, or runs of several matrix points, makes the claim "n/a" with the reason.

use super::{normalise, same, FIGURE_KEYS};
use cclab_report::units;
use cclab_results::{ResultsDoc, RunResult};
use cclab_scenario::units::{parse_rate, parse_time};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt::Write;

/// Tolerance of a retransmit count, cclab / published, either way.
pub const RETRANSMITS_WITHIN: f64 = 2.0;
/// Tolerance of a claim without its own `within`.
pub const CLAIM_WITHIN: f64 = 1.5;

/// One published figure beside cclab's.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    /// The row's selecting keys, as written: `flows.cc=cubic link.loss=1%`.
    pub select: String,
    pub figure: String,
    /// In SI units: bit/s, a count, seconds, milliseconds.
    pub published: f64,
    /// The median over the selected runs; `None` if no run matches.
    pub cclab: Option<f64>,
    pub ratio: Option<f64>,
    pub within: f64,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub miss: Option<String>,
}

/// Whether a claim holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Holds,
    Fails,
    /// The runs the claim needs are not there.
    Na,
}

/// One claim checked on cclab's runs.
#[derive(Clone, Debug, Serialize)]
pub struct Claim {
    pub claim: String,
    pub metric: String,
    /// What was wanted, in words: "x0.167 within x1.5", ">= x1.0".
    pub want: String,
    /// The value at each point of `at` (one entry without it): (label, value).
    pub values: Vec<(String, Option<f64>)>,
    pub verdict: Verdict,
    /// Why the verdict is n/a.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

/// A scenario's figures and claims.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Score {
    pub figures: Vec<Figure>,
    pub claims: Vec<Claim>,
}

impl Score {
    pub fn figures_ok(&self) -> usize {
        self.figures.iter().filter(|f| f.ok).count()
    }
    pub fn claims_hold(&self) -> usize {
        self.claims
            .iter()
            .filter(|c| c.verdict == Verdict::Holds)
            .count()
    }
    pub fn is_empty(&self) -> bool {
        self.figures.is_empty() && self.claims.is_empty()
    }
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// A metric of one run, in SI units (rates bit/s, times s, RTTs ms).
fn metric(name: &str, r: &RunResult) -> Result<Option<f64>, String> {
    let f = &r.flows;
    let mean = |g: &dyn Fn(&cclab_results::FlowResult) -> f64| {
        (!f.is_empty()).then(|| f.iter().map(g).sum::<f64>() / f.len() as f64)
    };
    Ok(match name {
        "goodput" => Some(f.iter().map(|x| x.goodput_bps).sum()),
        "retransmits" => Some(f.iter().map(|x| x.retransmits as f64).sum()),
        "fct" => f
            .iter()
            .map(|x| x.fct_s)
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| v.into_iter().reduce(f64::max)),
        "rtt" | "rtt_p50" => mean(&|x| x.rtt_ms.p50),
        "rtt_min" => mean(&|x| x.rtt_ms.min),
        "rtt_p99" => mean(&|x| x.rtt_ms.p99),
        "utilization" => Some(r.link.utilization),
        other => {
            return Err(format!(
                "unknown metric \"{other}\" (use goodput, retransmits, fct, rtt_min, rtt_p50, rtt_p99 or utilization)"
            ))
        }
    })
}

/// Whether run `r` has every key of `select` at the given value.
fn selects(select: &Map<String, Value>, r: &RunResult) -> bool {
    select.iter().all(|(k, v)| {
        r.resolved
            .get(k)
            .is_some_and(|have| same(&normalise(k, v), have))
    })
}

/// The median of `metric` over the runs `select` picks, or why there is none.
fn side(
    runs: &[RunResult],
    select: &Map<String, Value>,
    metric_name: &str,
) -> Result<Option<f64>, String> {
    let picked: Vec<&RunResult> = runs.iter().filter(|r| selects(select, r)).collect();
    if picked.is_empty() {
        return Err(format!("no run has {}", select_text(select)));
    }
    let points: std::collections::BTreeSet<String> = picked
        .iter()
        .map(|r| serde_json::to_string(&r.params).unwrap_or_default())
        .collect();
    if points.len() > 1 {
        return Err(format!(
            "{} selects {} matrix points: name more keys",
            select_text(select),
            points.len()
        ));
    }
    let mut v = Vec::new();
    for r in picked {
        match metric(metric_name, r)? {
            Some(x) => v.push(x),
            None => return Ok(None),
        }
    }
    Ok(median(v))
}

fn select_text(select: &Map<String, Value>) -> String {
    select
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A published figure in SI units (bit/s, count, seconds, milliseconds for `rtt`).
fn published(figure: &str, v: &Value) -> Option<f64> {
    match (figure, v) {
        (_, Value::Number(n)) => n.as_f64(),
        ("goodput", Value::String(s)) => parse_rate(s).ok().map(|b| b as f64),
        ("fct", Value::String(s)) => parse_time(s).ok().map(|ns| ns as f64 / 1e9),
        ("rtt", Value::String(s)) => parse_time(s).ok().map(|ns| ns as f64 / 1e6),
        _ => None,
    }
}

/// Scores the figures and claims of `reference` on the runs of `doc`.
pub fn score(reference: &Value, doc: &ResultsDoc) -> Score {
    let mut s = Score::default();
    let miss_all = reference.get("miss").and_then(Value::as_str);
    let rows = reference.get("results").and_then(Value::as_array);
    for row in rows.into_iter().flatten().filter_map(Value::as_object) {
        let select: Map<String, Value> = row
            .iter()
            .filter(|(k, _)| !FIGURE_KEYS.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for fig in ["goodput", "retransmits", "fct", "rtt"] {
            let Some(p) = row.get(fig).and_then(|v| published(fig, v)) else {
                continue;
            };
            let mut v = Vec::new();
            for r in doc.runs.iter().filter(|r| selects(&select, r)) {
                if let Ok(Some(x)) = metric(fig, r) {
                    v.push(x);
                }
            }
            let cclab = median(v);
            let ratio = cclab.filter(|_| p > 0.0).map(|c| c / p);
            let within = if fig == "retransmits" {
                RETRANSMITS_WITHIN
            } else {
                units::WITHIN
            };
            s.figures.push(Figure {
                select: select_text(&select),
                figure: fig.into(),
                published: p,
                cclab,
                ratio,
                within,
                ok: ratio.is_some_and(|r| (1.0 / within..=within).contains(&r)),
                miss: row
                    .get("miss")
                    .and_then(Value::as_str)
                    .or(miss_all)
                    .map(str::to_string),
            });
        }
    }
    let rels = reference.get("relations").and_then(Value::as_array);
    for rel in rels.into_iter().flatten() {
        s.claims.push(claim(rel, &doc.runs));
    }
    s
}

/// Checks one `[[reference.relations]]` entry.
fn claim(rel: &Value, runs: &[RunResult]) -> Claim {
    let text = |k: &str| rel.get(k).and_then(Value::as_str).map(str::to_string);
    let num = |k: &str| rel.get(k).and_then(Value::as_f64);
    let table = |k: &str| rel.get(k).and_then(Value::as_object).cloned();
    let metric_name = text("metric").unwrap_or_else(|| "goodput".into());
    let expect = num("expect");
    let within = num("within").unwrap_or(CLAIM_WITHIN);
    let (lo, hi) = (num("min"), num("max"));
    let mut want = Vec::new();
    if let Some(e) = expect {
        want.push(format!("x{e} within x{within}"));
    }
    if let Some(l) = lo {
        want.push(format!(">= x{l}"));
    }
    if let Some(h) = hi {
        want.push(format!("<= x{h}"));
    }
    let mut c = Claim {
        claim: text("claim").unwrap_or_else(|| "(no claim text)".into()),
        metric: metric_name.clone(),
        want: want.join(", "),
        values: Vec::new(),
        verdict: Verdict::Na,
        why: None,
    };
    let Some(of) = table("of") else {
        c.why = Some("the relation has no `of` table of selecting keys".into());
        return c;
    };
    if want.is_empty() {
        c.why = Some("the relation has no expect, min or max".into());
        return c;
    }
    let to = table("to");
    // The points the claim must hold at: each `at` table adds its keys to both sides.
    let at: Vec<Map<String, Value>> = match rel.get("at") {
        None => vec![Map::new()],
        Some(Value::Array(a)) if !a.is_empty() && a.iter().all(Value::is_object) => {
            a.iter().filter_map(|v| v.as_object().cloned()).collect()
        }
        Some(_) => {
            c.why = Some("`at` must be a list of tables of selecting keys".into());
            return c;
        }
    };
    let mut holds = true;
    for extra in at {
        let label = extra
            .iter()
            .map(|(k, v)| units::param(k, &normalise(k, v)))
            .collect::<Vec<_>>()
            .join(" ");
        let with = |m: &Map<String, Value>| {
            let mut m = m.clone();
            m.extend(extra.clone());
            m
        };
        let value = side(runs, &with(&of), &metric_name).and_then(|a| match &to {
            None => Ok(a),
            Some(t) => side(runs, &with(t), &metric_name)
                .map(|b| a.zip(b).filter(|(_, b)| *b != 0.0).map(|(a, b)| a / b)),
        });
        match value {
            Err(why) => {
                c.why = Some(why);
                return c;
            }
            Ok(v) => {
                let ok = v.is_some_and(|v| {
                    expect.is_none_or(|e| e > 0.0 && (1.0 / within..=within).contains(&(v / e)))
                        && lo.is_none_or(|l| v >= l)
                        && hi.is_none_or(|h| v <= h)
                });
                holds &= ok;
                c.values.push((label, v));
            }
        }
    }
    c.verdict = if holds {
        Verdict::Holds
    } else {
        Verdict::Fails
    };
    c
}

/// A claim's value: "x0.087", "x12.3", three significant digits.
fn fig(v: f64) -> String {
    if v <= 0.0 || !v.is_finite() {
        return format!("x{v}");
    }
    // Rounding may carry into the next power of ten (0.9999 is "1.00").
    let decimals = (2 - (v * (1.0 + 5e-4)).log10().floor() as i32).clamp(0, 6) as usize;
    format!("x{v:.decimals$}")
}

/// A published or measured figure in its unit.
fn value_text(figure: &str, v: f64, unit: Option<&str>) -> String {
    match figure {
        "goodput" => match unit {
            Some(u) => units::rate_in(v, u),
            None => units::rate(v),
        },
        "fct" => units::secs(v),
        "rtt" => units::ms(v),
        _ => format!("{v:.0}"),
    }
}

/// The score as terminal lines, indented under a scenario's table: the figures the table
/// does not show (it shows goodput, marking misses with `!`), the claims with their
/// verdicts, and a score line.
pub fn text(s: &Score, unit: Option<&str>) -> String {
    let mut o = String::new();
    let others: Vec<&Figure> = s.figures.iter().filter(|f| f.figure != "goodput").collect();
    if !others.is_empty() {
        let _ = writeln!(
            o,
            "  published figures beside the table's goodput (ratio = cclab / published, median over seeds):"
        );
        let w = others.iter().map(|f| f.select.len()).max().unwrap_or(0);
        for f in others {
            let cclab = f
                .cclab
                .map_or("no run".into(), |c| value_text(&f.figure, c, unit));
            let _ = writeln!(
                o,
                "    {:<4}  {:<w$}  {:<11}  cclab {:>10}  published {:>10}  {} (within x{})",
                if f.ok { "ok" } else { "MISS" },
                f.select,
                f.figure,
                cclab,
                value_text(&f.figure, f.published, unit),
                f.ratio.map(units::ratio_text).unwrap_or_default(),
                f.within
            );
            if !f.ok {
                let _ = writeln!(
                    o,
                    "          {}",
                    match &f.miss {
                        Some(m) => format!("known reason: {m}"),
                        None =>
                            "no known reason recorded (a `miss` in the [reference] row says why)"
                                .into(),
                    }
                );
            }
        }
    }
    if !s.claims.is_empty() {
        let _ = writeln!(o, "  the report's claims, checked on cclab's runs:");
        for c in &s.claims {
            let verdict = match c.verdict {
                Verdict::Holds => "holds",
                Verdict::Fails => "FAILS",
                Verdict::Na => "n/a",
            };
            let got = match &c.why {
                Some(why) => why.clone(),
                None => c
                    .values
                    .iter()
                    .map(|(l, v)| {
                        let v = v.map_or("no value".into(), fig);
                        if l.is_empty() {
                            v
                        } else {
                            format!("{v} at {l}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let _ = writeln!(o, "    {verdict:<5}  {}", c.claim);
            let _ = writeln!(o, "           {}: {got}; wanted {}", c.metric, c.want);
        }
    }
    if !s.is_empty() {
        let _ = writeln!(o, "  score: {}", totals(&[s]));
    }
    o
}

/// "goodput 7 of 9 within x1.5, retransmits 1 of 2 within x2; claims 3 of 5 hold".
pub fn totals(scores: &[&Score]) -> String {
    let mut kinds: Vec<(&str, f64, usize, usize)> = Vec::new();
    for f in scores.iter().flat_map(|s| &s.figures) {
        match kinds.iter_mut().find(|k| k.0 == f.figure) {
            Some(k) => {
                k.2 += f.ok as usize;
                k.3 += 1;
            }
            None => kinds.push((&f.figure, f.within, f.ok as usize, 1)),
        }
    }
    let mut parts: Vec<String> = kinds
        .iter()
        .map(|(name, w, ok, n)| format!("{name} {ok} of {n} within x{w}"))
        .collect();
    let c: usize = scores.iter().map(|s| s.claims.len()).sum();
    if c > 0 {
        let h: usize = scores.iter().map(|s| s.claims_hold()).sum();
        let na: usize = scores
            .iter()
            .flat_map(|s| &s.claims)
            .filter(|c| c.verdict == Verdict::Na)
            .count();
        parts.push(format!(
            "claims {h} of {c} hold{}",
            if na > 0 {
                format!(" ({na} n/a)")
            } else {
                String::new()
            }
        ));
    }
    let ok: usize = scores.iter().map(|s| s.figures_ok()).sum();
    let n: usize = scores.iter().map(|s| s.figures.len()).sum();
    format!(
        "{ok} of {n} published figures ({}); {}",
        parts[..kinds.len()].join(", "),
        parts[kinds.len()..].join("")
    )
    .trim_end_matches("; ")
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};
    use serde_json::json;

    /// Two seeds of each of cubic and bbr at two losses; bbr retransmits 12x CUBIC's.
    fn doc() -> ResultsDoc {
        let mut d = DocBuilder::new().scenario("s");
        for (loss, cubic, bbr) in [(0.0, 9.0e9, 9.5e9), (0.01, 0.8e9, 9.4e9)] {
            for seed in [1, 2] {
                for (cc, g, rtx) in [("cubic", cubic, 100), ("bbr", bbr, 1200)] {
                    d = d.run(
                        RunBuilder::new()
                            .seed(seed)
                            .param("link.loss", loss)
                            .param("flows.cc", cc)
                            .resolved("link.loss", loss)
                            .resolved("flows.cc", cc)
                            .flow(cc, g * (1.0 + seed as f64 * 0.01))
                            .retransmits(rtx)
                            .utilization(g / 1e10),
                    );
                }
            }
        }
        d.build()
    }

    #[test]
    fn figures_scored_with_their_own_tolerance() {
        let reference = json!({"unit": "Gbit/s", "miss": "a reason", "results": [
            {"flows.cc": "cubic", "link.loss": 0, "goodput": "7gbit", "retransmits": 40},
            {"flows.cc": "bbr", "link.loss": 0, "goodput": "20gbit", "retransmits": 1000}
        ]});
        let s = score(&reference, &doc());
        let v: Vec<(&str, bool)> = s
            .figures
            .iter()
            .map(|f| (f.figure.as_str(), f.ok))
            .collect();
        // cubic's goodput x1.3 ok, its retransmits x2.5 miss (tolerance x2); bbr's goodput
        // x0.48 misses, its retransmits x1.2 score.
        assert_eq!(
            v,
            [
                ("goodput", true),
                ("retransmits", false),
                ("goodput", false),
                ("retransmits", true)
            ]
        );
        assert_eq!(s.figures[1].within, RETRANSMITS_WITHIN);
        assert_eq!(s.figures[1].miss.as_deref(), Some("a reason"));
        let t = text(&s, Some("Gbit/s"));
        assert!(
            t.contains("MISS  flows.cc=cubic link.loss=0  retransmits"),
            "{t}"
        );
        assert!(!t.contains("  goodput  "), "the table shows goodput: {t}");
        assert!(
            t.contains("score: 2 of 4 published figures (goodput 1 of 2 within x1.5, retransmits 1 of 2 within x2)"),
            "{t}"
        );
    }

    /// A relation that holds, one that fails, one over several points (`at`), and one that
    /// cannot be checked; the total adds them up across files.
    #[test]
    fn relations_get_verdicts_and_totals_add_up() {
        let reference = json!({"relations": [
            {"claim": "BBR ~12x CUBIC's retransmits", "metric": "retransmits",
             "of": {"flows.cc": "bbr"}, "to": {"flows.cc": "cubic"},
             "at": [{"link.loss": 0}, {"link.loss": "1%"}], "expect": 12, "within": 1.5},
            {"claim": "CUBIC ~1/6 of its lossless rate at 1%", "metric": "goodput",
             "of": {"flows.cc": "cubic", "link.loss": "1%"},
             "to": {"flows.cc": "cubic", "link.loss": 0}, "expect": 0.167},
            {"claim": "both fill the link", "metric": "utilization",
             "of": {"link.loss": 0}, "at": [{"flows.cc": "cubic"}, {"flows.cc": "bbr"}],
             "min": 0.9},
            {"claim": "bbr alone", "of": {"flows.cc": "bbr"}, "min": 1}
        ]});
        let s = score(&reference, &doc());
        let verdicts: Vec<Verdict> = s.claims.iter().map(|c| c.verdict).collect();
        assert_eq!(
            verdicts,
            [Verdict::Holds, Verdict::Fails, Verdict::Holds, Verdict::Na]
        );
        assert_eq!(s.claims[0].values.len(), 2);
        assert_eq!(s.claims[0].values[1].0, "1%");
        // CUBIC at 1% is 0.8 / 9.0 of its lossless rate: x0.089, outside x0.167 / 1.5.
        let v = s.claims[1].values[0].1.unwrap();
        assert!((v - 0.8 / 9.0).abs() < 1e-3, "{v}");
        assert!(s.claims[3]
            .why
            .as_deref()
            .unwrap()
            .contains("2 matrix points"));
        let t = text(&s, None);
        assert!(t.contains("FAILS  CUBIC ~1/6"), "{t}");
        assert!(t.contains("x0.0889; wanted x0.167 within x1.5"), "{t}");
        assert!(t.contains("claims 2 of 4 hold (1 n/a)"), "{t}");
        let other = score(
            &json!({"results": [{"flows.cc": "bbr", "link.loss": "1%", "goodput": "9gbit"}]}),
            &doc(),
        );
        assert_eq!(
            totals(&[&s, &other]),
            "1 of 1 published figures (goodput 1 of 1 within x1.5); claims 2 of 4 hold (1 n/a)"
        );
    }
}
