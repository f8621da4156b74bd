//! A set of `u64`s stored as disjoint half-open ranges, for SACK scoreboards and
//! out-of-order queues. Operations cost O(log n) in the number of ranges plus the size of
//! the answer, never the number of elements covered.

use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// start -> end, disjoint and non-adjacent.
    map: BTreeMap<u64, u64>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// Number of disjoint ranges.
    pub fn len_ranges(&self) -> usize {
        self.map.len()
    }

    pub fn contains(&self, x: u64) -> bool {
        self.range_containing(x).is_some()
    }

    /// The stored range that contains `x`, if any.
    pub fn range_containing(&self, x: u64) -> Option<Range<u64>> {
        let (&s, &e) = self.map.range(..=x).next_back()?;
        (x < e).then_some(s..e)
    }

    /// Lowest stored range.
    pub fn first(&self) -> Option<Range<u64>> {
        self.map.iter().next().map(|(&s, &e)| s..e)
    }

    /// Highest stored range.
    pub fn last(&self) -> Option<Range<u64>> {
        self.map.iter().next_back().map(|(&s, &e)| s..e)
    }

    pub fn iter(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.map.iter().map(|(&s, &e)| s..e)
    }

    /// Insert `r`; call `newly(sub)` for every sub-range of `r` that was not already present,
    /// in increasing order.
    pub fn insert_with(&mut self, r: Range<u64>, mut newly: impl FnMut(Range<u64>)) {
        if r.start >= r.end {
            return;
        }
        let mut start = r.start;
        let mut end = r.end;
        // Merge with a range that starts before and overlaps or touches.
        if let Some((&s, &e)) = self.map.range(..=start).next_back() {
            if e >= start {
                if e >= end {
                    return; // fully covered
                }
                start = s;
                self.map.remove(&s);
                // Report from the old end.
                let mut cursor = e;
                self.absorb_following(&mut cursor, &mut end, &mut newly);
                self.map.insert(start, end);
                return;
            }
        }
        let mut cursor = start;
        self.absorb_following(&mut cursor, &mut end, &mut newly);
        self.map.insert(start, end);
    }

    /// Absorb every stored range starting in `[cursor, end]`, reporting the gaps as new.
    fn absorb_following(
        &mut self,
        cursor: &mut u64,
        end: &mut u64,
        newly: &mut impl FnMut(Range<u64>),
    ) {
        loop {
            let next = self.map.range(*cursor..=*end).next().map(|(&s, &e)| (s, e));
            match next {
                Some((s, e)) => {
                    if s > *cursor {
                        newly(*cursor..s);
                    }
                    self.map.remove(&s);
                    if e > *end {
                        *end = e;
                        *cursor = e;
                        return;
                    }
                    *cursor = e;
                }
                None => {
                    if *end > *cursor {
                        newly(*cursor..*end);
                    }
                    return;
                }
            }
        }
    }

    pub fn insert(&mut self, r: Range<u64>) {
        self.insert_with(r, |_| {});
    }

    /// Remove everything below `x`.
    pub fn remove_below(&mut self, x: u64) {
        while let Some((&s, &e)) = self.map.iter().next() {
            if s >= x {
                break;
            }
            self.map.remove(&s);
            if e > x {
                self.map.insert(x, e);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(rs: &mut RangeSet, r: Range<u64>) -> Vec<Range<u64>> {
        let mut v = Vec::new();
        rs.insert_with(r, |x| v.push(x));
        v
    }

    #[test]
    fn reports_only_new_parts() {
        let mut rs = RangeSet::new();
        assert_eq!(collect(&mut rs, 10..20), vec![10..20]);
        assert_eq!(collect(&mut rs, 30..40), vec![30..40]);
        assert_eq!(collect(&mut rs, 5..45), vec![5..10, 20..30, 40..45]);
        assert_eq!(rs.iter().collect::<Vec<_>>(), vec![5..45]);
        assert_eq!(collect(&mut rs, 10..20), vec![]);
        assert_eq!(collect(&mut rs, 44..50), vec![45..50]);
        assert_eq!(rs.len_ranges(), 1);
    }

    #[test]
    fn adjacent_merge_and_remove_below() {
        let mut rs = RangeSet::new();
        rs.insert(0..5);
        rs.insert(5..10);
        rs.insert(20..30);
        assert_eq!(rs.len_ranges(), 2);
        rs.remove_below(25);
        assert_eq!(rs.iter().collect::<Vec<_>>(), vec![25..30]);
        assert!(rs.contains(29) && !rs.contains(30) && !rs.contains(24));
    }

    #[test]
    fn matches_a_naive_set() {
        let mut rs = RangeSet::new();
        let mut naive = std::collections::BTreeSet::new();
        let mut x: u64 = 12345;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let s = (x >> 33) % 500;
            let len = (x >> 20) % 12;
            let mut newly = 0;
            rs.insert_with(s..s + len, |r| newly += r.end - r.start);
            let before = naive.len();
            for v in s..s + len {
                naive.insert(v);
            }
            assert_eq!(newly as usize, naive.len() - before);
        }
        let from_rs: Vec<u64> = rs.iter().flatten().collect();
        assert_eq!(from_rs, naive.into_iter().collect::<Vec<_>>());
    }
}
