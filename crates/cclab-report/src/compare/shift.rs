//! How far B's values lie from A's, over seeds, with an interval that assumes no
//! distribution: the Hodges-Lehmann shift and its Mann-Whitney confidence interval.
//!
//! - The estimate is the median of every difference `b_j - a_i` (n x m of them).
//! - The interval runs from the k-th smallest to the k-th largest of those differences, k
//!   chosen from the exact null distribution of the Mann-Whitney U statistic (every way of
//!   ordering n + m values equally likely) so that each tail holds at most half of 5%; its
//!   real level (e.g. 96.8% for 5 seeds against 5) is kept. Above [`EXACT_MAX_PAIRS`] pairs
//!   the normal approximation of U picks k.
//! - No randomness: the same values always give the same interval. Ties are not corrected
//!   for (identical values on both sides give [0, 0], not significant).
//! - With too few seeds no k reaches 95% (fewer than 40 orderings: 3 against 3, 1 against
//!   anything): there is no interval, and [`Shift::interval`] says so by being None.

/// The level asked for.
pub const LEVEL: f64 = 0.95;
/// Up to this many pairs (n x m), k comes from the exact distribution.
pub const EXACT_MAX_PAIRS: usize = 2500;

/// B's shift from A.
#[derive(Clone, Debug, PartialEq)]
pub struct Shift {
    /// The median of the pairwise differences B - A.
    pub estimate: f64,
    /// (low, high, its real confidence), None when the seeds are too few for [`LEVEL`].
    pub interval: Option<(f64, f64, f64)>,
}

impl Shift {
    /// Whether the interval excludes 0: the difference is real at its level.
    pub fn significant(&self) -> bool {
        self.interval
            .is_some_and(|(lo, hi, _)| lo > 0.0 || hi < 0.0)
    }
}

/// The shift of `b` from `a`; None when either side is empty.
pub fn shift(a: &[f64], b: &[f64]) -> Option<Shift> {
    let (n, m) = (a.len(), b.len());
    if n == 0 || m == 0 {
        return None;
    }
    let mut d: Vec<f64> = a
        .iter()
        .flat_map(|x| b.iter().map(move |y| y - x))
        .collect();
    d.sort_by(|x, y| x.total_cmp(y));
    let nm = d.len();
    let estimate = if nm % 2 == 1 {
        d[nm / 2]
    } else {
        (d[nm / 2 - 1] + d[nm / 2]) / 2.0
    };
    let interval = tail_rank(n, m).map(|(k, conf)| (d[k - 1], d[nm - k], conf));
    Some(Shift { estimate, interval })
}

/// The rank k (1-based) of the interval's ends and the interval's real confidence; None
/// when even the outermost differences do not reach [`LEVEL`].
fn tail_rank(n: usize, m: usize) -> Option<(usize, f64)> {
    let alpha = (1.0 - LEVEL) / 2.0;
    if n * m > EXACT_MAX_PAIRS {
        let (nf, mf) = (n as f64, m as f64);
        let sd = (nf * mf * (nf + mf + 1.0) / 12.0).sqrt();
        let k = (nf * mf / 2.0 - 1.959_964 * sd).floor().max(1.0) as usize;
        return Some((k, LEVEL));
    }
    let p = u_distribution(n, m);
    // P(U <= k - 1) <= alpha: the largest such k.
    let mut cum = 0.0;
    let mut k = 0;
    for (u, pu) in p.iter().enumerate() {
        if cum + pu > alpha {
            break;
        }
        cum += pu;
        k = u + 1;
    }
    (k > 0).then_some((k, 1.0 - 2.0 * cum))
}

/// P(U = u) for u = 0..=n*m under the null hypothesis, by counting orderings: the largest of
/// the n + m values is either one of A's (ahead of all m of B's) or one of B's.
fn u_distribution(n: usize, m: usize) -> Vec<f64> {
    // counts[i] for i of A's values against j of B's, one j at a time.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for j in 1..=m {
        let mut cur: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        cur.push(vec![1.0]);
        for i in 1..=n {
            let mut c = vec![0.0; i * j + 1];
            for (u, x) in cur[i - 1].iter().enumerate() {
                c[u + j] += x;
            }
            for (u, x) in prev[i].iter().enumerate() {
                c[u] += x;
            }
            cur.push(c);
        }
        prev = cur;
    }
    let counts = &prev[n];
    let total: f64 = counts.iter().sum();
    counts.iter().map(|c| c / total).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u_follows_its_known_tables() {
        // 5 against 5: 252 orderings, U = 0, 1, 2, 3 in 1, 1, 2, 3 of them.
        let p = u_distribution(5, 5);
        assert_eq!(p.len(), 26);
        for (u, ways) in [(0, 1.0), (1, 1.0), (2, 2.0), (3, 3.0)] {
            assert!((p[u] * 252.0 - ways).abs() < 1e-9, "{u}: {}", p[u] * 252.0);
        }
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Symmetric about n*m/2.
        let p = u_distribution(3, 7);
        for u in 0..=21 {
            assert!((p[u] - p[21 - u]).abs() < 1e-12);
        }
        // The tabled critical value for 5 against 5 at 5% two-sided is 2: k = 3, 96.8%.
        let (k, conf) = tail_rank(5, 5).unwrap();
        assert_eq!(k, 3);
        assert!((conf - (1.0 - 8.0 / 252.0)).abs() < 1e-12);
    }

    #[test]
    fn too_few_seeds_give_no_interval() {
        assert_eq!(tail_rank(1, 1), None);
        assert_eq!(tail_rank(3, 3), None);
        assert_eq!(tail_rank(3, 4), None);
        assert!(tail_rank(4, 4).is_some() && tail_rank(3, 5).is_some());
        let s = shift(&[1.0], &[3.0]).unwrap();
        assert_eq!((s.estimate, s.interval), (2.0, None));
        assert!(!s.significant());
    }

    #[test]
    fn a_clear_shift_is_significant_and_overlap_is_not() {
        let a = [10.0, 11.0, 9.5, 10.4, 10.8];
        let b: Vec<f64> = a.iter().map(|x| x + 5.0).collect();
        let s = shift(&a, &b).unwrap();
        assert_eq!(s.estimate, 5.0);
        let (lo, hi, _) = s.interval.unwrap();
        assert!(lo > 0.0 && lo <= 5.0 && hi >= 5.0, "{s:?}");
        assert!(s.significant());
        // The same spread, interleaved: the interval holds 0.
        let b = [10.2, 9.8, 11.1, 10.5, 9.9];
        let s = shift(&a, &b).unwrap();
        let (lo, hi, _) = s.interval.unwrap();
        assert!(lo < 0.0 && hi > 0.0, "{s:?}");
        assert!(!s.significant());
        // Identical sides: [0, 0], not significant.
        let s = shift(&[2.0; 5], &[2.0; 5]).unwrap();
        assert_eq!(s.interval.map(|i| (i.0, i.1)), Some((0.0, 0.0)));
        assert!(!s.significant());
    }

    #[test]
    fn many_seeds_use_the_normal_approximation() {
        let a: Vec<f64> = (0..60).map(|i| i as f64).collect();
        let b: Vec<f64> = (0..60).map(|i| i as f64 + 100.0).collect();
        let s = shift(&a, &b).unwrap();
        assert_eq!(s.estimate, 100.0);
        assert!(s.significant());
        assert_eq!(s.interval.unwrap().2, LEVEL);
    }
}
