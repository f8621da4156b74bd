//! A log-linear histogram: constant memory, ~0.8% relative error, exact below 128.

const SUB_BITS: u32 = 7;
const SUB: usize = 1 << SUB_BITS;

#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    total: u64,
    min: u64,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: Vec::new(),
            total: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    fn bucket(v: u64) -> usize {
        if v < SUB as u64 {
            return v as usize;
        }
        let e = 63 - v.leading_zeros(); // >= SUB_BITS
        let shift = e - SUB_BITS;
        let sub = (v >> shift) as usize - SUB; // 0..SUB
        SUB + (shift as usize) * SUB + sub
    }

    /// Midpoint of a bucket's range.
    fn value_of(b: usize) -> u64 {
        if b < SUB {
            return b as u64;
        }
        let shift = ((b - SUB) / SUB) as u32;
        let sub = ((b - SUB) % SUB + SUB) as u64;
        let lo = sub << shift;
        lo + ((1u64 << shift) >> 1)
    }

    /// Once per packet through the bottleneck: inlined into the caller, with the rare growth
    /// of the bucket array out of line (`grow`).
    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = Self::bucket(v);
        if b >= self.counts.len() {
            self.grow(b);
        }
        self.counts[b] += 1;
        self.total += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// Room for bucket `b` (a value larger than any before).
    #[cold]
    #[inline(never)]
    fn grow(&mut self, b: usize) {
        self.counts.resize(b + 1, 0);
    }

    pub fn count(&self) -> u64 {
        self.total
    }
    pub fn min(&self) -> Option<u64> {
        (self.total > 0).then_some(self.min)
    }
    pub fn max(&self) -> Option<u64> {
        (self.total > 0).then_some(self.max)
    }

    /// The `q`-quantile (0..=1), `None` if empty. Clamped to the exact min and max.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        if q >= 1.0 {
            return Some(self.max);
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(Self::value_of(b).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    pub fn merge(&mut self, other: &Histogram) {
        if other.counts.len() > self.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_within_one_percent() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        for (q, want) in [
            (0.5, 50_000_000.0),
            (0.95, 95_000_000.0),
            (0.99, 99_000_000.0),
        ] {
            let got = h.quantile(q).unwrap() as f64;
            assert!((got / want - 1.0).abs() < 0.01, "q{q}: {got} vs {want}");
        }
        assert_eq!(h.min(), Some(1000));
        assert_eq!(h.quantile(1.0), Some(100_000_000));
        assert_eq!(Histogram::new().quantile(0.5), None);
    }

    #[test]
    fn small_values_exact() {
        let mut h = Histogram::new();
        for v in [3, 3, 5, 100] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(3));
        assert_eq!(h.quantile(0.75), Some(5));
    }
}
