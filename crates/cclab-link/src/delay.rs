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
        DelayLine { delay, q: VecDeque::new() }
    }
    pub fn delay(&self) -> Nanos {
        self.delay
    }
    pub fn push(&mut self, now: Nanos, item: T) {
        self.q.push_back((now + self.delay, item));
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
