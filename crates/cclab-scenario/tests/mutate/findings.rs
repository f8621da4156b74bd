//! Collecting findings: cases grouped by cause, each kept at its smallest and shrunk line by
//! line for the report; and the check that parse time is linear in a line's length.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

use cclab_scenario::ScenarioFile;

use crate::alloc::{CURRENT, PEAK};
use crate::case::{problem, run_case, Case, Problem, Stats};
use crate::{MAX_CASE_BYTES, ORIGIN, SLOW};

pub struct Finding {
    pub count: usize,
    /// The smallest case seen with this signature, and its detail.
    pub case: Case,
    pub detail: String,
    pub file: String,
}

#[derive(Default)]
pub struct Fuzz {
    pub stats: Stats,
    pub cases: usize,
    pub findings: BTreeMap<String, Finding>,
    pub slowest: (Duration, String),
    pub biggest: (usize, String),
}

impl Fuzz {
    pub fn check(&mut self, file: &str, case: Case) {
        self.cases += 1;
        let base = CURRENT.load(Relaxed);
        PEAK.store(base, Relaxed);
        let t0 = Instant::now();
        let mut problems = run_case(&case, &mut self.stats);
        let took = t0.elapsed();
        let bytes = PEAK.load(Relaxed).saturating_sub(base);
        if took > self.slowest.0 {
            self.slowest = (took, file.to_string());
        }
        if bytes > self.biggest.0 {
            self.biggest = (bytes, file.to_string());
        }
        if took > SLOW {
            problems.push(problem(
                format!("slow: one case took more than {SLOW:?}"),
                format!("took {took:?}"),
            ));
        }
        if bytes > MAX_CASE_BYTES {
            problems.push(problem(
                format!("one case allocated more than {} MiB", MAX_CASE_BYTES >> 20),
                format!("peak {} MiB", bytes >> 20),
            ));
        }
        for p in problems {
            self.record(file, &case, p);
        }
    }

    pub fn record(&mut self, file: &str, case: &Case, p: Problem) {
        let f = self.findings.entry(p.sig).or_insert_with(|| Finding {
            count: 0,
            case: case.clone(),
            detail: p.detail.clone(),
            file: file.to_string(),
        });
        f.count += 1;
        if case.size() < f.case.size() {
            f.case = case.clone();
            f.detail = p.detail;
            f.file = file.to_string();
        }
    }
}

/// The detail of the problem with signature `sig` that `case` has, if it has one.
pub fn fails_with(case: &Case, sig: &str) -> Option<String> {
    run_case(case, &mut Stats::default())
        .into_iter()
        .find(|p| p.sig == sig)
        .map(|p| p.detail)
}

/// Shrinks a failing case: drops overrides, then lines, while it fails the same way.
/// Returns the smaller case and its problem's detail.
pub fn shrink(case: &Case, sig: &str, detail: &str) -> (Case, String) {
    let mut best = (case.clone(), detail.to_string());
    let mut budget = 2000usize;
    let mut i = 0;
    while i < best.0.sets.len() && budget > 0 {
        let mut c = best.0.clone();
        c.sets.remove(i);
        budget -= 1;
        match fails_with(&c, sig) {
            Some(d) => best = (c, d),
            None => i += 1,
        }
    }
    let mut changed = true;
    while changed && budget > 0 {
        changed = false;
        let lines: Vec<String> = best
            .0
            .text
            .split_inclusive('\n')
            .map(String::from)
            .collect();
        for skip in (0..lines.len()).rev() {
            if budget == 0 {
                break;
            }
            budget -= 1;
            let text: String = lines
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != skip)
                .map(|(_, l)| l.as_str())
                .collect();
            let c = Case {
                text,
                sets: best.0.sets.clone(),
            };
            if let Some(d) = fails_with(&c, sig) {
                best = (c, d);
                changed = true;
                break;
            }
        }
    }
    best
}

/// Parsing must take time linear in the input, also when a long list is on one line (the
/// usual way to write a sweep). Compares one line against one value per line, so the check
/// does not depend on the machine's speed.
pub fn check_parse_is_linear(fuzz: &mut Fuzz) {
    const N: usize = 40_000;
    let text = |sep: &str| {
        let values: Vec<String> = (1..=N).map(|i| format!("\"{i}ms\"")).collect();
        format!(
            "name = \"x\"\nduration = \"1s\"\n[link]\nrate = \"1mbit\"\nrtt = [{}]\n[[flows]]\n\
             cc = \"bbr\"\n",
            values.join(sep)
        )
    };
    let best_time = |text: &str| {
        (0..2)
            .map(|_| {
                let t0 = Instant::now();
                let _ = ScenarioFile::from_str(text, ORIGIN);
                t0.elapsed()
            })
            .min()
            .unwrap_or_default()
    };
    let (one_line, many_lines) = (text(", "), text(",\n"));
    let (t_one, t_many) = (best_time(&one_line), best_time(&many_lines));
    if t_one > t_many * 8 + Duration::from_millis(100) {
        let case = Case::text(format!(
            "rtt = [\"1ms\", \"2ms\", ... \"{N}ms\"] on one line, in a minimal file"
        ));
        let p = problem(
            "slow: parse time grows faster than linearly with the length of a line",
            format!(
                "{N} values on one line: {t_one:?}; the same with one value per line: \
                 {t_many:?}"
            ),
        );
        fuzz.record("(generated)", &case, p);
    }
}
