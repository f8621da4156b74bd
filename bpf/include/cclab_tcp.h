/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cclab's view of the kernel's TCP types for BPF congestion controllers.
 *
 * Only the members the controllers in bpf/ read or write are declared. Every type is
 * marked preserve_access_index, so clang records each member access as a CO-RE
 * relocation and libbpf fixes the offsets against the running kernel's BTF
 * (/sys/kernel/btf/vmlinux) when the object is loaded: the object builds without the
 * kernel's headers and loads on any kernel whose types have these members by name.
 * Adding a member here is all it takes to use one more.
 *
 * What a struct_ops controller may write is the kernel's choice (bpf_tcp_ca.c): the
 * socket's pacing rate and status, the TCP window members (snd_cwnd, snd_cwnd_cnt,
 * snd_cwnd_stamp, snd_ssthresh), ecn_flags, app_limited, icsk_ca_priv and
 * icsk_ack.pending. Everything else is read-only and the verifier says so.
 */
#ifndef CCLAB_TCP_H
#define CCLAB_TCP_H

#include <linux/types.h>
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __s32 s32;
typedef __u64 u64;
typedef __s64 s64;

#define CO_RE __attribute__((preserve_access_index))

struct net;

/* include/net/net_namespace.h */
typedef struct {
	struct net *net;
} CO_RE possible_net_t;

struct sock_common {
	unsigned char skc_state;
	possible_net_t skc_net;
} CO_RE;

struct sock {
	struct sock_common __sk_common;
	unsigned long sk_pacing_rate;
	unsigned long sk_max_pacing_rate;
	__u32 sk_pacing_status;
	__u8 sk_pacing_shift;
	__u16 sk_gso_max_segs;
	unsigned int sk_gso_max_size;
} CO_RE;

/* The per-namespace TCP settings a controller may read (sysctl net.ipv4.tcp_*). */
struct netns_ipv4 {
	__u8 sysctl_tcp_min_tso_segs;
} CO_RE;

struct net {
	struct netns_ipv4 ipv4;
} CO_RE;

/* include/linux/win_minmax.h: tp->rtt_min, whose s[0].v is the windowed min RTT (us). */
struct minmax_sample {
	__u32 t;
	__u32 v;
} CO_RE;

struct minmax {
	struct minmax_sample s[3];
} CO_RE;

struct inet_sock {
	struct sock sk;
} CO_RE;

struct inet_connection_sock {
	struct inet_sock icsk_inet;
	__u8 icsk_ca_state : 5;
	struct {
		__u8 pending;
	} icsk_ack;
	__u32 icsk_rto;
	__u64 icsk_ca_priv[13];
} CO_RE;

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	__u32 rcv_nxt;
	__u32 snd_nxt;
	__u32 snd_una;
	__u32 snd_wnd;
	__u32 write_seq;
	__u16 tcp_header_len;
	__u32 mss_cache;
	__u32 srtt_us;
	__u32 mdev_us;
	__u32 packets_out;
	__u32 retrans_out;
	__u32 sacked_out;
	__u32 lost_out;
	__u32 max_packets_out;
	__u32 snd_cwnd;
	__u32 snd_cwnd_cnt;
	__u32 snd_cwnd_clamp;
	__u32 snd_cwnd_stamp;
	__u32 snd_ssthresh;
	__u32 prior_cwnd;
	__u32 delivered;
	__u32 delivered_ce;
	__u32 lost;
	__u32 app_limited;
	__u32 data_segs_out;
	__u64 tcp_mstamp;
	__u64 tcp_clock_cache;
	__u8 ecn_flags;
	__u8 is_cwnd_limited : 1;
	__u64 tcp_wstamp_ns;
	__u64 delivered_mstamp;
	struct minmax rtt_min;
	__u32 tlp_high_seq;
} CO_RE;

/* What the stack tells cong_control about the ACK it is processing (tcp_rate.c). */
struct rate_sample {
	__u64 prior_mstamp;
	__u32 prior_delivered;
	__u32 prior_delivered_ce;
	__s32 delivered;
	__s32 delivered_ce;
	long interval_us;
	__u32 snd_interval_us;
	__u32 rcv_interval_us;
	long rtt_us;
	int losses;
	__u32 acked_sacked;
	__u32 prior_in_flight;
	__u32 last_end_seq;
	bool is_app_limited;
	bool is_retrans;
	bool is_ack_delayed;
} CO_RE;

struct ack_sample {
	__u32 pkts_acked;
	__s32 rtt_us;
	__u32 in_flight;
} CO_RE;

/* The operations a controller fills in; the map of this type is what registers it. */
struct tcp_congestion_ops {
	__u32 (*ssthresh)(struct sock *sk);
	void (*cong_avoid)(struct sock *sk, __u32 ack, __u32 acked);
	void (*set_state)(struct sock *sk, __u8 new_state);
	void (*cwnd_event)(struct sock *sk, int ev);
	void (*in_ack_event)(struct sock *sk, __u32 flags);
	void (*pkts_acked)(struct sock *sk, const struct ack_sample *sample);
	__u32 (*min_tso_segs)(struct sock *sk);
	void (*cong_control)(struct sock *sk, __u32 ack, int flag, const struct rate_sample *rs);
	__u32 (*undo_cwnd)(struct sock *sk);
	__u32 (*sndbuf_expand)(struct sock *sk);
	char name[16];
	__u32 flags;
	void (*init)(struct sock *sk);
	void (*release)(struct sock *sk);
} CO_RE;

/* include/net/tcp.h and tcp_ecn.h (6.18: bit 0 classic ECN, bit 4 AccECN). */
#define TCP_CA_Open 0
#define TCP_CA_Disorder 1
#define TCP_CA_CWR 2
#define TCP_CA_Recovery 3
#define TCP_CA_Loss 4

#define CA_EVENT_TX_START 0
#define CA_EVENT_CWND_RESTART 1
#define CA_EVENT_COMPLETE_CWR 2
#define CA_EVENT_LOSS 3
#define CA_EVENT_ECN_NO_CE 4
#define CA_EVENT_ECN_IS_CE 5

#define CA_ACK_SLOWPATH (1 << 0)
#define CA_ACK_WIN_UPDATE (1 << 1)
#define CA_ACK_ECE (1 << 2)

#define TCP_ECN_MODE_RFC3168 (1 << 0)
#define TCP_ECN_QUEUE_CWR (1 << 1)
#define TCP_ECN_DEMAND_CWR (1 << 2)
#define TCP_ECN_SEEN (1 << 3)
#define TCP_ECN_MODE_ACCECN (1 << 4)
#define TCP_ECN_MODE_ANY (TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN)

#define TCP_CONG_NON_RESTRICTED 0x1
#define TCP_CONG_NEEDS_ECN 0x2

#define ICSK_ACK_SCHED 1
#define ICSK_ACK_TIMER 2
#define ICSK_ACK_PUSHED 4
#define ICSK_ACK_PUSHED2 8
#define ICSK_ACK_NOW 16

#define TCP_LISTEN 10
#define TCP_CLOSE 7

#define TCP_INFINITE_SSTHRESH 0x7fffffff

#define USEC_PER_MSEC 1000UL
#define USEC_PER_SEC 1000000UL
#define NSEC_PER_USEC 1000UL
#define GSO_LEGACY_MAX_SIZE 65536U

/* enum sk_pacing */
#define SK_PACING_NONE 0
#define SK_PACING_NEEDED 1
#define SK_PACING_FQ 2

static __always_inline struct tcp_sock *tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* The controller's private state: the socket's icsk_ca_priv (104 bytes on 6.x). */
static __always_inline void *inet_csk_ca(const struct sock *sk)
{
	return (void *)inet_csk(sk)->icsk_ca_priv;
}

static __always_inline __u8 ca_state(const struct sock *sk)
{
	return BPF_CORE_READ_BITFIELD(inet_csk(sk), icsk_ca_state);
}

/* Sequence-space comparisons (wrapping), as include/net/tcp.h. */
static __always_inline bool before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define after(seq2, seq1) before(seq1, seq2)

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

/* The kernel's Reno and slow-start helpers, exported to struct_ops programs as kfuncs. */
extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

#endif
