// SPDX-License-Identifier: GPL-2.0
/*
 * BBRv3 for cclab's kernel lab, as a BPF struct_ops congestion controller ("bbr3").
 *
 * Ported from net/ipv4/tcp_bbr.c of github.com/google/bbr, branch v3, commit
 * 001a430b3ddbbc6d9173061a74d8b580c757b91b: the same state machine (STARTUP, DRAIN,
 * PROBE_BW with its DOWN / CRUISE / REFILL / UP phases, PROBE_RTT), the same constants and
 * fixed-point units (bandwidth in packets per us << 24, gains << 8), and the same order of
 * work on each ACK. docs/model.md ("BBRv3") explains the algorithm; cclab's simulator
 * models the same file in crates/cclab-core/src/cc/bbr3/.
 *
 * In brief: pace at a gain times a bandwidth estimate and keep cwnd at a gain times the
 * estimated BDP, inside a range learned from loss and (where allowed) ECN: long-term upper
 * bounds bw_hi / inflight_hi found by periodic probing, short-term lower bounds bw_lo /
 * inflight_lo cut in rounds that see loss or CE marks while not probing.
 *
 * The state (struct bbr plus what this port needs to rebuild v3's rate-sample fields) is
 * larger than icsk_ca_priv (104 bytes), so it lives in a BPF socket-storage map created by
 * init() and deleted by release(); icsk_ca_priv is unused.
 *
 * Where this differs from google/bbr v3 (the patched kernel), and why:
 * - rs->tx_in_flight and rs->lost (in flight when the sampled skb was sent; losses marked
 *   since): mainline 6.18 records neither per skb. The program keeps a ring of 512
 *   snapshots (tp->delivered, snd_nxt, packets in flight, tp->lost, app-limited), taken
 *   at the end of each cong_control() call (after the ACK's losses are marked, before the
 *   data it releases is sent), at init(), at CA_EVENT_TX_START and on entering Loss. Every
 *   skb sent between two ACKs carries the same tx.delivered, so the sampled skb's
 *   rs->prior_delivered finds its snapshot; its in-flight is the snapshot's plus the new
 *   segments sent up to rs->last_end_seq (one for a retransmission), and rs->lost is
 *   tp->lost now minus the snapshot's. Exact when a snapshot exists for that delivered
 *   count and nothing else changed the flight in between. With cwnd > 128 a snapshot is
 *   taken only once delivered has grown by cwnd/128 (or tp->lost changed), and a skb sent
 *   between snapshots is estimated from the nearest earlier one minus what was delivered
 *   in between. Retransmissions sent before new data in the same epoch, RTO-time changes
 *   other than entering Loss, and window updates are not seen. A sample older than the
 *   ring (or an ACK without a valid sample) gets tx_in_flight = lost = 0, so that ACK
 *   gives no loss signal (a later ACK's sample still counts those losses).
 * - skb_marked_lost(): mainline has no such hook. Newly marked losses are noticed by a
 *   growing tp->lost at the next ssthresh(), set_state() or cong_control() call (all of
 *   which the stack makes after marking), and handled as one lost "skb" of that many
 *   segments at snd_una, with tx_in_flight / lost / app-limited taken from the snapshot
 *   covering snd_una. v3 checks each lost skb in turn as it is marked.
 * - rs->is_ece: taken as "tp->delivered_ce grew since the previous cong_control()", which
 *   is what an ECE ACK that delivered data does in 6.18 (an ECE ACK delivering nothing is
 *   missed).
 * - rs->is_acking_tlp_retrans_seq: always false (the latest-delivery filter is never kept
 *   across a round for a TLP retransmission ACK).
 * - CA_EVENT_TLP_RECOVERY does not exist: a TLP-repaired loss is recognised as CWR entered
 *   (set_state) and completed (CA_EVENT_COMPLETE_CWR) while processing the same ACK
 *   (same tp->tcp_mstamp), which in 6.18 only tcp_process_tlp_ack() does. It runs after
 *   ssthresh() rather than before, and tlp_orig_data_app_limited (v3-only) is replaced by
 *   tp->app_limited at that moment.
 * - ECN: mainline has no route feature ecn_low (TCP_ECN_LOW), no TCP_CONG_WANTS_CE_EVENTS
 *   and no TCP_ECN_ECT_PERMANENT. bbr_can_use_ecn() is "RFC 3168 or AccECN negotiated"
 *   AND the global bbr3_ecn_low (in the object's .bss map, default 0, set it with bpftool
 *   map update to stand for `features ecn_low`). With the default, ECN logic is off as on
 *   a v3 kernel without ecn_low. The receiver half (precise ECE, dctcp-style) is coded but
 *   inert: mainline only sends CE events to TCP_CONG_NEEDS_ECN controllers, and that flag
 *   would force ECN on every bbr3 connection. Retransmissions are not kept ECT.
 * - tso_segs(): mainline only offers min_tso_segs(). It returns v3's burst size (pacing
 *   rate >> sk_pacing_shift plus 64 KB >> (min_rtt / 512 us), capped at
 *   sk_gso_max_size - 1 - 320, in mss_cache segments, at least tcp_min_tso_segs), which the
 *   stack uses as a floor under its own tcp_tso_autosize(); MAX_TCP_HEADER is taken as 320.
 * - tp->fast_ack_mode (v3-only receiver ACK policy) is not set.
 * - PLB (protective load balancing) is left out: its helpers are not exported to BPF and
 *   net.ipv4.tcp_plb_enabled defaults to 0.
 * - get_info() (INET_DIAG_BBRINFO) cannot be provided by a struct_ops program: `ss -i`
 *   shows no bbr: line for bbr3.
 * - get_random_u32_below() is bpf_get_prandom_u32() scaled by multiply-shift (the kernel
 *   also rejects a sliver of values to remove the bias). tcp_jiffies32 is bpf_jiffies64()
 *   truncated, with HZ from the kernel config (CONFIG_HZ).
 * - If the socket storage cannot be allocated, the controller leaves cwnd and the pacing
 *   rate as they are. Calls before init() find no storage and do nothing, as v3's
 *   `initialized` check does for the SYN-ACK's cong_control().
 * - cwnd is stored to tp->snd_cwnd directly (tcp_snd_cwnd_set() only adds a warning).
 *
 * Diagnostics (not in v3): the .bss map holds counters of how the tx_in_flight lookups
 * went and of calls without state, and bbr3_last, the model's main variables after the
 * latest cong_control() of any bbr3 socket (`bpftool map dump name bbr3.bss`).
 */
#include "cclab_tcp.h"

char LICENSE[] SEC("license") = "GPL";

extern unsigned int CONFIG_HZ __kconfig __weak;

/* Set to 1 (bpftool map update on this object's .bss) to stand for a route with
 * `features ecn_low`: lets bbr3 use ECN on connections that negotiated it. */
volatile u32 bbr3_ecn_low;

/* How the tx_in_flight lookups went (exact snapshot, estimated from an earlier one, none),
 * and how often a call found no socket storage (once per active open: the SYN-ACK's
 * cong_control() comes before init()). Read with bpftool map dump. */
volatile u64 bbr3_tx_exact;
volatile u64 bbr3_tx_near;
volatile u64 bbr3_tx_miss;
volatile u64 bbr3_no_state;

/* The model as the most recent cong_control() of any bbr3 socket left it (there is no
 * get_info() for ss to show): read with bpftool map dump on the .bss map. */
struct bbr3_last {
	u32 mode;
	u32 cycle_idx;
	u32 ack_phase;
	u32 full_bw_reached;
	u32 min_rtt_us;
	u32 bw_hi0;
	u32 bw_hi1;
	u32 bw_lo;
	u32 inflight_hi;
	u32 inflight_lo;
	u32 cwnd;
	u32 tx_in_flight;
	u32 lost;
	u32 rounds_since_probe;
};
volatile struct bbr3_last bbr3_last;

#define BW_SCALE 24
#define BW_UNIT (1ULL << BW_SCALE)
#define BBR_SCALE 8
#define BBR_UNIT (1U << BBR_SCALE)

enum bbr_mode {
	BBR_STARTUP,
	BBR_DRAIN,
	BBR_PROBE_BW,
	BBR_PROBE_RTT,
};

/* What the ACKs now arriving say about bandwidth probing. */
enum bbr_ack_phase {
	BBR_ACKS_INIT,
	BBR_ACKS_REFILLING,
	BBR_ACKS_PROBE_STARTING,
	BBR_ACKS_PROBE_FEEDBACK,
	BBR_ACKS_PROBE_STOPPING,
};

/* PROBE_BW phases (cycle_idx), indexing pacing_gain[]. */
enum bbr_pacing_gain_phase {
	BBR_BW_PROBE_UP = 0,
	BBR_BW_PROBE_DOWN = 1,
	BBR_BW_PROBE_CRUISE = 2,
	BBR_BW_PROBE_REFILL = 3,
};

/* Parameters: the v3 module's defaults, all fixed. The switches v3 tests for zero
 * (ecn_factor, ecn_thresh, fast_path, precise_ece_ack, loss_probe_recovery, ...) are all on,
 * so their tests are left out. */
#define MIN_RTT_WIN_SEC 10
#define PROBE_RTT_MODE_MS 200
#define PROBE_RTT_WIN_MS 5000
#define PROBE_RTT_CWND_GAIN (BBR_UNIT * 1 / 2)
#define TSO_RTT_SHIFT 9
#define PACING_MARGIN_PERCENT 1
#define STARTUP_PACING_GAIN (BBR_UNIT * 277 / 100 + 1)
#define STARTUP_CWND_GAIN (BBR_UNIT * 2)
#define DRAIN_GAIN (BBR_UNIT * 1000 / 2885)
#define CWND_GAIN (BBR_UNIT * 2)
#define GAIN_UP (BBR_UNIT * 5 / 4)
#define GAIN_DOWN (BBR_UNIT * 91 / 100)
#define CWND_MIN_TARGET 4U
#define FULL_BW_THRESH (BBR_UNIT * 5 / 4)
#define FULL_BW_CNT 3
#define EXTRA_ACKED_GAIN BBR_UNIT
#define EXTRA_ACKED_WIN_RTTS 5
#define ACK_EPOCH_ACKED_RESET_THRESH (1U << 20)
#define EXTRA_ACKED_MAX_US (100 * 1000)
#define ECN_MAX_RTT_US 5000
#define BETA (BBR_UNIT * 30 / 100)
#define ECN_ALPHA_GAIN (BBR_UNIT * 1 / 16)
#define ECN_ALPHA_INIT BBR_UNIT
#define ECN_FACTOR (BBR_UNIT * 1 / 3)
#define ECN_THRESH (BBR_UNIT * 1 / 2)
#define ECN_REPROBE_GAIN (BBR_UNIT * 1 / 2)
#define LOSS_THRESH (BBR_UNIT * 2 / 100)
#define FULL_LOSS_CNT 6
#define FULL_ECN_CNT 2
#define INFLIGHT_HEADROOM (BBR_UNIT * 15 / 100)
#define BW_PROBE_CWND_GAIN 1
#define BW_PROBE_MAX_ROUNDS 63
#define BW_PROBE_RAND_ROUNDS 2
#define BW_PROBE_BASE_US (2 * USEC_PER_SEC)
#define BW_PROBE_RAND_US (1 * USEC_PER_SEC)
/* include/net/tcp.h's MAX_TCP_HEADER on x86-64 builds (L1_CACHE_ALIGN(128 + MAX_HEADER)). */
#define MAX_TCP_HEADER 320U

/* v3's congestion control block, with its field widths (some arithmetic relies on them:
 * bw_probe_up_rounds wraps at 5 bits, ecn_alpha is 9 bits). PLB state left out. */
struct bbr {
	u32 min_rtt_us;
	u32 min_rtt_stamp;
	u32 probe_rtt_done_stamp;
	u32 probe_rtt_min_us;
	u32 probe_rtt_min_stamp;
	u32 next_rtt_delivered;
	u64 cycle_mstamp;
	u32 mode : 2,
	    prev_ca_state : 3,
	    round_start : 1,
	    ce_state : 1,
	    bw_probe_up_rounds : 5,
	    try_fast_path : 1,
	    idle_restart : 1,
	    probe_rtt_round_done : 1,
	    init_cwnd : 7,
	    unused_1 : 10;
	u32 pacing_gain : 10,
	    cwnd_gain : 10,
	    full_bw_reached : 1,
	    full_bw_cnt : 2,
	    cycle_idx : 2,
	    has_seen_rtt : 1,
	    unused_2 : 6;
	u32 prior_cwnd;
	u32 full_bw;
	u64 ack_epoch_mstamp;
	u16 extra_acked[2];
	u32 ack_epoch_acked : 20,
	    extra_acked_win_rtts : 5,
	    extra_acked_win_idx : 1,
	    full_bw_now : 1,
	    startup_ecn_rounds : 2,
	    loss_in_cycle : 1,
	    ecn_in_cycle : 1,
	    unused_3 : 1;
	u32 loss_round_delivered;
	u32 undo_bw_lo;
	u32 undo_inflight_lo;
	u32 undo_inflight_hi;
	u32 bw_latest;
	u32 bw_lo;
	u32 bw_hi[2];
	u32 inflight_latest;
	u32 inflight_lo;
	u32 inflight_hi;
	u32 bw_probe_up_cnt;
	u32 bw_probe_up_acks;
	u32 probe_wait_us;
	u32 prior_rcv_nxt;
	u32 ecn_eligible : 1,
	    ecn_alpha : 9,
	    bw_probe_samples : 1,
	    prev_probe_too_high : 1,
	    stopped_risky_probe : 1,
	    rounds_since_probe : 8,
	    loss_round_start : 1,
	    loss_in_round : 1,
	    ecn_in_round : 1,
	    ack_phase : 3,
	    loss_events_in_round : 4,
	    initialized : 1;
	u32 alpha_last_delivered;
	u32 alpha_last_delivered_ce;
};

/* One snapshot of the sender, taken when its delivered count last changed: what every
 * skb sent until the next ACK will find in tx.delivered, and what v3 would have stored
 * in tx.in_flight / tx.lost of the first of them. */
struct tx_snap {
	u32 delivered;
	u32 snd_nxt;
	u32 in_flight; /* bit 31: the connection was app-limited */
	u32 lost;
};

#define TX_RING 512U
#define TX_MASK (TX_RING - 1)
#define TX_APP_LIMITED (1U << 31)

struct bbr3_sk {
	struct bbr bbr;
	u32 seen_lost;         /* tp->lost already handled as marked losses */
	u32 seen_delivered_ce; /* tp->delivered_ce at the previous cong_control() */
	u64 cwr_mstamp;        /* tp->tcp_mstamp when CWR was last entered */
	u32 ring_head;         /* next slot to write */
	u32 ring_count;
	struct tx_snap ring[TX_RING];
};

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct bbr3_sk);
} bbr3_state SEC(".maps");

/* The rate sample as v3's code reads it: mainline's fields plus the rebuilt ones. */
struct bbr_rs {
	s64 interval_us;
	s64 rtt_us;
	s32 delivered;
	s32 delivered_ce;
	u32 prior_delivered;
	u32 acked_sacked;
	u32 prior_in_flight;
	u32 losses;
	u32 tx_in_flight;
	u32 lost;
	bool is_app_limited;
	bool is_ack_delayed;
	bool is_ece;
	bool is_acking_tlp_retrans_seq;
};

struct bbr_context {
	u32 sample_bw;
};

/* The PROBE_BW pacing gain of each phase (a switch: libbpf 1.1 cannot load the small
 * constant array clang would put in .rodata.cst16). */
static __always_inline u32 pacing_gain_of_phase(u32 phase)
{
	switch (phase) {
	case BBR_BW_PROBE_UP:
		return GAIN_UP;
	case BBR_BW_PROBE_DOWN:
		return GAIN_DOWN;
	default: /* CRUISE, REFILL */
		return BBR_UNIT;
	}
}

/* ---- small kernel equivalents ------------------------------------------------------- */

static __always_inline u32 hz(void)
{
	return CONFIG_HZ ? CONFIG_HZ : 250;
}

static __always_inline u32 jiffies32(void)
{
	return (u32)bpf_jiffies64();
}

/* msecs_to_jiffies(), rounding up as the kernel does. */
static __always_inline u32 ms_to_jiffies(u32 ms)
{
	return ((u64)ms * hz() + 999) / 1000;
}

static __always_inline u32 in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* A bitfield: read with its bit offset relocated too (a plain CO-RE access relocates only
 * the byte, and in 6.18 this is bit 3 of a byte shared with other flags). */
static __always_inline bool tp_is_cwnd_limited(const struct tcp_sock *tp)
{
	return BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited);
}

static __always_inline u32 tp_min_rtt(const struct tcp_sock *tp)
{
	return tp->rtt_min.s[0].v;
}

/* max(t1 - t0, 0) for microsecond stamps. */
static __always_inline s64 us_delta(u64 t1, u64 t0)
{
	s64 d = (s64)(t1 - t0);

	return d > 0 ? d : 0;
}

/* A uniform draw in [0, n). */
static __always_inline u32 rand_below(u32 n)
{
	return ((u64)bpf_get_prandom_u32() * n) >> 32;
}

/* Index of the highest set bit; 0 gives ~0U, as the kernel's ilog2() at run time. */
static __always_inline u32 ilog2_u64(u64 v)
{
	u32 r = 0;

	if (!v)
		return ~0U;
	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

static __always_inline struct bbr3_sk *state_of(struct sock *sk, bool create)
{
	struct bbr3_sk *st;

	st = bpf_sk_storage_get(&bbr3_state, sk, NULL, create ? BPF_SK_STORAGE_GET_F_CREATE : 0);
	if (!st)
		__sync_fetch_and_add(&bbr3_no_state, 1);
	return st;
}

/* ---- per-skb send history (tx.in_flight / tx.lost stand-in) -------------------------- */

static __always_inline struct tx_snap *ring_at(struct bbr3_sk *st, u32 i)
{
	/* i-th oldest of the ring_count entries */
	return &st->ring[(st->ring_head - st->ring_count + i) & TX_MASK];
}

/* Note the sender's state after an ACK (or at init / idle restart / RTO). A snapshot for
 * the same delivered count is replaced only when @replace (RTO marked the flight lost). */
static __always_inline void tx_note(struct bbr3_sk *st, const struct tcp_sock *tp, bool replace)
{
	u32 delivered = tp->delivered, lost = tp->lost, cwnd = tp->snd_cwnd;
	struct tx_snap *e;

	if (st->ring_count) {
		e = &st->ring[(st->ring_head - 1) & TX_MASK];
		if (e->delivered == delivered) {
			if (!replace)
				return;
		} else if (delivered - e->delivered < max(cwnd >> 7, 1U) && e->lost == lost) {
			return; /* close enough to the last one: estimate from it */
		} else {
			e = NULL;
		}
	} else {
		e = NULL;
	}
	if (!e) {
		e = &st->ring[st->ring_head & TX_MASK];
		st->ring_head++;
		if (st->ring_count < TX_RING)
			st->ring_count++;
	}
	e->delivered = delivered;
	e->snd_nxt = tp->snd_nxt;
	e->in_flight = (in_flight(tp) & ~TX_APP_LIMITED) | (tp->app_limited ? TX_APP_LIMITED : 0);
	e->lost = lost;
}

/* The newest snapshot at or before @key, keyed by delivered count or by snd_nxt. */
static __always_inline struct tx_snap *tx_find(struct bbr3_sk *st, u32 key, bool by_seq)
{
	u32 n = st->ring_count, lo = 0, hi, mid, k, i;
	struct tx_snap *e;

	if (!n || n > TX_RING)
		return NULL;
	e = ring_at(st, 0);
	k = by_seq ? e->snd_nxt : e->delivered;
	if (after(k, key))
		return NULL; /* older than anything kept */
	hi = n;
	for (i = 0; i < 10; i++) { /* log2(TX_RING) + 1 halvings */
		if (hi - lo <= 1)
			break;
		mid = lo + (hi - lo) / 2;
		e = ring_at(st, mid);
		k = by_seq ? e->snd_nxt : e->delivered;
		if (after(k, key))
			hi = mid;
		else
			lo = mid;
	}
	return ring_at(st, lo);
}

/* In flight just after a skb ending at @end_seq was sent, given the snapshot it was sent
 * after and the delivered count it was stamped with. */
static __always_inline u32 tx_in_flight_from(const struct tx_snap *e, u32 end_seq, u32 delivered,
					     u32 mss)
{
	s64 v = e->in_flight & ~TX_APP_LIMITED;

	if (after(end_seq, e->snd_nxt))
		v += ((u64)(end_seq - e->snd_nxt) + mss - 1) / max(mss, 1U);
	else
		v += 1; /* a retransmission */
	v -= (s64)(u32)(delivered - e->delivered);
	return v < 1 ? 1 : (u32)v;
}

/* ---- the model (names follow tcp_bbr.c) -------------------------------------------- */

static __always_inline bool bbr_can_use_ecn(const struct sock *sk)
{
	return (tcp_sk(sk)->ecn_flags & TCP_ECN_MODE_ANY) && bbr3_ecn_low;
}

static __always_inline u32 bbr_max_bw(const struct bbr *bbr)
{
	return max(bbr->bw_hi[0], bbr->bw_hi[1]);
}

static __always_inline u32 bbr_bw(const struct bbr *bbr)
{
	return min(bbr_max_bw(bbr), bbr->bw_lo);
}

static __always_inline u16 bbr_extra_acked(const struct bbr *bbr)
{
	return max(bbr->extra_acked[0], bbr->extra_acked[1]);
}

/* bytes/s for a rate in packets/us << BW_SCALE, times a gain, less a margin in percent;
 * multiplied in this order so that u64 holds up to ~2.9 Tbit/s at a gain of 2.89. */
static __always_inline u64 bbr_rate_bytes_per_sec(struct sock *sk, u64 rate, u32 gain, u32 margin)
{
	rate *= tcp_sk(sk)->mss_cache;
	rate *= gain;
	rate >>= BBR_SCALE;
	rate *= USEC_PER_SEC / 100 * (100 - margin);
	rate >>= BW_SCALE;
	return max(rate, 1ULL);
}

static __always_inline u64 bbr_bw_to_pacing_rate(struct sock *sk, u32 bw, u32 gain)
{
	u64 rate = bbr_rate_bytes_per_sec(sk, bw, gain, PACING_MARGIN_PERCENT);

	return min(rate, (u64)sk->sk_max_pacing_rate);
}

/* Pacing before any bandwidth sample: STARTUP's gain times the initial cwnd per RTT (or
 * per 1 ms with no RTT measured yet). */
static __always_inline void bbr_init_pacing_rate_from_rtt(struct sock *sk, struct bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 rtt_us = USEC_PER_MSEC;
	u64 bw;

	if (tp->srtt_us) {
		rtt_us = max(tp->srtt_us >> 3, 1U);
		bbr->has_seen_rtt = 1;
	}
	bw = (u64)tp->snd_cwnd * BW_UNIT / rtt_us;
	sk->sk_pacing_rate = bbr_bw_to_pacing_rate(sk, bw, STARTUP_PACING_GAIN);
}

static __always_inline void bbr_set_pacing_rate(struct sock *sk, struct bbr *bbr, u32 bw, u32 gain)
{
	u64 rate = bbr_bw_to_pacing_rate(sk, bw, gain);

	if (!bbr->has_seen_rtt && tcp_sk(sk)->srtt_us)
		bbr_init_pacing_rate_from_rtt(sk, bbr);
	/* Before the pipe is full, only ever raise the rate. */
	if (bbr->full_bw_reached || rate > sk->sk_pacing_rate)
		sk->sk_pacing_rate = rate;
}

static __always_inline u32 net_min_tso_segs(const struct sock *sk)
{
	struct net *net = sk->__sk_common.skc_net.net;

	return net ? net->ipv4.sysctl_tcp_min_tso_segs : 2;
}

/* Segments per TSO/GSO skb v3 wants: a pacing-rate budget plus 64 KB halved for each
 * 512 us of min_rtt, kept under @gso_max_size. */
static __always_inline u32 bbr_tso_segs_generic(struct sock *sk, struct bbr *bbr, u32 mss,
						u32 gso_max_size)
{
	u64 bytes = sk->sk_pacing_rate >> sk->sk_pacing_shift;
	u32 r = bbr->min_rtt_us >> TSO_RTT_SHIFT;
	u32 cap;

	if (r < 32)
		bytes += GSO_LEGACY_MAX_SIZE >> r;
	cap = gso_max_size - 1 - MAX_TCP_HEADER;
	if (bytes > cap)
		bytes = cap;
	return max((u32)(bytes / max(mss, 1U)), net_min_tso_segs(sk));
}

static __always_inline u32 bbr_tso_segs_goal(struct sock *sk, struct bbr *bbr)
{
	return bbr_tso_segs_generic(sk, bbr, tcp_sk(sk)->mss_cache, GSO_LEGACY_MAX_SIZE);
}

/* Remember a cwnd to go back to after recovery or PROBE_RTT. */
static __always_inline void bbr_save_cwnd(struct sock *sk, struct bbr *bbr)
{
	u32 cwnd = tcp_sk(sk)->snd_cwnd;

	if (bbr->prev_ca_state < TCP_CA_Recovery && bbr->mode != BBR_PROBE_RTT)
		bbr->prior_cwnd = cwnd;
	else /* cwnd is cut just now: keep the larger */
		bbr->prior_cwnd = max(bbr->prior_cwnd, cwnd);
}

/* ceil(bw * min_rtt * gain) in packets; the initial cwnd until an RTT is known. */
static __always_inline u32 bbr_bdp(struct bbr *bbr, u32 bw, u32 gain)
{
	u64 w;

	if (bbr->min_rtt_us == ~0U)
		return bbr->init_cwnd;
	w = (u64)bw * bbr->min_rtt_us;
	return (((w * gain) >> BBR_SCALE) + BW_UNIT - 1) / BW_UNIT;
}

/* Room for three full TSO skbs (qdisc, NIC, receiver's GRO/delayed ACK) and the minimum;
 * two more packets while probing up so that small BDPs still get above the BDP. */
static __always_inline u32 bbr_quantization_budget(struct sock *sk, struct bbr *bbr, u32 cwnd)
{
	cwnd = max(cwnd, 3 * bbr_tso_segs_goal(sk, bbr));
	cwnd = max(cwnd, CWND_MIN_TARGET);
	if (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == BBR_BW_PROBE_UP)
		cwnd += 2;
	return cwnd;
}

static __always_inline u32 bbr_inflight(struct sock *sk, struct bbr *bbr, u32 bw, u32 gain)
{
	return bbr_quantization_budget(sk, bbr, bbr_bdp(bbr, bw, gain));
}

/* Packets still in the network when the next skb leaves at its earliest departure time:
 * what is in flight now (plus that skb when raising inflight) less what the path
 * delivers until then. */
static __always_inline u32 bbr_packets_in_net_at_edt(struct sock *sk, struct bbr *bbr,
						     u32 inflight_now)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u64 now_ns = tp->tcp_clock_cache, edt_ns = max(tp->tcp_wstamp_ns, now_ns);
	u64 interval_us = (edt_ns - now_ns) / NSEC_PER_USEC;
	u32 delivered_by_edt = ((u64)bbr_bw(bbr) * interval_us) >> BW_SCALE;
	u32 at_edt = inflight_now;

	if (bbr->pacing_gain > BBR_UNIT)
		at_edt += bbr_tso_segs_goal(sk, bbr);
	return delivered_by_edt >= at_edt ? 0 : at_edt - delivered_by_edt;
}

/* Extra cwnd for ACK aggregation, at most 100 ms worth of bw. */
static __always_inline u32 bbr_ack_aggregation_cwnd(struct bbr *bbr)
{
	u32 cap = ((u64)bbr_bw(bbr) * EXTRA_ACKED_MAX_US) / BW_UNIT;
	u32 extra = (EXTRA_ACKED_GAIN * (u32)bbr_extra_acked(bbr)) >> BBR_SCALE;

	return min(extra, cap);
}

static __always_inline u32 bbr_probe_rtt_cwnd(struct bbr *bbr)
{
	return max(CWND_MIN_TARGET, bbr_bdp(bbr, bbr_bw(bbr), PROBE_RTT_CWND_GAIN));
}

/* cwnd toward gain * BDP (+ aggregation allowance): grow by what was acked, snap down to
 * the target only once the pipe has been full; PROBE_RTT caps it. */
static __always_inline void bbr_set_cwnd(struct sock *sk, struct bbr *bbr, u32 acked, u32 bw,
					 u32 gain, u32 cwnd)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 target;

	if (acked) {
		target = bbr_bdp(bbr, bw, gain) + bbr_ack_aggregation_cwnd(bbr);
		target = bbr_quantization_budget(sk, bbr, target);
		bbr->try_fast_path = 0;
		if (bbr->full_bw_reached) {
			cwnd += acked;
			if (cwnd >= target) {
				cwnd = target;
				bbr->try_fast_path = 1;
			}
		} else if (cwnd < target || cwnd < 2 * bbr->init_cwnd) {
			cwnd += acked;
		} else {
			bbr->try_fast_path = 1;
		}
		cwnd = max(cwnd, CWND_MIN_TARGET);
	}
	tp->snd_cwnd = min(cwnd, tp->snd_cwnd_clamp);
	if (bbr->mode == BBR_PROBE_RTT)
		tp->snd_cwnd = min(tp->snd_cwnd, bbr_probe_rtt_cwnd(bbr));
}

/* A packet-timed round ends when a packet sent after the previous round's end is acked. */
static __always_inline void bbr_update_round_start(struct sock *sk, struct bbr *bbr,
						   const struct bbr_rs *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);

	bbr->round_start = 0;
	if (rs->interval_us > 0 && !before(rs->prior_delivered, bbr->next_rtt_delivered)) {
		bbr->next_rtt_delivered = tp->delivered;
		bbr->round_start = 1;
	}
}

/* delivered / interval, rounded up, in packets/us << BW_SCALE. */
static __always_inline void bbr_calculate_bw_sample(const struct bbr_rs *rs,
						    struct bbr_context *ctx)
{
	u64 bw = 0;

	if (rs->interval_us > 0) {
		if (rs->delivered < 0)
			return;
		bw = ((u64)rs->delivered * BW_UNIT + (u64)rs->interval_us - 1) /
		     (u64)rs->interval_us;
	}
	ctx->sample_bw = bw;
}

/* Track the most data acked beyond what bw predicts over an epoch (two windows of 5
 * rounds; 1 round each before the pipe is full). */
static __always_inline void bbr_update_ack_aggregation(struct sock *sk, struct bbr *bbr,
						       const struct bbr_rs *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 win_thresh = EXTRA_ACKED_WIN_RTTS;
	u32 epoch_us, expected, extra;

	if (!rs->acked_sacked || rs->delivered < 0 || rs->interval_us <= 0)
		return;

	if (bbr->round_start) {
		bbr->extra_acked_win_rtts = min(0x1FU, bbr->extra_acked_win_rtts + 1);
		if (!bbr->full_bw_reached)
			win_thresh = 1;
		if (bbr->extra_acked_win_rtts >= win_thresh) {
			bbr->extra_acked_win_rtts = 0;
			bbr->extra_acked_win_idx = bbr->extra_acked_win_idx ? 0 : 1;
			bbr->extra_acked[bbr->extra_acked_win_idx & 1] = 0;
		}
	}

	epoch_us = us_delta(tp->delivered_mstamp, bbr->ack_epoch_mstamp);
	expected = ((u64)bbr_bw(bbr) * epoch_us) / BW_UNIT;

	/* Start a new epoch when acks fall behind the expected rate, or the count gets big. */
	if (bbr->ack_epoch_acked <= expected ||
	    bbr->ack_epoch_acked + rs->acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH) {
		bbr->ack_epoch_acked = 0;
		bbr->ack_epoch_mstamp = tp->delivered_mstamp;
		expected = 0;
	}

	bbr->ack_epoch_acked = min(0xFFFFFU, bbr->ack_epoch_acked + rs->acked_sacked);
	extra = bbr->ack_epoch_acked - expected;
	extra = min(extra, tp->snd_cwnd);
	if (extra > bbr->extra_acked[bbr->extra_acked_win_idx & 1])
		bbr->extra_acked[bbr->extra_acked_win_idx & 1] = extra;
}

static __always_inline void bbr_reset_lower_bounds(struct bbr *bbr)
{
	bbr->bw_lo = ~0U;
	bbr->inflight_lo = ~0U;
}

static __always_inline void bbr_reset_congestion_signals(struct bbr *bbr)
{
	bbr->loss_in_round = 0;
	bbr->ecn_in_round = 0;
	bbr->loss_in_cycle = 0;
	bbr->ecn_in_cycle = 0;
	bbr->bw_latest = 0;
	bbr->inflight_latest = 0;
}

static __always_inline void bbr_reset_full_bw(struct bbr *bbr)
{
	bbr->full_bw = 0;
	bbr->full_bw_cnt = 0;
	bbr->full_bw_now = 0;
}

static __always_inline void bbr_set_cycle_idx(struct bbr *bbr, u32 idx)
{
	bbr->cycle_idx = idx;
	bbr->try_fast_path = 0; /* the phase changed: recompute cwnd and pacing */
}

/* Draw the next probe's wait: a random 0..1 head start on the round count, and 2-3 s. */
static __always_inline void bbr_pick_probe_wait(struct bbr *bbr)
{
	bbr->rounds_since_probe = rand_below(BW_PROBE_RAND_ROUNDS);
	bbr->probe_wait_us = BW_PROBE_BASE_US + rand_below(BW_PROBE_RAND_US);
}

static __always_inline void bbr_start_bw_probe_down(struct sock *sk, struct bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	bbr_reset_congestion_signals(bbr);
	bbr->bw_probe_up_cnt = ~0U;
	bbr_pick_probe_wait(bbr);
	bbr->cycle_mstamp = tp->tcp_mstamp;
	bbr->ack_phase = BBR_ACKS_PROBE_STOPPING;
	bbr->next_rtt_delivered = tp->delivered;
	bbr_set_cycle_idx(bbr, BBR_BW_PROBE_DOWN);
}

static __always_inline void bbr_start_bw_probe_cruise(struct bbr *bbr)
{
	if (bbr->inflight_lo != ~0U)
		bbr->inflight_lo = min(bbr->inflight_lo, bbr->inflight_hi);
	bbr_set_cycle_idx(bbr, BBR_BW_PROBE_CRUISE);
}

static __always_inline void bbr_start_bw_probe_refill(struct sock *sk, struct bbr *bbr,
						      u32 bw_probe_up_rounds)
{
	bbr_reset_lower_bounds(bbr);
	bbr->bw_probe_up_rounds = bw_probe_up_rounds;
	bbr->bw_probe_up_acks = 0;
	bbr->stopped_risky_probe = 0;
	bbr->ack_phase = BBR_ACKS_REFILLING;
	bbr->next_rtt_delivered = tcp_sk(sk)->delivered;
	bbr_set_cycle_idx(bbr, BBR_BW_PROBE_REFILL);
}

/* Each round of PROBE_UP doubles how fast inflight_hi grows: +1 per cwnd/2^n acked. */
static __always_inline void bbr_raise_inflight_hi_slope(struct sock *sk, struct bbr *bbr)
{
	u32 growth = 1U << (bbr->bw_probe_up_rounds & 31);

	bbr->bw_probe_up_rounds = min(bbr->bw_probe_up_rounds + 1, 30U);
	bbr->bw_probe_up_cnt = max(tcp_sk(sk)->snd_cwnd / growth, 1U);
}

static __always_inline void bbr_start_bw_probe_up(struct sock *sk, struct bbr *bbr,
						  struct bbr_context *ctx)
{
	struct tcp_sock *tp = tcp_sk(sk);

	bbr->ack_phase = BBR_ACKS_PROBE_STARTING;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->cycle_mstamp = tp->tcp_mstamp;
	bbr_reset_full_bw(bbr);
	bbr->full_bw = ctx->sample_bw;
	bbr_set_cycle_idx(bbr, BBR_BW_PROBE_UP);
	bbr_raise_inflight_hi_slope(sk, bbr);
}

static __always_inline void bbr_exit_probe_rtt(struct sock *sk, struct bbr *bbr)
{
	bbr_reset_lower_bounds(bbr);
	if (bbr->full_bw_reached) {
		bbr->mode = BBR_PROBE_BW;
		/* Restart the probing clock from now, then cruise: inflight is low. */
		bbr_start_bw_probe_down(sk, bbr);
		bbr_start_bw_probe_cruise(bbr);
	} else {
		bbr->mode = BBR_STARTUP;
	}
}

static __always_inline void bbr_check_probe_rtt_done(struct sock *sk, struct bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (!bbr->probe_rtt_done_stamp || !after(jiffies32(), bbr->probe_rtt_done_stamp))
		return;
	bbr->probe_rtt_min_stamp = jiffies32(); /* next PROBE_RTT in 5 s at the earliest */
	tp->snd_cwnd = max(tp->snd_cwnd, bbr->prior_cwnd);
	bbr_exit_probe_rtt(sk, bbr);
}

/* min_rtt over 10 s; probe_rtt_min_us over 5 s, whose expiry starts PROBE_RTT: cwnd at
 * half the BDP for 200 ms and a round. */
static __always_inline void bbr_update_min_rtt(struct sock *sk, struct bbr *bbr,
					       const struct bbr_rs *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 now = jiffies32();
	bool probe_rtt_expired, min_rtt_expired;

	probe_rtt_expired = after(now, bbr->probe_rtt_min_stamp + ms_to_jiffies(PROBE_RTT_WIN_MS));
	if (rs->rtt_us >= 0 && (rs->rtt_us < bbr->probe_rtt_min_us ||
				(probe_rtt_expired && !rs->is_ack_delayed))) {
		bbr->probe_rtt_min_us = rs->rtt_us;
		bbr->probe_rtt_min_stamp = now;
	}
	min_rtt_expired = after(now, bbr->min_rtt_stamp + MIN_RTT_WIN_SEC * hz());
	if (bbr->probe_rtt_min_us <= bbr->min_rtt_us || min_rtt_expired) {
		bbr->min_rtt_us = bbr->probe_rtt_min_us;
		bbr->min_rtt_stamp = bbr->probe_rtt_min_stamp;
	}

	if (probe_rtt_expired && !bbr->idle_restart &&
	    bbr->mode != BBR_PROBE_RTT) {
		bbr->mode = BBR_PROBE_RTT;
		bbr_save_cwnd(sk, bbr);
		bbr->probe_rtt_done_stamp = 0;
		bbr->ack_phase = BBR_ACKS_PROBE_STOPPING;
		bbr->next_rtt_delivered = tp->delivered;
	}

	if (bbr->mode == BBR_PROBE_RTT) {
		u32 mark = tp->delivered + in_flight(tp);

		/* Samples taken in this mode are app-limited. */
		tp->app_limited = mark ? mark : 1;
		if (!bbr->probe_rtt_done_stamp && in_flight(tp) <= bbr_probe_rtt_cwnd(bbr)) {
			bbr->probe_rtt_done_stamp = now + ms_to_jiffies(PROBE_RTT_MODE_MS);
			bbr->probe_rtt_round_done = 0;
			bbr->next_rtt_delivered = tp->delivered;
		} else if (bbr->probe_rtt_done_stamp) {
			if (bbr->round_start)
				bbr->probe_rtt_round_done = 1;
			if (bbr->probe_rtt_round_done)
				bbr_check_probe_rtt_done(sk, bbr);
		}
	}
	if (rs->delivered > 0)
		bbr->idle_restart = 0; /* new data acked: the restart is over */
}

static __always_inline void bbr_update_gains(struct bbr *bbr)
{
	switch (bbr->mode) {
	case BBR_STARTUP:
		bbr->pacing_gain = STARTUP_PACING_GAIN;
		bbr->cwnd_gain = STARTUP_CWND_GAIN;
		break;
	case BBR_DRAIN:
		bbr->pacing_gain = DRAIN_GAIN;
		bbr->cwnd_gain = STARTUP_CWND_GAIN;
		break;
	case BBR_PROBE_BW:
		bbr->pacing_gain = pacing_gain_of_phase(bbr->cycle_idx);
		bbr->cwnd_gain = CWND_GAIN;
		if (bbr->cycle_idx == BBR_BW_PROBE_UP)
			bbr->cwnd_gain += BBR_UNIT * BW_PROBE_CWND_GAIN / 4;
		break;
	default: /* BBR_PROBE_RTT */
		bbr->pacing_gain = BBR_UNIT;
		bbr->cwnd_gain = BBR_UNIT;
		break;
	}
}

static __always_inline void bbr_take_max_bw_sample(struct bbr *bbr, u32 bw)
{
	bbr->bw_hi[1] = max(bw, bbr->bw_hi[1]);
}

/* bw_hi keeps this cycle's and the previous cycle's maximum. */
static __always_inline void bbr_advance_max_bw_filter(struct bbr *bbr)
{
	if (!bbr->bw_hi[1])
		return;
	bbr->bw_hi[0] = bbr->bw_hi[1];
	bbr->bw_hi[1] = 0;
}

/* The BDP (with quantization budget) unless cwnd is lower. */
static __always_inline u32 bbr_target_inflight(struct sock *sk, struct bbr *bbr)
{
	u32 bdp = bbr_inflight(sk, bbr, bbr_bw(bbr), BBR_UNIT);

	return min(bdp, tcp_sk(sk)->snd_cwnd);
}

static __always_inline bool bbr_is_probing_bandwidth(const struct bbr *bbr)
{
	return bbr->mode == BBR_STARTUP ||
	       (bbr->mode == BBR_PROBE_BW &&
		(bbr->cycle_idx == BBR_BW_PROBE_REFILL || bbr->cycle_idx == BBR_BW_PROBE_UP));
}

static __always_inline bool bbr_has_elapsed_in_phase(struct sock *sk, struct bbr *bbr,
						     u32 interval_us)
{
	return us_delta(tcp_sk(sk)->tcp_mstamp, bbr->cycle_mstamp + interval_us) > 0;
}

/* STARTUP saw too much loss or CE: the pipe is full; cap inflight at the BDP or at what
 * the last round delivered, whichever is larger. */
static __always_inline void bbr_handle_queue_too_high_in_startup(struct sock *sk, struct bbr *bbr)
{
	u32 bdp;

	bbr->full_bw_reached = 1;
	bdp = bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT);
	bbr->inflight_hi = max(bdp, bbr->inflight_latest);
}

static __always_inline void bbr_check_ecn_too_high_in_startup(struct sock *sk, struct bbr *bbr,
							      u32 ce_ratio)
{
	if (bbr->full_bw_reached || !bbr->ecn_eligible)
		return;
	if (ce_ratio >= ECN_THRESH)
		bbr->startup_ecn_rounds++;
	else
		bbr->startup_ecn_rounds = 0;
	if (bbr->startup_ecn_rounds >= FULL_ECN_CNT)
		bbr_handle_queue_too_high_in_startup(sk, bbr);
}

/* Once per round: decide ECN eligibility, fold the round's CE fraction into ecn_alpha
 * (gain 1/16). Returns the CE fraction << BBR_SCALE, or -1. */
static __always_inline int bbr_update_ecn_alpha(struct sock *sk, struct bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	s32 delivered, delivered_ce;
	u64 alpha, ce_ratio;

	if (!bbr->ecn_eligible && bbr_can_use_ecn(sk) &&
	    bbr->min_rtt_us <= ECN_MAX_RTT_US)
		bbr->ecn_eligible = 1;

	/* PLB is not ported, so alpha matters only to an eligible flow. */
	if (!bbr->ecn_eligible)
		return -1;

	delivered = tp->delivered - bbr->alpha_last_delivered;
	delivered_ce = tp->delivered_ce - bbr->alpha_last_delivered_ce;
	if (delivered <= 0 || delivered_ce < 0)
		return -1;

	ce_ratio = ((u64)delivered_ce << BBR_SCALE) / (u32)delivered;
	alpha = ((u64)(BBR_UNIT - ECN_ALPHA_GAIN) * bbr->ecn_alpha) >> BBR_SCALE;
	alpha += (ECN_ALPHA_GAIN * ce_ratio) >> BBR_SCALE;
	bbr->ecn_alpha = min(alpha, (u64)BBR_UNIT);

	bbr->alpha_last_delivered = tp->delivered;
	bbr->alpha_last_delivered_ce = tp->delivered_ce;

	bbr_check_ecn_too_high_in_startup(sk, bbr, ce_ratio);
	return (int)ce_ratio;
}

static __always_inline void bbr_probe_inflight_hi_upward(struct sock *sk, struct bbr *bbr,
							 const struct bbr_rs *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 delta;

	/* Grow inflight_hi only while cwnd-limited at it. */
	if (!tp_is_cwnd_limited(tp) || tp->snd_cwnd < bbr->inflight_hi)
		return;

	bbr->bw_probe_up_acks += rs->acked_sacked;
	if (bbr->bw_probe_up_acks >= bbr->bw_probe_up_cnt) {
		delta = bbr->bw_probe_up_acks / bbr->bw_probe_up_cnt;
		bbr->bw_probe_up_acks -= delta * bbr->bw_probe_up_cnt;
		bbr->inflight_hi += delta;
		bbr->try_fast_path = 0;
	}
	if (bbr->round_start)
		bbr_raise_inflight_hi_slope(sk, bbr);
}

/* Loss above 2% of tx_in_flight, or CE above half of delivered (ECN-eligible flows). */
static __always_inline bool bbr_is_inflight_too_high(const struct bbr *bbr,
						     const struct bbr_rs *rs)
{
	if (rs->lost > 0 && rs->tx_in_flight) {
		u32 loss_limit = ((u64)rs->tx_in_flight * LOSS_THRESH) >> BBR_SCALE;

		if (rs->lost > loss_limit)
			return true;
	}
	if (rs->delivered_ce > 0 && rs->delivered > 0 && bbr->ecn_eligible) {
		u32 ce_limit = ((u64)rs->delivered * ECN_THRESH) >> BBR_SCALE;

		if ((u32)rs->delivered_ce > ce_limit)
			return true;
	}
	return false;
}

/* For a lost skb of @pcount segments that pushed the loss rate over the threshold: the
 * in-flight level, within that skb, at which the rate crossed 2%. Solves
 * (lost_prev + x) / (inflight_prev + x) = thresh for x, rounded up. */
static __always_inline u32 bbr_inflight_hi_from_lost_skb(const struct bbr_rs *rs, u32 pcount)
{
	s32 inflight_prev = (s32)(rs->tx_in_flight - pcount);
	s32 lost_prev = (s32)(rs->lost - pcount);
	u64 budget, prefix;

	if (inflight_prev < 0 || lost_prev < 0)
		return ~0U;
	budget = ((u64)inflight_prev * LOSS_THRESH + BBR_UNIT - 1) >> BBR_SCALE;
	if ((u64)lost_prev >= budget) {
		prefix = 0;
	} else {
		prefix = (budget - lost_prev) << BBR_SCALE;
		prefix /= BBR_UNIT - LOSS_THRESH;
	}
	return inflight_prev + prefix;
}

/* inflight_hi less 15% headroom, not under the minimum cwnd. */
static __always_inline u32 bbr_inflight_with_headroom(const struct bbr *bbr)
{
	u32 headroom;
	s32 v;

	if (bbr->inflight_hi == ~0U)
		return ~0U;
	headroom = ((u64)bbr->inflight_hi * INFLIGHT_HEADROOM) >> BBR_SCALE;
	headroom = max(headroom, 1U);
	v = (s32)(bbr->inflight_hi - headroom);
	return v > (s32)CWND_MIN_TARGET ? (u32)v : CWND_MIN_TARGET;
}

/* Cap cwnd by inflight_hi while probing (with headroom while cruising or in PROBE_RTT)
 * and by inflight_lo always. */
static __always_inline void bbr_bound_cwnd_for_inflight_model(struct sock *sk, struct bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 cap = ~0U;

	if (!bbr->initialized)
		return;
	if (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx != BBR_BW_PROBE_CRUISE)
		cap = bbr->inflight_hi;
	else if (bbr->mode == BBR_PROBE_RTT ||
		 (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == BBR_BW_PROBE_CRUISE))
		cap = bbr_inflight_with_headroom(bbr);
	cap = min(cap, bbr->inflight_lo);
	cap = max(cap, CWND_MIN_TARGET);
	tp->snd_cwnd = min(cap, tp->snd_cwnd);
}

static __always_inline u32 bbr_ecn_cut(const struct bbr *bbr)
{
	return BBR_UNIT - ((bbr->ecn_alpha * ECN_FACTOR) >> BBR_SCALE);
}

static __always_inline void bbr_init_lower_bounds(struct sock *sk, struct bbr *bbr, bool init_bw)
{
	if (init_bw && bbr->bw_lo == ~0U)
		bbr->bw_lo = bbr_max_bw(bbr);
	if (bbr->inflight_lo == ~0U)
		bbr->inflight_lo = tcp_sk(sk)->snd_cwnd;
}

/* Outside probing, a round with loss cuts bw_lo and inflight_lo to 70% (not below the
 * latest round's delivery); a round with CE cuts inflight_lo by alpha/3. */
static __always_inline void bbr_adapt_lower_bounds(struct sock *sk, struct bbr *bbr)
{
	u32 ecn_inflight_lo = ~0U;

	if (bbr_is_probing_bandwidth(bbr))
		return;

	if (bbr->ecn_in_round) {
		bbr_init_lower_bounds(sk, bbr, false);
		ecn_inflight_lo = ((u64)bbr->inflight_lo * bbr_ecn_cut(bbr)) >> BBR_SCALE;
	}
	if (bbr->loss_in_round) {
		u32 keep = BBR_UNIT - BETA;

		bbr_init_lower_bounds(sk, bbr, true);
		bbr->bw_lo = max((u64)bbr->bw_latest, ((u64)bbr->bw_lo * keep) >> BBR_SCALE);
		bbr->inflight_lo =
			max((u64)bbr->inflight_latest, ((u64)bbr->inflight_lo * keep) >> BBR_SCALE);
	}
	bbr->inflight_lo = min(bbr->inflight_lo, ecn_inflight_lo);
	bbr->bw_lo = max(1U, bbr->bw_lo);
}

static __always_inline void bbr_update_latest_delivery_signals(struct sock *sk, struct bbr *bbr,
							       const struct bbr_rs *rs,
							       struct bbr_context *ctx)
{
	bbr->loss_round_start = 0;
	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;
	bbr->bw_latest = max(bbr->bw_latest, ctx->sample_bw);
	bbr->inflight_latest = max(bbr->inflight_latest, (u32)rs->delivered);
	if (!before(rs->prior_delivered, bbr->loss_round_delivered)) {
		bbr->loss_round_delivered = tcp_sk(sk)->delivered;
		bbr->loss_round_start = 1;
	}
}

static __always_inline void bbr_advance_latest_delivery_signals(struct bbr *bbr,
								const struct bbr_rs *rs,
								struct bbr_context *ctx)
{
	if (bbr->loss_round_start && !rs->is_acking_tlp_retrans_seq) {
		bbr->bw_latest = ctx->sample_bw;
		bbr->inflight_latest = rs->delivered;
	}
}

static __always_inline void bbr_update_congestion_signals(struct sock *sk, struct bbr *bbr,
							  const struct bbr_rs *rs,
							  struct bbr_context *ctx)
{
	u32 bw;

	if (rs->interval_us <= 0 || !rs->acked_sacked)
		return;
	bw = ctx->sample_bw;
	if (!rs->is_app_limited || bw >= bbr_max_bw(bbr))
		bbr_take_max_bw_sample(bbr, bw);
	bbr->loss_in_round |= rs->losses > 0;
	if (!bbr->loss_round_start)
		return;
	bbr_adapt_lower_bounds(sk, bbr);
	bbr->loss_in_round = 0;
	bbr->ecn_in_round = 0;
}

/* Reno at our BDP would have probed by now (rounds, at most 63). */
static __always_inline bool bbr_is_reno_coexistence_probe_time(struct sock *sk, struct bbr *bbr)
{
	u32 rounds = min((u32)BW_PROBE_MAX_ROUNDS, bbr_target_inflight(sk, bbr));

	return bbr->rounds_since_probe >= rounds;
}

/* A probe went too far: cap inflight_hi (at what was in flight, or 70% of the target),
 * once per probe, and if in PROBE_UP go down. */
static __always_inline void bbr_handle_inflight_too_high(struct sock *sk, struct bbr *bbr,
							 const struct bbr_rs *rs)
{
	bbr->prev_probe_too_high = 1;
	bbr->bw_probe_samples = 0;
	if (!rs->is_app_limited) {
		u64 floor = ((u64)bbr_target_inflight(sk, bbr) * (BBR_UNIT - BETA)) >> BBR_SCALE;

		bbr->inflight_hi = max((u64)rs->tx_in_flight, floor);
	}
	if (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == BBR_BW_PROBE_UP)
		bbr_start_bw_probe_down(sk, bbr);
}

/* Move the upper bounds with what the ACKs of a probe say; true if the phase changed. */
static __always_inline bool bbr_adapt_upper_bounds(struct sock *sk, struct bbr *bbr,
						   const struct bbr_rs *rs)
{
	if (bbr->ack_phase == BBR_ACKS_PROBE_STARTING && bbr->round_start)
		bbr->ack_phase = BBR_ACKS_PROBE_FEEDBACK;
	if (bbr->ack_phase == BBR_ACKS_PROBE_STOPPING && bbr->round_start) {
		/* The probe's ACKs are over: start a new bw_hi window now, and if the last
		 * probe reached inflight_hi without trouble, probe again at once. */
		bbr->bw_probe_samples = 0;
		bbr->ack_phase = BBR_ACKS_INIT;
		if (bbr->mode == BBR_PROBE_BW && !rs->is_app_limited)
			bbr_advance_max_bw_filter(bbr);
		if (bbr->mode == BBR_PROBE_BW && bbr->stopped_risky_probe &&
		    !bbr->prev_probe_too_high) {
			bbr_start_bw_probe_refill(sk, bbr, 0);
			return true;
		}
	}
	if (bbr_is_inflight_too_high(bbr, rs)) {
		if (bbr->bw_probe_samples)
			bbr_handle_inflight_too_high(sk, bbr, rs);
	} else {
		if (bbr->inflight_hi == ~0U)
			return false;
		/* A level seen to be safe in any phase raises inflight_hi. */
		if (rs->tx_in_flight > bbr->inflight_hi)
			bbr->inflight_hi = rs->tx_in_flight;
		if (bbr->mode == BBR_PROBE_BW && bbr->cycle_idx == BBR_BW_PROBE_UP)
			bbr_probe_inflight_hi_upward(sk, bbr, rs);
	}
	return false;
}

static __always_inline bool bbr_check_time_to_probe_bw(struct sock *sk, struct bbr *bbr)
{
	/* CE marks but no loss this cycle, and the marks stopped: probe again soon, growing
	 * inflight_hi by about half of itself in the first round. */
	if (bbr->ecn_eligible && bbr->ecn_in_cycle && !bbr->loss_in_cycle &&
	    ca_state(sk) == TCP_CA_Open) {
		u32 n = ilog2_u64(((u64)bbr->inflight_hi * ECN_REPROBE_GAIN) >> BBR_SCALE);

		bbr_start_bw_probe_refill(sk, bbr, n);
		return true;
	}
	if (bbr_has_elapsed_in_phase(sk, bbr, bbr->probe_wait_us) ||
	    bbr_is_reno_coexistence_probe_time(sk, bbr)) {
		bbr_start_bw_probe_refill(sk, bbr, 0);
		return true;
	}
	return false;
}

/* DOWN ends once inflight leaves the headroom under inflight_hi and fits the BDP. */
static __always_inline bool bbr_check_time_to_cruise(struct sock *sk, struct bbr *bbr,
						     u32 inflight, u32 bw)
{
	if (inflight > bbr_inflight_with_headroom(bbr))
		return false;
	return inflight <= bbr_inflight(sk, bbr, bw, BBR_UNIT);
}

/* The PROBE_BW cycle: DOWN -> CRUISE -> REFILL -> UP -> DOWN. */
static __always_inline void bbr_update_cycle_phase(struct sock *sk, struct bbr *bbr,
					      const struct bbr_rs *rs, struct bbr_context *ctx)
{
	struct tcp_sock *tp = tcp_sk(sk);
	bool probe_done = false;
	u32 inflight, bw;

	if (!bbr->full_bw_reached)
		return;
	if (bbr_adapt_upper_bounds(sk, bbr, rs))
		return;
	if (bbr->mode != BBR_PROBE_BW)
		return;

	inflight = bbr_packets_in_net_at_edt(sk, bbr, rs->prior_in_flight);
	bw = bbr_max_bw(bbr);

	switch (bbr->cycle_idx) {
	case BBR_BW_PROBE_CRUISE:
		bbr_check_time_to_probe_bw(sk, bbr);
		break;
	case BBR_BW_PROBE_REFILL:
		/* A round of REFILL: its samples now reflect the fuller pipe. */
		if (bbr->round_start) {
			bbr->bw_probe_samples = 1;
			bbr_start_bw_probe_up(sk, bbr, ctx);
		}
		break;
	case BBR_BW_PROBE_UP:
		/* Stop at the inflight_hi that was too high last time, or on a bw plateau
		 * reached while inflight_hi was not the limit; loss/CE stop it elsewhere. */
		if (bbr->prev_probe_too_high && inflight >= bbr->inflight_hi) {
			bbr->stopped_risky_probe = 1;
			probe_done = true;
		} else if (tp_is_cwnd_limited(tp) && tp->snd_cwnd >= bbr->inflight_hi) {
			bbr_reset_full_bw(bbr);
			bbr->full_bw = ctx->sample_bw;
		} else if (bbr->full_bw_now) {
			probe_done = true;
		}
		if (probe_done) {
			bbr->prev_probe_too_high = 0;
			bbr_start_bw_probe_down(sk, bbr);
		}
		break;
	case BBR_BW_PROBE_DOWN:
		if (bbr_check_time_to_probe_bw(sk, bbr))
			return;
		if (bbr_check_time_to_cruise(sk, bbr, inflight, bw))
			bbr_start_bw_probe_cruise(bbr);
		break;
	}
}

/* STARTUP ends at the end of a Recovery round with >= 6 lossy ACKs and > 2% loss. */
static __always_inline void bbr_check_loss_too_high_in_startup(struct sock *sk, struct bbr *bbr,
							       const struct bbr_rs *rs)
{
	if (bbr->full_bw_reached)
		return;
	if (rs->losses && bbr->loss_events_in_round < 0xf)
		bbr->loss_events_in_round++;
	if (bbr->loss_round_start && ca_state(sk) == TCP_CA_Recovery &&
	    bbr->loss_events_in_round >= FULL_LOSS_CNT && bbr_is_inflight_too_high(bbr, rs)) {
		bbr_handle_queue_too_high_in_startup(sk, bbr);
		return;
	}
	if (bbr->loss_round_start)
		bbr->loss_events_in_round = 0;
}

/* A plateau: 3 rounds without 25% bandwidth growth (non-app-limited samples). */
static __always_inline void bbr_check_full_bw_reached(struct bbr *bbr, const struct bbr_rs *rs,
						      struct bbr_context *ctx)
{
	u32 bw_thresh;

	if (bbr->full_bw_now || rs->is_app_limited)
		return;
	bw_thresh = ((u64)bbr->full_bw * FULL_BW_THRESH) >> BBR_SCALE;
	if (ctx->sample_bw >= bw_thresh) {
		bbr_reset_full_bw(bbr);
		bbr->full_bw = ctx->sample_bw;
		return;
	}
	if (!bbr->round_start)
		return;
	bbr->full_bw_cnt++;
	bbr->full_bw_now = bbr->full_bw_cnt >= FULL_BW_CNT;
	bbr->full_bw_reached |= bbr->full_bw_now;
}

static __always_inline void bbr_check_drain(struct sock *sk, struct bbr *bbr)
{
	struct tcp_sock *tp = tcp_sk(sk);

	if (bbr->mode == BBR_STARTUP && bbr->full_bw_reached) {
		bbr->mode = BBR_DRAIN;
		/* ssthresh is unused by BBR; a finite value tells observers STARTUP ended. */
		tp->snd_ssthresh = bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT);
		bbr_reset_congestion_signals(bbr);
	}
	if (bbr->mode == BBR_DRAIN &&
	    bbr_packets_in_net_at_edt(sk, bbr, in_flight(tp)) <=
		    bbr_inflight(sk, bbr, bbr_max_bw(bbr), BBR_UNIT)) {
		bbr->mode = BBR_PROBE_BW;
		bbr_start_bw_probe_down(sk, bbr);
	}
}

static __always_inline void bbr_update_model(struct sock *sk, struct bbr *bbr,
					const struct bbr_rs *rs, struct bbr_context *ctx)
{
	bbr_update_congestion_signals(sk, bbr, rs, ctx);
	bbr_update_ack_aggregation(sk, bbr, rs);
	bbr_check_loss_too_high_in_startup(sk, bbr, rs);
	bbr_check_full_bw_reached(bbr, rs, ctx);
	bbr_check_drain(sk, bbr);
	bbr_update_cycle_phase(sk, bbr, rs, ctx);
	bbr_update_min_rtt(sk, bbr, rs);
}

/* App-limited ACK with no news (lower bw, no loss/CE): run only the state checks, and if
 * nothing changed and cwnd was at its target, skip the control update too. Returns true
 * to skip everything; clears *update_model to skip just the model update. */
static __always_inline bool bbr_run_fast_path(struct sock *sk, struct bbr *bbr, bool *update_model,
					      const struct bbr_rs *rs, struct bbr_context *ctx)
{
	u32 prev_mode, prev_min_rtt_us;

	if (!(bbr->try_fast_path && rs->is_app_limited &&
	      ctx->sample_bw < bbr_max_bw(bbr) && !bbr->loss_in_round && !bbr->ecn_in_round))
		return false;
	prev_mode = bbr->mode;
	prev_min_rtt_us = bbr->min_rtt_us;
	bbr_check_drain(sk, bbr);
	bbr_update_cycle_phase(sk, bbr, rs, ctx);
	bbr_update_min_rtt(sk, bbr, rs);
	if (bbr->mode == prev_mode && bbr->min_rtt_us == prev_min_rtt_us && bbr->try_fast_path)
		return true;
	*update_model = false;
	return false;
}

static __always_inline void bbr_main(struct sock *sk, struct bbr *bbr, const struct bbr_rs *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr_context ctx = {};
	bool update_model = true;
	u32 bw;

	bbr_update_round_start(sk, bbr, rs);
	if (bbr->round_start) {
		bbr->rounds_since_probe = min(bbr->rounds_since_probe + 1, 0xFFU);
		bbr_update_ecn_alpha(sk, bbr);
	}
	bbr->ecn_in_round |= bbr->ecn_eligible && rs->is_ece;
	bbr_calculate_bw_sample(rs, &ctx);
	bbr_update_latest_delivery_signals(sk, bbr, rs, &ctx);

	if (!bbr_run_fast_path(sk, bbr, &update_model, rs, &ctx)) {
		if (update_model)
			bbr_update_model(sk, bbr, rs, &ctx);
		bbr_update_gains(bbr);
		bw = bbr_bw(bbr);
		bbr_set_pacing_rate(sk, bbr, bw, bbr->pacing_gain);
		bbr_set_cwnd(sk, bbr, rs->acked_sacked, bw, bbr->cwnd_gain, tp->snd_cwnd);
		bbr_bound_cwnd_for_inflight_model(sk, bbr);
	}

	bbr_advance_latest_delivery_signals(bbr, rs, &ctx);
	bbr->prev_ca_state = ca_state(sk);
	bbr->loss_in_cycle |= rs->lost > 0;
	bbr->ecn_in_cycle |= rs->delivered_ce > 0;
}

/* First loss marked in a round fixes where the loss round ends. */
static __always_inline void bbr_note_loss(struct sock *sk, struct bbr *bbr)
{
	if (!bbr->loss_in_round)
		bbr->loss_round_delivered = tcp_sk(sk)->delivered;
	bbr->loss_in_round = 1;
	bbr->loss_in_cycle = 1;
}

/* Stand-in for v3's skb_marked_lost(): whatever tp->lost gained since last seen is one
 * lost skb of that many segments at snd_una (see the header comment). */
static __always_inline void bbr3_marked_lost(struct sock *sk, struct bbr3_sk *st)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr *bbr = &st->bbr;
	u32 lost_now = tp->lost, pcount = lost_now - st->seen_lost;
	u32 mss = max(tp->mss_cache, 1U), end_seq;
	struct bbr_rs rs = {};
	struct tx_snap *e;

	if (!pcount || (s32)pcount < 0) {
		st->seen_lost = lost_now;
		return;
	}
	st->seen_lost = lost_now;
	bbr_note_loss(sk, bbr);
	if (!bbr->bw_probe_samples)
		return;
	e = tx_find(st, tp->snd_una, true);
	if (!e)
		return;
	end_seq = tp->snd_una + pcount * mss;
	rs.tx_in_flight = tx_in_flight_from(e, end_seq, e->delivered, mss);
	rs.lost = lost_now - e->lost;
	rs.is_app_limited = !!(e->in_flight & TX_APP_LIMITED);
	if (bbr_is_inflight_too_high(bbr, &rs)) {
		rs.tx_in_flight = bbr_inflight_hi_from_lost_skb(&rs, pcount);
		bbr_handle_inflight_too_high(sk, bbr, &rs);
	}
}

/* A TLP repaired a single lost segment. */
static __always_inline void bbr_run_loss_probe_recovery(struct sock *sk, struct bbr *bbr)
{
	struct bbr_rs rs = {};

	bbr_note_loss(sk, bbr);
	if (!bbr->bw_probe_samples)
		return;
	rs.lost = 1;
	rs.tx_in_flight = bbr->inflight_latest + rs.lost;
	rs.is_app_limited = tcp_sk(sk)->app_limited != 0;
	if (bbr_is_inflight_too_high(bbr, &rs))
		bbr_handle_inflight_too_high(sk, bbr, &rs);
}

/* Receiver side of precise ECE (as DCTCP's): keep each ACK's ECE equal to the CE state of
 * the data it covers, flushing a held delayed ACK when the state flips. */
static __always_inline void bbr_ece_ack_update(struct sock *sk, struct bbr *bbr, int ev)
{
	struct tcp_sock *tp = tcp_sk(sk);
	u32 now_ce = ev == CA_EVENT_ECN_IS_CE;

	if (bbr->ce_state != now_ce) {
		if (inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
			if (bbr->ce_state)
				tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
			else
				tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
			bpf_tcp_send_ack(sk, bbr->prior_rcv_nxt);
		}
		inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
	}
	bbr->prior_rcv_nxt = tp->rcv_nxt;
	bbr->ce_state = now_ce;
	if (now_ce)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

/* ---- struct_ops entry points --------------------------------------------------------- */

SEC("struct_ops/bbr3_init")
void BPF_PROG(bbr3_init, struct sock *sk)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_sk *st = state_of(sk, true);
	struct bbr *bbr;

	if (!st)
		return;
	bbr = &st->bbr;
	__builtin_memset(bbr, 0, sizeof(*bbr));
	bbr->initialized = 1;
	bbr->init_cwnd = min(0x7FU, tp->snd_cwnd);
	bbr->prior_cwnd = tp->prior_cwnd;
	tp->snd_ssthresh = TCP_INFINITE_SSTHRESH;
	bbr->next_rtt_delivered = tp->delivered;
	bbr->prev_ca_state = TCP_CA_Open;

	bbr->probe_rtt_min_us = tp_min_rtt(tp);
	bbr->probe_rtt_min_stamp = jiffies32();
	bbr->min_rtt_us = tp_min_rtt(tp);
	bbr->min_rtt_stamp = jiffies32();
	bbr_init_pacing_rate_from_rtt(sk, bbr);
	bbr->mode = BBR_STARTUP;
	bbr->ack_epoch_mstamp = tp->tcp_mstamp;

	if (sk->sk_pacing_status == SK_PACING_NONE)
		sk->sk_pacing_status = SK_PACING_NEEDED;

	/* The first loss round (and ECN sampling) ends after the first flight is acked. */
	bbr->loss_round_delivered = tp->delivered + 1;
	bbr_reset_congestion_signals(bbr);
	bbr->bw_lo = ~0U;
	bbr->inflight_lo = ~0U;
	bbr->inflight_hi = ~0U;
	bbr_reset_full_bw(bbr);
	bbr->bw_probe_up_cnt = ~0U;
	bbr->ack_phase = BBR_ACKS_INIT;
	bbr->ecn_alpha = ECN_ALPHA_INIT;
	bbr->prior_rcv_nxt = tp->rcv_nxt;

	st->seen_lost = tp->lost;
	st->seen_delivered_ce = tp->delivered_ce;
	st->cwr_mstamp = 0;
	st->ring_head = 0;
	st->ring_count = 0;
	tx_note(st, tp, true);
}

SEC("struct_ops/bbr3_release")
void BPF_PROG(bbr3_release, struct sock *sk)
{
	bpf_sk_storage_delete(&bbr3_state, sk);
}

SEC("struct_ops/bbr3_cong_control")
void BPF_PROG(bbr3_cong_control, struct sock *sk, u32 ack, int flag, const struct rate_sample *rs)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_sk *st = state_of(sk, false);
	u32 mss = max(tp->mss_cache, 1U);
	struct bbr_rs r = {};
	struct tx_snap *e;

	if (!st || !st->bbr.initialized)
		return;

	/* Losses this ACK marked come first, as v3's per-skb hook runs while marking. */
	bbr3_marked_lost(sk, st);

	r.interval_us = rs->interval_us;
	r.rtt_us = rs->rtt_us;
	r.delivered = rs->delivered;
	r.delivered_ce = rs->delivered_ce;
	r.prior_delivered = rs->prior_delivered;
	r.acked_sacked = rs->acked_sacked;
	r.prior_in_flight = rs->prior_in_flight;
	r.losses = rs->losses;
	r.is_app_limited = rs->is_app_limited;
	r.is_ack_delayed = rs->is_ack_delayed;
	r.is_ece = tp->delivered_ce != st->seen_delivered_ce;
	st->seen_delivered_ce = tp->delivered_ce;

	if (rs->prior_mstamp && rs->delivered >= 0) {
		e = tx_find(st, rs->prior_delivered, false);
		if (e) {
			r.tx_in_flight = tx_in_flight_from(e, rs->last_end_seq, rs->prior_delivered, mss);
			r.lost = tp->lost - e->lost;
			if (e->delivered == rs->prior_delivered)
				__sync_fetch_and_add(&bbr3_tx_exact, 1);
			else
				__sync_fetch_and_add(&bbr3_tx_near, 1);
		} else {
			__sync_fetch_and_add(&bbr3_tx_miss, 1);
		}
	}

	bbr_main(sk, &st->bbr, &r);

	/* What the data this ACK releases will be sent with. */
	tx_note(st, tp, false);

	bbr3_last.mode = st->bbr.mode;
	bbr3_last.cycle_idx = st->bbr.cycle_idx;
	bbr3_last.ack_phase = st->bbr.ack_phase;
	bbr3_last.full_bw_reached = st->bbr.full_bw_reached;
	bbr3_last.min_rtt_us = st->bbr.min_rtt_us;
	bbr3_last.bw_hi0 = st->bbr.bw_hi[0];
	bbr3_last.bw_hi1 = st->bbr.bw_hi[1];
	bbr3_last.bw_lo = st->bbr.bw_lo;
	bbr3_last.inflight_hi = st->bbr.inflight_hi;
	bbr3_last.inflight_lo = st->bbr.inflight_lo;
	bbr3_last.cwnd = tp->snd_cwnd;
	bbr3_last.tx_in_flight = r.tx_in_flight;
	bbr3_last.lost = r.lost;
	bbr3_last.rounds_since_probe = st->bbr.rounds_since_probe;
}

SEC("struct_ops/bbr3_cwnd_event")
void BPF_PROG(bbr3_cwnd_event, struct sock *sk, int event)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_sk *st = state_of(sk, false);
	struct bbr *bbr;

	if (!st)
		return;
	bbr = &st->bbr;
	if (event == CA_EVENT_TX_START) {
		tx_note(st, tp, true);
		if (!tp->app_limited)
			return;
		bbr->idle_restart = 1;
		bbr->ack_epoch_mstamp = tp->tcp_mstamp;
		bbr->ack_epoch_acked = 0;
		/* Restarting app-limited from idle: no need to go faster than bw. */
		if (bbr->mode == BBR_PROBE_BW)
			bbr_set_pacing_rate(sk, bbr, bbr_bw(bbr), BBR_UNIT);
		else if (bbr->mode == BBR_PROBE_RTT)
			bbr_check_probe_rtt_done(sk, bbr);
	} else if ((event == CA_EVENT_ECN_IS_CE || event == CA_EVENT_ECN_NO_CE) &&
		   bbr_can_use_ecn(sk)) {
		bbr_ece_ack_update(sk, bbr, event);
	} else if (event == CA_EVENT_COMPLETE_CWR && st->cwr_mstamp &&
		   st->cwr_mstamp == tp->tcp_mstamp) {
		/* CWR entered and left on one ACK: tcp_process_tlp_ack() saw a repaired loss. */
		st->cwr_mstamp = 0;
		bbr_run_loss_probe_recovery(sk, bbr);
	}
}

SEC("struct_ops/bbr3_ssthresh")
u32 BPF_PROG(bbr3_ssthresh, struct sock *sk)
{
	struct bbr3_sk *st = state_of(sk, false);
	struct bbr *bbr;

	if (!st)
		return tcp_sk(sk)->snd_ssthresh;
	bbr3_marked_lost(sk, st);
	bbr = &st->bbr;
	bbr_save_cwnd(sk, bbr);
	/* Keep the loss-adapted bounds for a possible undo. */
	bbr->undo_bw_lo = bbr->bw_lo;
	bbr->undo_inflight_lo = bbr->inflight_lo;
	bbr->undo_inflight_hi = bbr->inflight_hi;
	return tcp_sk(sk)->snd_ssthresh;
}

SEC("struct_ops/bbr3_undo_cwnd")
u32 BPF_PROG(bbr3_undo_cwnd, struct sock *sk)
{
	struct bbr3_sk *st = state_of(sk, false);
	u32 cwnd = tcp_sk(sk)->snd_cwnd;
	struct bbr *bbr;

	/* keep clang from merging this load with the map load below into one insn */
	barrier_var(cwnd);
	if (!st)
		return cwnd;
	bbr = &st->bbr;
	/* The recovery was spurious: restart the plateau search and restore the bounds. */
	bbr_reset_full_bw(bbr);
	bbr->loss_in_round = 0;
	bbr->bw_lo = max(bbr->bw_lo, bbr->undo_bw_lo);
	bbr->inflight_lo = max(bbr->inflight_lo, bbr->undo_inflight_lo);
	bbr->inflight_hi = max(bbr->inflight_hi, bbr->undo_inflight_hi);
	bbr->try_fast_path = 0;
	return bbr->prior_cwnd;
}

SEC("struct_ops/bbr3_set_state")
void BPF_PROG(bbr3_set_state, struct sock *sk, u8 new_state)
{
	struct tcp_sock *tp = tcp_sk(sk);
	struct bbr3_sk *st = state_of(sk, false);
	struct bbr *bbr;

	if (!st)
		return;
	bbr3_marked_lost(sk, st);
	bbr = &st->bbr;
	if (new_state == TCP_CA_Loss) {
		/* The RTO marked the flight lost: what is sent next starts from there. */
		tx_note(st, tp, true);
		bbr->prev_ca_state = TCP_CA_Loss;
		/* An RTO may have moved the flow to another path: look for the plateau again. */
		bbr_reset_full_bw(bbr);
		if (!bbr_is_probing_bandwidth(bbr) && bbr->inflight_lo == ~0U)
			/* The loss response wants the cwnd from before the RTO. */
			bbr->inflight_lo = max(tp->snd_cwnd, bbr->prior_cwnd);
	} else if (bbr->prev_ca_state == TCP_CA_Loss) {
		tp->snd_cwnd = max(tp->snd_cwnd, bbr->prior_cwnd);
		bbr->try_fast_path = 0;
	}
	if (new_state == TCP_CA_CWR)
		st->cwr_mstamp = tp->tcp_mstamp;
}

SEC("struct_ops/bbr3_min_tso_segs")
u32 BPF_PROG(bbr3_min_tso_segs, struct sock *sk)
{
	struct bbr3_sk *st = state_of(sk, false);

	if (!st)
		return 2;
	return bbr_tso_segs_generic(sk, &st->bbr, tcp_sk(sk)->mss_cache, sk->sk_gso_max_size);
}

SEC("struct_ops/bbr3_sndbuf_expand")
u32 BPF_PROG(bbr3_sndbuf_expand, struct sock *sk)
{
	/* 3 x cwnd of send buffer: BBR may keep growing cwnd during recovery. */
	return 3;
}

SEC(".struct_ops")
struct tcp_congestion_ops cclab_bbr3 = {
	.init = (void *)bbr3_init,
	.release = (void *)bbr3_release,
	.cong_control = (void *)bbr3_cong_control,
	.cwnd_event = (void *)bbr3_cwnd_event,
	.ssthresh = (void *)bbr3_ssthresh,
	.undo_cwnd = (void *)bbr3_undo_cwnd,
	.set_state = (void *)bbr3_set_state,
	.min_tso_segs = (void *)bbr3_min_tso_segs,
	.sndbuf_expand = (void *)bbr3_sndbuf_expand,
	.flags = TCP_CONG_NON_RESTRICTED,
	.name = "bbr3",
};
