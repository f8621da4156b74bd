//! Measurements of real hosts (`backend: "host"`, written by `cclab perf` and `cclab get`).
//!
//! A real path has no emulated bottleneck: its link fields (utilisation, queue, drops, rate)
//! are unknown, not zero, and the other modules leave them out ([`link_known`]). `cclab perf`
//! stores the path fitted to its probe phase in the document's `fit`; it is read here as plain
//! JSON (the report reads results only, not the crate that measures), defensively: a missing
//! or malformed part is left out, unknown keys are ignored.

use crate::plot::esc;
use crate::units;
use cclab_results::ResultsDoc;
use serde_json::{Map, Value};
use std::fmt::Write;

/// The backend name of measurements of real hosts.
pub const BACKEND: &str = "host";

/// Whether `doc` measured a real path.
pub fn is_host(doc: &ResultsDoc) -> bool {
    doc.backend == BACKEND
}

/// Whether `doc`'s link fields mean something (an emulated bottleneck), or are unknown.
pub fn link_known(doc: &ResultsDoc) -> bool {
    !is_host(doc)
}

/// One fitted estimate: the value, its 95% interval (`high` None: a lower bound only) and how
/// it was read.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    pub value: f64,
    pub low: f64,
    pub high: Option<f64>,
    pub how: String,
}

/// What the host measured with a controller: mean goodput over its runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Measured {
    pub cc: String,
    pub goodput_bps: f64,
    pub runs: u64,
    /// Each run's goodput (empty in fits from before it was recorded).
    pub runs_bps: Vec<f64>,
}

/// The simulator's goodput for a controller on the fitted path.
#[derive(Clone, Debug, PartialEq)]
pub struct Predicted {
    pub cc: String,
    /// Mean over the seeds; the lowest and highest seed.
    pub goodput_bps: f64,
    pub min_bps: f64,
    pub max_bps: f64,
    pub seeds: u64,
    pub measured_bps: Option<f64>,
    /// predicted / measured.
    pub ratio: Option<f64>,
    /// The predicted mean with the loss at its interval's two ends, lower first (none in
    /// fits from before it was recorded).
    pub loss_range: Option<(f64, f64)>,
}

/// The parts of a document's `fit` the report shows.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub peer: Option<String>,
    pub direction: Option<String>,
    pub rate_bps: Estimate,
    pub rtt_s: Estimate,
    pub loss: Estimate,
    pub buffer_bytes: Estimate,
    /// Segments the loss probe retransmitted and sent.
    pub lost_sent: Option<(u64, u64)>,
    pub duration_s: Option<f64>,
    pub streams: Option<u64>,
    pub notes: Vec<String>,
    /// None when the list is malformed (its table is left out).
    pub measured: Option<Vec<Measured>>,
    pub predictions: Option<Vec<Predicted>>,
}

fn num(m: &Map<String, Value>, k: &str) -> Option<f64> {
    m.get(k).and_then(Value::as_f64).filter(|x| x.is_finite())
}

fn text(m: &Map<String, Value>, k: &str) -> Option<String> {
    m.get(k).and_then(Value::as_str).map(String::from)
}

fn estimate(v: Option<&Value>) -> Option<Estimate> {
    let m = v?.as_object()?;
    let high = match m.get("high") {
        None | Some(Value::Null) => None,
        Some(h) => Some(h.as_f64().filter(|x| x.is_finite())?),
    };
    Some(Estimate {
        value: num(m, "value")?,
        low: num(m, "low")?,
        high,
        how: text(m, "how")?,
    })
}

/// Every element of the array `v` through `f`; an absent list is empty, None when it or one
/// of its elements is malformed.
fn list<T>(v: Option<&Value>, f: impl Fn(&Map<String, Value>) -> Option<T>) -> Option<Vec<T>> {
    match v {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(v) => v.as_array()?.iter().map(|e| f(e.as_object()?)).collect(),
    }
}

/// A number or null: Some(None) for null or absent, None when it is something else.
fn opt_num(m: &Map<String, Value>, k: &str) -> Option<Option<f64>> {
    match m.get(k) {
        None | Some(Value::Null) => Some(None),
        Some(v) => Some(Some(v.as_f64().filter(|x| x.is_finite())?)),
    }
}

impl Fit {
    /// The fit of `doc`, or None when it has none or its estimates are not readable.
    pub fn of(doc: &ResultsDoc) -> Option<Fit> {
        Fit::from_value(doc.fit.as_ref()?)
    }

    /// Read a `fit` value; None when one of the four estimates is missing or malformed.
    pub fn from_value(v: &Value) -> Option<Fit> {
        let m = v.as_object()?;
        let measured = list(m.get("measured"), |e| {
            Some(Measured {
                cc: text(e, "cc")?,
                goodput_bps: num(e, "goodput_bps")?,
                runs: e.get("runs")?.as_u64()?,
                runs_bps: e
                    .get("runs_bps")
                    .and_then(Value::as_array)
                    .map(|v| v.iter().filter_map(Value::as_f64).collect())
                    .unwrap_or_default(),
            })
        });
        let predictions = list(m.get("predictions"), |e| {
            Some(Predicted {
                cc: text(e, "cc")?,
                goodput_bps: num(e, "goodput_bps")?,
                min_bps: num(e, "min_bps")?,
                max_bps: num(e, "max_bps")?,
                seeds: e.get("seeds")?.as_u64()?,
                measured_bps: opt_num(e, "measured_bps")?,
                ratio: opt_num(e, "ratio")?,
                loss_range: num(e, "at_loss_low_bps")
                    .zip(num(e, "at_loss_high_bps"))
                    .map(|(a, b)| (a.min(b), a.max(b))),
            })
        });
        let lost_sent = m
            .get("lost")
            .and_then(Value::as_u64)
            .zip(m.get("sent").and_then(Value::as_u64));
        Some(Fit {
            peer: text(m, "peer").filter(|p| !p.is_empty()),
            direction: text(m, "direction").filter(|d| !d.is_empty()),
            rate_bps: estimate(m.get("rate_bps"))?,
            rtt_s: estimate(m.get("rtt_s"))?,
            loss: estimate(m.get("loss"))?,
            buffer_bytes: estimate(m.get("buffer_bytes"))?,
            lost_sent,
            duration_s: num(m, "duration_s"),
            streams: m.get("streams").and_then(Value::as_u64),
            notes: m
                .get("notes")
                .and_then(Value::as_array)
                .map(|n| {
                    n.iter()
                        .filter_map(Value::as_str)
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
            measured,
            predictions,
        })
    }
}

/// A fitted RTT, ms with two decimals (the fit resolves well below a millisecond).
fn rtt_text(s: f64) -> String {
    format!("{:.2} ms", s * 1e3)
}

fn loss_text(p: f64) -> String {
    units::param("link.loss", &Value::from(p))
}

/// A run setting of the document's first run that has it.
fn setting<'a>(doc: &'a ResultsDoc, k: &str) -> Option<&'a str> {
    doc.runs
        .iter()
        .find_map(|r| r.settings.get(k).and_then(Value::as_str))
}

/// Whether the document was measured by `cclab get` (a web server) rather than `cclab perf`.
fn by_get(doc: &ResultsDoc) -> bool {
    setting(doc, "host.sender") == Some("http server")
        || doc.runs.iter().any(|r| r.resolved.contains_key("url"))
}

/// Whether `peer` (`HOST:PORT`, `[V6]:PORT`) is a loopback address.
fn is_loopback(peer: &str) -> bool {
    let host = peer
        .rsplit_once(':')
        .map_or(peer, |(h, _)| h)
        .trim_matches(['[', ']']);
    host.parse::<std::net::IpAddr>()
        .is_ok_and(|ip| ip.is_loopback())
}

/// The fitted path in a few words: "48.3 Mbit/s, RTT 149.75 ms, loss 0.089%, buffer >= 15 kB".
pub fn fitted_summary(f: &Fit) -> String {
    let b = &f.buffer_bytes;
    let buffer = match b.high {
        Some(_) => units::size(b.value),
        None => format!(">= {}", units::size(b.low)),
    };
    format!(
        "{}, RTT {}, loss {}, buffer {buffer}",
        units::rate(f.rate_bps.value),
        rtt_text(f.rtt_s.value),
        loss_text(f.loss.value)
    )
}

/// The path line of a host document: the peer and direction measured, by which command, and
/// the fitted path or why there is none.
pub fn path_line(doc: &ResultsDoc) -> String {
    let fit = Fit::of(doc);
    let peer = fit
        .as_ref()
        .and_then(|f| f.peer.clone())
        .or_else(|| setting(doc, "host.peer").map(String::from));
    let direction = fit
        .as_ref()
        .and_then(|f| f.direction.clone())
        .or_else(|| setting(doc, "host.direction").map(String::from));
    let tool = if by_get(doc) {
        "cclab get"
    } else {
        "cclab perf"
    };
    let mut line = format!(
        "path: real path to {}",
        peer.as_deref().unwrap_or("a host not recorded")
    );
    if let Some(d) = &direction {
        line.push_str(&format!(" ({d})"));
    }
    line.push_str(&format!(", measured by {tool}"));
    match (&fit, &doc.fit) {
        (Some(f), _) => line.push_str(&format!("; fitted: {}", fitted_summary(f))),
        (None, Some(_)) => line.push_str(" (fit not readable by this cclab)"),
        (None, None) if tool == "cclab get" => {
            line.push_str(" (not fitted: cclab get has no probe phase)")
        }
        (None, None) if peer.as_deref().is_some_and(is_loopback) => {
            line.push_str(" (not fitted: the server is on this host's loopback)")
        }
        (None, None) => line.push_str(" (not fitted: measured with --no-probe)"),
    }
    line
}

/// A row of the estimates' table: the name, value, 95% interval (`f` formats a number) and
/// how it was read.
fn estimate_row(out: &mut String, name: &str, e: &Estimate, f: fn(f64) -> String, how: &str) {
    let cells = match e.high {
        Some(h) => format!(
            "<td class=\"n\">{}</td><td class=\"n\">{} – {}</td>",
            esc(&f(e.value)),
            esc(&f(e.low)),
            esc(&f(h))
        ),
        None => format!(
            "<td class=\"n\">≥ {}</td><td class=\"n\" title=\"a lower bound only\">≥ {} (lower bound)</td>",
            esc(&f(e.low)),
            esc(&f(e.low))
        ),
    };
    let _ = write!(out, "<tr><td>{name}</td>{cells}<td>{}</td></tr>", esc(how));
}

/// predicted / measured as a cell: green within x1.5 either way, red beyond (the band of
/// the published figures, [`crate::units::within`]).
fn ratio_cell(ratio: Option<f64>) -> String {
    match ratio {
        Some(r) => format!(
            "<td class=\"n ratio {}\" title=\"predicted / measured\">×{r:.2}</td>",
            if crate::units::within(r) { "ok" } else { "off" }
        ),
        None => "<td class=\"n muted\">–</td>".into(),
    }
}

/// The "Fitted path and prediction" section of a host document with a readable `fit`: the
/// four estimates with their intervals and how each was read, the notes, and measured
/// against predicted goodput per controller. Nothing without a (readable) fit.
pub fn fit_section(out: &mut String, doc: &ResultsDoc) {
    let Some(f) = Fit::of(doc) else {
        return;
    };
    out.push_str("<h3>Fitted path and prediction</h3>");
    let _ = write!(
        out,
        "<p class=\"muted\">cclab's path model (bottleneck rate, base RTT, random loss, drop-tail buffer) fitted to the probe phase of cclab perf{}{}; 95% intervals.</p>",
        f.direction
            .as_ref()
            .map(|d| format!(", {}", esc(d)))
            .unwrap_or_default(),
        f.peer
            .as_ref()
            .map(|p| format!(" {}", esc(p)))
            .unwrap_or_default(),
    );
    out.push_str("<div class=\"tablewrap\"><table class=\"fit\"><thead><tr><th>estimate</th><th class=\"n\">value</th><th class=\"n\">95% interval</th><th>how it was read</th></tr></thead><tbody>");
    let loss_how = match f.lost_sent {
        Some((lost, sent)) => format!("{} ({lost} of {sent} segments)", f.loss.how),
        None => f.loss.how.clone(),
    };
    estimate_row(out, "rate", &f.rate_bps, units::rate, &f.rate_bps.how);
    estimate_row(out, "RTT", &f.rtt_s, rtt_text, &f.rtt_s.how);
    estimate_row(out, "loss", &f.loss, loss_text, &loss_how);
    estimate_row(
        out,
        "buffer",
        &f.buffer_bytes,
        units::size,
        &f.buffer_bytes.how,
    );
    out.push_str("</tbody></table></div>");
    if !f.notes.is_empty() {
        out.push_str("<ul class=\"fitnotes\">");
        for n in &f.notes {
            let _ = write!(out, "<li>{}</li>", esc(n));
        }
        out.push_str("</ul>");
    }
    prediction_table(out, &f);
}

/// Measured against predicted goodput, a row per controller (predicted ones first).
/// `; runs a – b` for two or more runs' goodputs, else nothing.
fn runs_range(v: &[f64]) -> String {
    if v.len() < 2 {
        return String::new();
    }
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    format!(
        "; runs {} – {}",
        esc(&units::rate(lo)),
        esc(&units::rate(hi))
    )
}

fn prediction_table(out: &mut String, f: &Fit) {
    let (Some(measured), Some(predictions)) = (&f.measured, &f.predictions) else {
        out.push_str("<p class=\"muted\">The measured and predicted goodput are not readable.</p>");
        return;
    };
    if predictions.is_empty() {
        out.push_str("<p class=\"muted\">No prediction in these results: <code>cclab fit DIR --predict</code> (or <code>cclab perf --predict</code>) runs the simulator on the fitted path.</p>");
        if measured.is_empty() {
            return;
        }
    } else {
        let mut how = String::from("simulator on the fitted path");
        if let Some(d) = f.duration_s {
            how.push_str(&format!(", {}", units::secs(d)));
        }
        if let Some(s) = f.streams.filter(|s| *s > 1) {
            how.push_str(&format!(" × {s} streams"));
        }
        let _ = write!(
            out,
            "<p class=\"muted\">Prediction: {}; goodput per run (all streams), mean over the simulator's seeds; ratio predicted / measured.</p>",
            esc(&how)
        );
    }
    out.push_str("<div class=\"tablewrap\"><table class=\"fit predictions\"><thead><tr><th>cc</th><th class=\"n\">measured</th><th class=\"n\">predicted</th><th class=\"n\">seed range</th><th class=\"n\" title=\"the predicted mean with the fitted loss at each end of its 95% interval\">over the loss interval</th><th class=\"n\">predicted / measured</th></tr></thead><tbody>");
    let runs_of = |cc: &str| measured.iter().find(|m| m.cc == cc);
    for p in predictions {
        let m = p
            .measured_bps
            .or_else(|| runs_of(&p.cc).map(|m| m.goodput_bps));
        let measured_cell = match (m, runs_of(&p.cc)) {
            (Some(bps), Some(r)) => format!(
                "{} <span class=\"muted\">(mean of {} run{}{})</span>",
                esc(&units::rate(bps)),
                r.runs,
                if r.runs == 1 { "" } else { "s" },
                runs_range(&r.runs_bps)
            ),
            (Some(bps), None) => esc(&units::rate(bps)),
            (None, _) => "<span class=\"muted\">not run</span>".into(),
        };
        let ratio = p
            .ratio
            .or_else(|| m.filter(|m| *m > 0.0).map(|m| p.goodput_bps / m));
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{measured_cell}</td><td class=\"n\">{} <span class=\"muted\">(mean of {} seed{})</span></td><td class=\"n\">{} – {}</td><td class=\"n\">{}</td>{}</tr>",
            esc(&p.cc),
            esc(&units::rate(p.goodput_bps)),
            p.seeds,
            if p.seeds == 1 { "" } else { "s" },
            esc(&units::rate(p.min_bps)),
            esc(&units::rate(p.max_bps)),
            p.loss_range.map_or("–".into(), |(l, h)| format!(
                "{} – {}",
                esc(&units::rate(l)),
                esc(&units::rate(h))
            )),
            ratio_cell(ratio)
        );
    }
    for m in measured
        .iter()
        .filter(|m| !predictions.iter().any(|p| p.cc == m.cc))
    {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{} <span class=\"muted\">(mean of {} run{})</span></td><td class=\"n muted\">not predicted</td><td class=\"n muted\">–</td><td class=\"n muted\">–</td>{}</tr>",
            esc(&m.cc),
            esc(&units::rate(m.goodput_bps)),
            m.runs,
            if m.runs == 1 { "" } else { "s" },
            ratio_cell(None)
        );
    }
    out.push_str("</tbody></table></div>");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cclab_results::testing::{DocBuilder, RunBuilder};
    use serde_json::json;

    /// A fit as `cclab perf --predict` writes it, with a key this report does not know.
    fn fit_value() -> Value {
        json!({
            "version": 1, "peer": "192.0.2.7:5301", "direction": "download",
            "rate_bps": {"value": 48.3e6, "low": 47.9e6, "high": 48.7e6, "how": "delivery rate of the paced probe"},
            "rtt_s": {"value": 0.14975, "low": 0.1496, "high": 0.1499, "how": "lowest RTT sample"},
            "loss": {"value": 0.00089, "low": 0.0006, "high": 0.0012, "how": "retransmits of the light probe"},
            "buffer_bytes": {"value": 15000.0, "low": 15000.0, "high": null, "how": "no run overflowed it"},
            "lost": 89, "sent": 100000, "phases": [], "duration_s": 30.0, "streams": 1,
            "measured": [{"cc": "cubic", "goodput_bps": 20e6, "runs": 3, "runs_bps": [18e6, 20e6, 22e6]}, {"cc": "reno", "goodput_bps": 9e6, "runs": 1}],
            "notes": ["the rate probe was short"],
            "predictions": [
                {"cc": "cubic", "goodput_bps": 25e6, "min_bps": 24e6, "max_bps": 26e6, "seeds": 5,
                 "measured_bps": 20e6, "ratio": 1.25, "future_key": true,
                 "at_loss_low_bps": 28e6, "at_loss_high_bps": 22e6},
                {"cc": "bbr3", "goodput_bps": 44e6, "min_bps": 43e6, "max_bps": 45e6, "seeds": 5,
                 "measured_bps": null, "ratio": null}
            ]
        })
    }

    fn host_doc(fit: Option<Value>, peer: &str) -> ResultsDoc {
        let r = RunBuilder::new()
            .setting("host.peer", peer)
            .setting("host.direction", "upload")
            .setting("host.sender", "local");
        DocBuilder::new().backend(BACKEND).run(r).fit(fit).build()
    }

    #[test]
    fn path_line_says_what_was_measured_and_fitted() {
        let d = host_doc(Some(fit_value()), "192.0.2.7:5301");
        assert_eq!(
            path_line(&d),
            "path: real path to 192.0.2.7:5301 (download), measured by cclab perf; \
             fitted: 48.3 Mbit/s, RTT 149.75 ms, loss 0.089%, buffer >= 15.0 kB"
        );
        // No fit: the peer and direction from the runs' settings, and why there is no fit.
        let l = path_line(&host_doc(None, "192.0.2.7:5301"));
        assert_eq!(
            l,
            "path: real path to 192.0.2.7:5301 (upload), measured by cclab perf \
             (not fitted: measured with --no-probe)"
        );
        let l = path_line(&host_doc(None, "[::1]:5301"));
        assert!(
            l.ends_with("(not fitted: the server is on this host's loopback)"),
            "{l}"
        );
        let mut get = host_doc(None, "192.0.2.8:80");
        get.runs[0]
            .settings
            .insert("host.sender".into(), json!("http server"));
        let l = path_line(&get);
        assert!(
            l.contains("measured by cclab get (not fitted: cclab get has no probe"),
            "{l}"
        );
    }

    #[test]
    fn malformed_fits_are_skipped_not_fatal() {
        for bad in [
            json!("nonsense"),
            json!({"rate_bps": 5}),
            json!({"rate_bps": {"value": "x", "low": 1, "high": 2, "how": ""}}),
        ] {
            assert_eq!(Fit::from_value(&bad), None);
            let d = host_doc(Some(bad), "192.0.2.7:5301");
            assert!(path_line(&d).ends_with("(fit not readable by this cclab)"));
            let mut out = String::new();
            fit_section(&mut out, &d);
            assert!(out.is_empty(), "{out}");
        }
        // Readable estimates with a malformed prediction: the estimates stay, the table goes.
        let mut v = fit_value();
        v["predictions"][0]["seeds"] = json!("five");
        let mut out = String::new();
        fit_section(&mut out, &host_doc(Some(v), "192.0.2.7:5301"));
        assert!(out.contains("47.9 Mbit/s – 48.7 Mbit/s"), "{out}");
        assert!(
            out.contains("not readable") && !out.contains("×1.25"),
            "{out}"
        );
    }

    #[test]
    fn section_shows_estimates_notes_and_predictions() {
        let mut out = String::new();
        fit_section(&mut out, &host_doc(Some(fit_value()), "x"));
        assert!(out.contains("<h3>Fitted path and prediction</h3>"), "{out}");
        assert!(
            out.contains("149.75 ms") && out.contains("149.60 ms – 149.90 ms"),
            "{out}"
        );
        assert!(out.contains("(89 of 100000 segments)"), "{out}");
        assert!(out.contains("≥ 15.0 kB (lower bound)"), "{out}");
        assert!(out.contains("<li>the rate probe was short</li>"), "{out}");
        // cubic: measured over 3 runs, predicted over 5 seeds, ratio 1.25.
        let cubic = out.split("<tr><td>cubic</td>").nth(1).unwrap();
        let cubic = cubic.split("</tr>").next().unwrap();
        assert!(
            cubic.contains("20.0 Mbit/s") && cubic.contains("mean of 3 runs"),
            "{cubic}"
        );
        assert!(cubic.contains("25.0 Mbit/s") && cubic.contains("24.0 Mbit/s – 26.0 Mbit/s"));
        // The runs' range, and the prediction over the loss interval (lower first).
        assert!(cubic.contains("runs 18.0 Mbit/s – 22.0 Mbit/s"), "{cubic}");
        assert!(cubic.contains("22.0 Mbit/s – 28.0 Mbit/s"), "{cubic}");
        assert!(
            cubic.contains("ratio ok") && cubic.contains("×1.25"),
            "{cubic}"
        );
        // bbr3 did not run on the host; reno ran but was not predicted.
        let bbr3 = out.split("<tr><td>bbr3</td>").nth(1).unwrap();
        assert!(
            bbr3.split("</tr>").next().unwrap().contains("not run"),
            "{bbr3}"
        );
        let reno = out.split("<tr><td>reno</td>").nth(1).unwrap();
        assert!(reno
            .split("</tr>")
            .next()
            .unwrap()
            .contains("not predicted"));
        // Without predictions: how to get them.
        let mut v = fit_value();
        v.as_object_mut().unwrap().remove("predictions");
        let mut out = String::new();
        fit_section(&mut out, &host_doc(Some(v), "x"));
        assert!(
            out.contains("No prediction") && out.contains("mean of 3 runs"),
            "{out}"
        );
    }
}
