// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Prague (the L4S team's tcp_prague.c, module version 0.7) as a BPF struct_ops controller.
 *
 * Ported from github.com/L4STeam/linux net/ipv4/tcp_prague.c at commit 893e1479 (the
 * version crates/cclab-core/src/cc/prague models): the same state, constants and
 * fixed-point units. Prague is DCTCP made safe for the Internet (RFC 9331 appendix A):
 * alpha, the EWMA (gain 1/16) of the fraction of delivered segments that arrived CE, in
 * 2^-24 units and kept times 16; a fractional window in 2^-20 packets that every ACK grows
 * by its unmarked segments and a CE round cuts by alpha/2; RTT independence towards a 25 ms
 * target after 4 rounds out of slow start; pacing at cwnd per srtt; a rate-based mode
 * below 4 packets of window; Reno's halving on loss.
 *
 * What mainline 6.18 offers a BPF controller, and how the port stands in where it lacks
 * what the L4S team's kernel has (docs/kernel.md "BPF controllers"):
 * - Accurate ECN: TCP_CONG_NEEDS_ACCECN makes the connection negotiate AccECN whatever
 *   net.ipv4.tcp_ecn says (6.18 refuses tcp_ecn = 3); the kernel then counts CE-marked
 *   segments from the ACE field into tp->delivered_ce. The L4S kernel hands Prague
 *   rs->ece_delta, the marks this ACK reported; here it is tp->delivered_ce's growth
 *   since the previous ACK, which is the same count.
 * - ECT(1): 6.18 sends ECT(1) only on the SYN (TCP_CONG_ECT_1_NEGOTIATION); its AccECN
 *   data goes out ECT(0) (tcp_ecn_send() -> INET_ECN_xmit()), and a BPF program cannot
 *   change the socket's TOS. cclab's lab element rewrites ECT(0) to ECT(1) on the packets
 *   of flows whose controller sends ECT(1) (before any queue sees them), standing in for
 *   the L4S kernel's TCP_ECN_ECT_1.
 * - No tso_segs operation in 6.18 (only min_tso_segs, a floor): TSO bursts follow the
 *   kernel's autosizing (about 1 ms of data at the pacing rate) instead of Prague's
 *   2^-12 s (244 us).
 * - The L4S kernel lowers the MSS (down to 150 bytes) below two packets of virtual window
 *   (tcp_sync_mss with mss_cache_set_by_cca): not available to BPF, not done.
 * - Without ECN (the peer does no AccECN: NO_FALLBACK_RFC3168 keeps it from classic ECN)
 *   the module swaps in a Reno twin; a BPF program cannot swap its ops, so it keeps a
 *   flag and calls Reno's functions.
 * - Module parameters are constants (their defaults); no get_info.
 */
#include "cclab_tcp.h"

char LICENSE[] SEC("license") = "GPL";

#define MIN_CWND_RTT 2U
#define MIN_CWND_VIRT 2U
#define MINIMUM_RATE 12500ULL /* bytes/s: 100 kbit/s */
#define ALPHA_BITS 24U
#define MAX_ALPHA (1ULL << ALPHA_BITS)
#define CWND_UNIT 20U
#define ONE_CWND (1ULL << CWND_UNIT)
#define SHIFT_G 4 /* EWMA gain 1/2^4 */
#define RTT_TRANSITION 4 /* rounds after slow start before RTT independence */
#define RTT_TARGET_US (25 * USEC_PER_MSEC)
#define MAX_SCALED_RTT_US (100 * USEC_PER_MSEC)
#define MTU_SYS 1500ULL
#define RATE_OFFSET 4 /* 4/128, about 3% */
#define OFFSET_UNIT 7
#define HSRTT_SHIFT 7
#define RTT2SEC_SHIFT 23
#define CWND_TRANSIT 4 /* rate-based mode at or below this many MTU_SYS of window */

/* The flags of tcp_congestion_ops this controller sets (include/net/tcp.h, 6.18). */
#define TCP_CONG_NEEDS_ACCECN 0x4
#define TCP_CONG_ECT_1_NEGOTIATION 0x8
#define TCP_CONG_NO_FALLBACK_RFC3168 0x10

/* The per-socket state (icsk_ca_priv, 104 bytes). The module's mtu_cache and
 * max_tso_burst serve the MSS lowering and tso_segs, which the port lacks. */
struct prague {
	u64 cwr_stamp;
	u64 alpha_stamp; /* us: when alpha was last updated */
	u64 upscaled_alpha; /* alpha x 16, in 2^-24 */
	u64 ai_ack_increase; /* increase per unmarked segment ACKed, 2^-20 packets */
	u64 hsrtt_us; /* srtt (us << 3) averaged over rounds, x 2^7 */
	u64 frac_cwnd; /* the window, 2^-20 packets */
	u64 rate_bytes; /* pacing rate, bytes/s */
	u64 loss_rate_bytes;
	u32 loss_cwnd;
	u32 old_delivered; /* tp->delivered at round start */
	u32 old_delivered_ce; /* tp->delivered_ce at round start */
	u32 next_seq; /* tp->snd_nxt at round start */
	u32 round; /* rounds since slow start ended */
	u32 seen_delivered_ce; /* tp->delivered_ce at the previous ACK (rs->ece_delta) */
	u8 saw_ce; /* a CE mark seen: an AQM is on the path */
	u8 cwnd_mode; /* 1: rate-based */
	u8 in_loss;
	u8 reno; /* AccECN was not negotiated: behave as Reno */
};

static __always_inline struct prague *prague_ca(const struct sock *sk)
{
	return inet_csk_ca(sk);
}

static __always_inline bool in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* tcp_is_cwnd_limited(). */
static __always_inline bool is_cwnd_limited(const struct tcp_sock *tp)
{
	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	if (in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

/* tcp_packets_in_flight(). */
static __always_inline u32 packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* tcp_mss_to_mtu() on IPv4 (the lab's family): MSS + TCP header with options + 20. */
static __always_inline u64 mss_to_mtu(const struct tcp_sock *tp)
{
	return (u64)tp->mss_cache + tp->tcp_header_len + 20;
}

/* (a * b) >> shift without 128-bit arithmetic (BPF has none): exact while the low part's
 * product fits, i.e. b < 2^(64 - shift). */
static __always_inline u64 mul_shr(u64 a, u64 b, u32 shift)
{
	u64 mask = (1ULL << shift) - 1;

	return (a >> shift) * b + (((a & mask) * b) >> shift);
}

static __always_inline u64 div_round_up(u64 n, u64 d)
{
	return (n + d - 1) / d;
}

static __always_inline u64 div_round_closest(u64 n, u64 d)
{
	return (n + d / 2) / d;
}

/* tcp_stamp_us_delta(): us from t0 to t1, 0 if negative. */
static __always_inline u64 stamp_delta(u64 t1, u64 t0)
{
	return t1 > t0 ? t1 - t0 : 0;
}

static __always_inline bool is_rtt_indep(const struct tcp_sock *tp, const struct prague *ca)
{
	return !in_slow_start(tp) && ca->round >= RTT_TRANSITION;
}

/* srtt units: us << 3. */
static __always_inline u64 target_rtt(void)
{
	return (u64)RTT_TARGET_US << 3;
}

static __always_inline u64 virtual_rtt(const struct tcp_sock *tp)
{
	return max(target_rtt(), (u64)tp->srtt_us);
}

static __always_inline u64 since_alpha_update(const struct tcp_sock *tp, const struct prague *ca)
{
	return stamp_delta(tp->tcp_mstamp, ca->alpha_stamp);
}

/* Alpha is updated once per round trip, and no more often than once per target RTT once
 * RTT independent, so that flows of different RTTs converge to the same alpha. */
static __always_inline bool should_update_ewma(const struct tcp_sock *tp, const struct prague *ca)
{
	bool e2e_rtt_elapsed = !before(tp->snd_una, ca->next_seq);

	return e2e_rtt_elapsed &&
	       (!is_rtt_indep(tp, ca) || (target_rtt() >> 3) <= since_alpha_update(tp, ca));
}

/* The per-segment additive increase, scaled by (rtt / target)^2 below the target once
 * RTT independent: the window then grows one packet per target RTT in rate terms. */
static __always_inline void ai_ack_increase(const struct tcp_sock *tp, struct prague *ca)
{
	u64 rtt = tp->srtt_us, target = target_rtt();

	if (ca->round < RTT_TRANSITION || !rtt || rtt > ((u64)MAX_SCALED_RTT_US << 3) ||
	    rtt >= target) {
		ca->ai_ack_increase = ONE_CWND;
		return;
	}
	ca->ai_ack_increase = div_round_closest((rtt << CWND_UNIT) * rtt, target * target);
}

static __always_inline u32 frac_cwnd_to_snd_cwnd(const struct tcp_sock *tp, const struct prague *ca)
{
	u64 cwnd = (ca->frac_cwnd + (ONE_CWND - 1)) >> CWND_UNIT;

	return min(max(cwnd, (u64)MIN_CWND_RTT), (u64)tp->snd_cwnd_clamp);
}

static __always_inline u64 pacing_rate_to_frac_cwnd(const struct tcp_sock *tp, const struct prague *ca)
{
	u64 rtt = (ca->hsrtt_us >> HSRTT_SHIFT) ?: tp->srtt_us;

	return div_round_up(mul_shr(ca->rate_bytes, rtt, RTT2SEC_SHIFT - CWND_UNIT),
			    mss_to_mtu(tp));
}

static __always_inline u64 frac_cwnd_to_pacing_rate(const struct tcp_sock *tp, const struct prague *ca)
{
	u64 rate = (USEC_PER_SEC << 3) * mss_to_mtu(tp);

	if (tp->srtt_us)
		rate /= tp->srtt_us;
	return max(mul_shr(ca->frac_cwnd, rate, CWND_UNIT), MINIMUM_RATE);
}

static __always_inline void update_pacing_rate(struct sock *sk, struct tcp_sock *tp,
					       struct prague *ca)
{
	u64 rate;

	if (is_rtt_indep(tp, ca) && ca->cwnd_mode == 1) {
		/* +3% in the first half of each virtual RTT, -3% in the second. */
		u64 offset = mul_shr(ca->rate_bytes, RATE_OFFSET, OFFSET_UNIT);

		if ((virtual_rtt(tp) >> (3 + 1)) <= since_alpha_update(tp, ca))
			rate = ca->rate_bytes - offset;
		else
			rate = ca->rate_bytes + offset;
	} else {
		u64 max_inflight = max(ca->frac_cwnd >> CWND_UNIT, (u64)packets_in_flight(tp));

		rate = (USEC_PER_SEC << 3) * mss_to_mtu(tp);
		if (tp->srtt_us)
			rate /= tp->srtt_us;
		rate = max(rate * max_inflight, MINIMUM_RATE);
		ca->rate_bytes = rate;
	}
	if (tp->snd_cwnd < tp->snd_ssthresh / 2)
		rate <<= 1;
	sk->sk_pacing_rate = min(rate, (u64)sk->sk_max_pacing_rate);
}

static __always_inline void new_round(const struct tcp_sock *tp, struct prague *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered_ce = tp->delivered_ce;
	ca->old_delivered = tp->delivered;
	if (!in_slow_start(tp)) {
		++ca->round;
		if (!ca->round)
			ca->round = RTT_TRANSITION;
	}
	ai_ack_increase(tp, ca);
}

static __always_inline void cwnd_changed(struct tcp_sock *tp, struct prague *ca)
{
	tp->snd_cwnd_stamp = (u32)bpf_jiffies64();
	ai_ack_increase(tp, ca);
}

static __always_inline void update_alpha(struct tcp_sock *tp, struct prague *ca)
{
	if (ca->saw_ce) {
		u64 alpha = ca->upscaled_alpha;
		u64 ecn_segs = tp->delivered_ce - ca->old_delivered_ce;

		/* upscaled_alpha = alpha / g keeps the EWMA's remainder for the next round. */
		if (ecn_segs) {
			u32 acked = tp->delivered - ca->old_delivered;

			ecn_segs = (ecn_segs << ALPHA_BITS) / max(1U, acked);
		}
		alpha = alpha - (alpha >> SHIFT_G) + ecn_segs;
		ca->alpha_stamp = tp->tcp_mstamp;
		ca->upscaled_alpha = min(MAX_ALPHA << SHIFT_G, alpha);
	}
	ca->hsrtt_us = ca->hsrtt_us + (u64)tp->srtt_us - (ca->hsrtt_us >> HSRTT_SHIFT);
	new_round(tp, ca);
}

static __always_inline void update_cwnd(struct tcp_sock *tp, struct prague *ca, s64 acked,
					u32 ece_delta)
{
	u64 increase, new_cwnd;

	if (ece_delta) {
		/* The first mark halves the window (alpha starts at 0: prague_alpha_mode 0). */
		if (!ca->saw_ce)
			ca->frac_cwnd = (ca->frac_cwnd + 1) >> 1;
		ca->saw_ce = 1;
		acked -= ece_delta;
	}
	if (acked <= 0 || ca->in_loss || !is_cwnd_limited(tp))
		goto adjust;

	if (in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		ca->frac_cwnd = (u64)tp->snd_cwnd << CWND_UNIT;
		if (!acked) {
			cwnd_changed(tp, ca);
			return;
		}
	}

	if (is_rtt_indep(tp, ca) && ca->cwnd_mode == 1) {
		u64 vrtt = virtual_rtt(tp), mtu = mss_to_mtu(tp);

		increase = (((u64)acked * MTU_SYS) << RTT2SEC_SHIFT) / vrtt;
		new_cwnd = div_round_up(ca->rate_bytes * vrtt, mtu << RTT2SEC_SHIFT);
		if (new_cwnd)
			ca->rate_bytes += div_round_closest(increase, new_cwnd);
		ca->frac_cwnd = max(ca->frac_cwnd + acked, pacing_rate_to_frac_cwnd(tp, ca));
	} else {
		increase = acked * ca->ai_ack_increase;
		new_cwnd = ca->frac_cwnd;
		if (new_cwnd)
			increase = div_round_closest(increase << CWND_UNIT, new_cwnd);
		increase = increase * MTU_SYS / mss_to_mtu(tp);
		ca->frac_cwnd += max((u64)acked, increase);
		ca->rate_bytes = max(ca->rate_bytes + acked, frac_cwnd_to_pacing_rate(tp, ca));
	}

adjust:
	/* snd_cwnd follows the fractional window one packet per ACK. */
	new_cwnd = frac_cwnd_to_snd_cwnd(tp, ca);
	if (tp->snd_cwnd > new_cwnd) {
		tp->snd_cwnd = tp->snd_cwnd - 1;
		tp->snd_ssthresh = tp->snd_cwnd;
		cwnd_changed(tp, ca);
	} else if (tp->snd_cwnd < new_cwnd) {
		tp->snd_cwnd = tp->snd_cwnd + 1;
		cwnd_changed(tp, ca);
	}
}

static __always_inline void enter_loss(struct tcp_sock *tp, struct prague *ca)
{
	ca->loss_cwnd = tp->snd_cwnd;
	ca->loss_rate_bytes = ca->rate_bytes;
	if (is_rtt_indep(tp, ca) && ca->cwnd_mode == 1) {
		ca->rate_bytes -= ca->rate_bytes >> 1;
		ca->frac_cwnd = pacing_rate_to_frac_cwnd(tp, ca);
	} else {
		ca->frac_cwnd -= ca->frac_cwnd >> 1;
		ca->rate_bytes = frac_cwnd_to_pacing_rate(tp, ca);
	}
	ca->in_loss = 1;
}

static __always_inline void enter_cwr(struct tcp_sock *tp, struct prague *ca)
{
	u64 alpha, reduction;

	/* RTT independent: at most one reduction per target RTT. */
	if (is_rtt_indep(tp, ca) &&
	    (target_rtt() >> 3) > stamp_delta(tp->tcp_mstamp, ca->cwr_stamp))
		return;
	ca->cwr_stamp = tp->tcp_mstamp;
	alpha = ca->upscaled_alpha >> SHIFT_G;
	if (is_rtt_indep(tp, ca) && ca->cwnd_mode == 1) {
		reduction = mul_shr(ca->rate_bytes, alpha, ALPHA_BITS + 1);
		ca->rate_bytes = max(ca->rate_bytes - reduction, MINIMUM_RATE);
		ca->frac_cwnd = pacing_rate_to_frac_cwnd(tp, ca);
	} else {
		/* alpha/2 of the window, rounding unbiased (+1/2). */
		reduction = (alpha * ca->frac_cwnd + MAX_ALPHA) >> (ALPHA_BITS + 1);
		ca->frac_cwnd -= reduction;
		ca->rate_bytes = frac_cwnd_to_pacing_rate(tp, ca);
	}
}

SEC("struct_ops/prague_init")
void BPF_PROG(prague_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct prague *ca = prague_ca(sk);
	unsigned char state = sk->__sk_common.skc_state;

	ca->reno = 0;
	if (!(tp->ecn_flags & TCP_ECN_MODE_ANY) && state != TCP_LISTEN && state != TCP_CLOSE) {
		ca->reno = 1;
		return;
	}
	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;
	ca->alpha_stamp = tp->tcp_mstamp;
	ca->cwr_stamp = 0;
	ca->upscaled_alpha = 0;
	ca->frac_cwnd = (u64)tp->snd_cwnd << CWND_UNIT;
	if (tp->srtt_us) {
		ca->rate_bytes = (USEC_PER_SEC << 3) * mss_to_mtu(tp) / tp->srtt_us;
		ca->rate_bytes = max(MINIMUM_RATE,
				     ca->rate_bytes * max(tp->snd_cwnd, packets_in_flight(tp)));
	} else {
		ca->rate_bytes = MINIMUM_RATE;
	}
	ca->round = 0;
	ca->cwnd_mode = 0;
	ca->in_loss = 0;
	ca->loss_cwnd = 0;
	update_pacing_rate(sk, tp, ca);
	ca->loss_rate_bytes = 0;
	ca->saw_ce = tp->delivered_ce != 0;
	ca->seen_delivered_ce = tp->delivered_ce;
	/* 1 us (<< 3) when there is no srtt yet. */
	ca->hsrtt_us = tp->srtt_us ? ((u64)tp->srtt_us << HSRTT_SHIFT) : (1ULL << (HSRTT_SHIFT + 3));
	new_round(tp, ca);
}

SEC("struct_ops/prague_cong_control")
void BPF_PROG(prague_cong_control, struct sock *sk, u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct prague *ca = prague_ca(sk);
	u32 ece_delta;

	if (ca->reno) {
		/* What the kernel does for a controller without cong_control. */
		if (ca_state(sk) == TCP_CA_Open)
			tcp_reno_cong_avoid(sk, ack, rs->acked_sacked);
		return;
	}
	ece_delta = tp->delivered_ce - ca->seen_delivered_ce;
	ca->seen_delivered_ce = tp->delivered_ce;
	update_cwnd(tp, ca, rs->acked_sacked, ece_delta);
	if (should_update_ewma(tp, ca))
		update_alpha(tp, ca);
	update_pacing_rate(sk, tp, ca);
	/* prague_cwnd_mode 2: switch to the rate-based mode at small windows once marked. */
	if (ca->saw_ce && tp->snd_cwnd * mss_to_mtu(tp) <= CWND_TRANSIT * MTU_SYS) {
		ca->cwnd_mode = 1;
		ca->frac_cwnd = pacing_rate_to_frac_cwnd(tp, ca);
	} else {
		ca->cwnd_mode = 0;
		ca->rate_bytes = frac_cwnd_to_pacing_rate(tp, ca);
	}
}

SEC("struct_ops/prague_state")
void BPF_PROG(prague_state, struct sock *sk, u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct prague *ca = prague_ca(sk);

	if (ca->reno || new_state == ca_state(sk))
		return;
	switch (new_state) {
	case TCP_CA_Recovery:
		enter_loss(tp, ca);
		break;
	case TCP_CA_CWR:
		enter_cwr(tp, ca);
		break;
	case TCP_CA_Open:
		ca->in_loss = 0;
		break;
	}
}

SEC("struct_ops/prague_cwnd_event")
void BPF_PROG(prague_cwnd_event, struct sock *sk, int ev)
{
	struct prague *ca = prague_ca(sk);

	if (!ca->reno && ev == CA_EVENT_LOSS)
		enter_loss(tcp_sk(sk), ca);
}

SEC("struct_ops/prague_ssthresh")
u32 BPF_PROG(prague_ssthresh, struct sock *sk)
{
	if (prague_ca(sk)->reno)
		return tcp_reno_ssthresh(sk);
	return tcp_sk(sk)->snd_ssthresh;
}

SEC("struct_ops/prague_cwnd_undo")
u32 BPF_PROG(prague_cwnd_undo, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct prague *ca = prague_ca(sk);

	if (ca->reno)
		return tcp_reno_undo_cwnd(sk);
	ca->in_loss = 0;
	ca->rate_bytes = max(ca->rate_bytes, ca->loss_rate_bytes);
	ca->frac_cwnd = pacing_rate_to_frac_cwnd(tp, ca);
	return max(ca->loss_cwnd, tp->snd_cwnd);
}

SEC(".struct_ops")
struct tcp_congestion_ops cclab_prague = {
	.init = (void *)prague_init,
	.cong_control = (void *)prague_cong_control,
	.cwnd_event = (void *)prague_cwnd_event,
	.ssthresh = (void *)prague_ssthresh,
	.undo_cwnd = (void *)prague_cwnd_undo,
	.set_state = (void *)prague_state,
	.flags = TCP_CONG_NEEDS_ECN | TCP_CONG_NEEDS_ACCECN | TCP_CONG_ECT_1_NEGOTIATION |
		 TCP_CONG_NO_FALLBACK_RFC3168 | TCP_CONG_NON_RESTRICTED,
	.name = "prague",
};
