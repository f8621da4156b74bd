//! The control parser against random and mutated input (cclab's own seeded RNG, bounded to a
//! few seconds): never a panic, and never an allocation beyond what a frame's bound allows.

use cclab_path::Rng;
use cclab_remote::protocol::{
    read_msg, LimitsMsg, Msg, Sample, StreamDone, MAX_FRAME, MAX_SAMPLES, VERSION,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Records the largest single allocation while `TRACK` is set.
struct Counting;
static TRACK: AtomicBool = AtomicBool::new(false);
static LARGEST: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if TRACK.load(Ordering::Relaxed) {
            LARGEST.fetch_max(l.size(), Ordering::Relaxed);
        }
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        if TRACK.load(Ordering::Relaxed) {
            LARGEST.fetch_max(n, Ordering::Relaxed);
        }
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Counting = Counting;

fn corpus() -> Vec<Vec<u8>> {
    let s = Sample {
        t_us: 1,
        cwnd: 2,
        bytes_acked: 3,
        ..Default::default()
    };
    [
        Msg::Hello {
            version: VERSION,
            nonce: [1; 32],
        },
        Msg::Challenge {
            version: VERSION,
            nonce: [2; 32],
            key_required: true,
        },
        Msg::Auth { mac: Some([3; 32]) },
        Msg::Welcome {
            mac: None,
            session: [4; 16],
            kernel: "6.1".into(),
            ccs: vec!["cubic".into(), "bbr".into()],
            limits: LimitsMsg {
                max_duration_ms: 1,
                max_parallel: 2,
                max_runs: 3,
                max_bytes: 4,
            },
        },
        Msg::RunRequest {
            run: 1,
            cc: "bbr".into(),
            reverse: false,
            duration_ms: 1000,
            size: 0,
            parallel: 1,
            pace: 0,
        },
        Msg::RunRequest {
            run: 2,
            cc: "bbr".into(),
            reverse: true,
            duration_ms: 2000,
            size: 7,
            parallel: 2,
            pace: 125_000,
        },
        Msg::RunReady { run: 1 },
        Msg::DataHello {
            session: [5; 16],
            run: 1,
            stream: 0,
            mac: [6; 32],
        },
        Msg::RunStart { run: 1 },
        Msg::Samples {
            run: 1,
            stream: 0,
            samples: vec![s; 7],
        },
        Msg::RunDone {
            run: 1,
            streams: vec![StreamDone::default(); 2],
            note: "n".into(),
        },
        Msg::Bye,
        Msg::Error {
            code: 4,
            message: "e".into(),
        },
    ]
    .iter()
    .map(|m| m.encode())
    .collect()
}

fn mutate(rng: &mut Rng, f: &[u8]) -> Vec<u8> {
    let mut v = f.to_vec();
    let r = |rng: &mut Rng, n: usize| (rng.next_u64() % n.max(1) as u64) as usize;
    for _ in 0..1 + r(rng, 4) {
        match r(rng, 7) {
            0 if !v.is_empty() => {
                let i = r(rng, v.len());
                v[i] = rng.next_u64() as u8;
            }
            1 => v.truncate(r(rng, v.len() + 1)),
            2 => v.extend((0..r(rng, 64)).map(|_| rng.next_u64() as u8)),
            // A length prefix that disagrees with the frame, or is huge.
            3 if v.len() >= 4 => {
                let n = [0u32, 1, 5, MAX_FRAME as u32, MAX_FRAME as u32 + 1, u32::MAX][r(rng, 6)]
                    .to_be_bytes();
                v[..4].copy_from_slice(&n);
            }
            // A count or string length at its extremes (anywhere in the body).
            4 if v.len() >= 7 => {
                let i = 5 + r(rng, v.len() - 6);
                let x = [0xffffu16, MAX_SAMPLES as u16, MAX_SAMPLES as u16 + 1, 257][r(rng, 4)];
                v[i..i + 2].copy_from_slice(&x.to_be_bytes());
            }
            5 if v.len() > 4 => {
                v[4] = r(rng, 16) as u8;
            }
            _ => v = (0..r(rng, 80)).map(|_| rng.next_u64() as u8).collect(),
        }
    }
    v
}

#[test]
fn parser_takes_random_and_mutated_frames_without_panic_in_bounded_memory() {
    let corpus = corpus();
    let mut rng = Rng::new(20260516);
    let t = Instant::now();
    let (mut n, mut ok, mut err) = (0u64, 0u64, 0u64);
    TRACK.store(true, Ordering::SeqCst);
    while t.elapsed() < Duration::from_secs(3) {
        let base = &corpus[(rng.next_u64() % corpus.len() as u64) as usize];
        let f = mutate(&mut rng, base);
        // The whole stream parser (length prefix included) and the frame parser.
        match read_msg(&mut &f[..]) {
            Ok(m) => {
                ok += 1;
                // Whatever parses re-encodes to the same message.
                let e = m.encode();
                assert!(e.len() <= MAX_FRAME + 4);
                assert_eq!(read_msg(&mut &e[..]).unwrap(), m);
            }
            Err(_) => err += 1,
        }
        if f.len() > 4 {
            let _ = Msg::decode(&f[4..]);
        }
        n += 1;
    }
    TRACK.store(false, Ordering::SeqCst);
    let largest = LARGEST.load(Ordering::SeqCst);
    eprintln!("{n} inputs: {ok} parsed, {err} refused; largest allocation {largest} bytes");
    assert!(n > 10_000, "only {n} inputs in 3 s");
    assert!(ok > 0 && err > 0);
    // A frame's bytes, or a message's parts: never more than the frame bound allows.
    assert!(largest <= MAX_FRAME + 4096, "allocation of {largest} bytes");
}
