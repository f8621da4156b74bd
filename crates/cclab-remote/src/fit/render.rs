//! The fit in and out of a results document, and written as a scenario and as text.

use super::{Estimate, Measured, PathFit, FIT_VERSION, PACKET};
use cclab_results::ResultsDoc;

impl PathFit {
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a fit serializes")
    }

    /// The fit of a results document, or a one-line reason there is none.
    pub fn from_doc(doc: &ResultsDoc, name: &str) -> Result<PathFit, String> {
        if doc.backend != crate::results::BACKEND {
            return Err(format!(
                "{name} holds {} results (backend \"{}\"): cclab fit reads measurements of real hosts, written by `cclab perf --out DIR`",
                if doc.backend == "sim" { "simulator" } else { "lab" },
                doc.backend
            ));
        }
        let v = doc.fit.as_ref().ok_or_else(|| {
            format!("{name} has no probe phase (measured with --no-probe, or by cclab get): run `cclab perf` without --no-probe")
        })?;
        let f: PathFit = serde_json::from_value(v.clone())
            .map_err(|e| format!("{name}: the fit section is not one this cclab reads ({e})"))?;
        if f.version != FIT_VERSION {
            return Err(format!(
                "{name}: fit layout {} (this cclab reads {FIT_VERSION}); use the cclab that measured it",
                f.version
            ));
        }
        Ok(f)
    }

    /// Buffer for the scenario: the estimate, or with only a lower bound the larger of it and
    /// one BDP (cclab's default), bytes.
    pub fn scenario_buffer(&self) -> u64 {
        let b = &self.buffer_bytes;
        let bdp = self.rate_bps.value / 8.0 * self.rtt_s.value;
        let v = if b.is_lower_bound() {
            b.value.max(bdp)
        } else {
            b.value
        };
        (v.round() as u64).max(2 * PACKET as u64)
    }

    /// A scenario of the fitted path, one flow group of `streams` flows of each of `ccs`
    /// (a matrix over `flows.cc`), as long as the measured runs.
    pub fn scenario_toml(&self, name: &str, source: &str, ccs: &[String]) -> String {
        let iv = |e: &Estimate, f: &dyn Fn(f64) -> String| match e.high {
            Some(h) => format!("{} (95%: {} to {})", f(e.value), f(e.low), f(h)),
            None => format!("at least {} (lower bound)", f(e.low)),
        };
        let mbit = |x: f64| format!("{:.2} Mbit/s", x / 1e6);
        let ms = |x: f64| format!("{:.3} ms", x * 1e3);
        let pct = |x: f64| format!("{:.4}%", x * 100.0);
        let kb = |x: f64| format!("{:.1} kB", x / 1e3);
        let buf = self.scenario_buffer();
        let mut s = String::new();
        s.push_str(&format!(
            "# Fitted by `cclab fit` from {source}\n# ({} {}, probe phase of cclab perf; 95% intervals)\n",
            self.direction, self.peer
        ));
        s.push_str(&format!("#   rate   {}\n", iv(&self.rate_bps, &mbit)));
        s.push_str(&format!("#   rtt    {}\n", iv(&self.rtt_s, &ms)));
        s.push_str(&format!(
            "#   loss   {} ({} of {} segments)\n",
            iv(&self.loss, &pct),
            self.lost,
            self.sent
        ));
        s.push_str(&format!("#   buffer {}\n", iv(&self.buffer_bytes, &kb)));
        if self.buffer_bytes.is_lower_bound() {
            s.push_str(&format!(
                "#   (no run overflowed the buffer: link.buffer is the larger of the bound and 1 BDP, {})\n",
                kb(buf as f64)
            ));
        }
        s.push_str(&format!("name = {}\n", toml_str(name)));
        s.push_str(&format!(
            "description = {}\n",
            toml_str(&format!(
                "The path to {} as measured ({})",
                self.peer, self.direction
            ))
        ));
        s.push_str(&format!(
            "duration = \"{}ms\"\n\n[link]\n",
            (self.duration_s * 1e3).round().max(100.0) as u64
        ));
        s.push_str(&format!(
            "rate = \"{}kbit\"\n",
            (self.rate_bps.value / 1e3).round().max(1.0) as u64
        ));
        s.push_str(&format!(
            "rtt = \"{}us\"\n",
            (self.rtt_s.value * 1e6).round().max(1.0) as u64
        ));
        s.push_str(&format!("loss = \"{:.4}%\"\n", self.loss.value * 100.0));
        s.push_str(&format!("buffer = \"{buf}b\"\n\n[[flows]]\n"));
        let list: Vec<String> = ccs.iter().map(|c| toml_str(c)).collect();
        if list.len() == 1 {
            s.push_str(&format!("cc = {}\n", list[0]));
        } else {
            s.push_str(&format!("cc = [{}]\n", list.join(", ")));
        }
        s.push_str(&format!("count = {}\n", self.streams.max(1)));
        s
    }

    /// The estimates, one per line, each with its interval and how it was read.
    pub fn render_text(&self) -> String {
        let mut s = format!(
            "fitted path ({} {}; 95% intervals)\n",
            self.direction, self.peer
        );
        let line = |name: &str, e: &Estimate, f: &dyn Fn(f64) -> String| match e.high {
            Some(h) => format!(
                "  {name:<7} {:>14}  [{} .. {}]  {}\n",
                f(e.value),
                f(e.low),
                f(h),
                e.how
            ),
            None => format!(
                "  {name:<7} {:>14}  [{} .. ]  {}\n",
                f(e.low),
                f(e.low),
                e.how
            ),
        };
        s += &line("rate", &self.rate_bps, &|x| {
            format!("{:.2} Mbit/s", x / 1e6)
        });
        s += &line("rtt", &self.rtt_s, &|x| format!("{:.3} ms", x * 1e3));
        s += &line("loss", &self.loss, &|x| format!("{:.4}%", x * 100.0));
        s += &line("buffer", &self.buffer_bytes, &|x| {
            format!("{:.1} kB", x / 1e3)
        });
        for n in &self.notes {
            s += &format!("  note: {n}\n");
        }
        s
    }

    /// Measured vs predicted goodput, a line per controller: the measured mean with its
    /// runs' 95% interval, the predicted mean with the seeds' range and the range the loss
    /// interval's ends give.
    pub fn render_predictions(&self) -> String {
        let mb = |x: f64| format!("{:.2}", x / 1e6);
        let mut s = format!(
            "prediction (simulator on the fitted path, {:.1} s x{}; Mbit/s)\n  {:<8} {:>24} {:>10} {:>6}  {:<22} {}\n",
            self.duration_s,
            self.streams,
            "cc",
            "measured [95% of mean]",
            "predicted",
            "ratio",
            "seeds (lowest-highest)",
            "over the loss interval"
        );
        for p in &self.predictions {
            let m = self.measured.iter().find(|m| m.cc == p.cc);
            let measured = match (p.measured_bps, m.and_then(Measured::interval)) {
                (Some(v), Some((l, h))) => format!(
                    "{} [{}-{}] x{}",
                    mb(v),
                    mb(l),
                    mb(h),
                    m.map_or(0, |m| m.runs)
                ),
                (Some(v), None) => format!("{} x{}", mb(v), m.map_or(1, |m| m.runs)),
                (None, _) => "not run".into(),
            };
            s += &format!(
                "  {:<8} {:>24} {:>10} {:>6}  {:<22} {}\n",
                p.cc,
                measured,
                mb(p.goodput_bps),
                p.ratio.map_or("".into(), |r| format!("{r:.2}")),
                format!("{} ({}-{})", p.seeds, mb(p.min_bps), mb(p.max_bps)),
                p.loss_range()
                    .map_or("-".into(), |(l, h)| format!("{}-{}", mb(l), mb(h)))
            );
        }
        s
    }
}

/// `s` as a TOML string (quoted and escaped by the toml crate).
fn toml_str(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}
