//! Windowed min/max filters over a sliding window of time or rounds.
//!
//! Same algorithm as Linux `lib/win_minmax.c` (Kathleen Nichols'): keep the best, second-best
//! and third-best samples of disjoint sub-windows so a running max (or min) over a window of
//! length `win` costs O(1) per sample and three slots of memory. Time is whatever unit the
//! caller uses (us, round counts...).

#[derive(Clone, Copy, Debug, Default)]
struct Sample {
    t: u64,
    v: u64,
}

/// Running extreme over a window. `better(a, b)` is true if `a` should replace `b`.
#[derive(Clone, Debug)]
pub struct WindowedFilter {
    s: [Sample; 3],
    is_max: bool,
}

impl WindowedFilter {
    pub fn new_max() -> Self {
        WindowedFilter {
            s: [Sample::default(); 3],
            is_max: true,
        }
    }
    pub fn new_min() -> Self {
        WindowedFilter {
            s: [Sample { t: 0, v: u64::MAX }; 3],
            is_max: false,
        }
    }

    /// Current best value.
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    fn better_or_eq(&self, a: u64, b: u64) -> bool {
        if self.is_max {
            a >= b
        } else {
            a <= b
        }
    }

    /// Forget everything and start again with `(t, v)`.
    pub fn reset(&mut self, t: u64, v: u64) {
        self.s = [Sample { t, v }; 3];
    }

    /// Add sample `v` at time `t` for a window of length `win`; returns the current best.
    pub fn update(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        // A new best, or nothing in the window: restart.
        if self.better_or_eq(v, self.s[0].v) || t.wrapping_sub(self.s[2].t) > win {
            self.reset(t, v);
            return v;
        }
        if self.better_or_eq(v, self.s[1].v) {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.better_or_eq(v, self.s[2].v) {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            // The best sample expired: promote the others, then the new sample.
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            // A quarter of the window passed without a second choice: take one.
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            // Half the window passed without a third choice: take one.
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_expires_after_window() {
        let mut f = WindowedFilter::new_max();
        f.update(10, 0, 100);
        for t in 1..=10 {
            assert_eq!(f.update(10, t, 50), 100);
        }
        // After the window the old peak is gone.
        assert_eq!(f.update(10, 12, 50), 50);
    }

    #[test]
    fn min_tracks_minimum() {
        let mut f = WindowedFilter::new_min();
        f.update(100, 0, 30);
        f.update(100, 1, 20);
        assert_eq!(f.update(100, 2, 40), 20);
        assert_eq!(f.update(100, 200, 40), 40);
    }
}
