//! A set of `u64`s stored as disjoint half-open ranges, for SACK scoreboards and
//! out-of-order queues.
//!
//! The ranges sit sorted in a ring buffer. Lookups are a binary search, O(log n) in the
//! number of ranges; an insert or merge moves the ranges on the shorter side of it, and the
//! common cases (data arriving above every hole, the cumulative point passing the lowest
//! range) touch only an end. Nothing costs the number of elements covered.

use std::collections::VecDeque;
use std::ops::Range;

#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    /// (start, end), sorted, disjoint and non-adjacent.
    ranges: VecDeque<(u64, u64)>,
}

impl RangeSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of disjoint ranges.
    pub fn len_ranges(&self) -> usize {
        self.ranges.len()
    }

    #[inline]
    pub fn contains(&self, x: u64) -> bool {
        self.range_containing(x).is_some()
    }

    /// Index of the first range starting above `x`.
    #[inline]
    fn after(&self, x: u64) -> usize {
        match self.ranges.back() {
            // Above every range's start: the usual case for new data.
            Some(&(s, _)) if s <= x => self.ranges.len(),
            _ => self.ranges.partition_point(|&(s, _)| s <= x),
        }
    }

    /// The stored range that contains `x`, if any.
    #[inline]
    pub fn range_containing(&self, x: u64) -> Option<Range<u64>> {
        let i = self.after(x).checked_sub(1)?;
        let (s, e) = self.ranges[i];
        (x < e).then_some(s..e)
    }

    /// Lowest stored range.
    pub fn first(&self) -> Option<Range<u64>> {
        self.ranges.front().map(|&(s, e)| s..e)
    }

    /// Highest stored range.
    pub fn last(&self) -> Option<Range<u64>> {
        self.ranges.back().map(|&(s, e)| s..e)
    }

    pub fn iter(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.ranges.iter().map(|&(s, e)| s..e)
    }

    /// Insert `r`; call `newly(sub)` for every sub-range of `r` that was not already present,
    /// in increasing order.
    pub fn insert_with(&mut self, r: Range<u64>, mut newly: impl FnMut(Range<u64>)) {
        if r.start >= r.end {
            return;
        }
        // At or above the highest range's start (data arriving above every hole, a SACK block
        // growing the newest range): only that range can change, or a new one follows it.
        if let Some(last) = self.ranges.back_mut() {
            if r.start > last.1 {
                newly(r.clone());
                self.ranges.push_back((r.start, r.end));
                return;
            }
            if r.start >= last.0 {
                if r.end > last.1 {
                    newly(last.1..r.end);
                    last.1 = r.end;
                }
                return;
            }
        }
        // Ranges lo..hi overlap or touch `r` and merge with it.
        let mut lo = self.after(r.start);
        if lo > 0 && self.ranges[lo - 1].1 >= r.start {
            lo -= 1;
        }
        let hi = self.after(r.end);
        if lo == hi {
            newly(r.clone());
            self.ranges.insert(lo, (r.start, r.end));
            return;
        }
        let mut cursor = r.start;
        for &(s, e) in self.ranges.range(lo..hi) {
            if s > cursor {
                newly(cursor..s);
            }
            cursor = cursor.max(e);
        }
        if r.end > cursor {
            newly(cursor..r.end);
        }
        let start = r.start.min(self.ranges[lo].0);
        let end = r.end.max(self.ranges[hi - 1].1);
        self.ranges[lo] = (start, end);
        if hi - lo > 1 {
            self.ranges.drain(lo + 1..hi);
        }
    }

    #[inline]
    pub fn insert(&mut self, r: Range<u64>) {
        // The highest range grown by what starts inside it or right after it (an out-of-order
        // queue's data arriving in order above every hole): one store, in the caller.
        if let Some(last) = self.ranges.back_mut() {
            if last.0 <= r.start && r.start <= last.1 && last.1 <= r.end {
                last.1 = r.end;
                return;
            }
        }
        self.insert_with(r, |_| {});
    }

    /// Remove everything below `x`.
    pub fn remove_below(&mut self, x: u64) {
        while let Some(f) = self.ranges.front_mut() {
            if f.1 <= x {
                self.ranges.pop_front();
            } else {
                f.0 = f.0.max(x);
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

    /// The highest range grown from within, from its end and past it, as a scoreboard's
    /// newest SACK block and an out-of-order queue above every hole grow it.
    #[test]
    fn the_highest_range_grows_and_reports_only_new_parts() {
        let mut rs = RangeSet::new();
        assert_eq!(collect(&mut rs, 0..2), vec![0..2]);
        assert_eq!(collect(&mut rs, 10..12), vec![10..12]);
        assert_eq!(collect(&mut rs, 12..13), vec![12..13]);
        assert_eq!(collect(&mut rs, 11..15), vec![13..15]);
        assert_eq!(collect(&mut rs, 10..14), vec![]);
        assert_eq!(collect(&mut rs, 16..17), vec![16..17]);
        assert_eq!(rs.iter().collect::<Vec<_>>(), vec![0..2, 10..15, 16..17]);
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

    /// Inserts, lookups and cuts from below against a naive set, with the set kept in a
    /// window that moves up as a SACK scoreboard's does.
    #[test]
    fn lookups_and_cuts_match_a_naive_set() {
        let mut rs = RangeSet::new();
        let mut naive = std::collections::BTreeSet::new();
        let mut x: u64 = 99;
        let mut floor = 0u64;
        for i in 0..5000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let s = floor + (x >> 33) % 300;
            let len = (x >> 20) % 9;
            rs.insert(s..s + len);
            naive.extend(s..s + len);
            if i % 7 == 0 {
                floor += (x >> 40) % 40;
                rs.remove_below(floor);
                naive.retain(|&v| v >= floor);
            }
            let probe = floor.saturating_sub(5) + (x >> 45) % 320;
            assert_eq!(rs.contains(probe), naive.contains(&probe), "{probe}");
            if let Some(r) = rs.range_containing(probe) {
                assert!(r.contains(&probe));
                assert!(r.start == 0 || !naive.contains(&(r.start - 1)) || r.start == floor);
                assert!(!naive.contains(&r.end));
            }
            let ranges: Vec<_> = rs.iter().collect();
            assert!(
                ranges.windows(2).all(|w| w[0].end < w[1].start),
                "{ranges:?}"
            );
            assert_eq!(rs.first(), ranges.first().cloned());
            assert_eq!(rs.last(), ranges.last().cloned());
        }
        let from_rs: Vec<u64> = rs.iter().flatten().collect();
        assert_eq!(from_rs, naive.into_iter().collect::<Vec<_>>());
    }
}
