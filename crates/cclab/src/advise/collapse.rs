//! Settings that make no difference, folded into one row.
//!
//! A search over controllers x initial window x pacing x send buffer x rto_min returns many
//! candidates whose results are the same: where the send buffer never limits the flow, its
//! three values tie. For each setting in turn (send buffer, rto_min, pacing, initial window,
//! and last the controller), candidates that differ only in that setting and whose results are
//! equivalent become one row covering those values; a row covering every value tried says
//! "any". Two results are equivalent when their medians over seeds are within 2% of each
//! other. Every setting runs the same seeds (the same loss draws, the same jitter), so a
//! setting that makes no difference gives the same runs and the same median; the ranges
//! over seeds are not compared, because the seeds' spread is shared by all settings and
//! would hide a consistent gain (CUBIC's initial window 40 against 10 on a lossy path).
//! Rows are merged only when every candidate of one is equivalent to
//! every candidate of the other, so equivalence never drifts along a chain.

use super::candidate::Candidate;
use serde::Serialize;

/// The objective's value of one setting over seeds: the median and range (each the mean
/// over matrix points of the per-point figure).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// Whether two results differ by no more than noise: medians within [`SAME`].
    pub fn equivalent(&self, o: &Spread) -> bool {
        (self.median - o.median).abs() <= SAME * self.median.abs().max(o.median.abs())
    }
}

/// How far apart two medians may be and still count as the same result (a fraction).
pub const SAME: f64 = 0.02;

/// The folded settings, in the order they are folded, with their names in the output.
pub const SETTINGS: [&str; 5] = [
    "send buffer",
    "rto_min",
    "pacing",
    "initial window",
    "controller",
];

/// Where the controller is in [`SETTINGS`]; its values are positions in the registry.
pub const CC: usize = 4;

/// The controller called `name` as a value of [`CC`].
pub fn cc_code(name: &str) -> u64 {
    cclab_core::cc::CONTROLLERS
        .iter()
        .position(|c| c.name == name)
        .unwrap_or(usize::MAX) as u64
}

/// The controller with code `v`.
pub fn cc_name(v: u64) -> &'static str {
    cclab_core::cc::CONTROLLERS
        .get(v as usize)
        .map_or("?", |c| c.name)
}

/// The values of the foldable settings of a candidate, in [`SETTINGS`] order.
fn codes(c: &Candidate) -> [u64; 5] {
    [
        c.tcp_wmem[2],
        c.rto_min_ms,
        c.pacing as u64,
        c.init_cwnd as u64,
        cc_code(&c.cc),
    ]
}

/// Candidates folded into one row.
#[derive(Clone, Debug)]
pub struct Group {
    /// Indices into the candidates given to [`collapse`].
    pub members: Vec<usize>,
    /// Per setting ([`SETTINGS`] order), the values the row covers, ascending.
    pub values: [Vec<u64>; 5],
    /// The members' combined figure: the median of their medians, the widest range.
    pub spread: Spread,
}

impl Group {
    /// Whether setting `d` is irrelevant here: the row covers every value tried.
    pub fn any(&self, d: usize, universe: &[Vec<u64>; 5]) -> bool {
        universe[d].len() > 1 && self.values[d] == universe[d]
    }
}

/// Every value tried of each setting.
pub fn universe(cands: &[Candidate]) -> [Vec<u64>; 5] {
    let mut u: [Vec<u64>; 5] = Default::default();
    for c in cands {
        for (d, v) in codes(c).into_iter().enumerate() {
            if !u[d].contains(&v) {
                u[d].push(v);
            }
        }
    }
    for v in &mut u {
        v.sort_unstable();
    }
    u
}

fn combine(members: &[usize], spreads: &[Spread]) -> Spread {
    let mut m: Vec<f64> = members.iter().map(|&i| spreads[i].median).collect();
    m.sort_by(f64::total_cmp);
    Spread {
        median: m[m.len() / 2],
        min: members
            .iter()
            .map(|&i| spreads[i].min)
            .fold(f64::INFINITY, f64::min),
        max: members
            .iter()
            .map(|&i| spreads[i].max)
            .fold(f64::NEG_INFINITY, f64::max),
    }
}

/// Folds `cands` (with their results `spreads`, same order) into rows; the rows come in no
/// particular order.
pub fn collapse(cands: &[Candidate], spreads: &[Spread]) -> Vec<Group> {
    let mut groups: Vec<Group> = cands
        .iter()
        .enumerate()
        .map(|(i, c)| Group {
            members: vec![i],
            values: codes(c).map(|v| vec![v]),
            spread: spreads[i],
        })
        .collect();
    let equivalent = |a: &Group, b: &Group| {
        a.members.iter().all(|&i| {
            b.members
                .iter()
                .all(|&j| spreads[i].equivalent(&spreads[j]))
        })
    };
    for d in 0..SETTINGS.len() {
        // Rows alike in everything but setting d, best-to-worst by median.
        let mut parts: Vec<(Vec<Vec<u64>>, Vec<Group>)> = Vec::new();
        for g in groups.drain(..) {
            let mut rest = g.values.to_vec();
            rest.remove(d);
            match parts.iter_mut().find(|(r, _)| *r == rest) {
                Some((_, v)) => v.push(g),
                None => parts.push((rest, vec![g])),
            }
        }
        for (_, mut part) in parts {
            part.sort_by(|a, b| a.spread.median.total_cmp(&b.spread.median));
            let mut merged: Vec<Group> = Vec::new();
            for g in part {
                match merged.last_mut() {
                    Some(last) if equivalent(last, &g) => {
                        last.members.extend(&g.members);
                        last.values[d].extend(&g.values[d]);
                        last.values[d].sort_unstable();
                        last.values[d].dedup();
                        last.spread = combine(&last.members, spreads);
                    }
                    _ => merged.push(g),
                }
            }
            groups.extend(merged);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(cc: &str, iw: u32, wmem: u64, rto: u64) -> Candidate {
        Candidate {
            cc: cc.into(),
            init_cwnd: iw,
            pacing: false,
            tcp_wmem: [4096, 16384, wmem],
            rto_min_ms: rto,
        }
    }

    fn exact(v: f64) -> Spread {
        Spread {
            median: v,
            min: v,
            max: v,
        }
    }

    /// A synthetic search where the send buffer and rto_min change nothing and the initial
    /// window and the controller do: one row per (controller, window), each saying "any"
    /// for the rest.
    #[test]
    fn irrelevant_settings_fold_into_one_row() {
        let mut cands = Vec::new();
        let mut spreads = Vec::new();
        for cc in ["cubic", "bbr"] {
            for iw in [10, 40] {
                for wmem in [4 << 20, 16 << 20, 64 << 20] {
                    for rto in [200, 50] {
                        cands.push(cand(cc, iw, wmem, rto));
                        // Completion time: the window matters, bbr is faster; the rest is
                        // noise well under 1%.
                        let base = if cc == "bbr" { 1.0 } else { 1.5 };
                        let jitter = (wmem >> 20) as f64 * 1e-5 + rto as f64 * 1e-6;
                        spreads.push(exact(base * 10.0 / iw as f64 + jitter));
                    }
                }
            }
        }
        let u = universe(&cands);
        let groups = collapse(&cands, &spreads);
        assert_eq!(groups.len(), 4, "{groups:#?}");
        for g in &groups {
            assert_eq!(g.members.len(), 6);
            assert!(g.any(0, &u) && g.any(1, &u), "{g:?}");
            assert!(!g.any(3, &u), "{g:?}");
            assert_eq!(g.values[3].len(), 1);
        }
    }

    /// A setting that matters beyond noise stays split, even where the seeds' ranges
    /// overlap (the seeds are shared, so a consistent 20% is real); within 2% it folds and
    /// the row's range is the widest.
    #[test]
    fn differences_beyond_noise_stay_apart() {
        let cands = vec![
            cand("cubic", 10, 4 << 20, 200),
            cand("cubic", 10, 64 << 20, 200),
        ];
        let spread = |m: f64, lo: f64, hi: f64| Spread {
            median: m,
            min: lo,
            max: hi,
        };
        let apart = [spread(1.0, 0.6, 3.0), spread(1.2, 0.7, 3.1)];
        assert_eq!(collapse(&cands, &apart).len(), 2);
        let near = [spread(1.0, 0.8, 1.3), spread(1.015, 0.9, 1.4)];
        let g = collapse(&cands, &near);
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].spread.min, g[0].spread.max), (0.8, 1.4));
        // Two values of three tried is not "any".
        let mut three = cands.clone();
        three.push(cand("cubic", 10, 16 << 20, 200));
        let s = [exact(1.0), exact(1.0), exact(2.0)];
        let g = collapse(&three, &s);
        let u = universe(&three);
        let two = g.iter().find(|g| g.members.len() == 2).unwrap();
        assert!(!two.any(0, &u));
        assert_eq!(two.values[0], vec![4 << 20, 64 << 20]);
    }

    /// Controllers that tie (at a window where none of them leaves slow start) share a
    /// row; the rest of the ranking keeps them apart where they differ.
    #[test]
    fn tied_controllers_share_a_row() {
        let cands = vec![
            cand("cubic", 40, 4 << 20, 200),
            cand("reno", 40, 4 << 20, 200),
            cand("bbr", 40, 4 << 20, 200),
        ];
        let s = [exact(1.0), exact(1.004), exact(0.7)];
        let g = collapse(&cands, &s);
        assert_eq!(g.len(), 2, "{g:#?}");
        let tie = g.iter().find(|g| g.members.len() == 2).unwrap();
        let names: Vec<&str> = tie.values[CC].iter().map(|&v| cc_name(v)).collect();
        assert_eq!(names, vec!["reno", "cubic"]);
    }
}
