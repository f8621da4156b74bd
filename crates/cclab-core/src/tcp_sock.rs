//! The connection's state that the sender, the delivery-rate sampler (`rate`) and the
//! controllers (`cc`) share: [`TcpState`], the fields of Linux's `struct tcp_sock` / `struct
//! sock` they read and write, with its congestion-avoidance state ([`CaState`]) and the
//! constants its constructor uses. It depends on nothing else in the crate; `cc` re-exports
//! it (`cc::TcpState`, `cc::CaState`, ...).

/// TCP congestion-avoidance states (Linux `enum tcp_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

/// `CONFIG_HZ` of the modelled hosts unless configured otherwise: 250, as Debian's kernels
/// (and the kernel lab's) use; Fedora/RHEL and recent Ubuntu kernels use 1000.
pub const DEFAULT_HZ: u32 = 250;

/// The fields of the connection a controller reads and writes: the subset of Linux
/// `struct tcp_sock` / `struct sock` that the in-tree controllers touch.
///
/// Sequence numbers (`snd_una`, `snd_nxt`) are in segments (see crate docs).
#[derive(Clone, Debug)]
pub struct TcpState {
    /// Current time, ns (Linux `tp->tcp_clock_cache`).
    pub now_ns: u64,
    /// Current time, us (Linux `tp->tcp_mstamp`).
    pub now_us: u64,
    /// Sender maximum segment size in bytes (`tp->mss_cache`).
    pub mss: u32,
    /// Congestion window in packets (`tp->snd_cwnd`).
    pub snd_cwnd: u32,
    /// Slow-start threshold in packets (`tp->snd_ssthresh`); `u32::MAX >> 1` = infinite.
    pub snd_ssthresh: u32,
    /// Linear-increase counter (`tp->snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    /// Upper bound on cwnd (`tp->snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// cwnd before the last reduction (`tp->prior_cwnd`), for undo.
    pub prior_cwnd: u32,
    /// Pacing rate in bytes per second (`sk->sk_pacing_rate`).
    pub pacing_rate: u64,
    /// Upper bound on the pacing rate (`sk->sk_max_pacing_rate`).
    pub max_pacing_rate: u64,
    /// The sender paces this connection (`sk->sk_pacing_status != SK_PACING_NONE`): the
    /// controller asked (BBR), or the host paces every connection (`[hosts] pacing`, as
    /// `SO_MAX_PACING_RATE` or sch_fq do).
    pub paced: bool,
    /// Smoothed RTT in microseconds (plain; Linux stores it shifted left by 3). 0 = no sample yet.
    pub srtt_us: u32,
    /// Windowed minimum RTT in microseconds (`tcp_min_rtt()`); `u32::MAX` = none yet.
    pub min_rtt_us: u32,
    /// Segments sent and not yet cumulatively acknowledged (`tp->packets_out`).
    pub packets_out: u32,
    /// Segments SACKed (`tp->sacked_out`).
    pub sacked_out: u32,
    /// Segments marked lost (`tp->lost_out`).
    pub lost_out: u32,
    /// Retransmitted segments in flight (`tp->retrans_out`).
    pub retrans_out: u32,
    /// Total segments delivered (acked or sacked) (`tp->delivered`).
    pub delivered: u64,
    /// Time of the last `delivered` update, us (`tp->delivered_mstamp`).
    pub delivered_mstamp_us: u64,
    /// Total segments marked lost (`tp->lost`).
    pub lost: u64,
    /// Segments delivered by ACKs carrying ECE (`tp->delivered_ce`).
    pub delivered_ce: u64,
    /// Both ends negotiated ECN (`tp->ecn_flags & TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// Non-zero while app-limited: the `delivered` value at which the limit ends (`tp->app_limited`).
    pub app_limited: u64,
    /// Current CA state (`icsk->icsk_ca_state`).
    pub ca_state: CaState,
    /// Whether the sender was limited by cwnd recently (`tp->is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// Highest packets_out seen in the current cwnd-limited window (`tp->max_packets_out`).
    pub max_packets_out: u32,
    /// First unacknowledged segment (`tp->snd_una`).
    pub snd_una: u64,
    /// Next segment to send for the first time (`tp->snd_nxt`).
    pub snd_nxt: u64,
    /// Time of the last data transmission, ns (`tp->lsndtime`).
    pub lsndtime_ns: u64,
    /// The host kernel's timer tick rate (`CONFIG_HZ`): jiffies-based clocks and timers
    /// (CUBIC's epoch, BBR's windows, TLP/RACK/RTO timers) move in steps of 1/hz s.
    pub hz: u32,
}

impl TcpState {
    pub fn new(mss: u32, init_cwnd: u32) -> Self {
        TcpState {
            now_ns: 0,
            now_us: 0,
            mss,
            snd_cwnd: init_cwnd,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX >> 1,
            prior_cwnd: 0,
            pacing_rate: 0,
            max_pacing_rate: u64::MAX,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            delivered: 0,
            delivered_mstamp_us: 0,
            lost: 0,
            delivered_ce: 0,
            ecn_ok: false,
            app_limited: 0,
            ca_state: CaState::Open,
            is_cwnd_limited: false,
            max_packets_out: 0,
            snd_una: 0,
            snd_nxt: 0,
            lsndtime_ns: 0,
            hz: DEFAULT_HZ,
            paced: false,
        }
    }

    /// Length of one jiffy, ns.
    pub fn ns_per_jiffy(&self) -> u64 {
        1_000_000_000 / self.hz.max(1) as u64
    }

    /// Segments believed to be in the network (`tcp_packets_in_flight()`):
    /// `packets_out - (sacked_out + lost_out) + retrans_out`.
    pub fn packets_in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_in_slow_start()`.
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// `tcp_is_cwnd_limited()`: the last window was cwnd-limited, or (in slow start) at least
    /// half of cwnd was in use, so that slow start can double the window.
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        self.in_slow_start() && self.snd_cwnd < 2 * self.max_packets_out
    }

    /// Set cwnd, honouring the clamp (`tcp_snd_cwnd_set()`).
    pub fn set_cwnd(&mut self, cwnd: u32) {
        self.snd_cwnd = cwnd.min(self.snd_cwnd_clamp).max(1);
    }
}

/// `TCP_INFINITE_SSTHRESH`.
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;
