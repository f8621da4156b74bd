//! The per-ACK RTT of each flow as the element sees it, with the sender's rules, and the
//! wrapping comparison of TCP sequence numbers.

use std::collections::VecDeque;

pub(super) fn seq_lt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}
pub(super) fn seq_le(a: u32, b: u32) -> bool {
    !seq_lt(b, a)
}

struct Sent {
    start: u32,
    end: u32,
    t: u64,
    sacked: bool,
    retx: bool,
}

/// Per-ACK RTT of one flow as the element sees it, with the sender's rules
/// (`tcp_ack_update_rtt`, and the simulator's `rtt_sample`): each first transmission of a
/// segment is stamped when it reaches the element; an ACK that newly acknowledges
/// segments (cumulatively, or by a SACK block) gives one sample, from the most recently sent
/// of them, to the ACK's arrival; the cumulative part gives none when it covers a
/// retransmitted segment (Karn), SACKed retransmissions give none. The caller adds the ACK's
/// remaining one-way delay (ACKs are sampled when they reach the element).
#[derive(Default)]
pub struct RttTrack {
    q: VecDeque<Sent>,
    max_end: Option<u32>,
}

impl RttTrack {
    /// A data segment `[start, end)` reached the element at `now`.
    pub fn on_data(&mut self, start: u32, end: u32, now: u64) {
        match self.max_end {
            Some(m) if seq_le(end, m) => {
                // A retransmission: its segments give no cumulative sample.
                let i = self.q.partition_point(|s| seq_le(s.end, start));
                for s in self.q.range_mut(i..) {
                    if seq_le(end, s.start) {
                        break;
                    }
                    s.retx = true;
                }
            }
            _ => {
                let st = match self.max_end {
                    Some(m) if seq_lt(start, m) => m,
                    _ => start,
                };
                if self.q.len() >= 1 << 20 {
                    self.q.pop_front();
                }
                self.q.push_back(Sent {
                    start: st,
                    end,
                    t: now,
                    sacked: false,
                    retx: false,
                });
                self.max_end = Some(end);
            }
        }
    }

    /// An ACK (cumulative `ack`, SACK blocks) reached the element at `now`: the RTT sample.
    pub fn on_ack(&mut self, ack: u32, sacks: &[(u32, u32)], now: u64) -> Option<u64> {
        let mut cum_t: Option<u64> = None;
        let mut cum_retx = false;
        while let Some(f) = self.q.front() {
            if !seq_le(f.end, ack) {
                break;
            }
            let f = self.q.pop_front().expect("front");
            if !f.sacked {
                if f.retx {
                    cum_retx = true;
                } else {
                    cum_t = Some(cum_t.map_or(f.t, |x| x.max(f.t)));
                }
            }
        }
        let mut sack_t: Option<u64> = None;
        for &(l, r) in sacks {
            if seq_le(r, ack) {
                continue; // D-SACK
            }
            let i = self.q.partition_point(|s| seq_lt(s.start, l));
            for s in self.q.range_mut(i..) {
                if seq_lt(r, s.end) {
                    break;
                }
                if !s.sacked {
                    s.sacked = true;
                    if !s.retx {
                        sack_t = Some(sack_t.map_or(s.t, |x| x.max(s.t)));
                    }
                }
            }
        }
        let t = sack_t.or(if cum_retx { None } else { cum_t })?;
        Some(now.saturating_sub(t))
    }
}
