//! The cubic curve and its Reno emulation (`bictcp_update()`): the constants that fold
//! `beta` and `bic_scale`, the kernel's cube root, and the per-ACK `cnt` from the curve
//! and from the TCP-friendly estimate.

use super::{usecs_to_jiffies, Cubic};

/// Scale of `beta` (`BICTCP_BETA_SCALE`).
pub(super) const BETA_SCALE: u32 = 1024;
/// Multiplicative decrease: 717/1024 ~ 0.7.
pub(super) const BETA: u32 = 717;
/// C scaled by 1024: 41/1024 ~ 0.04, times the 100 ms reference RTT factor of 10 gives 0.4.
const BIC_SCALE: u32 = 41;
/// The curve's time unit is 1/2^BICTCP_HZ seconds.
const BICTCP_HZ: u32 = 10;

/// Reno-emulation step, in ACKed packets per cwnd, scaled by 8:
/// `8 (1024 + beta) / 3 / (1024 - beta)` = 15 with integer division, as Linux computes it.
pub(super) const BETA_SCALE_FRIENDLY: u32 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// `c / rtt` scaled by 1024: `bic_scale * 10` = 410.
pub(super) const CUBE_RTT_SCALE: u32 = BIC_SCALE * 10;
/// `2^(10 + 3 * BICTCP_HZ) / (bic_scale * 10)`: turns `W_max - cwnd` into `K^3` in
/// (1/1024 s)^3 units.
pub(super) const CUBE_FACTOR: u64 = (1u64 << (10 + 3 * BICTCP_HZ)) / (BIC_SCALE as u64 * 10);

/// 1-based index of the most significant set bit, 0 for 0 (kernel `fls64`).
pub(super) fn fls64(x: u64) -> u32 {
    64 - x.leading_zeros()
}

/// Approximate cube root with Linux's table-plus-one-Newton-step method (see module docs).
///
/// `CBRT_TABLE[i]` is roughly `cbrt(i * 2^18) - 1`, i.e. the cube root of a 6-bit value in
/// 1/64 units, hand-tuned in the kernel; the values are taken unchanged.
pub fn cubic_root(a: u64) -> u32 {
    const CBRT_TABLE: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, //
        123, 129, 134, 138, 143, 147, 151, 156, //
        157, 161, 164, 168, 170, 173, 176, 179, //
        181, 185, 187, 190, 192, 194, 197, 199, //
        200, 202, 204, 206, 209, 211, 213, 215, //
        217, 219, 221, 222, 224, 225, 227, 229, //
        231, 232, 234, 236, 237, 239, 240, 242, //
        244, 245, 246, 248, 250, 251, 252, 254, //
    ];

    let bits = fls64(a);
    if bits < 7 {
        // Small inputs (< 64) come straight from the table, rounded.
        return (CBRT_TABLE[a as usize] as u32 + 35) >> 6;
    }
    // `b` ~ bits/3 - 1: the cube root has about `b` more bits than the table entry, and
    // `a >> 3b` leaves a 6-bit index into the table.
    let b = ((bits * 84) >> 8) - 1;
    let idx = (a >> (b * 3)) as usize;
    let x0 = ((CBRT_TABLE[idx] as u32 + 10) << b) >> 6;

    // One Newton step for x^3 = a, using x*(x-1) in place of x^2 (as the kernel does), and
    // 341/1024 in place of 1/3. x0 >= 2 here, so the divisor is never 0.
    let x0 = x0 as u64;
    let q = (a / (x0 * (x0 - 1))) as u32;
    let x = (2 * x0 as u32).wrapping_add(q);
    x.wrapping_mul(341) >> 10
}

impl Cubic {
    /// `bictcp_update`: recompute `cnt` for the current cwnd. `now` is in jiffies.
    pub(super) fn update(&mut self, cwnd: u32, acked: u32, now: u32, hz: u32) {
        self.ack_cnt = self.ack_cnt.wrapping_add(acked);

        // Same cwnd and evaluated less than ~31 ms ago: keep the old cnt (and do not even
        // advance the Reno estimate; its ACK count keeps accumulating).
        if self.last_cwnd == cwnd && (now.wrapping_sub(self.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }

        // The curve itself moves at most once per jiffy; within the same jiffy only the
        // Reno estimate is refreshed. A window reduction clears epoch_start, which forces
        // a fresh evaluation.
        if !(self.epoch_start != 0 && now == self.last_time) {
            self.update_cubic(cwnd, acked, now, hz);
        }

        if self.tcp_friendliness {
            self.update_friendly(cwnd);
        }

        // Never faster than +1 per 2 ACKed packets (x1.5 per RTT).
        self.cnt = self.cnt.max(2);
    }

    /// The cubic-curve part of `bictcp_update`.
    pub(super) fn update_cubic(&mut self, cwnd: u32, acked: u32, now: u32, hz: u32) {
        self.last_cwnd = cwnd;
        self.last_time = now;

        if self.epoch_start == 0 {
            // New epoch: anchor the curve here.
            self.epoch_start = now;
            self.ack_cnt = acked;
            self.tcp_cwnd = cwnd;
            if self.last_max_cwnd <= cwnd {
                // Already at or beyond W_max: start on the convex side right away.
                self.bic_k = 0;
                self.bic_origin_point = cwnd;
            } else {
                // K^3 = (W_max - cwnd) / C, in (1/1024 s)^3.
                self.bic_k =
                    cubic_root(CUBE_FACTOR.wrapping_mul((self.last_max_cwnd - cwnd) as u64));
                self.bic_origin_point = self.last_max_cwnd;
            }
        }

        // Elapsed time in the epoch (signed in the kernel, then widened), evaluated one
        // delay_min ahead, converted from jiffies to 1/1024 s.
        let elapsed = (now.wrapping_sub(self.epoch_start) as i32) as i64 as u64;
        let t =
            (elapsed.wrapping_add(usecs_to_jiffies(self.delay_min, hz)) << BICTCP_HZ) / hz as u64;

        let k = self.bic_k as u64;
        let offs = k.abs_diff(t);

        // C * (t - K)^3 in packets.
        let delta = ((CUBE_RTT_SCALE as u64)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            .wrapping_mul(offs)
            >> (10 + 3 * BICTCP_HZ)) as u32;
        let bic_target = if t < k {
            self.bic_origin_point.wrapping_sub(delta)
        } else {
            self.bic_origin_point.wrapping_add(delta)
        };

        // Spread the distance to the target over one window of ACKs; if the target is not
        // above cwnd, creep (+1 per 100 windows).
        self.cnt = if bic_target > cwnd {
            cwnd / (bic_target - cwnd)
        } else {
            100u32.wrapping_mul(cwnd)
        };

        // No loss seen yet (W_max unknown): grow at least 5% per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
    }

    /// The TCP-friendly (Reno emulation) part of `bictcp_update`.
    pub(super) fn update_friendly(&mut self, cwnd: u32) {
        // The estimate gains one packet per `cwnd * 15 / 8` ACKed packets. Linux loops
        // "while ack_cnt > step"; this is the same in closed form.
        let step = cwnd.wrapping_mul(BETA_SCALE_FRIENDLY) >> 3;
        if step > 0 && self.ack_cnt > step {
            let n = (self.ack_cnt - 1) / step;
            self.ack_cnt -= n * step;
            self.tcp_cwnd = self.tcp_cwnd.wrapping_add(n);
        }

        if self.tcp_cwnd > cwnd {
            // Reno would be ahead: grow at least fast enough to close the gap in one window.
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            if self.cnt > max_cnt {
                self.cnt = max_cnt;
            }
        }
    }
}
