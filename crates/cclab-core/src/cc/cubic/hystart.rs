//! HyStart (`hystart_update()`): leaving slow start early, on an ACK train that lasts
//! longer than (half) the minimum RTT, or on this round's minimum RTT rising by 1/8 of
//! the minimum (clamped to 4-16 ms) once 8 samples are in. Either sets `ssthresh = cwnd`.

use super::{Cubic, USEC_PER_MSEC, USEC_PER_SEC};
use crate::cc::TcpState;

/// `hystart_detect` bit: ACK-train detection.
pub const HYSTART_ACK_TRAIN: u8 = 0x1;
/// `hystart_detect` bit: delay-increase detection.
pub const HYSTART_DELAY: u8 = 0x2;
/// RTT samples per round before the delay test may fire.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// Lower clamp of the delay-increase threshold, us.
const HYSTART_DELAY_MIN: u32 = 4000;
/// Upper clamp of the delay-increase threshold, us.
const HYSTART_DELAY_MAX: u32 = 16000;

impl Cubic {
    /// `bictcp_hystart_reset`: start a new HyStart round ending at the current snd_nxt.
    pub(super) fn hystart_reset(&mut self, tp: &TcpState) {
        let now = tp.now_us as u32;
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `hystart_ack_delay`: allowance for TSO/GRO batching in the ACK-train test, us:
    /// the time to send 4 GSO-sized bursts at the pacing rate, capped at 1 ms.
    pub(super) fn hystart_ack_delay(&self, tp: &TcpState) -> u32 {
        let rate = tp.pacing_rate;
        if rate == 0 {
            return 0;
        }
        (self.gso_max_size as u64 * 4 * USEC_PER_SEC / rate).min(USEC_PER_MSEC) as u32
    }

    /// `hystart_update`: called in slow start with an RTT sample `delay` (us).
    pub(super) fn hystart_update(&mut self, tp: &mut TcpState, delay: u32) {
        // A segment sent after the round began has been ACKed: a new round starts.
        if tp.snd_una > self.end_seq {
            self.hystart_reset(tp);
        }

        if tp.snd_cwnd < self.hystart_low_window {
            return;
        }

        if self.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = tp.now_us as u32;
            // Only closely spaced ACKs extend the train.
            if (now.wrapping_sub(self.last_ack) as i32) <= self.hystart_ack_delta_us as i32 {
                self.last_ack = now;

                let mut threshold = self.delay_min.wrapping_add(self.hystart_ack_delay(tp));
                // Unpaced senders emit the window in a burst, so a train lasting half the
                // minimum RTT already means the pipe is full. With fq pacing the burst can
                // itself stretch to RTT/2, so the full delay_min is used.
                if !self.fq_pacing && !tp.paced {
                    threshold >>= 1;
                }

                // The kernel compares an s32 against a u32 here, which C performs unsigned.
                if now.wrapping_sub(self.round_start) > threshold {
                    self.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }

        if self.hystart_detect & HYSTART_DELAY != 0 {
            // Track this round's minimum RTT; judge it only once enough samples are in.
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN, HYSTART_DELAY_MAX);
                if self.curr_rtt > self.delay_min.wrapping_add(thresh) {
                    self.found = true;
                    tp.snd_ssthresh = tp.snd_cwnd;
                }
            }
        }
    }
}
