use crate::Nanos;
use std::collections::VecDeque;

/// A fixed propagation delay: items leave in the order they entered, `delay` later.
#[derive(Clone, Debug)]
pub struct DelayLine<T> {
    delay: Nanos,
    q: VecDeque<(Nanos, T)>,
}

impl<T> DelayLine<T> {
    pub fn new(delay: Nanos) -> Self {
        DelayLine {
            delay,
            q: VecDeque::new(),
        }
    }
    pub fn delay(&self) -> Nanos {
        self.delay
    }
    pub fn push(&mut self, now: Nanos, item: T) {
        self.q.push_back((now + self.delay, item));
    }
    /// Enter `item` now, to leave `extra` later than the line's delay, but never before
    /// what entered earlier (a host that is slow to handle one packet holds up the next).
    pub fn push_after(&mut self, now: Nanos, extra: Nanos, item: T) {
        let due = now + self.delay + extra;
        let due = self.q.back().map_or(due, |&(last, _)| due.max(last));
        self.q.push_back((due, item));
    }
    /// When the oldest item is due.
    pub fn next_due(&self) -> Option<Nanos> {
        self.q.front().map(|&(t, _)| t)
    }
    /// The oldest item, if due at `now`.
    pub fn pop_due(&mut self, now: Nanos) -> Option<T> {
        match self.q.front() {
            Some(&(t, _)) if t <= now => self.q.pop_front().map(|(_, x)| x),
            _ => None,
        }
    }
    pub fn len(&self) -> usize {
        self.q.len()
    }
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_late_item_holds_up_the_ones_behind_it() {
        let mut d = DelayLine::new(100);
        d.push_after(0, 50, 'a'); // due 150
        d.push_after(10, 0, 'b'); // due 110, but not before 'a'
        d.push_after(20, 5, 'c'); // due 125 -> 150
        d.push_after(200, 0, 'd'); // due 300
        assert_eq!(d.next_due(), Some(150));
        assert_eq!(d.pop_due(149), None);
        let out: Vec<char> = std::iter::from_fn(|| d.pop_due(150)).collect();
        assert_eq!(
            out,
            vec!['a', 'b', 'c'],
            "the train leaves together, in order"
        );
        assert_eq!(d.next_due(), Some(300));
    }
}
