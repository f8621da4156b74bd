// SPDX-License-Identifier: GPL-2.0
/*
 * A controller the verifier must refuse (cclab-bpf's tests): it writes snd_una, which a
 * congestion controller may only read.
 */
#include "cclab_tcp.h"

char LICENSE[] SEC("license") = "GPL";

SEC("struct_ops/bad_init")
void BPF_PROG(bad_init, struct sock *sk)
{
	tcp_sk(sk)->snd_una = 0;
}

SEC("struct_ops/bad_cong_avoid")
void BPF_PROG(bad_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops/bad_ssthresh")
u32 BPF_PROG(bad_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops/bad_undo")
u32 BPF_PROG(bad_undo, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops cclab_reject = {
	.init = (void *)bad_init,
	.cong_avoid = (void *)bad_cong_avoid,
	.ssthresh = (void *)bad_ssthresh,
	.undo_cwnd = (void *)bad_undo,
	.name = "cclab_reject",
};
