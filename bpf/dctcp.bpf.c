// SPDX-License-Identifier: GPL-2.0
/*
 * DCTCP (Linux's tcp_dctcp.c) as a BPF struct_ops congestion controller, for cclab's kernel lab.
 *
 * Ported from Linux's net/ipv4/tcp_dctcp.c (and tcp_dctcp.h): the same state, constants
 * and units. The sender keeps alpha, an estimate of the fraction of its bytes the network
 * marks CE, as a fixed-point number out of 1024, updated once per window of data:
 * alpha <- alpha - alpha/2^g + g * F with g = 1/16. On an ECE-marked window it cuts cwnd by
 * alpha/2; on loss it halves as Reno does; between marks it grows as Reno.
 *
 * The receiver half keeps one bit of CE state: when the CE bit of arriving data flips, it
 * sends the ACK it was holding (with the old state's ECE) at once, so the sender sees the
 * exact run of marked bytes even with delayed ACKs.
 *
 * Where this differs from the built-in module (docs/kernel.md "BPF controllers"):
 * - Without ECN negotiated, the module swaps in a Reno twin and clears ECT from the
 *   socket. A BPF program can do neither, so it keeps a flag and runs Reno's functions
 *   itself; ECT stays on the socket's packets. cclab's lab always negotiates ECN for it
 *   (TCP_CONG_NEEDS_ECN asks for ECN on the SYN whatever net.ipv4.tcp_ecn says).
 * - The module's parameters (dctcp_shift_g = 4, dctcp_alpha_on_init = 1024) are constants.
 * - get_info (INET_DIAG_DCTCPINFO) is not provided: a struct_ops program cannot fill it.
 */
#include "cclab_tcp.h"

char LICENSE[] SEC("license") = "GPL";

#define DCTCP_MAX_ALPHA 1024U
#define SHIFT_G 4
#define ALPHA_ON_INIT DCTCP_MAX_ALPHA

struct dctcp {
	u32 old_delivered;
	u32 old_delivered_ce;
	u32 prior_rcv_nxt;
	u32 dctcp_alpha;
	u32 next_seq;
	u32 ce_state;
	u32 loss_cwnd;
	u32 reno; /* ECN was not negotiated: behave as Reno */
};

/* Start a new observation window at the next byte to be sent. */
static __always_inline void window_reset(const struct tcp_sock *tp, struct dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops/dctcp_init")
void BPF_PROG(dctcp_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);
	unsigned char state = sk->__sk_common.skc_state;

	ca->reno = 0;
	if ((tp->ecn_flags & TCP_ECN_MODE_ANY) || state == TCP_LISTEN || state == TCP_CLOSE) {
		ca->prior_rcv_nxt = tp->rcv_nxt;
		ca->dctcp_alpha = min(ALPHA_ON_INIT, DCTCP_MAX_ALPHA);
		ca->loss_cwnd = 0;
		ca->ce_state = 0;
		window_reset(tp, ca);
		return;
	}
	ca->reno = 1;
}

SEC("struct_ops/dctcp_ssthresh")
u32 BPF_PROG(dctcp_ssthresh, struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cwnd = tp->snd_cwnd;

	if (ca->reno)
		return tcp_reno_ssthresh(sk);
	ca->loss_cwnd = cwnd;
	/* cwnd * alpha / 2, alpha being out of 1024 */
	return max(cwnd - ((cwnd * ca->dctcp_alpha) >> 11U), 2U);
}

/* Once per window of data (snd_una reached next_seq): fold the window's fraction of
 * CE-marked deliveries into alpha. */
SEC("struct_ops/dctcp_update_alpha")
void BPF_PROG(dctcp_update_alpha, struct sock *sk, u32 flags)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct dctcp *ca = inet_csk_ca(sk);
	u32 alpha, marked, delivered, decay;

	if (ca->reno || before(tp->snd_una, ca->next_seq))
		return;
	alpha = ca->dctcp_alpha;
	marked = tp->delivered_ce - ca->old_delivered_ce;
	/* alpha -= alpha / 16, but never leave a small alpha stuck above zero */
	decay = alpha >> SHIFT_G;
	alpha -= decay ? decay : alpha;
	if (marked) {
		delivered = tp->delivered - ca->old_delivered;
		marked <<= (10 - SHIFT_G);
		marked /= max(1U, delivered);
		alpha = min(alpha + marked, DCTCP_MAX_ALPHA);
	}
	ca->dctcp_alpha = alpha;
	window_reset(tp, ca);
}

static __always_inline void react_to_loss(struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);
	struct tcp_sock *tp = tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = max(tp->snd_cwnd >> 1U, 2U);
}

SEC("struct_ops/dctcp_state")
void BPF_PROG(dctcp_state, struct sock *sk, u8 new_state)
{
	struct dctcp *ca = inet_csk_ca(sk);

	/* Entering fast recovery: one Reno halving. An RTO comes as CA_EVENT_LOSS instead,
	 * so each loss episode adjusts once. */
	if (!ca->reno && new_state == TCP_CA_Recovery && new_state != ca_state(sk))
		react_to_loss(sk);
}

/* Receiver side: keep the ECE the next ACK carries equal to the CE state. */
static __always_inline void set_ece(struct sock *sk, u32 ce_state)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (ce_state == 1)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

static __always_inline void ce_state_update(struct sock *sk, int ev, struct dctcp *ca)
{
	u32 now_ce = ev == CA_EVENT_ECN_IS_CE ? 1 : 0;

	if (ca->ce_state != now_ce) {
		/* The CE state flipped: a delayed ACK still owed reports the old state, so send
		 * it now for the bytes up to prior_rcv_nxt, then ACK this segment at once. */
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
			set_ece(sk, ca->ce_state);
			bpf_tcp_send_ack(sk, ca->prior_rcv_nxt);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	ca->prior_rcv_nxt = tcp_sk(sk)->rcv_nxt;
	ca->ce_state = now_ce;
	set_ece(sk, now_ce);
}

SEC("struct_ops/dctcp_cwnd_event")
void BPF_PROG(dctcp_cwnd_event, struct sock *sk, int ev)
{
	struct dctcp *ca = inet_csk_ca(sk);

	if (ca->reno)
		return;
	switch (ev) {
	case CA_EVENT_ECN_IS_CE:
	case CA_EVENT_ECN_NO_CE:
		ce_state_update(sk, ev, ca);
		break;
	case CA_EVENT_LOSS:
		react_to_loss(sk);
		break;
	default:
		break;
	}
}

SEC("struct_ops/dctcp_cwnd_undo")
u32 BPF_PROG(dctcp_cwnd_undo, struct sock *sk)
{
	struct dctcp *ca = inet_csk_ca(sk);

	if (ca->reno)
		return tcp_reno_undo_cwnd(sk);
	return max(tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC("struct_ops/dctcp_cong_avoid")
void BPF_PROG(dctcp_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC(".struct_ops")
struct tcp_congestion_ops cclab_dctcp = {
	.init = (void *)dctcp_init,
	.in_ack_event = (void *)dctcp_update_alpha,
	.cwnd_event = (void *)dctcp_cwnd_event,
	.ssthresh = (void *)dctcp_ssthresh,
	.cong_avoid = (void *)dctcp_cong_avoid,
	.undo_cwnd = (void *)dctcp_cwnd_undo,
	.set_state = (void *)dctcp_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = "dctcp",
};
