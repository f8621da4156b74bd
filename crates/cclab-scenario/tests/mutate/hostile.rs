//! Hostile inputs: values of the wrong type, odd numbers and strings, hostile keys, and the
//! `--set` keys and values the mutants use.

/// Values of the wrong TOML type for most keys (written as TOML value text).
pub const WRONG_TYPES: &[&str] = &[
    "true",
    "false",
    "[]",
    "[[1]]",
    "[true]",
    "[\"1ms\", 2]",
    "{a=1}",
    "{}",
    "\"text\"",
    "\"\"",
    "'literal'",
    "1979-05-27T07:32:00Z",
    "1979-05-27",
    "07:32:00",
    "1.5",
    "-1",
    "0",
    "",
];

/// Huge, negative, tiny, non-finite and oddly written values (TOML value text).
pub const HOSTILE: &[&str] = &[
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "0x7fffffffffffffff",
    "0o777",
    "0b101",
    "1_000",
    "4294967296",
    "10001",
    "100001",
    "535",
    "9001",
    "1e308",
    "-1e308",
    "1e309",
    "5e-324",
    "-0.0",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "\"99999999999999999999gbit\"",
    "\"18446744073709551615bit\"",
    "\"1e30s\"",
    "\"18446744073s\"",
    "\"18446744073709551615ns\"",
    "\"0.0000001ns\"",
    "\"1e2147483648s\"",
    "\"1e-2147483649ms\"",
    "\"-5ms\"",
    "\"-0ms\"",
    "\"+5ms\"",
    "\".5ms\"",
    "\"5.ms\"",
    "\"1.2.3ms\"",
    "\"1e\"",
    "\"1e+\"",
    "\"1µs\"",
    "\"µs\"",
    "\"0bdp\"",
    "\"-1bdp\"",
    "\"1e300bdp\"",
    "\"1e-300bdp\"",
    "\"NaNbdp\"",
    "\"infbdp\"",
    "\"100000000pkt\"",
    "\"4294967296pkt\"",
    "\"1.5pkt\"",
    "\"18446744073709551616b\"",
    "\"1e19b\"",
    "\"1b\"",
    "\"1tib\"",
    "\"200%\"",
    "\"-1%\"",
    "\"100%\"",
    "\"99.9999999999999999999%\"",
    "\"1e-400%\"",
    "\"%\"",
    "\"1%%\"",
    "\"0x10mbit\"",
    "\"1_000mbit\"",
    "\"100 mbit\"",
    "\"100MBps\"",
    "\"100mb/s\"",
    "\"1KiB/s\"",
    "\"1Ki\"",
    "\"BBR\"",
    "\" bbr \"",
    "\"ünïcödé\"",
    "\"\\u0000\"",
    "\"\\u001b[31mred\"",
    "\"a\\nb\"",
    "\"\"\"\nmulti\nline\"\"\"",
    "\"  \"",
];

/// Keys that replace the key of a `key = value` line.
pub const HOSTILE_KEYS: &[&str] = &[
    "\"a\\nb\"",
    "\"a\\rb\"",
    "\"tab\\there\"",
    "\"esc\\u001b[31m\"",
    "\"nul\\u0000\"",
    "\"ünïcödé\"",
    "ünïcödé",
    "\"\"",
    "''",
    "RATE",
    "rat",
    "bandwidth",
    "link",
    "flows",
    "rate.deep",
    "a.b.c.d.e.f",
    "1234",
    "-",
    "\"rate\"",
    "'cc'",
];

/// The first this many of [`SET_KEYS`] are real keys of every format version.
pub const REAL_SET_KEYS: usize = 16;

/// Keys for `--set` overrides: real ones, per-group ones and unknown or malformed ones.
pub const SET_KEYS: &[&str] = &[
    "link.rate",
    "link.rtt",
    "link.buffer",
    "link.loss",
    "link.ack_loss",
    "link.mss",
    "link.host_latency",
    "link.host_jitter",
    "flows.count",
    "flows.size",
    "flows.init_cwnd",
    "flows.start",
    "flows.rtt_extra",
    "flows.cc",
    "flows.0.cc",
    "flows.1.size",
    "flows.99.cc",
    "flows.18446744073709551616.cc",
    "flows.-1.cc",
    "duration",
    "seed",
    "name",
    "description",
    "bogus",
    "link.bogus",
    "flows.bogus",
    "flows.0.bogus",
    "reference.x",
    "link",
    "flows",
    "",
    "a.b.c.d",
    "link..rate",
    "link.ra\nte",
    "na\tme",
    "\u{1b}[31mlink.rate",
    // Keys of `[hosts]` and `cc_params` (newer formats; unknown keys to older ones).
    "hosts.latency",
    "hosts.jitter",
    "hosts.wake",
    "hosts.wake_idle",
    "hosts.shared_cpu",
    "hosts.hz",
    "flows.cc_params.beta",
    "flows.0.cc_params",
];

/// `--set` keys of the path elements of `[link]` (and near misses); the first
/// [`REAL_PATH_SET_KEYS`] are real keys.
pub const PATH_SET_KEYS: &[&str] = &[
    "link.aqm",
    "link.aqm.kind",
    "link.aqm.target",
    "link.aqm.interval",
    "link.aqm.flows",
    "link.aqm.tupdate",
    "link.aqm.ecn",
    "link.policer",
    "link.policer.burst",
    "link.shaper.rate",
    "link.trace",
    "link.loss_unit",
    "link.jitter",
    "link.reorder",
    "link.ack_aggregation",
    "link.aqm.bogus",
    "link.policer.rate.deep",
    "link.shaper.0",
];

/// The first this many of [`PATH_SET_KEYS`] are real keys.
pub const REAL_PATH_SET_KEYS: usize = 15;

/// Whole `--set` texts that are malformed on their own.
pub const BAD_SETS: &[&str] = &[
    "",
    "=",
    "==",
    "link.rate",
    "=5",
    "link.rate==5",
    "link.rate=",
    "link.rate= ",
    "link.rate=[",
    "link.rate=]",
    "link.rate=[,]",
    "link.rate=[1mbit,,2mbit]",
    "link.rate=[1mbit, [2mbit]]",
    "link.rate=\"unterminated",
    "link.rate='",
    "link.rate={",
    "link.rate=1=2",
    "link.rate=\n",
    "link.rate=a\nb",
    "flows.cc=[cubic, bbr,]",
    "flows.cc=[cubic bbr]",
    "flows.0.=1",
    ".=1",
];

/// Extra values that only make sense for overrides (bare words, bare lists).
pub const SET_VALUES: &[&str] = &[
    "bbr",
    "1%",
    "100mbit",
    "[cubic, bbr]",
    "[0, 1%]",
    "[1ms, 2ms, 3ms]",
    "[1mbit, nan, -1]",
    "[\"a\", b]",
    "1%%",
    "=",
    "a b c",
];

/// Values for the `--set` path keys ([`PATH_SET_KEYS`]), besides trace paths and a sample of
/// the hostile values (every hostile value reaches each path key in the generated files).
pub const PATH_SET_VALUES: &[&str] = &[
    "codel",
    "fq_codel",
    "[droptail, codel, fq_codel, pie]",
    "[codel, red]",
    "10ms",
    "64kb",
    "gso",
    "{kind=\"pie\", alpha=3}",
    "{kind=\"codel\", flows=16}",
    "{rate=\"10mbit\", burst=\"1kb\"}",
    "{burst=\"64kb\"}",
    "[{at=\"0s\",rate=\"100mbit\"},{at=\"5s\",rate=\"20mbit\"}]",
    "[{at=\"1s\",rate=\"1mbit\"}]",
    "[{at=\"0s\"}]",
    "[[{at=\"0s\",rate=\"1mbit\"}], 2mbit]",
    "missing.trace",
];

/// Nested value deeper than any sane limit.
pub fn deep_array(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

pub fn deep_table(depth: usize) -> String {
    format!("{}1{}", "{a=".repeat(depth), "}".repeat(depth))
}

/// All hostile values, constant and generated.
pub fn hostile_values() -> Vec<String> {
    let mut v: Vec<String> = WRONG_TYPES
        .iter()
        .chain(HOSTILE)
        .map(|s| s.to_string())
        .collect();
    v.push(deep_array(40));
    v.push(deep_array(300));
    v.push(deep_table(300));
    v.push(format!("\"{}\"", "9".repeat(5000)));
    v.push(format!("\"1e{}s\"", "9".repeat(100)));
    v.push(format!("\"0.{}1%\"", "0".repeat(5000)));
    v
}

/// Bytes that the random mutator likes to insert.
pub const TOKENS: &[&str] = &[
    "\"",
    "'",
    "'''",
    "\"\"\"",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    "=",
    ",",
    ".",
    "#",
    "\\",
    "\\u",
    "\n",
    "\r\n",
    "\r",
    "\t",
    "\u{0}",
    "\u{feff}",
    "µ",
    "%",
    "-",
    "+",
    "_",
    "e999",
    "nan",
    "0x",
    "9223372036854775808",
    "1979-05-27T07:32:00Z",
    "\n[link]\n",
    "\n[[flows]]\n",
    "\n[reference]\n",
    "\n[flows]\n",
    "\ncc = \"bbr\"\n",
    "\nrate = [\"1mbit\", \"2mbit\"]\n",
    "\n[link.aqm]\n",
    "\n[link.policer]\n",
    "\n[[link.rate]]\n",
    "\naqm = \"fq_codel\"\n",
    "\nkind = [\"codel\", \"pie\"]\n",
    "{at = \"0s\", rate = \"1mbit\"}",
];
