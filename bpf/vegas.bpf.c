// SPDX-License-Identifier: GPL-2.0
/*
 * TCP Vegas (Linux's tcp_vegas.c) as a BPF struct_ops controller: the template for your own.
 *
 * Vegas is delay-based: it compares the rate the window would give on an empty path
 * (cwnd / baseRTT) with the rate it gets (cwnd / RTT), and keeps between alpha = 2 and
 * beta = 4 of its packets queued in the network, changing cwnd by one packet per round
 * trip. It leaves loss detection and recovery to Linux, as the module does.
 *
 * How a controller is put together (cclab builds every bpf/NAME.bpf.c into cclab, and runs
 * any object built the same way with cc = "bpf:PATH"; docs/kernel.md):
 * - include "cclab_tcp.h": the kernel's TCP types as CO-RE declarations, so the object
 *   loads on any kernel with BTF; add a member there to read one more;
 * - keep per-connection state in icsk_ca_priv (inet_csk_ca(), 104 bytes);
 * - write each operation as SEC("struct_ops/NAME") with BPF_PROG, reading the socket and
 *   writing only what the kernel lets a controller write (cwnd, ssthresh, pacing);
 * - call the kernel's Reno and slow-start helpers (kfuncs) where the algorithm does;
 * - put the operations and the name TCP_CONGESTION selects in a SEC(".struct_ops") map.
 * This one uses the per-ACK RTT sample (pkts_acked), the per-ACK window hook (cong_avoid)
 * and state changes; dctcp.bpf.c uses ECN events, bbr3.bpf.c the rate sample.
 *
 * Where this differs from the module: its parameters (alpha, beta, gamma) are constants,
 * and get_info (INET_DIAG_VEGASINFO) is not provided.
 */
#include "cclab_tcp.h"

char LICENSE[] SEC("license") = "GPL";

#define VEGAS_ALPHA 2 /* fewest packets to keep queued */
#define VEGAS_BETA 4  /* most packets to keep queued */
#define VEGAS_GAMMA 1 /* queued packets that end slow start */
#define NO_RTT 0x7fffffff

struct vegas {
	u32 beg_snd_nxt; /* the first byte of the round being measured */
	u32 doing_vegas_now;
	u16 cnt_rtt;  /* RTT samples this round */
	u32 min_rtt;  /* smallest RTT sample this round, us */
	u32 base_rtt; /* smallest RTT sample ever, us: the empty path */
};

/* (Re)start measuring: a round's decision needs a round of fresh samples. */
static __always_inline void vegas_enable(struct sock *sk)
{
	struct vegas *v = inet_csk_ca(sk);

	v->doing_vegas_now = 1;
	v->beg_snd_nxt = tcp_sk(sk)->snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = NO_RTT;
}

static __always_inline void vegas_reset(struct sock *sk)
{
	struct vegas *v = inet_csk_ca(sk);

	v->base_rtt = NO_RTT;
	vegas_enable(sk);
}

SEC("struct_ops/vegas_init")
void BPF_PROG(vegas_init, struct sock *sk)
{
	vegas_reset(sk);
}

/* Every ACK that brings an RTT sample. */
SEC("struct_ops/vegas_pkts_acked")
void BPF_PROG(vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct vegas *v = inet_csk_ca(sk);
	u32 rtt;

	if (sample->rtt_us < 0)
		return;
	rtt = sample->rtt_us + 1; /* never zero */
	if (rtt < v->base_rtt)
		v->base_rtt = rtt;
	v->min_rtt = min(v->min_rtt, rtt);
	v->cnt_rtt++;
}

/* Loss recovery pauses Vegas; back in Open it starts a fresh round. */
SEC("struct_ops/vegas_state")
void BPF_PROG(vegas_state, struct sock *sk, u8 new_state)
{
	struct vegas *v = inet_csk_ca(sk);

	if (new_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		v->doing_vegas_now = 0;
}

/* Sending again after idle: the old samples say nothing about the path now. */
SEC("struct_ops/vegas_cwnd_event")
void BPF_PROG(vegas_cwnd_event, struct sock *sk, int ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		vegas_reset(sk);
}

static __always_inline bool in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* tcp_current_ssthresh(): during a window reduction the target, else at least 3/4 cwnd. */
static __always_inline u32 current_ssthresh(struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u8 st = ca_state(sk);

	if (st == TCP_CA_CWR || st == TCP_CA_Recovery)
		return tp->snd_ssthresh;
	return max(tp->snd_ssthresh, (tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2));
}

SEC("struct_ops/vegas_cong_avoid")
void BPF_PROG(vegas_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct vegas *v = inet_csk_ca(sk);
	u32 rtt, diff, cwnd;
	u64 target;

	if (!v->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!after(ack, v->beg_snd_nxt)) {
		/* Mid-round: only slow start moves cwnd. */
		if (in_slow_start(tp))
			tcp_slow_start(tp, acked);
		return;
	}
	/* A round ended: decide once, from its smallest RTT sample. */
	v->beg_snd_nxt = tp->snd_nxt;
	if (v->cnt_rtt <= 2) {
		/* One or two samples a round are delayed ACKs' RTTs: act as Reno. */
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		rtt = v->min_rtt;
		cwnd = tp->snd_cwnd;
		/* The window that would fill the path at the rate we get: cwnd * baseRTT / RTT. */
		target = (u64)cwnd * v->base_rtt / rtt;
		/* Packets of ours queued in the network. */
		diff = cwnd * (rtt - v->base_rtt) / v->base_rtt;
		if (diff > VEGAS_GAMMA && in_slow_start(tp)) {
			/* A queue builds in slow start: drop to the rate we get and leave. */
			tp->snd_cwnd = min(cwnd, (u32)target + 1);
			tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
		} else if (in_slow_start(tp)) {
			tcp_slow_start(tp, acked);
		} else if (diff > VEGAS_BETA) {
			tp->snd_cwnd = cwnd - 1;
			tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
		} else if (diff < VEGAS_ALPHA) {
			tp->snd_cwnd = cwnd + 1;
		}
		if (tp->snd_cwnd < 2)
			tp->snd_cwnd = 2;
		else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd_clamp;
		tp->snd_ssthresh = current_ssthresh(sk);
	}
	v->cnt_rtt = 0;
	v->min_rtt = NO_RTT;
}

SEC("struct_ops/vegas_ssthresh")
u32 BPF_PROG(vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/vegas_undo_cwnd")
u32 BPF_PROG(vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops cclab_vegas = {
	.init = (void *)vegas_init,
	.ssthresh = (void *)vegas_ssthresh,
	.undo_cwnd = (void *)vegas_undo_cwnd,
	.cong_avoid = (void *)vegas_cong_avoid,
	.pkts_acked = (void *)vegas_pkts_acked,
	.set_state = (void *)vegas_state,
	.cwnd_event = (void *)vegas_cwnd_event,
	.name = "vegas",
};
